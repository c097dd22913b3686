// Tests of the plan format: round trips of every field, and refusal (never a crash, never acceptance) of
// corrupted, truncated, other-version and inconsistent plans.
#include "plan/plan.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "ir/shape_inference.h"
#include "plan/plan_format.h"
#include "plan/plan_generated.h"

namespace kiln::plan {
namespace {

using ir::OpType;

std::vector<uint8_t> toBytes(HostBuffer const& b) {
  auto const* p = static_cast<uint8_t const*>(b.data());
  return std::vector<uint8_t>(p, p + b.size());
}

Result<PlanInfo> readBytes(std::vector<uint8_t> const& b, MemoryBudget* budget = nullptr) {
  return readPlan(b.data(), b.size(), budget);
}

// Recomputes every section checksum and the header checksum (to build plans wrong in one chosen way).
void reseal(std::vector<uint8_t>& b) {
  uint32_t n = detail::loadLE32(b.data() + detail::kOffNumSections);
  for (uint32_t s = 0; s < n; ++s) {
    uint8_t* e = b.data() + detail::kOffTable + s * detail::kSectionEntryBytes;
    uint64_t off = detail::loadLE64(e + 8), size = detail::loadLE64(e + 16);
    if (off <= b.size() && size <= b.size() - off) detail::storeLE64(e + 24, detail::checksum(b.data() + off, size));
  }
  size_t end = detail::headerBytes(n);
  detail::storeLE64(b.data() + end - 8, detail::checksum(b.data(), end - 8));
}

template <typename T>
HostTensor tensorOf(DataType dt, Dims const& shape, std::vector<T> const& v) {
  return HostTensor::fromVector(dt, shape, v);
}

// A graph using most of what a plan stores: inputs (one added after some nodes), constants of every dtype,
// a zero-byte and a rank-0 constant, several ops, every attribute kind, an absent optional input, a node
// with two outputs, requested types, precisions, fused-from names and tactics.
std::unique_ptr<ir::Graph> makeSampleGraph() {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* x = *g->addInput("x", DataType::kFLOAT, makeDims({-1, 3, 4, 4}));
  ir::Node* w =
      g->addConstant("w", tensorOf<double>(DataType::kFLOAT, makeDims({3, 3, 1, 1}), {1, -2, 3.5, 4, 5, 6, 7, 8, 9}));
  ir::Node* b = g->addConstant("b", tensorOf<double>(DataType::kHALF, makeDims({3}), {0.5, -1, 65504}));
  ir::Node* conv = g->addNode(OpType::kConvolution, "conv1", {x, w->output(), b->output()});
  conv->output()->dtype = DataType::kFLOAT;
  conv->output()->shape = makeDims({-1, 3, 4, 4});
  conv->attrs.setInt("num_output_maps", 3);
  conv->attrs.setInts("kernel_shape", {1, 1});
  conv->attrs.setInts("pads_begin", {});
  conv->attrs.setFloat("act_alpha", 0.125);
  conv->attrs.setFloat("act_beta", -1e300);
  conv->attrs.setString("note", "fused by a pass");
  conv->attrs.setString("empty", "");
  conv->attrs.set("coeffs", std::vector<double>{1.5, -0.0, 3e-310});
  conv->attrs.setInt("activation", -1);
  conv->tactic = "convolution_reference_direct";
  conv->fusedFrom = {"conv1", "relu1"};
  conv->precision = DataType::kHALF;
  conv->output()->requestedType = DataType::kHALF;

  ir::Node* i8 = g->addConstant("c_i8", tensorOf<int>(DataType::kINT8, makeDims({5}), {-128, -1, 0, 1, 127}));
  ir::Node* u8 = g->addConstant("c_u8", tensorOf<int>(DataType::kUINT8, makeDims({2}), {0, 255}));
  ir::Node* i32 = g->addConstant("c_i32", tensorOf<int64_t>(DataType::kINT32, makeDims({}), {-7}));  // rank 0
  ir::Node* i64 = g->addConstant("c_i64", tensorOf<int64_t>(DataType::kINT64, makeDims({2}), {1, -(int64_t(1) << 40)}));
  ir::Node* bf = g->addConstant("c_bf16", tensorOf<double>(DataType::kBF16, makeDims({1, 2}), {1.0, -3.25}));
  ir::Node* f8 = g->addConstant("c_fp8", tensorOf<double>(DataType::kFP8, makeDims({3}), {0.5, -448, 2}));
  ir::Node* bl = g->addConstant("c_bool", tensorOf<int>(DataType::kBOOL, makeDims({4}), {1, 0, 0, 1}));
  ir::Node* empty = g->addConstant("c_empty", tensorOf<double>(DataType::kFLOAT, makeDims({0, 3}), {}));

  ir::Value* late = *g->addInput("late", DataType::kINT64, makeDims({2}));
  ir::Node* gather = g->addNode(OpType::kGather, "gather", {i64->output(), late});
  gather->attrs.setInt("axis", 0);
  gather->output()->dtype = DataType::kINT64;
  gather->output()->shape = makeDims({2});
  ir::Node* slice =
      g->addNode(OpType::kSlice, "slice", {conv->output(), nullptr, nullptr, nullptr, nullptr, i32->output()});
  slice->attrs.setInts("start", {0, 0, 0, 0});
  ir::Node* act = g->addNode(OpType::kActivation, "act", {slice->output()}, 2);  // two outputs: format only
  act->attrs.setInt("type", 0);
  act->output(1)->dtype = DataType::kHALF;
  ir::Node* ew = g->addNode(OpType::kElementWise, "ew", {act->output(0), empty->output()});
  ew->attrs.setInt("op", 1);
  ir::Node* cat =
      g->addNode(OpType::kConcatenation, "cat", {i8->output(), u8->output(), bf->output(), f8->output(), bl->output()});
  cat->attrs.setInt("axis", 0);
  g->markOutput(ew->output());
  g->markOutput(gather->output());
  g->markOutput(act->output(1));
  g->markOutput(cat->output());
  EXPECT_TRUE(g->renumber().isOk());
  return g;
}

PlanInfo makeSamplePlan() {
  PlanInfo p;
  p.name = "sample network";
  p.target = "sm_90";
  p.kilnVersion = "0.1.0";
  p.builderFlags = 0x15;
  p.optimizationLevel = 3;
  p.profilingVerbosity = 2;
  p.tacticSources = 0x7f;
  p.graph = makeSampleGraph();
  Profile p0, p1;
  p0.inputs.push_back({"x", makeDims({1, 3, 4, 4}), makeDims({2, 3, 4, 4}), makeDims({8, 3, 4, 4})});
  p0.inputs.push_back({"late", makeDims({2}), makeDims({2}), makeDims({2})});
  p1.inputs.push_back({"x", makeDims({1, 3, 4, 4}), makeDims({1, 3, 4, 4}), makeDims({1, 3, 4, 4})});
  p1.inputs.push_back({"late", makeDims({2}), makeDims({2}), makeDims({2})});
  p.profiles = {p0, p1};
  p.arenaSize = 1 << 20;
  for (auto const& v : p.graph->values())
    p.placements.push_back(v->isInput ? Placement{} : Placement{v->id * 1024, 512 + v->id});
  for (auto const& n : p.graph->nodes()) {
    p.workspaceOffsets.push_back(n->op == OpType::kConvolution ? 65536 : -1);
    p.workspaceSizes.push_back(n->op == OpType::kConvolution ? 4096 : 0);
  }
  return p;
}

int32_t idOf(ir::Value const* v) { return v ? v->id : -1; }

void expectSameGraph(ir::Graph const& a, ir::Graph const& b) {
  ASSERT_EQ(a.values().size(), b.values().size());
  for (size_t i = 0; i < a.values().size(); ++i) {
    ir::Value const& va = *a.values()[i];
    ir::Value const& vb = *b.values()[i];
    SCOPED_TRACE(va.name);
    EXPECT_EQ(vb.id, static_cast<int32_t>(i));
    EXPECT_EQ(va.id, vb.id);
    EXPECT_EQ(va.name, vb.name);
    EXPECT_EQ(va.dtype, vb.dtype);
    EXPECT_TRUE(dimsEqual(va.shape, vb.shape)) << dimsToString(va.shape) << " vs " << dimsToString(vb.shape);
    EXPECT_EQ(va.isInput, vb.isInput);
    EXPECT_EQ(va.isOutput, vb.isOutput);
    EXPECT_EQ(va.requestedType, vb.requestedType);
    EXPECT_EQ(va.producer ? va.producer->id : -1, vb.producer ? vb.producer->id : -1);
    EXPECT_EQ(va.producerOutput, vb.producerOutput);
    EXPECT_EQ(b.findValue(va.name), &vb);
  }
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    ir::Node const& na = *a.nodes()[i];
    ir::Node const& nb = *b.nodes()[i];
    SCOPED_TRACE(na.name);
    EXPECT_EQ(nb.id, static_cast<int32_t>(i));
    EXPECT_EQ(na.op, nb.op);
    EXPECT_EQ(na.name, nb.name);
    ASSERT_EQ(na.inputs.size(), nb.inputs.size());
    for (size_t k = 0; k < na.inputs.size(); ++k) EXPECT_EQ(idOf(na.inputs[k]), idOf(nb.inputs[k]));
    ASSERT_EQ(na.outputs.size(), nb.outputs.size());
    for (size_t k = 0; k < na.outputs.size(); ++k) {
      EXPECT_EQ(idOf(na.outputs[k]), idOf(nb.outputs[k]));
      EXPECT_EQ(nb.outputs[k]->producer, &nb);
    }
    EXPECT_TRUE(na.attrs == nb.attrs);
    EXPECT_EQ(na.tactic, nb.tactic);
    EXPECT_EQ(na.fusedFrom, nb.fusedFrom);
    EXPECT_EQ(na.precision, nb.precision);
    ASSERT_EQ(na.constant.has_value(), nb.constant.has_value());
    if (na.constant) {
      EXPECT_TRUE(na.constant->sameContents(*nb.constant));
      EXPECT_EQ(na.constant->dtype(), nb.constant->dtype());
      EXPECT_TRUE(dimsEqual(na.constant->shape(), nb.constant->shape()));
      EXPECT_TRUE(nb.constant->isOwned());  // a view that keeps the plan bytes alive
      if (nb.constant->bytes()) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(nb.constant->data()) % 64, 0u);
      }
    }
  }
  auto ids = [](std::vector<ir::Value*> const& vs) {
    std::vector<int32_t> r;
    for (ir::Value const* v : vs) r.push_back(v->id);
    return r;
  };
  EXPECT_EQ(ids(a.inputs()), ids(b.inputs()));
  EXPECT_EQ(ids(a.outputs()), ids(b.outputs()));
}

