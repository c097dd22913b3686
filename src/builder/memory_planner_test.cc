// Tests of the arena planner: reuse across disjoint lifetimes, no overlap among live buffers, and with buffer
// aliases (as build_engine plans): a tensor inside another's buffer never overlaps a third live one.
#include "builder/memory_planner.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "builder/buffer_aliases.h"
#include "core/dims.h"
#include "ir/shape_inference.h"
#include "ir/text.h"

namespace kiln::builder {
namespace {

TEST(MemoryPlanner, ChainReusesMemory) {
  // a -> b -> c -> d: each buffer lives over two steps, so two slots suffice.
  std::vector<BufferRequest> r = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaPlan p = planArena(r, 256);
  EXPECT_TRUE(arenaPlanIsValid(r, p));
  EXPECT_EQ(p.size, 2 * 1024);
}

TEST(MemoryPlanner, AllLiveNeedSum) {
  std::vector<BufferRequest> r = {{100, 0, 5}, {300, 0, 5}, {200, 0, 5}};
  ArenaPlan p = planArena(r, 64);
  EXPECT_TRUE(arenaPlanIsValid(r, p));
  EXPECT_EQ(p.size, 128 + 320 + 256);
  for (int64_t o : p.offsets) EXPECT_EQ(o % 64, 0);
}

TEST(MemoryPlanner, ZeroSizeAndEmpty) {
  EXPECT_EQ(planArena({}).size, 0);
  std::vector<BufferRequest> r = {{0, 0, 1}, {10, 0, 1}};
  ArenaPlan p = planArena(r);
  EXPECT_TRUE(arenaPlanIsValid(r, p));
  EXPECT_EQ(p.size, 256);
}

TEST(MemoryPlanner, RandomRequestsNeverOverlapWhileLive) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferRequest> r;
    int n = 1 + static_cast<int>(rng() % 40);
    int64_t peakBound = 0;
    for (int i = 0; i < n; ++i) {
      int32_t a = static_cast<int32_t>(rng() % 30), b = a + static_cast<int32_t>(rng() % 6);
      r.push_back({static_cast<int64_t>(1 + rng() % 5000), a, b});
      peakBound += (r.back().size + 255) / 256 * 256;
    }
    ArenaPlan p = planArena(r);
    ASSERT_TRUE(arenaPlanIsValid(r, p)) << "trial " << trial;
    EXPECT_LE(p.size, peakBound);
  }
}

// Plans `text` as build_engine does (aliases, then one request per owner over its widened lifetime) and checks
// that any two values whose own lifetimes overlap occupy disjoint bytes unless one shares the other's buffer by
// design (`sharing` lists such pairs); returns the absolute byte offset of each value.
std::vector<int64_t> planWithAliases(std::string const& text,
                                     std::vector<std::pair<std::string, std::string>> const& sharing) {
  auto parsed = ir::parseGraph(text);
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  ir::Graph& g = **parsed;
  EXPECT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  size_t nv = g.values().size();
  AliasInputs in;
  in.inArena.assign(nv, false);
  in.bytes.assign(nv, 0);
  in.fixed.assign(nv, ir::TensorInfo{});
  std::vector<int32_t> first(nv, -1), last(nv, -1);
  for (auto const& v : g.values()) {
    in.inArena[v->id] = !v->isInput && !v->isOutput && v->producer && v->producer->op != ir::OpType::kConstant;
    in.bytes[v->id] = volume(v->shape) * 4;
    in.fixed[v->id] = {v->dtype, v->shape};
  }
  for (size_t ni = 0; ni < g.nodes().size(); ++ni) {
    for (ir::Value* v : g.nodes()[ni]->outputs) first[v->id] = last[v->id] = static_cast<int32_t>(ni);
    for (ir::Value* v : g.nodes()[ni]->inputs)
      if (v) last[v->id] = static_cast<int32_t>(ni);
  }
  std::vector<int32_t> ownFirst = first, ownLast = last;
  BufferAliases a = planBufferAliases(g, in, first, last);
  std::vector<BufferRequest> requests;
  std::vector<size_t> owners;
  for (size_t v = 0; v < nv; ++v)
    if (in.inArena[v] && a.aliasOf[v] < 0) {
      requests.push_back({in.bytes[v], first[v], last[v]});
      owners.push_back(v);
    }
  ArenaPlan p = planArena(requests, 256);
  EXPECT_TRUE(arenaPlanIsValid(requests, p));
  std::vector<int64_t> at(nv, -1);
  for (size_t i = 0; i < owners.size(); ++i) at[owners[i]] = p.offsets[i];
  for (size_t v = 0; v < nv; ++v)
    if (a.aliasOf[v] >= 0) at[v] = at[static_cast<size_t>(a.aliasOf[v])] + a.offset[v];
  auto shares = [&](size_t u, size_t v) {
    for (auto const& [x, y] : sharing) {
      size_t i = static_cast<size_t>(g.findValue(x)->id), j = static_cast<size_t>(g.findValue(y)->id);
      if ((i == u && j == v) || (i == v && j == u)) return true;
    }
    return false;
  };
  for (size_t u = 0; u < nv; ++u)
    for (size_t v = u + 1; v < nv; ++v) {
      if (at[u] < 0 || at[v] < 0 || ownFirst[u] > ownLast[v] || ownFirst[v] > ownLast[u] || shares(u, v)) continue;
      EXPECT_TRUE(at[u] + in.bytes[u] <= at[v] || at[v] + in.bytes[v] <= at[u])
          << g.values()[u]->name << " and " << g.values()[v]->name << " overlap while both live";
    }
  return at;
}

TEST(MemoryPlanner, ConcatenationBufferLivesFromItsFirstInputsProducer) {
  // e lives from c0 to c2, while a (made by c1, before the concatenation) already sits in y's buffer: y's buffer
  // must be reserved from c1 on, so e cannot be placed over a.
  std::string c =
      "dilations=[1,1], groups=1, kernel_shape=[1,1], num_output_maps=8, pads_begin=[0,0], "
      "pads_end=[0,0], strides=[1,1]";
  std::string text =
      "graph {\n  input x: f32[1,8,8,8]\n"
      "  w: f32[8,8,1,1] = Constant \"w\" () {data=random(1)}\n"
      "  w2: f32[8,16,1,1] = Constant \"w2\" () {data=random(2)}\n"
      "  a: f32[1,8,8,8] = Convolution \"c1\" (x, w, _) {" +
      c +
      "}\n"
      "  e: f32[1,8,8,8] = Convolution \"c0\" (x, w, _) {" +
      c +
      "}\n"
      "  b: f32[1,8,8,8] = Convolution \"c2\" (e, w, _) {" +
      c +
      "}\n"
      "  y: f32[1,16,8,8] = Concatenation \"cat\" (a, b) {axis=1}\n"
      "  s: f32[1,8,8,8] = Slice \"sl\" (y) {start=[0,8,0,0], size=[1,8,8,8], stride=[1,1,1,1]}\n"
      "  z: f32[1,8,8,8] = Convolution \"c3\" (y, w2, _) {" +
      c +
      "}\n"
      "  z2: f32[1,8,8,8] = Convolution \"c4\" (s, w, _) {" +
      c +
      "}\n"
      "  output z\n  output z2\n}\n";
  std::vector<int64_t> at = planWithAliases(text, {{"a", "y"}, {"b", "y"}, {"s", "y"}, {"s", "b"}});
  ASSERT_EQ(at.size(), 10u);
}

}  // namespace
}  // namespace kiln::builder
