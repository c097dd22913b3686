#!/usr/bin/python3
# Generates ONNX's backend node test suite (model.onnx + test_data_set_*/{input,output}_*.pb) with Debian's
# python3-onnx 1.12 into a build folder, for the conformance runner (onnx_conformance_test.cc). Never commit the output.
# Usage: /usr/bin/python3 generate_onnx_node_tests.py OUTPUT_DIR [STAMP_FILE]
import os
import shutil
import sys

import numpy as np

# onnx 1.12's test cases still use the aliases numpy 1.24 removed; restore them before onnx imports the cases.
for alias, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object), ("str", str)):
    if alias not in np.__dict__:
        setattr(np, alias, builtin)

import onnx  # noqa: E402  (after the aliases on purpose)
from onnx.backend.test import cmd_tools  # noqa: E402


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: generate_onnx_node_tests.py OUTPUT_DIR [STAMP_FILE]", file=sys.stderr)
        return 2
    out = os.path.abspath(sys.argv[1])
    stamp = sys.argv[2] if len(sys.argv) > 2 else None
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    sys.argv = ["backend-test-tools", "generate-data", "-o", out]
    cmd_tools.main()
    node_dir = os.path.join(out, "node")
    count = len(os.listdir(node_dir)) if os.path.isdir(node_dir) else 0
    if count == 0:
        print("generate_onnx_node_tests: no node cases were written", file=sys.stderr)
        return 1
    print(f"generate_onnx_node_tests: onnx {onnx.__version__}: {count} node cases in {node_dir}")
    if stamp:
        with open(stamp, "w") as f:
            f.write(f"{onnx.__version__} {count}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