void expectSamePlan(PlanInfo const& a, PlanInfo const& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.kilnVersion, b.kilnVersion);
  EXPECT_EQ(a.builderFlags, b.builderFlags);
  EXPECT_EQ(a.optimizationLevel, b.optimizationLevel);
  EXPECT_EQ(a.profilingVerbosity, b.profilingVerbosity);
  EXPECT_EQ(a.tacticSources, b.tacticSources);
  ASSERT_EQ(a.profiles.size(), b.profiles.size());
  for (size_t p = 0; p < a.profiles.size(); ++p) {
    ASSERT_EQ(a.profiles[p].inputs.size(), b.profiles[p].inputs.size());
    for (size_t i = 0; i < a.profiles[p].inputs.size(); ++i) {
      ProfileShapes const& sa = a.profiles[p].inputs[i];
      ProfileShapes const& sb = b.profiles[p].inputs[i];
      EXPECT_EQ(sa.input, sb.input);
      EXPECT_TRUE(dimsEqual(sa.min, sb.min));
      EXPECT_TRUE(dimsEqual(sa.opt, sb.opt));
      EXPECT_TRUE(dimsEqual(sa.max, sb.max));
    }
  }
  ASSERT_EQ(a.placements.size(), b.placements.size());
  for (size_t i = 0; i < a.placements.size(); ++i) {
    EXPECT_EQ(a.placements[i].offset, b.placements[i].offset);
    EXPECT_EQ(a.placements[i].size, b.placements[i].size);
  }
  EXPECT_EQ(a.workspaceOffsets, b.workspaceOffsets);
  EXPECT_EQ(a.workspaceSizes, b.workspaceSizes);
  EXPECT_EQ(a.arenaSize, b.arenaSize);
  ASSERT_TRUE(a.graph && b.graph);
  expectSameGraph(*a.graph, *b.graph);
}

std::vector<uint8_t> samplePlanBytes() {
  auto w = writePlan(makeSamplePlan());
  EXPECT_TRUE(w.isOk()) << w.status().toString();
  return w.isOk() ? toBytes(*w) : std::vector<uint8_t>{};
}

void expectRefused(Result<PlanInfo> const& r, std::string const& substring) {
  ASSERT_FALSE(r.isOk()) << "accepted; expected a refusal saying '" << substring << "'";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidPlan) << r.status().toString();
  EXPECT_NE(r.status().message().find(substring), std::string::npos) << r.status().message();
}

TEST(Plan, RoundTripKeepsEveryField) {
  PlanInfo plan = makeSamplePlan();
  auto written = writePlan(plan);
  ASSERT_TRUE(written.isOk()) << written.status().toString();
  auto read = readPlan(written->data(), written->size());
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  expectSamePlan(plan, *read);
  // The weights are views into the plan's bytes, which they keep alive after the PlanInfo goes.
  ir::Node const* w = read->graph->findNode("w");
  ASSERT_TRUE(w && w->constant);
  HostTensor kept = *w->constant;
  PlanInfo gone = std::move(read).value();
  gone.graph.reset();
  EXPECT_EQ(kept.doubleAt(2), 3.5);
  // Writing what was read gives the same bytes.
  auto again = writePlan(*readPlan(written->data(), written->size()));
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(toBytes(*written), toBytes(*again));
}

