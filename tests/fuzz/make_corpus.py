#!/usr/bin/python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/seed_*): small real ONNX models made with
onnx.helper, the plans kilnexec builds from them (reference and oneDNN CPU backends), and IR text graphs.
Crash inputs found by scripts/fuzz are kept there too (crash_*); this script leaves those alone.

  /usr/bin/python3 tests/fuzz/make_corpus.py --kilnexec build-asan/tools/kilnexec/kilnexec
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def rnd(shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="kiln-fuzz-seeds")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def onnx_models():
    """(name, model, kilnexec extra flags) of small models covering the importer families."""
    ms = []
    ms.append(("conv_relu_pool", model("conv_relu_pool", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
    ], [vi("x", F, [1, 2, 6, 6])], [vi("y", F, [1, 3, 3, 3])],
        [init("w", rnd([3, 2, 3, 3], 1)), init("b", rnd([3], 2))]), []))
    ms.append(("gemm_softmax", model("gemm_softmax", [
        helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1),
        helper.make_node("Softmax", ["g"], ["y"], axis=-1),
    ], [vi("x", F, [2, 8])], [vi("y", F, [2, 4])], [init("w", rnd([4, 8], 3)), init("b", rnd([4], 4))]), []))
    ms.append(("matmul_add_gelu_ln", model("matmul_add_gelu_ln", [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Erf", ["a"], ["e"]),
        helper.make_node("Mul", ["a", "e"], ["g"]),
        helper.make_node("LayerNormalization", ["g", "s", "t"], ["y"], axis=-1, epsilon=1e-5),
    ], [vi("x", F, [1, 3, 4])], [vi("y", F, [1, 3, 4])],
        [init("w", rnd([4, 4], 5)), init("b", rnd([4], 6)), init("s", rnd([4], 7)), init("t", rnd([4], 8))]), []))
    ms.append(("reshape_transpose_concat", model("reshape_transpose_concat", [
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Concat", ["t", "t"], ["y"], axis=1),
    ], [vi("x", F, [2, 6])], [vi("y", F, [2, 6, 2])], [init("shape", np.array([2, 2, 3], np.int64))]), []))
    ms.append(("dynamic_shape_arith", model("dynamic_shape_arith", [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("ReduceMean", ["r"], ["y"], axes=[1], keepdims=1),
    ], [vi("x", F, ["N", 2, 3])], [vi("y", F, ["N", 1])],
        [init("zero", np.array(0, np.int64)), init("zero1", np.array([0], np.int64)),
         init("minus1", np.array([-1], np.int64))], opset=13),
        ["--minShapes=x:1x2x3", "--optShapes=x:2x2x3", "--maxShapes=x:4x2x3"]))
    ms.append(("slice_gather_pad_cast", model("slice_gather_pad_cast", [
        helper.make_node("Slice", ["x", "st", "en", "ax"], ["s"]),
        helper.make_node("Gather", ["s", "idx"], ["g"], axis=1),
        helper.make_node("Pad", ["g", "pads"], ["p"], mode="constant"),
        helper.make_node("Cast", ["p"], ["y"], to=TensorProto.INT32),
    ], [vi("x", F, [3, 5])], [vi("y", TensorProto.INT32, [4, 4])],
        [init("st", np.array([0, 1], np.int64)), init("en", np.array([2, 5], np.int64)),
         init("ax", np.array([0, 1], np.int64)), init("idx", np.array([0, 2], np.int64)),
         init("pads", np.array([1, 1, 1, 1], np.int64))]), []))
    ms.append(("nonzero_topk", model("nonzero_topk", [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
    ], [vi("x", F, [2, 5])], [vi("nz", TensorProto.INT64, [2, None]), vi("v", F, [2, 3]),
                              vi("i", TensorProto.INT64, [2, 3])], [init("k", np.array([3], np.int64))]), []))
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", F, [2, 3])])
    ms.append(("if_branches", model("if_branches", [
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
    ], [vi("x", F, [2, 3]), vi("c", TensorProto.BOOL, [])], [vi("y", F, [2, 3])]), []))
    body = helper.make_graph([
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
    ], "body", [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc_in", F, [3])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F, [3])])
    ms.append(("loop_sum", model("loop_sum", [
        helper.make_node("Loop", ["trip", "cond", "acc0"], ["y"], body=body),
    ], [vi("x", F, [3])], [vi("y", F, [3])],
        [init("trip", np.array(4, np.int64)), init("cond", np.array(True)), init("acc0", rnd([3], 9))]), []))
    ms.append(("resize_batchnorm", model("resize_batchnorm", [
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"]),
        helper.make_node("Resize", ["n", "", "scales"], ["y"], mode="nearest"),
    ], [vi("x", F, [1, 2, 3, 3])], [vi("y", F, [1, 2, 6, 6])],
        [init("s", rnd([2], 10)), init("b", rnd([2], 11)), init("m", rnd([2], 12)),
         init("v", np.abs(rnd([2], 13)) + 0.5), init("scales", np.array([1, 1, 2, 2], np.float32))]), []))
    return ms


IR_GRAPHS = {
    "conv_relu": """graph {
  input x: f32[1,3,8,8]
  w: f32[4,3,3,3] = Constant "w" () {data=random(1)}
  b: f32[4] = Constant "b" () {data=fill(0.5)}
  c: f32[1,4,6,6] = Convolution "conv" (x, w, b) {dilations=[1,1], groups=1, kernel_shape=[3,3], num_output_maps=4, pads_begin=[0,0], pads_end=[0,0], strides=[1,1]}
  y: f32[1,4,6,6] = Activation "relu" (c) {type=0}
  output y
}
""",
    "matmul_softmax": """graph {
  input a: f32[2,3]
  w: f32[3,4] = Constant "w" () {data=[0.5,-1.0,2.0,0.25,1.0,1.0,-0.5,0.0,3.0,2.5,-2.0,1.5]}
  m: f32[2,4] = MatrixMultiply "mm" (a, w) {op_a=0, op_b=0}
  y: f32[2,4] = SoftMax "sm" (m) {axis=1}
  output y
}
""",
    "shape_arith": """graph {
  input x: f32[-1,6]
  s: i64[2] = Shape "shape" (x)
  k: i64[2] = Constant "k" () {data=[1,2]}
  p: i64[2] = ElementWise "mul" (s, k) {op=1}
  r: f32[-1,-1] = Shuffle "reshape" (x, p) {first_perm=[0,1], second_perm=[0,1], zero_is_placeholder=0}
  output r
}
""",
    "elementwise_reduce": """graph {
  input a: f32[2,3,4]
  input b: f32[1,3,1]
  e: f32[2,3,4] = ElementWise "add" (a, b) {op=0}
  u: f32[2,3,4] = Unary "exp" (e) {op=0}
  r: f32[2,1,4] = Reduce "sum" (u) {axes=[1], keep_dims=1, op=0}
  output r
}
""",
    "concat_slice_gather": """graph {
  input a: i32[2,2]
  c: i32[2,2] = Constant "c" () {data=[1,2,3,4]}
  j: i32[4,2] = Concatenation "cat" (a, c) {axis=0}
  s: i32[2,2] = Slice "slice" (j) {mode=0, size=[2,2], start=[1,0], stride=[1,1]}
  i: i64[3] = Constant "idx" () {data=[0,1,0]}
  g: i32[3,2] = Gather "gather" (s, i) {axis=0, mode=0, num_elementwise_dims=0}
  output g
}
""",
    "annotated": """graph {
  input x: f16[2,-1]
  y: f16[2,-1] = Cast "cast" (x) {to=1} @precision=f16 @tactic="cast_reference" @fused=["a","b c"]
  output y
}
""",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kilnexec", required=True, help="kilnexec binary that builds the plan seeds")
    ap.add_argument("--out", default=os.path.join(HERE, "corpus"))
    args = ap.parse_args()
    args.kilnexec = os.path.abspath(args.kilnexec)
    dirs = {t: os.path.join(args.out, t) for t in ("onnx_fuzz", "plan_fuzz", "ir_text_fuzz")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if f.startswith("seed_"):
                os.remove(os.path.join(d, f))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, flags in onnx_models():
            path = os.path.join(dirs["onnx_fuzz"], "seed_" + name + ".onnx")
            onnx.save(m, path)
            for backend in ("reference", "cpu"):
                plan = os.path.join(dirs["plan_fuzz"], "seed_%s_%s.plan" % (name, backend))
                cmd = [args.kilnexec, "--onnx=" + path, "--saveEngine=" + plan, "--skipInference",
                       "--backend=" + backend] + flags
                r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
                if r.returncode != 0:
                    failed += 1
                    print("make_corpus: %s failed:\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]),
                          file=sys.stderr)
    for name, text in IR_GRAPHS.items():
        with open(os.path.join(dirs["ir_text_fuzz"], "seed_" + name + ".txt"), "w") as f:
            f.write(text)
    total = 0
    for d in dirs.values():
        for f in os.listdir(d):
            total += os.path.getsize(os.path.join(d, f))
    print("make_corpus: %d bytes in %s (%d plan builds failed)" % (total, args.out, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
