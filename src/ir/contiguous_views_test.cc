// Tests of the byte offsets of contiguous views: Concatenation blocks, unit-stride Slice runs, constant-index
// Gather rows, and the shapes, types and parameters that make a layer no such view.
#include "ir/contiguous_views.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/dims.h"
#include "ir/shape_inference.h"
#include "ir/text.h"

namespace kiln::ir {
namespace {

struct Parsed {
  std::unique_ptr<Graph> g;
  Node const* node = nullptr;
  std::optional<std::vector<int64_t>> offsets;
};

// Parses `body` (lines of a graph with input x), infers shapes and asks for the offsets of the node named "v".
Parsed offsetsOf(std::string const& inputs, std::string const& body) {
  Parsed p;
  auto g = parseGraph("graph {\n" + inputs + body + "}\n");
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return p;
  p.g = std::move(g).value();
  EXPECT_TRUE(inferGraphInPlace(*p.g, nullptr).isOk());
  for (auto const& n : p.g->nodes())
    if (n->name == "v") p.node = n.get();
  EXPECT_NE(p.node, nullptr);
  if (!p.node) return p;
  std::vector<TensorInfo> in, out;
  for (Value const* v : p.node->inputs) in.push_back(v ? TensorInfo{v->dtype, v->shape} : TensorInfo{});
  for (Value const* v : p.node->outputs) out.push_back({v->dtype, v->shape});
  p.offsets = contiguousViewOffsets(*p.node, in, out);
  return p;
}

std::vector<int64_t> offs(std::initializer_list<int64_t> v) { return v; }

TEST(ContiguousViews, ConcatenationBlocks) {
  std::string in = "  input a: f16[1,3,4,4]\n  input b: f16[1,5,4,4]\n";
  Parsed p = offsetsOf(in, "  y: f16[1,8,4,4] = Concatenation \"v\" (a, b) {axis=1}\n  output y\n");
  ASSERT_TRUE(p.offsets);
  EXPECT_EQ(*p.offsets, offs({0, 3 * 16 * 2}));
  // Axis 0 with any dims after it; a negative axis counts from the end.
  Parsed q = offsetsOf("  input a: f32[2,3]\n  input b: f32[1,3]\n",
                       "  y: f32[3,3] = Concatenation \"v\" (a, b) {axis=-2}\n  output y\n");
  ASSERT_TRUE(q.offsets);
  EXPECT_EQ(*q.offsets, offs({0, 24}));
  // A dim of 2 before the axis: not blocks.
  EXPECT_FALSE(offsetsOf("  input a: f32[2,3]\n  input b: f32[2,1]\n",
                         "  y: f32[2,4] = Concatenation \"v\" (a, b) {axis=1}\n  output y\n")
                   .offsets);
}

TEST(ContiguousViews, SliceRuns) {
  std::string x = "  input x: f32[1,6,4,5]\n";
  Parsed p = offsetsOf(x,
                       "  y: f32[1,2,4,5] = Slice \"v\" (x) {start=[0,3,0,0], size=[1,2,4,5], stride=[1,1,1,1]}\n"
                       "  output y\n");
  ASSERT_TRUE(p.offsets);
  EXPECT_EQ(*p.offsets, offs({3 * 20 * 4}));
  // Within one row: rows 1..2 of channel 4.
  Parsed q = offsetsOf(x,
                       "  y: f32[1,1,2,5] = Slice \"v\" (x) {start=[0,4,1,0], size=[1,1,2,5], stride=[1,1,1,1]}\n"
                       "  output y\n");
  ASSERT_TRUE(q.offsets);
  EXPECT_EQ(*q.offsets, offs({(4 * 20 + 5) * 4}));
  // On a subset of axes (the others whole).
  Parsed r = offsetsOf(x,
                       "  y: f32[1,1,4,5] = Slice \"v\" (x) {start=[5], size=[1], stride=[1], axes=[1]}\n"
                       "  output y\n");
  ASSERT_TRUE(r.offsets);
  EXPECT_EQ(*r.offsets, offs({5 * 20 * 4}));
  // Not contiguous: part of every channel, a step of 2, a wrapping mode.
  EXPECT_FALSE(offsetsOf(x,
                         "  y: f32[1,6,2,5] = Slice \"v\" (x) {start=[0,0,1,0], size=[1,6,2,5], "
                         "stride=[1,1,1,1]}\n  output y\n")
                   .offsets);
  EXPECT_FALSE(offsetsOf(x,
                         "  y: f32[1,2,4,5] = Slice \"v\" (x) {start=[0,0,0,0], size=[1,2,4,5], "
                         "stride=[1,2,1,1]}\n  output y\n")
                   .offsets);
  EXPECT_FALSE(offsetsOf(x,
                         "  y: f32[1,2,4,5] = Slice \"v\" (x) {start=[0,3,0,0], size=[1,2,4,5], "
                         "stride=[1,1,1,1], mode=1}\n  output y\n")
                   .offsets);
  // Parameters given as tensors (known only when running, in general).
  EXPECT_FALSE(offsetsOf(x + "  input s: i32[4]\n",
                         "  y: f32[-1,-1,-1,-1] = Slice \"v\" (x, s) {size=[1,2,4,5], stride=[1,1,1,1]}\n  output y\n")
                   .offsets);
}

TEST(ContiguousViews, GatherRows) {
  std::string x = "  input x: f16[1,7,3]\n";
  Parsed p = offsetsOf(x,
                       "  k: i64[] = Constant \"k\" () {data=[-2]}\n  y: f16[1,3] = Gather \"v\" (x, k) {axis=1}\n"
                       "  output y\n");
  ASSERT_TRUE(p.offsets);
  EXPECT_EQ(*p.offsets, offs({5 * 3 * 2}));
  // An index given at run time, out of range, or rows apart.
  EXPECT_FALSE(
      offsetsOf(x + "  input k: i64[]\n", "  y: f16[1,3] = Gather \"v\" (x, k) {axis=1}\n  output y\n").offsets);
  EXPECT_FALSE(offsetsOf("  input x: f16[2,7]\n",
                         "  k: i32[] = Constant \"k\" () {data=[1]}\n  y: f16[2] = Gather \"v\" (x, k) {axis=1}\n"
                         "  output y\n")
                   .offsets);
}

TEST(ContiguousViews, GatherOfConsecutiveRows) {
  // BERT's padding mask: the flattened [B * S, 1] mask gathered at b * S + s, here B = 2, S = 3, as [2, 1, 3].
  std::string x = "  input x: bool[6,1]\n";
  Parsed p = offsetsOf(x,
                       "  k: i64[2,1,3] = Constant \"k\" () {data=[0,1,2,3,4,5]}\n"
                       "  y: bool[2,1,3,1] = Gather \"v\" (x, k) {axis=0}\n  output y\n");
  ASSERT_TRUE(p.offsets);
  EXPECT_EQ(*p.offsets, offs({0}));
  // A run that starts inside the axis, negative indices counted from its end.
  p = offsetsOf("  input x: f16[1,7,3]\n",
                "  k: i32[2] = Constant \"k\" () {data=[-4,-3]}\n  y: f16[1,2,3] = Gather \"v\" (x, k) {axis=1}\n"
                "  output y\n");
  ASSERT_TRUE(p.offsets);
  EXPECT_EQ(*p.offsets, offs({3 * 3 * 2}));
  // Out of order, repeated, a gap, or past the end: the rows are not one run.
  for (char const* data : {"[1,0,2]", "[0,0,1]", "[0,1,3]", "[4,5,6]"}) {
    EXPECT_FALSE(offsetsOf(x, std::string("  k: i64[3] = Constant \"k\" () {data=") + data +
                                  "}\n  y: bool[3,1] = Gather \"v\" (x, k) {axis=0}\n  output y\n")
                     .offsets)
        << data;
  }
}

TEST(ContiguousViews, OtherOpsAndUnknownShapes) {
  EXPECT_FALSE(offsetsOf("  input x: f32[1,4]\n", "  y: f32[1,4] = Identity \"v\" (x)\n  output y\n").offsets);
  Parsed p = offsetsOf("  input a: f32[1,3]\n  input b: f32[1,3]\n",
                       "  y: f32[1,6] = Concatenation \"v\" (a, b) {axis=1}\n  output y\n");
  std::vector<TensorInfo> in{{DataType::kFLOAT, Dims{2, {1, 3}}}, {DataType::kFLOAT, Dims{2, {1, -1}}}};
  std::vector<TensorInfo> out{{DataType::kFLOAT, Dims{2, {1, 6}}}};
  EXPECT_FALSE(contiguousViewOffsets(*p.node, in, out));
  in[1].shape.d[1] = 2;  // adds up to 5, not 6
  EXPECT_FALSE(contiguousViewOffsets(*p.node, in, out));
  in[1].shape.d[1] = 3;
  EXPECT_TRUE(contiguousViewOffsets(*p.node, in, out));
  in[1].dtype = DataType::kHALF;
  EXPECT_FALSE(contiguousViewOffsets(*p.node, in, out));
}

}  // namespace
}  // namespace kiln::ir