TEST(Plan, IOFormatsRoundTripAndOlderPlansReadAsLinear) {
  PlanInfo plan = makeSamplePlan();
  ir::Value const* x = plan.graph->findValue("x");
  ASSERT_NE(x, nullptr);
  auto linear = writePlan(plan);
  ASSERT_TRUE(linear.isOk());
  auto r0 = readPlan(linear->data(), linear->size());
  ASSERT_TRUE(r0.isOk()) << r0.status().toString();
  EXPECT_TRUE(r0->ioFormats.empty());  // none written, as in plans before format 1.4
  plan.ioFormats[x->id] = TensorFormat::kCHW32;
  auto written = writePlan(plan);
  ASSERT_TRUE(written.isOk()) << written.status().toString();
  auto read = readPlan(written->data(), written->size());
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  ASSERT_EQ(read->ioFormats.size(), 1u);
  EXPECT_EQ(read->ioFormats.at(x->id), TensorFormat::kCHW32);
  // A value that is no binding cannot have an I/O format.
  PlanInfo bad = makeSamplePlan();
  ASSERT_NE(bad.graph->findNode("w"), nullptr);
  ir::Value const* w = bad.graph->findNode("w")->output();
  bad.ioFormats[w->id] = TensorFormat::kHWC8;
  auto badBytes = writePlan(bad);
  ASSERT_TRUE(badBytes.isOk());
  auto refused = readPlan(badBytes->data(), badBytes->size());
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("not a network input or output"), std::string::npos)
      << refused.status().toString();
}

TEST(Plan, ZeroByteAndScalarConstants) {
  auto plan = readBytes(samplePlanBytes());
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  ir::Node const* e = plan->graph->findNode("c_empty");
  ASSERT_TRUE(e && e->constant);
  EXPECT_EQ(e->constant->bytes(), 0u);
  EXPECT_TRUE(dimsEqual(e->constant->shape(), makeDims({0, 3})));
  ir::Node const* s = plan->graph->findNode("c_i32");
  ASSERT_TRUE(s && s->constant);
  EXPECT_EQ(s->constant->shape().nbDims, 0);
  EXPECT_EQ(s->constant->count(), 1);
  EXPECT_EQ(s->constant->intAt(0), -7);
  EXPECT_EQ(plan->graph->findNode("c_i64")->constant->intAt(1), -(int64_t(1) << 40));
  EXPECT_EQ(plan->graph->findNode("b")->constant->doubleAt(2), 65504.0);
  EXPECT_EQ(plan->graph->findNode("c_fp8")->constant->doubleAt(1), -448.0);

  // A plan whose only constants are empty or scalar.
  PlanInfo p;
  p.graph = std::make_unique<ir::Graph>();
  ir::Node* z = p.graph->addConstant("zero", tensorOf<double>(DataType::kHALF, makeDims({4, 0}), {}));
  ir::Node* sc = p.graph->addConstant("scalar", tensorOf<double>(DataType::kFLOAT, makeDims({}), {2.5}));
  p.graph->markOutput(z->output());
  p.graph->markOutput(sc->output());
  ASSERT_TRUE(p.graph->renumber().isOk());
  auto w = writePlan(p);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  auto r = readPlan(w->data(), w->size());
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectSamePlan(p, *r);
  EXPECT_EQ(r->graph->findNode("scalar")->constant->doubleAt(0), 2.5);
}

// Attention's layout attribute goes through the plan like every attribute; what reads the plan back infers the
// [B, S, H, D] shapes from it, and a layout no code knows is refused by name when shapes are inferred.
TEST(Plan, AttentionLayoutRoundTrips) {
  for (int64_t layout : {int64_t{1}, int64_t{7}}) {
    PlanInfo p;
    p.graph = std::make_unique<ir::Graph>();
    std::vector<ir::Value*> in;
    for (char const* name : {"q", "k", "v"})
      in.push_back(*p.graph->addInput(name, DataType::kHALF, makeDims({2, 128, 12, 64})));
    ir::Node* n = p.graph->addNode(OpType::kAttention, "attention", in);
    n->attrs.setFloat("scale", 0.125);
    n->attrs.setInt("k_transposed", 0);
    n->attrs.setInt("nan_to_zero", 1);
    n->attrs.setInt("layout", layout);
    n->output()->dtype = DataType::kHALF;
    n->output()->shape = makeDims({2, 128, 12, 64});
    p.graph->markOutput(n->output());
    ASSERT_TRUE(p.graph->renumber().isOk());
    auto w = writePlan(p);
    ASSERT_TRUE(w.isOk()) << w.status().toString();
    auto r = readPlan(w->data(), w->size());
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    expectSamePlan(p, *r);
    ir::Node const* a = r->graph->findNode("attention");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->attrs.getInt("layout", 0), layout);
    Status st = ir::inferGraphInPlace(*r->graph, nullptr);
    if (layout == 1) {
      EXPECT_TRUE(st.isOk()) << st.toString();
      EXPECT_EQ(dimsToString(r->graph->outputs()[0]->shape), "[2,128,12,64]");
    } else {
      EXPECT_NE(st.message().find("layout is 7"), std::string::npos) << st.toString();
      EXPECT_NE(st.message().find("attention"), std::string::npos) << st.toString();
    }
  }
}

// Packed q/k/v in layout 2 (an absent k and v between q and the mask) goes through the plan: the reader keeps the
// absent inputs and infers y [S, B, H, D] from the packed [S, B, 3, H, D].
TEST(Plan, PackedQkvAttentionRoundTrips) {
  PlanInfo p;
  p.graph = std::make_unique<ir::Graph>();
  ir::Value* qkv = *p.graph->addInput("qkv", DataType::kHALF, makeDims({197, 4, 3, 12, 64}));
  ir::Value* mask = *p.graph->addInput("mask", DataType::kHALF, makeDims({4, 1, 1, 197}));
  ir::Node* n = p.graph->addNode(OpType::kAttention, "attention", {qkv, nullptr, nullptr, mask});
  n->attrs.setFloat("scale", 0.125);
  n->attrs.setInt("layout", 2);
  n->attrs.setInt("packed_qkv", 1);
  n->output()->dtype = DataType::kHALF;
  n->output()->shape = makeDims({197, 4, 12, 64});
  p.graph->markOutput(n->output());
  ASSERT_TRUE(p.graph->renumber().isOk());
  auto w = writePlan(p);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  auto r = readPlan(w->data(), w->size());
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectSamePlan(p, *r);
  ir::Node const* a = r->graph->findNode("attention");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->inputs.size(), 4u);
  EXPECT_EQ(a->inputs[1], nullptr);
  EXPECT_EQ(a->inputs[2], nullptr);
  EXPECT_EQ(a->attrs.getInt("packed_qkv", 0), 1);
  Status st = ir::inferGraphInPlace(*r->graph, nullptr);
  EXPECT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(dimsToString(r->graph->outputs()[0]->shape), "[197,4,12,64]");
}

