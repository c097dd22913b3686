// The L2 prefetch plan (planL2Prefetch, engine.cc): which layers' weights are prefetched, and where the run forks
// the prefetch off, on hand-made graphs (host only: the plan reads the graph and the constants' addresses).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/dims.h"
#include "runtime/engine_core.h"

namespace kiln::runtime {
namespace {

// A constant of `rows` x `cols` floats (zeros) in `g`; returns its value.
ir::Value* weights(ir::Graph& g, char const* name, int64_t rows, int64_t cols) {
  std::vector<float> zeros(static_cast<size_t>(rows * cols), 0.f);
  return g.addConstant(name, HostTensor::fromVector(DataType::kFLOAT, makeDims({rows, cols}), zeros))->output(0);
}

// The layers (non-Constant nodes) of `g` in order, and a fake device address for every constant's value.
struct Layout {
  std::vector<int32_t> layers;
  std::vector<void*> addresses;
};
Layout layout(ir::Graph const& g) {
  Layout l;
  l.addresses.assign(g.values().size(), nullptr);
  for (auto const& n : g.nodes()) {
    if (n->op != ir::OpType::kConstant) {
      l.layers.push_back(n->id);
      continue;
    }
    l.addresses[static_cast<size_t>(n->output(0)->id)] =
        reinterpret_cast<void*>(static_cast<uintptr_t>(0x100000) * static_cast<uintptr_t>(n->output(0)->id + 1));
  }
  return l;
}

void expectRanges(std::vector<backends::DeviceRange> const& got, std::vector<ir::Value const*> const& want,
                  Layout const& l) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].data, l.addresses[static_cast<size_t>(want[i]->id)]) << "range " << i;
    EXPECT_EQ(got[i].bytes, want[i]->producer->constant->bytes()) << "range " << i;
  }
}

TEST(L2PrefetchPlan, WeightsOfEachGemmForkOffThreeWeightLayersAhead) {
  static_assert(kL2PrefetchAhead == 3, "the positions below assume three layers ahead");
  ir::Graph g;
  auto x = g.addInput("x", DataType::kFLOAT, makeDims({1, 256}));
  ASSERT_TRUE(x.isOk());
  ir::Value* w0 = weights(g, "w0", 256, 256);  // 256 KB each
  ir::Value* w1 = weights(g, "w1", 256, 256);
  ir::Value* w2 = weights(g, "w2", 16, 16);      // 1 KB: below the minimum
  ir::Value* w3 = weights(g, "w3", 1536, 1536);  // 9 MB: above the maximum
  ir::Value* w4 = weights(g, "w4", 256, 256);
  ir::Value* w5 = weights(g, "w5", 256, 256);
  ir::Value* b5 = weights(g, "b5", 1, 256);
  ir::Value* h = g.addNode(ir::OpType::kMatrixMultiply, "m0", {*x, w0})->output(0);     // position 0
  h = g.addNode(ir::OpType::kActivation, "relu", {h})->output(0);                       // 1
  h = g.addNode(ir::OpType::kMatrixMultiply, "m1", {h, w1})->output(0);                 // 2
  ir::Value* side = g.addNode(ir::OpType::kMatrixMultiply, "m2", {w2, w2})->output(0);  // 3
  ir::Value* big = g.addNode(ir::OpType::kMatrixMultiply, "m3", {w3, w3})->output(0);   // 4
  h = g.addNode(ir::OpType::kMatrixMultiply, "m4", {h, w4})->output(0);                 // 5
  h = g.addNode(ir::OpType::kMatrixMultiply, "m5", {h, w5, b5})->output(0);             // 6
  g.markOutput(h);
  g.markOutput(side);
  g.markOutput(big);
  Layout l = layout(g);
  ASSERT_EQ(l.layers.size(), 7u);
  auto plan = planL2Prefetch(g, l.layers, l.addresses);
  ASSERT_EQ(plan.size(), 7u);
  // m0 is first: nothing runs before it. m1's weights fork off at the start; m2 and m3 are out of bounds (but
  // count as weight layers for the distance); m4's fork at m1 (three weight layers back: m1, m2, m3), m5's at m2.
  expectRanges(plan[0], {w1}, l);
  EXPECT_TRUE(plan[1].empty());
  expectRanges(plan[2], {w4}, l);
  expectRanges(plan[3], {w5, b5}, l);
  for (size_t i = 4; i < plan.size(); ++i) EXPECT_TRUE(plan[i].empty()) << "position " << i;
}

TEST(L2PrefetchPlan, NothingWithoutWeightsOnTheDevice) {
  ir::Graph g;
  auto x = g.addInput("x", DataType::kFLOAT, makeDims({1, 256}));
  ASSERT_TRUE(x.isOk());
  ir::Value* w0 = weights(g, "w0", 256, 256);
  ir::Value* w1 = weights(g, "w1", 256, 256);
  ir::Value* h = g.addNode(ir::OpType::kMatrixMultiply, "m0", {*x, w0})->output(0);
  h = g.addNode(ir::OpType::kMatrixMultiply, "m1", {h, w1})->output(0);
  g.markOutput(h);
  Layout l = layout(g);
  EXPECT_EQ(planL2Prefetch(g, l.layers, l.addresses).size(), 2u);
  // The constants are not on the device (a CPU plan): no plan at all.
  EXPECT_TRUE(planL2Prefetch(g, l.layers, std::vector<void*>(g.values().size(), nullptr)).empty());
  // Only activations are read whole (both operands computed): no plan either.
  ir::Graph act;
  auto a = act.addInput("a", DataType::kFLOAT, makeDims({256, 256}));
  ASSERT_TRUE(a.isOk());
  ir::Value* y = act.addNode(ir::OpType::kMatrixMultiply, "aa", {*a, *a})->output(0);
  y = act.addNode(ir::OpType::kMatrixMultiply, "aa2", {y, *a})->output(0);
  act.markOutput(y);
  Layout la = layout(act);
  EXPECT_TRUE(planL2Prefetch(act, la.layers, la.addresses).empty());
}

}  // namespace
}  // namespace kiln::runtime
