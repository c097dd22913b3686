// Tests of the shared-buffer decisions: a convolution's output takes its residual's buffer only when it reads it
// last, neither is network I/O, sizes and recorded formats agree and no other input reads that buffer; views.
#include "builder/buffer_aliases.h"

#include <gtest/gtest.h>

#include <string>

#include "core/dims.h"
#include "ir/shape_inference.h"
#include "ir/text.h"

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
  std::vector<int32_t> aliasOf;
  std::vector<int32_t> lastUse;
  int32_t id(char const* name) const { return g->findValue(name)->id; }
};

// As build_engine does: every non-I/O, non-constant value in the arena; convolutions may write over input 3.
Planned plan(std::string const& text, int32_t reusable = 3) {
  Planned p;
  auto g = ir::parseGraph(text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  p.g = std::move(g).value();
  EXPECT_TRUE(ir::inferGraphInPlace(*p.g, nullptr).isOk());
  size_t nv = p.g->values().size();
  std::vector<bool> inArena(nv, false);
  std::vector<int64_t> bytes(nv, 0);
  p.lastUse.assign(nv, -1);
  for (auto const& v : p.g->values()) {
    inArena[v->id] = !v->isInput && !v->isOutput && v->producer && v->producer->op != ir::OpType::kConstant;
    bytes[v->id] = volume(v->shape) * 4;
  }
  auto const& nodes = p.g->nodes();
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    for (ir::Value* v : nodes[ni]->inputs)
      if (v) p.lastUse[v->id] = static_cast<int32_t>(ni);
    for (ir::Value* v : nodes[ni]->outputs)
      if (p.lastUse[v->id] < 0) p.lastUse[v->id] = static_cast<int32_t>(ni);
  }
  p.aliasOf = planBufferAliases(*p.g, inArena, bytes, p.lastUse,
                                [&](ir::Node const& n) { return n.op == ir::OpType::kConvolution ? reusable : -1; });
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

}  // namespace
}  // namespace kiln::builder