// Regression (plan_fuzz, corpus/plan_fuzz/crash_bool_weight_byte.plan): a bool constant whose byte is not 0 or
// 1 was read as bool by the kernels (undefined behaviour); the reader refuses it, naming the byte.
TEST(Plan, BoolWeightsOtherThanZeroOrOneAreRefused) {
  PlanInfo p;
  p.graph = std::make_unique<ir::Graph>();
  ir::Node* c = p.graph->addConstant("flags", tensorOf<double>(DataType::kBOOL, makeDims({3}), {1, 0, 1}));
  p.graph->markOutput(c->output());
  ASSERT_TRUE(p.graph->renumber().isOk());
  auto w = writePlan(p);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  ASSERT_TRUE(readPlan(w->data(), w->size()).isOk());
  std::vector<uint8_t> bytes(static_cast<uint8_t const*>(w->data()),
                             static_cast<uint8_t const*>(w->data()) + w->size());
  // The weights section holds the three bytes 1, 0, 1 in a row: make the middle one 4 and fix the checksums.
  size_t at = 0;
  for (size_t i = 0; i + 3 <= bytes.size() && !at; ++i)
    if (bytes[i] == 1 && bytes[i + 1] == 0 && bytes[i + 2] == 1 && i > 128) at = i + 1;
  ASSERT_NE(at, 0u);
  bytes[at] = 4;
  ASSERT_TRUE(detail::resealPlan(bytes.data(), bytes.size()));
  auto r = readPlan(bytes.data(), bytes.size());
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("bool weights hold the byte 4"), std::string::npos) << r.status().toString();
  // Reading a stray byte through HostTensor is defined too: any non-zero byte is true.
  HostTensor t = tensorOf<double>(DataType::kBOOL, makeDims({2}), {0, 1});
  static_cast<uint8_t*>(t.mutableData())[1] = 4;
  EXPECT_EQ(t.intAt(1), 1);
  EXPECT_EQ(t.doubleAt(1), 1.0);
}

TEST(Plan, EmptyGraphRoundTrips) {
  PlanInfo p;
  p.graph = std::make_unique<ir::Graph>();
  p.target = "cpu";
  auto w = writePlan(p);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  auto r = readPlan(w->data(), w->size());
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectSamePlan(p, *r);
}

TEST(Plan, HeaderDescribesTheFile) {
  std::vector<uint8_t> b = samplePlanBytes();
  auto h = readPlanHeader(b.data(), b.size());
  ASSERT_TRUE(h.isOk()) << h.status().toString();
  EXPECT_EQ(h->formatMajor, kFormatMajor);
  EXPECT_EQ(h->formatMinor, kFormatMinor);
  EXPECT_EQ(h->kilnVersion, "0.1.0");
  EXPECT_EQ(h->target, "sm_90");
  EXPECT_EQ(h->flags, 0u);
  EXPECT_EQ(h->totalSize, b.size());
  ASSERT_EQ(h->sections.size(), 2u);
  EXPECT_EQ(h->sections[0].kind, "graph");
  EXPECT_EQ(h->sections[1].kind, "weights");
  for (auto const& s : h->sections) {
    EXPECT_EQ(s.offset % 64, 0u);
    EXPECT_EQ(s.checksum, detail::checksum(b.data() + s.offset, s.size));
  }
  EXPECT_EQ(std::memcmp(b.data(), "KILNPLAN", 8), 0);
  // Little-endian: major 1 is the bytes 01 00.
  EXPECT_EQ(b[8], 1);
  EXPECT_EQ(b[9], 0);
  // The header alone is enough (no body needed), and its checksum is checked.
  size_t headerEnd = detail::headerBytes(h->sections.size());
  EXPECT_TRUE(readPlanHeader(b.data(), headerEnd).isOk());
  b[30] ^= 1;
  auto bad = readPlanHeader(b.data(), b.size());
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("header checksum"), std::string::npos);
  EXPECT_FALSE(readPlanHeader(b.data(), 10).isOk());
}

TEST(Plan, WeightsSplitIntoSeveralSections) {
  PlanInfo plan = makeSamplePlan();
  std::vector<double> big(100, 1.25);
  big[99] = -2;
  ir::Node* bigNode = plan.graph->addConstant("big", tensorOf<double>(DataType::kFLOAT, makeDims({100}), big));
  plan.graph->markOutput(bigNode->output());
  ASSERT_TRUE(plan.graph->renumber().isOk());
  plan.placements.push_back({});
  plan.workspaceOffsets.push_back(-1);
  plan.workspaceSizes.push_back(0);
  auto w = detail::writePlanWithLimit(plan, nullptr, 128);  // 400-byte "big" gets a section of its own
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  auto h = readPlanHeader(w->data(), w->size());
  ASSERT_TRUE(h.isOk());
  EXPECT_GT(h->sections.size(), 3u);
  for (size_t s = 1; s < h->sections.size(); ++s) {
    EXPECT_EQ(h->sections[s].kind, "weights");
    EXPECT_TRUE(h->sections[s].size <= 128 || h->sections[s].size == 400) << h->sections[s].size;
  }
  auto r = readPlan(w->data(), w->size());
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectSamePlan(plan, *r);
  // A flipped byte in the last weights section names it.
  std::vector<uint8_t> b = toBytes(*w);
  size_t last = h->sections.size() - 1;
  b[h->sections[last].offset] ^= 0x40;
  expectRefused(readBytes(b), strCat("checksum mismatch in section 'weights' ", last));
}

TEST(Plan, EverySingleBitFlipIsRefused) {
  std::vector<uint8_t> b = samplePlanBytes();
  ASSERT_TRUE(readBytes(b).isOk());
  ASSERT_LT(b.size(), 16384u);
  int accepted = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      b[i] ^= uint8_t(1 << bit);
      auto r = readBytes(b);
      if (r.isOk()) {
        ADD_FAILURE() << "flip of bit " << bit << " of byte " << i << " was accepted";
        ++accepted;
      } else {
        EXPECT_EQ(r.status().code(), StatusCode::kInvalidPlan);
      }
      b[i] ^= uint8_t(1 << bit);
      if (accepted > 5) return;
    }
  }
}

// Random byte changes inside the graph section with the checksums redone reach the verifier and the graph
// checks: each must give a plan or a refusal, never a crash (run under ASan in CI).
TEST(Plan, ResealedGraphMutationsNeverCrash) {
  std::vector<uint8_t> good = samplePlanBytes();
  auto h = readPlanHeader(good.data(), good.size());
  ASSERT_TRUE(h.isOk());
  uint64_t const off = h->sections[0].offset, size = h->sections[0].size;
  uint32_t seed = 7;
  auto next = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
  int refused = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> b = good;
    int changes = 1 + int(next() % 4);
    for (int k = 0; k < changes; ++k) b[off + next() % size] = uint8_t(next());
    reseal(b);
    auto r = readBytes(b);
    if (!r.isOk()) {
      ++refused;
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidPlan) << r.status().toString();
    }
  }
  EXPECT_GT(refused, 100);
}

TEST(Plan, EveryTruncationIsRefused) {
  std::vector<uint8_t> b = samplePlanBytes();
  for (size_t len = 0; len < b.size(); ++len) {
    auto r = readPlan(b.data(), len);
    ASSERT_FALSE(r.isOk()) << "truncation to " << len << " bytes was accepted";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidPlan);
  }
  auto h = readPlanHeader(b.data(), b.size());
  ASSERT_TRUE(h.isOk());
  expectRefused(readPlan(b.data(), b.size() - 1),
                strCat("truncated: section 1 ends at byte ", b.size(), ", file has ", b.size() - 1));
  expectRefused(readPlan(b.data(), 40), "not a Kiln plan");
  expectRefused(readPlan(b.data(), 70), "truncated");
}

