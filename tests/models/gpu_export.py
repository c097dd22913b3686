#!/usr/bin/env python3
"""Exports models with the GPU machine's PyTorch 2.x (legacy exporter at opset 17, and the dynamo exporter at
opset 18) and runs them with its ONNX Runtime (CPU), writing OUT_DIR/real/manifest.json in the format of
export_models.py + run_ort.js, so that onnx_runtime_oracle_tests (KILN_ORACLE_MODELS_DIR=OUT_DIR) compares
Kiln with ONNX Runtime on them. Not part of CI (PyTorch 2.x is only on the GPU machine); see
docs/onnx-conformance.md for the last run.

Usage: gpu_export.py OUT_DIR
"""
import json
import os
import sys
import traceback

import numpy as np
import onnxruntime as ort
import torch
import torchvision


class Bert(torch.nn.Module):
    """BertModel(BertConfig()) with positional (input_ids, attention_mask) and tuple outputs."""

    def __init__(self):
        super().__init__()
        import transformers
        self.bert = transformers.BertModel(transformers.BertConfig())

    def forward(self, ids, mask):
        out = self.bert(input_ids=ids, attention_mask=mask)
        return out.last_hidden_state, out.pooler_output


def bert():
    torch.manual_seed(3)
    model = Bert().eval()
    ids = torch.randint(0, 30522, (1, 16), generator=torch.Generator().manual_seed(7))
    mask = torch.ones(1, 16, dtype=torch.int64)
    return model, (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"]


def randomize_zero_parameters(model):
    # Some heads start at zero (vit_b_16's classifier), which would make every output 0 and the check empty.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 0 and not p.any():
                p.normal_(0.0, 0.02, generator=torch.Generator().manual_seed(11))


def vision(make, shape):
    def build():
        torch.manual_seed(3)
        model = make().eval()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(5))
        return model, (x,), ["input"], ["output"]
    return build


MODELS = [
    ("resnet50", vision(lambda: torchvision.models.resnet50(weights=None), [1, 3, 224, 224])),
    ("mobilenet_v2", vision(lambda: torchvision.models.mobilenet_v2(weights=None), [1, 3, 224, 224])),
    ("vit_b_16", vision(lambda: torchvision.models.vit_b_16(weights=None), [1, 3, 224, 224])),
    ("bert_base", bert),
]


def main():
    out = os.path.join(sys.argv[1], "real")
    os.makedirs(out, exist_ok=True)
    manifest = []
    for name, make in MODELS:
        for dynamo, opset in [(False, 17), (True, 18)]:
            tag = f"{name}_opset{opset}{'_dynamo' if dynamo else ''}"
            try:
                model, args, in_names, out_names = make()
                randomize_zero_parameters(model)
                path = os.path.join(out, tag + ".onnx")
                # Gradients stay on: under no_grad, eval-mode attention takes a fused path the legacy exporter
                # cannot write.
                torch.onnx.export(model, args, path, opset_version=opset, input_names=in_names,
                                  output_names=out_names, dynamo=dynamo, external_data=False)
                sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
                feeds = {}
                entry = {"name": tag, "model": tag + ".onnx", "expect": "match_norm", "inputs": [],
                         "outputs": [], "ort_version": ort.__version__}
                for i, a in zip(sess.get_inputs(), args):
                    arr = a.detach().numpy()
                    feeds[i.name] = arr
                    file = f"{tag}.{i.name}.bin"
                    arr.tofile(os.path.join(out, file))
                    entry["inputs"].append({"name": i.name, "file": file, "type": str(arr.dtype),
                                            "shape": list(arr.shape)})
                for o, arr in zip(sess.get_outputs(), sess.run(None, feeds)):
                    file = f"{tag}.{o.name}.bin"
                    np.ascontiguousarray(arr).tofile(os.path.join(out, file))
                    entry["outputs"].append({"name": o.name, "file": file, "type": str(arr.dtype),
                                             "shape": list(arr.shape)})
                manifest.append(entry)
                print(f"exported {tag}", flush=True)
            except Exception:  # a failed export is reported, the others still run
                print(f"export of {tag} failed:\n{traceback.format_exc()}", flush=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"torch {torch.__version__}, onnxruntime {ort.__version__}: {len(manifest)} models", flush=True)


if __name__ == "__main__":
    main()
