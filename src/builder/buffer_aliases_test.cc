// Tests of the shared-buffer decisions: a convolution's output takes its residual's buffer only when it reads it
// last, neither is network I/O, sizes and recorded formats agree and no other input reads that buffer; views.
#include "builder/buffer_aliases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/dims.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

constexpr char kConv[] =
    "dilations=[1,1], groups=1, kernel_shape=[1,1], num_output_maps=8, pads_begin=[0,0], pads_end=[0,0], "
    "strides=[1,1]";

// x -> c1 = a -> c2 = b -> c3(b, residual r) = c [+ extra] -> c4 = d (output). `res` names c3's residual and
// `extra` adds lines before c4.
std::string net(std::string const& res, std::string const& c3Attrs = "", std::string const& extra = "",
                std::string const& outputs = "d") {
  std::string c = kConv;
  return "graph {\n"
         "  input x: f32[1,8,4,4]\n"
         "  w: f32[8,8,1,1] = Constant \"w\" () {data=random(1)}\n"
         "  a: f32[1,8,4,4] = Convolution \"c1\" (x, w, _) {" +
         c +
         "}\n"
         "  a2: f32[1,8,4,4] = Identity \"view\" (a)\n"
         "  b: f32[1,8,4,4] = Convolution \"c2\" (a2, w, _) {" +
         c +
         "}\n"
         "  c: f32[1,8,4,4] = Convolution \"c3\" (b, w, _, " +
         res + ") {" + c + c3Attrs + "}\n" + extra + "  d: f32[1,8,4,4] = Convolution \"c4\" (c, w, _) {" + c +
         "}\n"
         "  output " +
         outputs +
         "\n"
         "}\n";
}

struct Planned {
  std::unique_ptr<ir::Graph> g;
  BufferAliases a;
  std::vector<int32_t> aliasOf;
  std::vector<int32_t> firstUse, lastUse;
  int32_t id(char const* name) const { return g->findValue(name)->id; }
  int64_t offset(char const* name) const { return a.offset[static_cast<size_t>(id(name))]; }
  // The in_place entry of the node named `name` (empty: not in place).
  std::vector<int64_t> inPlace(char const* name) const {
    for (auto const& [ni, flags] : a.inPlace)
      if (g->nodes()[ni]->name == name) return flags;
    return {};
  }
};

// As build_engine does: every non-I/O, non-constant value in the arena with its (fixed) shape; convolutions may
// write over input `reusable`; offsets inside other buffers aligned to `alignment`.
Planned plan(std::string const& text, int32_t reusable = 3, int64_t alignment = 16) {
  Planned p;
  auto g = ir::parseGraph(text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  p.g = std::move(g).value();
  EXPECT_TRUE(ir::inferGraphInPlace(*p.g, nullptr).isOk());
  size_t nv = p.g->values().size();
  AliasInputs in;
  in.inArena.assign(nv, false);
  in.bytes.assign(nv, 0);
  in.fixed.assign(nv, ir::TensorInfo{});
  in.alignment = alignment;
  p.firstUse.assign(nv, -1);
  p.lastUse.assign(nv, -1);
  for (auto const& v : p.g->values()) {
    in.inArena[v->id] = !v->isInput && !v->isOutput && v->producer && v->producer->op != ir::OpType::kConstant;
    in.bytes[v->id] = volume(v->shape) * static_cast<int64_t>(dataTypeSize(v->dtype));
    in.fixed[v->id] = {v->dtype, v->shape};
  }
  auto const& nodes = p.g->nodes();
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    for (ir::Value* v : nodes[ni]->inputs)
      if (v) p.lastUse[v->id] = static_cast<int32_t>(ni);
    for (ir::Value* v : nodes[ni]->outputs) {
      if (p.firstUse[v->id] < 0) p.firstUse[v->id] = static_cast<int32_t>(ni);
      if (p.lastUse[v->id] < 0) p.lastUse[v->id] = static_cast<int32_t>(ni);
    }
  }
  in.reusableInput = [&](ir::Node const& n) { return n.op == ir::OpType::kConvolution ? reusable : -1; };
  p.a = planBufferAliases(*p.g, in, p.firstUse, p.lastUse);
  p.aliasOf = p.a.aliasOf;
  return p;
}