TEST(Plan, GarbageAndEmptyAreRefused) {
  expectRefused(readPlan(nullptr, 0), "not a Kiln plan");
  std::vector<uint8_t> empty;
  expectRefused(readBytes(empty), "not a Kiln plan");
  std::vector<uint8_t> garbage(4096);
  uint32_t s = 12345;
  for (auto& c : garbage) c = uint8_t((s = s * 1103515245u + 12345u) >> 16);
  expectRefused(readBytes(garbage), "not a Kiln plan");
  std::memcpy(garbage.data(), "KILNPLAN\x01\x00", 10);  // right magic and major, garbage after
  expectRefused(readBytes(garbage), "");
  std::vector<uint8_t> zeros(1024, 0);
  expectRefused(readBytes(zeros), "not a Kiln plan");
  EXPECT_FALSE(readPlanHeader(garbage.data(), 0).isOk());
}

TEST(Plan, OtherMajorVersionIsRefusedWithItsNumber) {
  std::vector<uint8_t> b = samplePlanBytes();
  detail::storeLE16(b.data() + detail::kOffMajor, 2);
  reseal(b);
  expectRefused(readBytes(b), "plan format 2.x; this Kiln reads 1.x");
  auto h = readPlanHeader(b.data(), b.size());
  ASSERT_FALSE(h.isOk());
  EXPECT_NE(h.status().message().find("plan format 2.x"), std::string::npos);
  detail::storeLE16(b.data() + detail::kOffMajor, 0);
  reseal(b);
  expectRefused(readBytes(b), "plan format 0.x; this Kiln reads 1.x");
}

TEST(Plan, NewerMinorVersionIsAccepted) {
  std::vector<uint8_t> b = samplePlanBytes();
  detail::storeLE16(b.data() + detail::kOffMinor, kFormatMinor + 7);
  expectRefused(readBytes(b), "header checksum mismatch");
  reseal(b);
  auto r = readBytes(b);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectSamePlan(makeSamplePlan(), *r);
  EXPECT_EQ(readPlanHeader(b.data(), b.size())->formatMinor, kFormatMinor + 7);
}

TEST(Plan, ChecksumMessagesNameTheSection) {
  std::vector<uint8_t> b = samplePlanBytes();
  auto h = readPlanHeader(b.data(), b.size());
  ASSERT_TRUE(h.isOk());
  std::vector<uint8_t> c = b;
  c[h->sections[1].offset + 3] ^= 0x10;
  expectRefused(readBytes(c), "checksum mismatch in section 'weights' 1");
  c = b;
  c[h->sections[0].offset + h->sections[0].size / 2] ^= 0x01;
  expectRefused(readBytes(c), "checksum mismatch in section 'graph' 0");
  c = b;
  c[detail::kOffTarget] = 'x';
  expectRefused(readBytes(c), "header checksum mismatch");
  c = b;
  c[h->sections[1].offset - 1] = 1;  // padding before the weights section
  expectRefused(readBytes(c), "nonzero padding");
  c = b;
  c[0] = 'k';
  expectRefused(readBytes(c), "not a Kiln plan");
}

TEST(Plan, MemoryBudgetIsCharged) {
  std::vector<uint8_t> b = samplePlanBytes();
  MemoryBudget small(64);
  auto r = readBytes(b, &small);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfMemory);
  MemoryBudget enough(1 << 20);
  {
    auto ok = readBytes(b, &enough);
    ASSERT_TRUE(ok.isOk());
    EXPECT_EQ(enough.used(), static_cast<int64_t>(b.size()));
  }
  EXPECT_EQ(enough.used(), 0);
  auto w = writePlan(makeSamplePlan(), &small);
  ASSERT_FALSE(w.isOk());
  EXPECT_EQ(w.status().code(), StatusCode::kOutOfMemory);
}

TEST(Plan, WriterRefusesWhatItCannotStore) {
  PlanInfo none;
  EXPECT_FALSE(writePlan(none).isOk());
  PlanInfo p = makeSamplePlan();
  p.target = "a target name longer than sixteen bytes";
  EXPECT_EQ(writePlan(p).status().code(), StatusCode::kInvalidArgument);
  // Not renumbered: node ids do not match positions.
  PlanInfo q = makeSamplePlan();
  q.graph->nodes()[0]->id = 5;
  auto r = writePlan(q);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("renumber"), std::string::npos) << r.status().message();
  // A node reading a tensor of another graph.
  PlanInfo o = makeSamplePlan();
  ir::Graph other;
  ir::Value* foreign = *other.addInput("foreign", DataType::kFLOAT, makeDims({1}));
  o.graph->findNode("ew")->inputs[1] = foreign;
  EXPECT_FALSE(writePlan(o).isOk());
}

TEST(Plan, BrokenGraphFromTheWriterIsRefused) {
  // Node 'a' reads the output of 'b', which comes after it: ids are dense but the order is not topological.
  PlanInfo p;
  p.graph = std::make_unique<ir::Graph>();
  ir::Value* x = *p.graph->addInput("x", DataType::kFLOAT, makeDims({2}));
  ir::Node* a = p.graph->addNode(OpType::kIdentity, "a", {x});
  ir::Node* b = p.graph->addNode(OpType::kIdentity, "b", {x});
  a->inputs[0] = b->output();
  p.graph->markOutput(a->output());
  auto w = writePlan(p);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  expectRefused(readPlan(w->data(), w->size()), "topological order");
  // A cycle.
  b->inputs[0] = a->output();
  w = writePlan(p);
  ASSERT_TRUE(w.isOk());
  expectRefused(readPlan(w->data(), w->size()), "cycle");
  // Placements outside the arena, or of the wrong count.
  PlanInfo q = makeSamplePlan();
  q.placements[3] = {q.arenaSize - 10, 11};
  w = writePlan(q);
  ASSERT_TRUE(w.isOk());
  expectRefused(readPlan(w->data(), w->size()), "outside the arena");
  q = makeSamplePlan();
  q.placements.pop_back();
  w = writePlan(q);
  ASSERT_TRUE(w.isOk());
  expectRefused(readPlan(w->data(), w->size()), "placements for");
  q = makeSamplePlan();
  q.workspaceSizes[0] = -1;
  w = writePlan(q);
  ASSERT_TRUE(w.isOk());
  expectRefused(readPlan(w->data(), w->size()), "workspace");
  q = makeSamplePlan();
  q.profiles[0].inputs[0].input = "nope";
  w = writePlan(q);
  ASSERT_TRUE(w.isOk());
  expectRefused(readPlan(w->data(), w->size()), "is not a network input");
  q = makeSamplePlan();
  q.profiles[1].inputs[0].max = makeDims({0, 3, 4, 4});
  w = writePlan(q);
  ASSERT_TRUE(w.isOk());
  expectRefused(readPlan(w->data(), w->size()), "min <= opt <= max");
  // A value whose dtype is not a DataType, and a Constant whose output disagrees with its weights.
  q = makeSamplePlan();
  q.graph->findValue("x")->dtype = static_cast<DataType>(99);
  w = writePlan(q);
  ASSERT_TRUE(w.isOk());
  expectRefused(readPlan(w->data(), w->size()), "unknown data type 99");
  q = makeSamplePlan();
  q.graph->findNode("w")->output()->shape = makeDims({9});
  w = writePlan(q);
  ASSERT_TRUE(w.isOk());
  expectRefused(readPlan(w->data(), w->size()), "do not match its output");
}

