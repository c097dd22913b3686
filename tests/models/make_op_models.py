#!/usr/bin/python3
"""Writes one small ONNX model per op definition that changed in opsets 18 to 21 (which ONNX 1.12's backend
node tests, stopping at opset 17, do not cover), with random inputs, in the manifest format of export_models.py.

Usage: make_op_models.py OUT_DIR

ONNX Runtime computes the expected outputs (run_ort.js). A case either must match them ("expect": "match"), or
must be refused by Kiln's parser with an error containing "expect_error" (an op or attribute Kiln says it does
not import). Inputs are written as raw little-endian bytes.
"""
import json
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261129)
cases = []

NP_TO_ONNX = {
    np.dtype("float32"): TensorProto.FLOAT,
    np.dtype("float64"): TensorProto.DOUBLE,
    np.dtype("float16"): TensorProto.FLOAT16,
    np.dtype("int64"): TensorProto.INT64,
    np.dtype("int32"): TensorProto.INT32,
    np.dtype("int8"): TensorProto.INT8,
    np.dtype("uint8"): TensorProto.UINT8,
    np.dtype("bool"): TensorProto.BOOL,
}
TYPE_NAMES = {
    TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64", TensorProto.FLOAT16: "float16",
    TensorProto.INT64: "int64", TensorProto.INT32: "int32", TensorProto.INT8: "int8", TensorProto.UINT8: "uint8",
    TensorProto.BOOL: "bool",
}


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def case(name, opset, nodes, inputs, outputs, inits=(), expect="match", expect_error=None, atol=1e-5, rtol=1e-4):
    """inputs: [(name, array)]; outputs: [(name, onnx elem type)]; inits: [TensorProto]."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype], list(a.shape)) for n, a in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="kiln-tests")
    model.ir_version = 10 if opset >= 21 else (9 if opset >= 19 else 8)
    cases.append((name, model, inputs, outputs, expect, expect_error, atol, rtol))


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


F = TensorProto.FLOAT
I64 = TensorProto.INT64
# Element types newer than ONNX 1.12's python package (TensorProto.DataType values of ONNX 1.14+ / 1.16+).
FLOAT8E4M3FN = 17
INT4 = 22


def raw_tensor(name, elem_type, dims, raw):
    t = TensorProto()
    t.name = name
    t.data_type = elem_type
    t.dims.extend(dims)
    t.raw_data = raw
    return t

# ---- opset 18: reductions take axes as an input -------------------------------------------------------------
x = f32(2, 3, 4, lo=0.1, hi=2.0)
for op in ["ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
           "ReduceProd", "ReduceSumSquare"]:
    case(f"{op.lower()}18_axes_input", 18, [node(op, ["x", "axes"], ["y"], keepdims=0)], [("x", x)], [("y", F)],
         inits=[const("axes", np.array([-1, 0], np.int64))])
    case(f"{op.lower()}18_keepdims_no_axes", 18, [node(op, ["x"], ["y"], keepdims=1)], [("x", x)], [("y", F)])
case("reducemean18_noop_with_empty_axes", 18, [node("ReduceMean", ["x"], ["y"], noop_with_empty_axes=1)],
     [("x", x)], [("y", F)])

# ---- opset 18: Pad with axes; 19: wrap mode -------------------------------------------------------------------
x = f32(2, 3, 4)
case("pad18_axes_constant", 18, [node("Pad", ["x", "pads", "value", "axes"], ["y"], mode="constant")], [("x", x)],
     [("y", F)], inits=[const("pads", np.array([1, 2, 0, 1], np.int64)), const("value", np.array(0.5, np.float32)),
                        const("axes", np.array([1, -1], np.int64))])
case("pad18_axes_reflect", 18, [node("Pad", ["x", "pads", "", "axes"], ["y"], mode="reflect")], [("x", x)],
     [("y", F)], inits=[const("pads", np.array([2, 1], np.int64)), const("axes", np.array([2], np.int64))])
case("pad18_axes_edge", 18, [node("Pad", ["x", "pads", "", "axes"], ["y"], mode="edge")], [("x", x)], [("y", F)],
     inits=[const("pads", np.array([1, 0, 0, 3], np.int64)), const("axes", np.array([0, 2], np.int64))])
case("pad19_wrap", 19, [node("Pad", ["x", "pads"], ["y"], mode="wrap")], [("x", x)], [("y", F)],
     inits=[const("pads", np.array([0, 1, 2, 0, 2, 1], np.int64))])

# ---- opset 18: Split by num_outputs ---------------------------------------------------------------------------
x = f32(2, 7)
case("split18_num_outputs_uneven", 18, [node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)], [("x", x)],
     [("a", F), ("b", F), ("c", F)])
case("split18_num_outputs_even", 18, [node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2)], [("x", x)],
     [("a", F), ("b", F)])

# ---- opset 18: scatter reductions max/min ----------------------------------------------------------------------
data = f32(3, 4)
idx = np.array([[0, 1, 2, 0], [2, 0, 1, 1]], np.int64)
upd = f32(2, 4)
for red in ["max", "min"]:
    case(f"scatterelements18_{red}", 18, [node("ScatterElements", ["d", "i", "u"], ["y"], axis=0, reduction=red)],
         [("d", data), ("u", upd)], [("y", F)], inits=[const("i", idx)])
    case(f"scatternd18_{red}", 18, [node("ScatterND", ["d", "i", "u"], ["y"], reduction=red)],
         [("d", data), ("u", f32(3, 4))], [("y", F)], inits=[const("i", np.array([[1], [0], [1]], np.int64))])

# ---- opset 18/19: Resize axes, keep_aspect_ratio_policy, antialias, half_pixel_symmetric -----------------------
x = f32(1, 2, 6, 8)
case("resize18_axes_scales", 18,
     [node("Resize", ["x", "", "scales"], ["y"], mode="linear", axes=[3, 2])], [("x", x)], [("y", F)],
     inits=[const("scales", np.array([0.5, 1.5], np.float32))])
for policy in ["not_larger", "not_smaller"]:
    case(f"resize18_keep_aspect_{policy}", 18,
         [node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest", axes=[2, 3],
               keep_aspect_ratio_policy=policy)], [("x", x)], [("y", F)],
         inits=[const("sizes", np.array([3, 5], np.int64))])
case("resize18_antialias_linear", 18,
     [node("Resize", ["x", "", "scales"], ["y"], mode="linear", antialias=1)], [("x", x)], [("y", F)],
     inits=[const("scales", np.array([1, 1, 0.5, 0.5], np.float32))])
case("resize18_antialias_cubic", 18,
     [node("Resize", ["x", "", "scales"], ["y"], mode="cubic", antialias=1)], [("x", x)], [("y", F)],
     inits=[const("scales", np.array([1, 1, 0.6, 0.75], np.float32))])
case("resize19_half_pixel_symmetric", 19,
     [node("Resize", ["x", "", "scales"], ["y"], mode="linear",
           coordinate_transformation_mode="half_pixel_symmetric")], [("x", x)], [("y", F)],
     inits=[const("scales", np.array([1, 1, 1.5, 0.75], np.float32))])

# ---- opset 18: new ops ---------------------------------------------------------------------------------------
x = f32(4, 5, 3)
case("centercroppad18", 18, [node("CenterCropPad", ["x", "shape"], ["y"])], [("x", x)], [("y", F)],
     inits=[const("shape", np.array([2, 7, 3], np.int64))])
case("centercroppad18_axes", 18, [node("CenterCropPad", ["x", "shape"], ["y"], axes=[0, 1])], [("x", x)],
     [("y", F)], inits=[const("shape", np.array([5, 2], np.int64))])
case("col2im18", 18, [node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], strides=[1, 1], pads=[0, 0, 0, 0])],
     [("x", f32(1, 4, 12))], [("y", F)],
     inits=[const("image_shape", np.array([4, 5], np.int64)), const("block_shape", np.array([2, 2], np.int64))])
a = rng.integers(-100, 100, size=(3, 4)).astype(np.int32)
b = rng.integers(-100, 100, size=(3, 4)).astype(np.int32)
for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
    case(f"{op.lower()}18", 18, [node(op, ["a", "b"], ["y"])], [("a", a), ("b", b)], [("y", TensorProto.INT32)])
case("bitwisenot18_uint8", 18, [node("BitwiseNot", ["a"], ["y"])],
     [("a", rng.integers(0, 255, size=(5,)).astype(np.uint8))], [("y", TensorProto.UINT8)])
case("mish18", 18, [node("Mish", ["x"], ["y"])], [("x", f32(3, 4, lo=-5, hi=5))], [("y", F)])
x = f32(2, 6, 3, 3)
case("groupnormalization18", 18, [node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3, epsilon=1e-5)],
     [("x", x)], [("y", F)], inits=[const("s", f32(3)), const("b", f32(3))])
case("groupnormalization21", 21, [node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3, epsilon=1e-5)],
     [("x", x)], [("y", F)], inits=[const("s", f32(6)), const("b", f32(6))])
case("lppool18_ceil", 18, [node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], p=2, ceil_mode=1)],
     [("x", f32(1, 2, 5, 5))], [("y", F)])

# ---- opset 19 ------------------------------------------------------------------------------------------------
case("averagepool19_dilations", 19,
     [node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2], strides=[1, 1])],
     [("x", f32(1, 2, 6, 6))], [("y", F)])
x = np.array([0.1, -1.3, 500.0, -1000.0, 3.3, 0.015625, 240.0, 17.0], np.float32)
for sat in [1, 0]:
    case(f"cast19_fp8e4m3_saturate{sat}", 19,
         [node("Cast", ["x"], ["q"], to=FLOAT8E4M3FN, saturate=sat), node("Cast", ["q"], ["y"], to=F)],
         [("x", x)], [("y", F)], atol=0, rtol=0)
case("quantizelinear19_fp8", 19,
     [node("QuantizeLinear", ["x", "s", "z"], ["q"]), node("DequantizeLinear", ["q", "s", "z"], ["y"])],
     [("x", f32(2, 8))], [("y", F)],
     inits=[const("s", np.array(0.05, np.float32)),
            raw_tensor("z", FLOAT8E4M3FN, [], b"\x00")], atol=0, rtol=0)
case("shape19_start_end", 19, [node("Shape", ["x"], ["y"], start=1, end=-1)], [("x", f32(2, 3, 4, 5))],
     [("y", I64)])
case("size19", 19, [node("Size", ["x"], ["y"])], [("x", f32(2, 3, 4))], [("y", I64)])
case("reshape19_allowzero", 19, [node("Reshape", ["x", "s"], ["y"], allowzero=0)], [("x", f32(2, 3, 4))],
     [("y", F)], inits=[const("s", np.array([0, -1, 2], np.int64))])
case("deformconv19", 19, [node("DeformConv", ["x", "w", "off"], ["y"], kernel_shape=[2, 2])],
     [("x", f32(1, 1, 3, 3)), ("off", f32(1, 8, 2, 2, lo=-0.5, hi=0.5))], [("y", F)],
     inits=[const("w", f32(1, 1, 2, 2))])

# ---- opset 20 ------------------------------------------------------------------------------------------------
x = f32(3, 4, lo=-4, hi=4)
case("gelu20", 20, [node("Gelu", ["x"], ["y"])], [("x", x)], [("y", F)])
case("gelu20_tanh", 20, [node("Gelu", ["x"], ["y"], approximate="tanh")], [("x", x)], [("y", F)])
x = f32(1, 2, 4, 5)
grid = f32(1, 3, 3, 2, lo=-1.1, hi=1.1)
for mode in ["linear", "nearest", "cubic"]:
    case(f"gridsample20_{mode}", 20, [node("GridSample", ["x", "g"], ["y"], mode=mode, align_corners=0)],
         [("x", x), ("g", grid)], [("y", F)])
case("gridsample20_volumetric", 20, [node("GridSample", ["x", "g"], ["y"], mode="linear", align_corners=1)],
     [("x", f32(1, 2, 3, 4, 5)), ("g", f32(1, 2, 3, 2, 3, lo=-1, hi=1))], [("y", F)])
theta = f32(2, 2, 3, lo=-1, hi=1)
for ac in [0, 1]:
    case(f"affinegrid20_2d_align{ac}", 20, [node("AffineGrid", ["theta", "size"], ["y"], align_corners=ac)],
         [("theta", theta)], [("y", F)], inits=[const("size", np.array([2, 3, 4, 5], np.int64))])
case("affinegrid20_3d", 20, [node("AffineGrid", ["theta", "size"], ["y"])], [("theta", f32(1, 3, 4))], [("y", F)],
     inits=[const("size", np.array([1, 1, 2, 3, 4], np.int64))])
case("constantofshape20_int64", 20,
     [node("ConstantOfShape", ["s"], ["y"], value=helper.make_tensor("v", I64, [1], [7]))], [], [("y", I64)],
     inits=[const("s", np.array([2, 3], np.int64))])
x = np.array([1.0, np.inf, -np.inf, np.nan, -2.5], np.float16)
case("isinf20_fp16_positive_only", 20, [node("IsInf", ["x"], ["y"], detect_negative=0)], [("x", x)],
     [("y", TensorProto.BOOL)])
case("isnan20_fp16", 20, [node("IsNaN", ["x"], ["y"])], [("x", x)], [("y", TensorProto.BOOL)])
bx = rng.integers(0, 2, size=(3, 4)).astype(bool)
case("reducemax20_bool", 20, [node("ReduceMax", ["x", "axes"], ["y"], keepdims=0)], [("x", bx)],
     [("y", TensorProto.BOOL)], inits=[const("axes", np.array([1], np.int64))])
case("reducemin20_bool", 20, [node("ReduceMin", ["x", "axes"], ["y"], keepdims=1)], [("x", bx)],
     [("y", TensorProto.BOOL)], inits=[const("axes", np.array([0], np.int64))])

# ---- opset 21 ------------------------------------------------------------------------------------------------
x = f32(2, 3, 4)
case("ops21_shape_family", 21,
     [node("Transpose", ["x"], ["t"], perm=[2, 0, 1]), node("Flatten", ["t"], ["f"], axis=1),
      node("Unsqueeze", ["f", "ax"], ["u"]), node("Squeeze", ["u", "ax"], ["s"]), node("Identity", ["s"], ["i"]),
      node("Reshape", ["i", "shape"], ["y"])], [("x", x)], [("y", F)],
     inits=[const("ax", np.array([0], np.int64)), const("shape", np.array([3, 8], np.int64))])
case("cast21_int4_roundtrip", 21,
     [node("Cast", ["x"], ["q"], to=INT4), node("Cast", ["q"], ["y"], to=F)],
     [("x", np.array([-9.0, -8.0, -3.0, 0.0, 2.0, 7.0, 8.0, 100.0], np.float32))], [("y", F)], atol=0, rtol=0)
w = f32(4, 6)
case("quantizelinear21_blocked", 21,
     [node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1, block_size=3),
      node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1, block_size=3)],
     [("x", w)], [("y", F)],
     inits=[const("s", np.abs(f32(4, 2)) + 0.01), const("z", np.zeros((4, 2), np.int8))], atol=1e-6, rtol=0)
case("quantizelinear21_output_dtype", 21,
     [node("QuantizeLinear", ["x", "s"], ["q"], output_dtype=TensorProto.UINT8),
      node("DequantizeLinear", ["q", "s"], ["y"])], [("x", f32(5, lo=0, hi=10))], [("y", F)],
     inits=[const("s", np.array(0.1, np.float32))], atol=1e-6, rtol=0)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    manifest = []
    for name, model, inputs, outputs, expect, expect_error, atol, rtol in cases:
        path = os.path.join(out, name + ".onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        entry = {"name": name, "model": name + ".onnx", "expect": expect, "atol": atol, "rtol": rtol, "inputs": []}
        if expect_error:
            entry["expect_error"] = expect_error
        for n, a in inputs:
            file = f"{name}.{n}.bin"
            with open(os.path.join(out, file), "wb") as f:
                f.write(np.ascontiguousarray(a).tobytes())
            entry["inputs"].append({"name": n, "file": file, "type": str(a.dtype), "shape": list(a.shape)})
        entry["output_names"] = [n for n, _ in outputs]
        manifest.append(entry)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"wrote {len(manifest)} op models to {out}")


if __name__ == "__main__":
    main()