TEST(BufferAliases, ResidualReadLastIsReused) {
  Planned p = plan(net("a"));
  EXPECT_EQ(p.aliasOf[p.id("c")], p.id("a"));
  // The shared buffer lives until c's last reader, c4 (the sixth node: w, c1, view, c2, c3, c4).
  EXPECT_EQ(p.lastUse[p.id("a")], p.lastUse[p.id("c")]);
  EXPECT_EQ(p.aliasOf[p.id("a2")], p.id("a"));  // the view
  EXPECT_EQ(p.aliasOf[p.id("b")], -1);
}

TEST(BufferAliases, ResidualThroughAViewIsReusedAtItsOwner) {
  Planned p = plan(net("a2"));
  EXPECT_EQ(p.aliasOf[p.id("c")], p.id("a"));
}

TEST(BufferAliases, NotWithoutTheTacticsDeclaration) {
  Planned p = plan(net("a"), -1);
  EXPECT_EQ(p.aliasOf[p.id("c")], -1);
  Planned q = plan(net("a"), 7);  // an input the node does not have
  EXPECT_EQ(q.aliasOf[q.id("c")], -1);
}

TEST(BufferAliases, NotWhenTheResidualIsReadLater) {
  std::string c = kConv;
  Planned p = plan(net("a", "", "  e: f32[1,8,4,4] = Convolution \"c5\" (a, w, _) {" + c + "}\n", "d\n  output e"));
  EXPECT_EQ(p.aliasOf[p.id("c")], -1);
  // Read later through the view: the same.
  Planned q = plan(net("a", "", "  e: f32[1,8,4,4] = Convolution \"c5\" (a2, w, _) {" + c + "}\n", "d\n  output e"));
  EXPECT_EQ(q.aliasOf[q.id("c")], -1);
}

TEST(BufferAliases, NotForNetworkInputsOrOutputs) {
  Planned p = plan(net("x"));  // the residual is the network input (x is read first by c1 only)
  EXPECT_EQ(p.aliasOf[p.id("c")], -1);
  Planned q = plan(net("a", "", "", "d\n  output c"));  // the output is a network output
  EXPECT_EQ(q.aliasOf[q.id("c")], -1);
  Planned r = plan(net("a", "", "", "d\n  output a"));  // the residual is a network output
  EXPECT_EQ(r.aliasOf[r.id("c")], -1);
}

TEST(BufferAliases, NotAcrossRecordedFormats) {
  Planned p = plan(net("a", ", cpu_formats_in=[16,0,0,16], cpu_formats_out=[16]"));
  EXPECT_EQ(p.aliasOf[p.id("c")], p.id("a"));
  Planned q = plan(net("a", ", cpu_formats_in=[16,0,0,0], cpu_formats_out=[16]"));
  EXPECT_EQ(q.aliasOf[q.id("c")], -1);
  Planned r = plan(net("a", ", cpu_formats_in=[1,0,0,1], cpu_formats_out=[8]"));
  EXPECT_EQ(r.aliasOf[r.id("c")], -1);
}

TEST(BufferAliases, NotWhenAnotherInputReadsTheBuffer) {
  // c3 reads b as its data and as its residual: writing c over b would change data still to be read.
  Planned p = plan(net("b"));
  EXPECT_EQ(p.aliasOf[p.id("c")], -1);
}

// x -> c1 = a, c2 = b (two 1x1 convolutions of 8 channels) -> Concatenation `cat` on `axis` = y -> c3 = z
// (output). `shape` is x's (and a's, b's) shape; `extra` adds lines before c3, `outputs` names the outputs.
std::string catNet(std::string const& shape = "1,8,4,4", std::string const& catInputs = "a, b", int axis = 1,
                   std::string const& extra = "", std::string const& outputs = "z") {
  std::string c = kConv;
  std::vector<int64_t> d;
  for (size_t at = 0; at < shape.size();) {
    size_t end = shape.find(',', at);
    if (end == std::string::npos) end = shape.size();
    d.push_back(std::stoll(shape.substr(at, end - at)));
    at = end + 1;
  }
  int64_t n = 1 + std::count(catInputs.begin(), catInputs.end(), ',');
  std::vector<int64_t> yd = d;
  yd[static_cast<size_t>(axis)] *= n;
  std::string ys;
  for (size_t i = 0; i < yd.size(); ++i) ys += (i ? "," : "") + std::to_string(yd[i]);
  return "graph {\n"
         "  input x: f32[" +
         shape +
         "]\n"
         "  w: f32[8,8,1,1] = Constant \"w\" () {data=random(1)}\n"
         "  w2: f32[8," +
         std::to_string(yd[1]) +
         ",1,1] = Constant \"w2\" () {data=random(2)}\n"
         "  a: f32[" +
         shape + "] = Convolution \"c1\" (x, w, _) {" + c +
         "}\n"
         "  b: f32[" +
         shape + "] = Convolution \"c2\" (x, w, _) {" + c + "}\n" + extra + "  y: f32[" + ys +
         "] = Concatenation \"cat\" (" + catInputs + ") {axis=" + std::to_string(axis) +
         "}\n"
         "  z: f32[" +
         std::to_string(d[0]) + ",8," + std::to_string(d[2]) + "," + std::to_string(d[3]) +
         "] = Convolution \"c3\" (y, w2, _) {" + c +
         "}\n"
         "  output " +
         outputs +
         "\n"
         "}\n";
}