// A hand-built graph section: x (input) + w (Constant f32[2]) -> ElementWise -> y. Each test changes one
// thing; the unchanged one must load, so each refusal is due to that one change.
struct Tiny {
  std::vector<int32_t> addInputs{0, 1};
  std::vector<int32_t> addOutputs{2};
  std::vector<int32_t> constOutputs{1};
  std::string addOp = "ElementWise";
  std::string constOp = "Constant";
  uint32_t weightSection = 1;
  uint64_t weightOffset = 0;
  uint64_t weightSize = 8;
  int32_t weightDtype = 0;
  std::vector<int64_t> weightDims{2};
  int8_t attrKind = 0;
  bool attrExtraString = false;
  bool duplicateAttr = false;
  std::vector<int32_t> graphInputs{0};
  std::vector<int32_t> graphOutputs{2};
  bool yMarkedOutput = true;
  uint64_t weightsSectionBytes = 64;
  bool noGraph = false;
};

std::vector<uint8_t> buildTiny(Tiny const& t) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int64_t> d2{2};
  auto mkValue = [&](char const* name, bool in, bool out) {
    return fb::CreateValue(fbb, fbb.CreateString(name), 0, fbb.CreateVector(d2), in, out);
  };
  std::vector<flatbuffers::Offset<fb::Value>> values{mkValue("x", true, false), mkValue("w", false, false),
                                                     mkValue("y", false, t.yMarkedOutput)};
  auto weight = fb::CreateWeightRef(fbb, t.weightSection, t.weightOffset, t.weightSize, t.weightDtype,
                                    fbb.CreateVector(t.weightDims));
  auto constNode =
      fb::CreateNode(fbb, fbb.CreateString(t.constOp), fbb.CreateString("w"), fbb.CreateVector<int32_t>({}),
                     fbb.CreateVector(t.constOutputs), 0, 0, 0, flatbuffers::nullopt, weight);
  std::vector<flatbuffers::Offset<fb::Attr>> attrs;
  for (int k = 0; k < (t.duplicateAttr ? 2 : 1); ++k)
    attrs.push_back(fb::CreateAttr(fbb, fbb.CreateString("op"), static_cast<fb::AttrKind>(t.attrKind), 0, 0,
                                   t.attrExtraString ? fbb.CreateString("s") : 0));
  auto addNode = fb::CreateNode(fbb, fbb.CreateString(t.addOp), fbb.CreateString("add"), fbb.CreateVector(t.addInputs),
                                fbb.CreateVector(t.addOutputs), fbb.CreateVector(attrs));
  std::vector<flatbuffers::Offset<fb::Node>> nodes{constNode, addNode};
  auto graph = fb::CreateGraph(fbb, fbb.CreateVector(values), fbb.CreateVector(nodes), fbb.CreateVector(t.graphInputs),
                               fbb.CreateVector(t.graphOutputs));
  fbb.Finish(fb::CreatePlan(fbb, t.noGraph ? 0 : graph, fbb.CreateString("tiny")));
  float w[2] = {1.5f, -2.f};
  std::vector<detail::SectionSpec> sections(2);
  sections[0] = {
      static_cast<uint32_t>(detail::SectionKind::kGraph), fbb.GetSize(), {{0, fbb.GetBufferPointer(), fbb.GetSize()}}};
  sections[1] = {static_cast<uint32_t>(detail::SectionKind::kWeights), t.weightsSectionBytes, {{0, w, 8}}};
  detail::ContainerInfo info;
  info.target = "cpu";
  auto b = detail::assemblePlan(info, sections, nullptr);
  EXPECT_TRUE(b.isOk());
  return b.isOk() ? toBytes(*b) : std::vector<uint8_t>{};
}

Result<PlanInfo> readTiny(std::function<void(Tiny&)> const& change) {
  Tiny t;
  change(t);
  return readBytes(buildTiny(t));
}

TEST(Plan, HandBuiltGraphLoads) {
  auto r = readTiny([](Tiny&) {});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  ir::Node const* w = r->graph->findNode("w");
  ASSERT_TRUE(w && w->constant);
  EXPECT_EQ(w->constant->doubleAt(0), 1.5);
  EXPECT_EQ(w->constant->doubleAt(1), -2.0);
  ir::Node const* add = r->graph->findNode("add");
  ASSERT_TRUE(add);
  EXPECT_EQ(add->op, OpType::kElementWise);
  EXPECT_EQ(add->input(1), w->output());
  EXPECT_EQ(r->graph->outputs().at(0)->name, "y");
}

TEST(Plan, HandBuiltGraphInconsistenciesAreRefused) {
  expectRefused(readTiny([](Tiny& t) { t.addInputs = {0, 57}; }), "input 1 is value 57, the graph has 3 values");
  expectRefused(readTiny([](Tiny& t) { t.addInputs = {0, -2}; }), "input 1 is value -2");
  expectRefused(readTiny([](Tiny& t) { t.addOutputs = {3}; }), "output 0 is value 3");
  expectRefused(readTiny([](Tiny& t) { t.addOutputs = {1}; }), "is produced by node 0 and by node 1");
  expectRefused(readTiny([](Tiny& t) { t.addOutputs = {0}; }), "produces network input 'x'");
  expectRefused(readTiny([](Tiny& t) { t.addOp = "FooBar"; }), "unknown op 'FooBar'");
  expectRefused(readTiny([](Tiny& t) { t.addOp = ""; }), "unknown op ''");
  expectRefused(readTiny([](Tiny& t) { t.weightOffset = 64; }), "lie outside section 'weights' 1");
  expectRefused(readTiny([](Tiny& t) { t.weightOffset = ~uint64_t(0); }), "lie outside section");
  expectRefused(readTiny([](Tiny& t) {
                  t.weightOffset = 8;
                  t.weightSize = 60;
                }),
                "lie outside section");
  expectRefused(readTiny([](Tiny& t) { t.weightSize = 4; }), "should be 8 bytes, the plan says 4");
  expectRefused(readTiny([](Tiny& t) { t.weightDims = {1, 1, 1, 1, 1, 1, 1, 1, 2}; }), "rank 9");
  expectRefused(readTiny([](Tiny& t) { t.weightDims = {-2}; }), "dimension -2");
  expectRefused(readTiny([](Tiny& t) { t.weightDims = {int64_t(1) << 62, 8}; }), "should be too many bytes");
  expectRefused(readTiny([](Tiny& t) { t.weightDtype = 42; }), "unsupported data type 42");
  expectRefused(readTiny([](Tiny& t) { t.weightDtype = static_cast<int32_t>(DataType::kINT4); }), "unsupported");
  expectRefused(readTiny([](Tiny& t) { t.weightOffset = 2; }), "not aligned");
  expectRefused(readTiny([](Tiny& t) { t.weightSection = 0; }), "is not a weights section");
  expectRefused(readTiny([](Tiny& t) { t.weightSection = 2; }), "is not a weights section");
  expectRefused(readTiny([](Tiny& t) { t.attrKind = 9; }), "unknown kind 9");
  expectRefused(readTiny([](Tiny& t) { t.attrKind = -1; }), "unknown kind -1");
  expectRefused(readTiny([](Tiny& t) { t.attrExtraString = true; }), "fields its kind does not use");
  expectRefused(readTiny([](Tiny& t) { t.attrKind = 3; }), "fields its kind does not use");  // Ints, no list
  expectRefused(readTiny([](Tiny& t) { t.duplicateAttr = true; }), "attribute 'op' twice");
  expectRefused(readTiny([](Tiny& t) { t.constOutputs = {}; }), "one output");
  expectRefused(readTiny([](Tiny& t) { t.addOp = "Constant"; }), "node 1 ('add') is a Constant without weights");
  expectRefused(readTiny([](Tiny& t) { t.constOp = "Identity"; }), "node 0 ('w') has weights but is not a Constant");
  expectRefused(readTiny([](Tiny& t) { t.graphInputs = {}; }), "input list");
  expectRefused(readTiny([](Tiny& t) { t.graphOutputs = {2, 2}; }), "listed twice");
  expectRefused(readTiny([](Tiny& t) { t.graphOutputs = {9}; }), "graph output is value 9");
  expectRefused(readTiny([](Tiny& t) { t.yMarkedOutput = false; }), "output mark");
  expectRefused(readTiny([](Tiny& t) { t.noGraph = true; }), "holds no graph");
  // A value nothing produces but a node reads.
  expectRefused(readTiny([](Tiny& t) {
                  t.constOutputs = {2};
                  t.addOutputs = {};
                }),
                "graph: ");
}

