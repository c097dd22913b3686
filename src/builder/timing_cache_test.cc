// Tests of the timing cache: bytes round trip, corrupt or foreign bytes refused, combine keeps existing entries,
// and the key changes with everything that can change a tactic's speed (shapes, types, attributes, candidates).
#include "builder/timing_cache.h"

#include <gtest/gtest.h>

#include <memory>

#include "ir/graph.h"

namespace kiln::builder {
namespace {

std::vector<uint8_t> bytesOf(ITimingCache const& c) {
  std::unique_ptr<IHostMemory> m(c.serialize());
  EXPECT_NE(m, nullptr);
  auto const* p = static_cast<uint8_t const*>(m->data());
  return {p, p + m->size()};
}

TEST(TimingCache, RoundTripsThroughBytes) {
  TimingCacheImpl c;
  c.insert("k1", "conv_cudnn_a");
  c.insert("k2|with separators;", "matmul_cublaslt_algo1");
  auto b = bytesOf(c);
  auto back = TimingCacheImpl::parse(b.data(), b.size());
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ((*back)->size(), 2u);
  EXPECT_EQ(*(*back)->lookup("k2|with separators;"), "matmul_cublaslt_algo1");
  EXPECT_FALSE((*back)->lookup("k3").has_value());
  auto empty = TimingCacheImpl::parse(nullptr, 0);
  ASSERT_TRUE(empty.isOk());
  EXPECT_EQ((*empty)->size(), 0u);
}

TEST(TimingCache, RefusesCorruptTruncatedAndForeignBytes) {
  TimingCacheImpl c;
  c.insert("key", "tactic");
  auto b = bytesOf(c);
  for (size_t i = 0; i < b.size(); ++i) {
    auto flipped = b;
    flipped[i] ^= 0x10;
    EXPECT_FALSE(TimingCacheImpl::parse(flipped.data(), flipped.size()).isOk()) << "bit flip at byte " << i;
  }
  for (size_t n = 1; n < b.size(); ++n)
    EXPECT_FALSE(TimingCacheImpl::parse(b.data(), n).isOk()) << "truncated to " << n;
  std::string plan = "KILNPLAN and more bytes than a cache header";
  auto r = TimingCacheImpl::parse(plan.data(), plan.size());
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("not a Kiln timing cache"), std::string::npos);
}

TEST(TimingCache, CombineKeepsExistingEntriesAndResetClears) {
  TimingCacheImpl a, b;
  a.insert("shared", "mine");
  b.insert("shared", "theirs");
  b.insert("new", "added");
  EXPECT_TRUE(a.combine(b, false));
  EXPECT_EQ(*a.lookup("shared"), "mine");
  EXPECT_EQ(*a.lookup("new"), "added");
  EXPECT_TRUE(a.reset());
  EXPECT_EQ(a.size(), 0u);
}

TEST(TimingCache, KeyFollowsShapesTypesAttributesAndCandidates) {
  ir::Graph g;
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({2, 8}));
  ir::Node* n = g.addNode(ir::OpType::kSoftMax, "sm", {x});
  n->attrs.setInt("axis", 1);
  ASSERT_TRUE(g.renumber().isOk());
  ir::ShapeState st;
  st.resize(g.values().size());
  st.info[x->id] = {DataType::kFLOAT, makeDims({2, 8})};
  st.info[n->output(0)->id] = {DataType::kFLOAT, makeDims({2, 8})};
  backends::Tactic t1, t2;
  t1.name = "softmax_a";
  t2.name = "softmax_b";
  std::string const base = timingCacheKey("sm_90", *n, st, {&t1, &t2});
  EXPECT_EQ(base, timingCacheKey("sm_90", *n, st, {&t2, &t1}));  // candidate order does not matter
  EXPECT_NE(base, timingCacheKey("sm_80", *n, st, {&t1, &t2}));
  EXPECT_NE(base, timingCacheKey("sm_90", *n, st, {&t1}));
  ir::ShapeState other = st;
  other.info[x->id].shape = makeDims({4, 8});
  EXPECT_NE(base, timingCacheKey("sm_90", *n, other, {&t1, &t2}));
  other = st;
  other.info[x->id].dtype = DataType::kHALF;
  EXPECT_NE(base, timingCacheKey("sm_90", *n, other, {&t1, &t2}));
  n->attrs.setInt("axis", 0);
  EXPECT_NE(base, timingCacheKey("sm_90", *n, st, {&t1, &t2}));
}

}  // namespace
}  // namespace kiln::builder
