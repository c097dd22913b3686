// Tests of the shape-inference driver's own checks (the per-op rules are tested through the builder and the ONNX
// conformance suites).
#include "ir/shape_inference.h"

#include <gtest/gtest.h>

namespace kiln::ir {
namespace {

Status inferAll(Graph& g) {
  KILN_RETURN_IF_ERROR(g.renumber());
  ShapeState state;
  state.resize(g.values().size());
  for (Value* in : g.inputs()) state.info[in->id] = {in->dtype, in->shape};
  return inferShapes(g, state, nullptr);
}

// A corrupt plan can hold a node with fewer outputs than its op has; the driver refuses it before the op's rule
// writes the output it lacks (plan_fuzz found a Pooling node with none).
TEST(ShapeInference, RefusesANodeWithTheWrongNumberOfOutputs) {
  for (int outs : {0, 2}) {
    Graph g;
    Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({1, 1, 4, 4}));
    Node* pool = g.addNode(OpType::kPooling, "pool", {x}, outs);
    pool->attrs.setInts("window_kernel", {2, 2});
    Status s = inferAll(g);
    ASSERT_FALSE(s.isOk()) << outs;
    EXPECT_NE(s.message().find("'pool'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("has " + std::to_string(outs) + " outputs; Pooling has 1"), std::string::npos)
        << s.message();
  }
}

TEST(ShapeInference, RefusesATopKWithOneOutput) {
  Graph g;
  Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({4, 8}));
  g.addNode(OpType::kTopK, "topk", {x}, 1);
  Status s = inferAll(g);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("has 1 outputs; TopK has 2"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln::ir