TEST(Plan, ContainerInconsistenciesAreRefused) {
  // A graph section that is not a flatbuffer of this schema, with correct checksums.
  std::vector<uint8_t> junk(200, 0xAB);
  std::vector<detail::SectionSpec> sections(2);
  sections[0] = {static_cast<uint32_t>(detail::SectionKind::kGraph), junk.size(), {{0, junk.data(), junk.size()}}};
  sections[1] = {static_cast<uint32_t>(detail::SectionKind::kWeights), 0, {}};
  auto b = detail::assemblePlan({}, sections, nullptr);
  ASSERT_TRUE(b.isOk());
  expectRefused(readPlan(b->data(), b->size()), "graph section fails schema verification");
  sections[0].size = 0;
  sections[0].pieces.clear();
  b = detail::assemblePlan({}, sections, nullptr);
  ASSERT_TRUE(b.isOk());
  expectRefused(readPlan(b->data(), b->size()), "graph section fails schema verification");
  // No sections; weights first; two graphs.
  b = detail::assemblePlan({}, {}, nullptr);
  ASSERT_TRUE(b.isOk());
  expectRefused(readPlan(b->data(), b->size()), "section 0 is not the graph");
  std::swap(sections[0], sections[1]);
  b = detail::assemblePlan({}, sections, nullptr);
  ASSERT_TRUE(b.isOk());
  expectRefused(readPlan(b->data(), b->size()), "section 0 is not the graph");
  sections[0] = sections[1];
  b = detail::assemblePlan({}, sections, nullptr);
  ASSERT_TRUE(b.isOk());
  expectRefused(readPlan(b->data(), b->size()), "second graph section");
  // A section moved (table resealed): the layout is checked, not only the checksums.
  std::vector<uint8_t> good = buildTiny(Tiny{});
  std::vector<uint8_t> moved = good;
  moved.resize(moved.size() + 64, 0);
  uint8_t* entry = moved.data() + detail::kOffTable + 1 * detail::kSectionEntryBytes;
  uint64_t off = detail::loadLE64(entry + 8);
  std::memmove(moved.data() + off + 64, moved.data() + off, 64);
  std::memset(moved.data() + off, 0, 64);
  detail::storeLE64(entry + 8, off + 64);
  reseal(moved);
  expectRefused(readBytes(moved), "starts at byte");
  // A section whose end overflows 64 bits.
  std::vector<uint8_t> huge = good;
  entry = huge.data() + detail::kOffTable + 1 * detail::kSectionEntryBytes;
  detail::storeLE64(entry + 16, ~uint64_t(0) - 8);
  reseal(huge);
  expectRefused(readBytes(huge), "truncated: section 1");
  // More sections than the file can describe.
  std::vector<uint8_t> many = good;
  detail::storeLE32(many.data() + detail::kOffNumSections, 0xffffffffu);
  expectRefused(readBytes(many), "truncated");
  // Trailing bytes after the last section are ignored (e.g. a file padded by a transport).
  std::vector<uint8_t> padded = good;
  padded.resize(padded.size() + 100, 0);
  EXPECT_TRUE(readBytes(padded).isOk());
}

// Control flow: an If whose else branch holds a constant and a Loop whose body holds another constant; the
// subgraphs and their weights survive a round trip (with every constant in its own weights section too).
std::unique_ptr<ir::Graph> makeControlFlowGraph() {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* c = *g->addInput("c", DataType::kBOOL, makeDims({}));
  ir::Value* x = *g->addInput("x", DataType::kFLOAT, makeDims({2}));
  ir::Node* top = g->addConstant("top_w", tensorOf<double>(DataType::kFLOAT, makeDims({2}), {0.25, -8}));
  ir::Node* n = g->addNode(OpType::kIf, "if", {c, x, top->output()});
  n->output()->shape = makeDims({-1});
  n->tactic = "if_reference";
  auto thenG = std::make_unique<ir::Graph>();
  ir::Value* tx = *thenG->addInput("x", DataType::kFLOAT, makeDims({2}));
  (void)*thenG->addInput("w", DataType::kFLOAT, makeDims({2}));
  thenG->markOutput(tx);
  auto elseG = std::make_unique<ir::Graph>();
  ir::Value* ex = *elseG->addInput("x", DataType::kFLOAT, makeDims({2}));
  (void)*elseG->addInput("w", DataType::kFLOAT, makeDims({2}));
  ir::Node* ew = elseG->addConstant("else_w", tensorOf<int64_t>(DataType::kINT32, makeDims({}), {3}));
  ir::Node* loop = elseG->addNode(OpType::kLoop, "loop", {ew->output(), ex}, 1);
  loop->output()->shape = makeDims({-1});
  loop->attrs.setInt("num_carried", 1);
  loop->attrs.setInt("num_scanned", 0);
  loop->attrs.setInts("scan_axes", {});
  loop->attrs.setInt("has_condition", 0);
  loop->attrs.setInts("output_sources", {0});
  loop->attrs.setInts("output_kinds", {0});
  loop->attrs.setInts("output_axes", {0});
  auto body = std::make_unique<ir::Graph>();
  (void)*body->addInput("iteration", DataType::kINT64, makeDims({}));
  ir::Value* bc = *body->addInput("acc", DataType::kFLOAT, makeDims({2}));
  ir::Node* bw = body->addConstant("body_w", tensorOf<double>(DataType::kHALF, makeDims({2}), {1.5, -0.5}));
  ir::Node* add = body->addNode(OpType::kElementWise, "add", {bc, bw->output()});
  add->attrs.setInt("op", 0);
  add->output()->shape = makeDims({2});
  body->markOutput(add->output());
  loop->subgraphs.push_back(std::move(body));
  elseG->markOutput(loop->output());
  n->subgraphs.push_back(std::move(thenG));
  n->subgraphs.push_back(std::move(elseG));
  g->markOutput(n->output());
  return g;
}

