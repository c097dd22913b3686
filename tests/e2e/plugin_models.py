#!/usr/bin/python3
"""Writes the ONNX models of the plugin e2e tests into the folder given: plugins.onnx (a KilnTestScaledAddV3 node
of the custom domain 'kiln.test', then a TRT_PluginV2 node rebuilding a serialized KilnTestScaledAddV2) and
unknown.onnx (an op no importer and no plugin creator knows)."""
import os
import struct
import sys

from onnx import TensorProto, helper, save


def main(out):
    os.makedirs(out, exist_ok=True)
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])
    cat = helper.make_tensor_value_info("cat", TensorProto.FLOAT, [4, 3])
    v3 = helper.make_node("KilnTestScaledAddV3", ["a", "b"], ["y", "cat"], name="custom_v3", domain="kiln.test",
                          alpha=1.5, beta=0.5, tag="from_onnx")
    v2 = helper.make_node("TRT_PluginV2", ["y", "b"], ["z", "unused"], name="trt_v2")
    v2.attribute.extend([
        helper.make_attribute("name", "KilnTestScaledAddV2"),
        helper.make_attribute("version", "1"),
        helper.make_attribute("namespace", ""),
        helper.make_attribute("data", struct.pack("<f", 2.5)),
    ])
    graph = helper.make_graph([v3, v2], "plugins", [a, b], [z, cat])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("kiln.test", 2)])
    save(model, os.path.join(out, "plugins.onnx"))

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    n = helper.make_node("KilnTestNobody", ["x"], ["y"], name="nobody", domain="kiln.test")
    g = helper.make_graph([n], "unknown", [x], [y])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("kiln.test", 1)]),
         os.path.join(out, "unknown.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