TEST(BufferAliases, ConcatenationInputsLiveInTheOutput) {
  Planned p = plan(catNet(), 3, 256);
  // a and b (512 bytes each) move into y at bytes 0 and 512; y's buffer lives from a's producer (c1) on.
  EXPECT_EQ(p.aliasOf[p.id("a")], p.id("y"));
  EXPECT_EQ(p.aliasOf[p.id("b")], p.id("y"));
  EXPECT_EQ(p.offset("a"), 0);
  EXPECT_EQ(p.offset("b"), 512);
  EXPECT_EQ(p.aliasOf[p.id("y")], -1);
  EXPECT_EQ(p.firstUse[p.id("y")], p.firstUse[p.id("a")]);
  EXPECT_GE(p.lastUse[p.id("y")], p.lastUse[p.id("z")] - 1);
  EXPECT_EQ(p.inPlace("cat"), (std::vector<int64_t>{1, 1}));
  ASSERT_EQ(p.a.log.size(), 1u);
  EXPECT_NE(p.a.log[0].find("not run"), std::string::npos) << p.a.log[0];
}

TEST(BufferAliases, ConcatenationAlongTheOutermostAxesAndNested) {
  // Axis 0, and along the last axis when every dim before it is 1.
  Planned p = plan(catNet("2,8,4,4", "a, b", 0));
  EXPECT_EQ(p.inPlace("cat"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(p.offset("b"), 2 * 8 * 4 * 4 * 4);
  // A concatenation of a concatenation: a and b move into y1, which moves into y with everything in it.
  std::string extra =
      "  y1: f32[1,16,4,4] = Concatenation \"cat1\" (a, b) {axis=1}\n"
      "  e: f32[1,8,4,4] = Convolution \"c5\" (x, w, _) {" +
      std::string(kConv) + "}\n";
  std::string text = catNet("1,8,4,4", "e, y1", 1, extra);
  // catNet sizes y and w2 for two inputs of 8 channels: fix them for 8 + 16.
  text.replace(text.find("y: f32[1,16,4,4]"), 16, "y: f32[1,24,4,4]");
  text.replace(text.find("w2: f32[8,16,1,1]"), 17, "w2: f32[8,24,1,1]");
  Planned q = plan(text);
  EXPECT_EQ(q.inPlace("cat1"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(q.inPlace("cat"), (std::vector<int64_t>{1, 1}));
  for (char const* v : {"a", "b", "e", "y1"}) EXPECT_EQ(q.aliasOf[q.id(v)], q.id("y")) << v;
  EXPECT_EQ(q.offset("e"), 0);
  EXPECT_EQ(q.offset("y1"), 512);
  EXPECT_EQ(q.offset("a"), 512);
  EXPECT_EQ(q.offset("b"), 1024);
  EXPECT_EQ(q.firstUse[q.id("y")], q.firstUse[q.id("a")]);
}

TEST(BufferAliases, ConcatenationRefusals) {
  // A dim of 2 before the axis: each input is two blocks of the output.
  EXPECT_TRUE(plan(catNet("2,8,4,4")).a.inPlace.empty());
  // An input that is a network output keeps its own memory and is copied; the other still moves.
  Planned p = plan(catNet("1,8,4,4", "a, b", 1, "", "z\n  output a"));
  EXPECT_EQ(p.inPlace("cat"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(p.aliasOf[p.id("a")], -1);
  EXPECT_EQ(p.aliasOf[p.id("b")], p.id("y"));
  // A network input, an input read twice, or twice through a view: copied.
  EXPECT_EQ(plan(catNet("1,8,4,4", "x, b")).inPlace("cat"), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(plan(catNet("1,8,4,4", "a, a")).a.inPlace.empty());
  EXPECT_TRUE(plan(catNet("1,8,4,4", "a, a2", 1, "  a2: f32[1,8,4,4] = Identity \"view\" (a)\n")).a.inPlace.empty());
  // A network output: nothing to place inputs in.
  EXPECT_TRUE(plan(catNet("1,8,4,4", "a, b", 1, "", "z\n  output y")).a.inPlace.empty());
  // Offsets not a multiple of the alignment: 8x1x1 floats are 32 bytes, so b would start at byte 32.
  std::string small = catNet("1,8,1,1");
  Planned q = plan(small, 3, 256);
  EXPECT_EQ(q.inPlace("cat"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(q.aliasOf[q.id("b")], -1);
  EXPECT_EQ(plan(small, 3, 16).inPlace("cat"), (std::vector<int64_t>{1, 1}));
  // Shapes that differ between profile shapes are not placed at offsets: see ShapesNotFixedAreNotPlaced.
}

TEST(BufferAliases, ConcatenationTakesWholeViewsAndNotPartOfABuffer) {
  // a2, a reshape of a, is a: a's buffer moves, with a2 in it.
  Planned p = plan(catNet("1,8,4,4", "a2, b", 1, "  a2: f32[1,8,4,4] = Identity \"view\" (a)\n"));
  EXPECT_EQ(p.inPlace("cat"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(p.aliasOf[p.id("a")], p.id("y"));
  EXPECT_EQ(p.aliasOf[p.id("a2")], p.id("y"));
  // s, the second half of a (a view at byte 256), cannot move without a.
  std::string extra =
      "  s: f32[1,4,4,4] = Slice \"sl\" (a) {start=[0,4,0,0], size=[1,4,4,4], stride=[1,1,1,1]}\n"
      "  t: f32[1,4,4,4] = Slice \"sl2\" (b) {start=[0,0,0,0], size=[1,4,4,4], stride=[1,1,1,1]}\n";
  std::string text = catNet("1,8,4,4", "s, t", 1, extra);
  text.replace(text.find("y: f32[1,16,4,4]"), 16, "y: f32[1,8,4,4]");
  text.replace(text.find("w2: f32[8,16,1,1]"), 17, "w2: f32[8,8,1,1]");
  Planned q = plan(text);
  EXPECT_EQ(q.aliasOf[q.id("s")], q.id("a"));
  EXPECT_EQ(q.offset("s"), 256);
  EXPECT_EQ(q.inPlace("cat"), std::vector<int64_t>{});
  EXPECT_EQ(q.aliasOf[q.id("y")], -1);
}

TEST(BufferAliases, BlockedLayoutsAreNotPlaced) {
  // c1 writes a in a recorded blocked CPU format; on the GPU, a channels-last concatenation.
  std::string text = catNet();
  text.replace(text.find("\"c1\" (x, w, _) {"), 16, "\"c1\" (x, w, _) {cpu_formats_out=[16], ");
  EXPECT_EQ(plan(text).inPlace("cat"), (std::vector<int64_t>{0, 1}));
  std::string hwc = catNet();
  hwc.replace(hwc.find("{axis=1}"), 8, "{axis=1, format=" + std::to_string(static_cast<int>(TensorFormat::kHWC)) + "}");
  EXPECT_TRUE(plan(hwc).a.inPlace.empty());
}

TEST(BufferAliases, SliceAndGatherViews) {
  std::string c = kConv;
  auto net2 = [&](std::string const& view, std::string const& vshape) {
    return "graph {\n"
           "  input x: f32[1,8,4,4]\n"
           "  w: f32[8,8,1,1] = Constant \"w\" () {data=random(1)}\n"
           "  k: i32[] = Constant \"k\" () {data=[-3]}\n"
           "  a: f32[1,8,4,4] = Convolution \"c1\" (x, w, _) {" +
           c +
           "}\n"
           "  s: f32[" +
           vshape + "] = " + view +
           "\n"
           "  r: f32[" +
           vshape +
           "] = Unary \"neg\" (s) {op=0}\n"
           "  output r\n"
           "}\n";
  };
  // Channels 2..5 of a: bytes 128..383.
  Planned p = plan(net2("Slice \"sl\" (a) {start=[0,2,0,0], size=[1,4,4,4], stride=[1,1,1,1]}", "1,4,4,4"));
  EXPECT_EQ(p.aliasOf[p.id("s")], p.id("a"));
  EXPECT_EQ(p.offset("s"), 128);
  EXPECT_EQ(p.inPlace("sl"), std::vector<int64_t>{1});
  // Not at 256-byte alignment, not across rows, not with a stride, not in another sampling mode.
  EXPECT_TRUE(plan(net2("Slice \"sl\" (a) {start=[0,2,0,0], size=[1,4,4,4], stride=[1,1,1,1]}", "1,4,4,4"), 3, 256)
                  .a.inPlace.empty());
  EXPECT_TRUE(
      plan(net2("Slice \"sl\" (a) {start=[0,0,1,0], size=[1,8,2,4], stride=[1,1,1,1]}", "1,8,2,4")).a.inPlace.empty());
  EXPECT_TRUE(
      plan(net2("Slice \"sl\" (a) {start=[0,0,0,0], size=[1,4,4,4], stride=[1,2,1,1]}", "1,4,4,4")).a.inPlace.empty());
  EXPECT_TRUE(plan(net2("Slice \"sl\" (a) {start=[0,2,0,0], size=[1,4,4,4], stride=[1,1,1,1], mode=2}", "1,4,4,4"))
                  .a.inPlace.empty());
  // Gather of channel -3 (= 5): bytes 320..383 as a [1,4,4].
  Planned g = plan(net2("Gather \"ga\" (a, k) {axis=1}", "1,4,4"));
  EXPECT_EQ(g.aliasOf[g.id("s")], g.id("a"));
  EXPECT_EQ(g.offset("s"), 5 * 64);
  EXPECT_EQ(g.inPlace("ga"), std::vector<int64_t>{1});
  // Along an axis with a dim of 8 before it: rows apart.
  EXPECT_TRUE(plan(net2("Gather \"ga\" (a, k) {axis=2}", "1,8,4")).a.inPlace.empty());
}

TEST(BufferAliases, AViewKeepsItsBufferFromBeingWrittenOver) {
  // s, a view into a, is read after c3, whose residual is a: c3 must not write over a.
  std::string c = kConv;
  Planned p = plan(net("a", "",
                       "  s: f32[1,4,4,4] = Slice \"sl\" (a) {start=[0,2,0,0], size=[1,4,4,4], "
                       "stride=[1,1,1,1]}\n  e: f32[1,4,4,4] = Unary \"neg\" (s) {op=0}\n",
                       "d\n  output e"));
  EXPECT_EQ(p.aliasOf[p.id("s")], p.id("a"));
  EXPECT_EQ(p.aliasOf[p.id("c")], -1);
  // Without the later reader c3 writes over a as before.
  EXPECT_EQ(plan(net("a")).aliasOf[plan(net("a")).id("c")], plan(net("a")).id("a"));
}

TEST(BufferAliases, ShapesNotFixedAreNotPlaced) {
  Planned p = plan(catNet());
  ASSERT_EQ(p.inPlace("cat"), (std::vector<int64_t>{1, 1}));
  // As build_engine marks a shape that differs between profile shapes.
  auto g = ir::parseGraph(catNet());
  ASSERT_TRUE(g.isOk());
  ASSERT_TRUE(ir::inferGraphInPlace(**g, nullptr).isOk());
  size_t nv = (*g)->values().size();
  AliasInputs in;
  in.inArena.assign(nv, false);
  in.bytes.assign(nv, 0);
  in.fixed.assign(nv, ir::TensorInfo{});
  for (auto const& v : (*g)->values()) {
    in.inArena[v->id] = !v->isInput && !v->isOutput && v->producer && v->producer->op != ir::OpType::kConstant;
    in.bytes[v->id] = volume(v->shape) * 4;
    in.fixed[v->id] = {v->dtype, v->shape};
  }
  std::vector<int32_t> first(nv, 0), last(nv, static_cast<int32_t>((*g)->nodes().size()));
  EXPECT_EQ(planBufferAliases(**g, in, first, last).inPlace.size(), 1u);
  // One input whose shape varies: the offsets after it would too.
  in.fixed[(*g)->findValue("b")->id].shape.nbDims = -1;
  EXPECT_TRUE(planBufferAliases(**g, in, first, last).inPlace.empty());
  in.fixed[(*g)->findValue("b")->id] = in.fixed[(*g)->findValue("a")->id];
  in.fixed[(*g)->findValue("y")->id].shape.nbDims = -1;
  EXPECT_TRUE(planBufferAliases(**g, in, first, last).inPlace.empty());
}

}  // namespace
}  // namespace kiln::builder