void expectSameGraphDeep(ir::Graph const& a, ir::Graph const& b) {
  expectSameGraph(a, b);
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    ir::Node const& na = *a.nodes()[i];
    ir::Node const& nb = *b.nodes()[i];
    SCOPED_TRACE(na.name);
    ASSERT_EQ(na.subgraphs.size(), nb.subgraphs.size());
    for (size_t k = 0; k < na.subgraphs.size(); ++k) expectSameGraphDeep(*na.subgraphs[k], *nb.subgraphs[k]);
    ASSERT_EQ(na.constant.has_value(), nb.constant.has_value());
    if (na.constant) {
      EXPECT_TRUE(na.constant->sameContents(*nb.constant));
    }
  }
}

TEST(Plan, ControlFlowSubgraphsRoundTrip) {
  for (uint64_t limit : {detail::kDefaultWeightsSectionLimit, uint64_t{1}}) {
    PlanInfo plan;
    plan.name = "control flow";
    plan.graph = makeControlFlowGraph();
    auto written = detail::writePlanWithLimit(plan, nullptr, limit);
    ASSERT_TRUE(written.isOk()) << written.status().toString();
    auto header = readPlanHeader(written->data(), written->size());
    ASSERT_TRUE(header.isOk());
    EXPECT_EQ(header->sections.size(), limit == 1 ? 4u : 2u);  // graph + one weights section per constant
    auto read = readPlan(written->data(), written->size());
    ASSERT_TRUE(read.isOk()) << read.status().toString();
    expectSameGraphDeep(*plan.graph, *read->graph);
    ir::Node const* n = read->graph->findNode("if");
    ASSERT_TRUE(n);
    EXPECT_EQ(n->tactic, "if_reference");
    ASSERT_EQ(n->subgraphs.size(), 2u);
    ir::Node const* loop = n->subgraphs[1]->findNode("loop");
    ASSERT_TRUE(loop);
    EXPECT_EQ(loop->attrs.getInts("output_sources"), std::vector<int64_t>{0});
    ASSERT_EQ(loop->subgraphs.size(), 1u);
    ir::Node const* bw = loop->subgraphs[0]->findNode("body_w");
    ASSERT_TRUE(bw && bw->constant);
    EXPECT_EQ(bw->constant->doubleAt(0), 1.5);
    EXPECT_EQ(bw->constant->dtype(), DataType::kHALF);
    // Writing what was read gives the same bytes.
    auto again = detail::writePlanWithLimit(*read, nullptr, limit);
    ASSERT_TRUE(again.isOk());
    EXPECT_EQ(toBytes(*written), toBytes(*again));
  }
}

TEST(Plan, BrokenSubgraphIsRefused) {
  // A subgraph node reading a value of its parent graph is refused by the writer (subgraphs are self-contained).
  PlanInfo plan;
  plan.graph = makeControlFlowGraph();
  ir::Node* n = plan.graph->findNode("if");
  ir::Graph& thenG = *n->subgraphs[0];
  ir::Node* bad = thenG.addNode(OpType::kIdentity, "foreign", {plan.graph->inputs()[1]});
  (void)bad;
  auto w = writePlan(plan);
  ASSERT_FALSE(w.isOk());
  EXPECT_NE(w.status().message().find("not in the graph"), std::string::npos) << w.status().toString();
}

// readPlanSummary reads the header and graph section only: from a prefix that stops where the graph section
// ends, it reports what the plan holds and marks the weights sections as not verified.
TEST(PlanSummary, FromGraphSectionPrefix) {
  PlanInfo plan = makeSamplePlan();
  auto w = detail::writePlanWithLimit(plan, nullptr, 128);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  std::vector<uint8_t> bytes = toBytes(*w);

  // Asking with too few bytes gives a larger count, until the count fits.
  uint64_t have = 8;
  for (int round = 0; round < 4; ++round) {
    auto need = planSummaryBytesNeeded(bytes.data(), have);
    ASSERT_TRUE(need.isOk()) << need.status().toString();
    if (*need <= have) break;
    have = *need;
  }
  auto header = readPlanHeader(bytes.data(), bytes.size());
  ASSERT_TRUE(header.isOk());
  ASSERT_GE(header->sections.size(), 3u);
  EXPECT_EQ(have, header->sections[0].offset + header->sections[0].size);
  ASSERT_LT(have, bytes.size());

  auto s = readPlanSummary(bytes.data(), have);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->name, "sample network");
  EXPECT_EQ(s->header.target, "sm_90");
  EXPECT_EQ(s->builderFlags, 0x15u);
  EXPECT_EQ(s->optimizationLevel, 3);
  EXPECT_EQ(s->tacticSources, 0x7fu);
  EXPECT_EQ(s->layers, 6);      // conv1, gather, slice, act, ew, cat
  EXPECT_EQ(s->constants, 10);  // w, b, and the eight c_* constants
  ASSERT_EQ(s->io.size(), 6u);  // inputs x, late; outputs ew, gather, act:1, cat
  EXPECT_EQ(s->io[0].name, "x");
  EXPECT_TRUE(s->io[0].isInput);
  EXPECT_EQ(s->io[0].dims, (std::vector<int64_t>{-1, 3, 4, 4}));
  EXPECT_FALSE(s->io[2].isInput);
  ASSERT_EQ(s->profiles.size(), 2u);
  EXPECT_EQ(s->profiles[0].inputs[0].max.d[0], 8);
  EXPECT_EQ(s->arenaSize, 1 << 20);
  ASSERT_EQ(s->sectionVerified.size(), header->sections.size());
  EXPECT_TRUE(s->sectionVerified[0]);
  for (size_t i = 1; i < s->sectionVerified.size(); ++i) EXPECT_FALSE(s->sectionVerified[i]) << i;
  uint64_t weights = 0;
  for (size_t i = 1; i < header->sections.size(); ++i) weights += header->sections[i].size;
  EXPECT_EQ(s->weightsBytes, weights);

  // The whole file verifies every section.
  auto full = readPlanSummary(bytes.data(), bytes.size());
  ASSERT_TRUE(full.isOk());
  for (bool v : full->sectionVerified) EXPECT_TRUE(v);
}

TEST(PlanSummary, RefusesCorruptOrMissingGraph) {
  auto w = writePlan(makeSamplePlan());
  ASSERT_TRUE(w.isOk());
  std::vector<uint8_t> bytes = toBytes(*w);
  auto header = readPlanHeader(bytes.data(), bytes.size());
  ASSERT_TRUE(header.isOk());
  uint64_t const graphEnd = header->sections[0].offset + header->sections[0].size;
  auto cut = readPlanSummary(bytes.data(), graphEnd - 1);
  ASSERT_FALSE(cut.isOk());
  EXPECT_NE(cut.status().message().find("truncated"), std::string::npos) << cut.status().toString();

  std::vector<uint8_t> flipped = bytes;
  flipped[header->sections[0].offset + 40] ^= 0x10;
  auto bad = readPlanSummary(flipped.data(), flipped.size());
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("checksum"), std::string::npos) << bad.status().toString();

  std::vector<uint8_t> notPlan(64, 'x');
  EXPECT_FALSE(planSummaryBytesNeeded(notPlan.data(), notPlan.size()).isOk());
  EXPECT_FALSE(readPlanSummary(notPlan.data(), notPlan.size()).isOk());
}

}  // namespace
}  // namespace kiln::plan
