#!/usr/bin/python3
"""Writes scale_bias.onnx for the custom-plugin sample: x [1, 4, 8, 8] -> Relu -> ScaleBias (domain kiln.samples,
attributes in_channel, weight, bias) -> y. Usage: make_model.py OUTPUT.onnx"""
import sys

from onnx import TensorProto, helper, save

C = 4
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, 8, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C, 8, 8])
relu = helper.make_node("Relu", ["x"], ["r"], name="relu")
plugin = helper.make_node("ScaleBias", ["r"], ["y"], name="scale_bias", domain="kiln.samples", in_channel=C,
                          weight=[0.5, 1.0, 1.5, 2.0], bias=[0.0, -1.0, 1.0, 0.25])
graph = helper.make_graph([relu, plugin], "custom_plugin_sample", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("kiln.samples", 1)])
save(model, sys.argv[1])
