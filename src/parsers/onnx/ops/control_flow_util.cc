// Helpers shared by the control-flow importers (see control_flow_util.h).
#include "parsers/onnx/ops/control_flow_util.h"

#include <algorithm>
#include <cstring>

namespace kiln::onnx {

bool graphReads(::onnx::GraphProto const& graph, std::string const& name) {
  for (auto const& o : graph.output()) {
    if (o.name() == name) {
      return true;
    }
  }
  for (auto const& n : graph.node()) {
    for (auto const& in : n.input()) {
      if (in == name) {
        return true;
      }
    }
    if (subgraphReferences(n).count(name) != 0) {
      return true;
    }
  }
  return false;
}

Result<ITensor*> scalarOf(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, char const* what) {
  Dims d = t->getDimensions();
  if (d.nbDims == 0) {
    return t;
  }
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (d.d[i] != 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, what, " must hold a single element, not ",
                                      dimsString(d));
    }
  }
  return reshape(ctx, node, t, Dims{0, {}});
}

Result<ITensor*> scalarConstant(ImportContext& ctx, ::onnx::NodeProto const& node, DataType type, double v) {
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(type, Dims{0, {}}));
  if (type == DataType::kINT64) {
    auto x = static_cast<int64_t>(v);
    std::memcpy(c->bytes.data(), &x, sizeof(x));
  } else if (type == DataType::kINT32) {
    auto x = static_cast<int32_t>(v);
    std::memcpy(c->bytes.data(), &x, sizeof(x));
  } else if (type == DataType::kFLOAT) {
    auto x = static_cast<float>(v);
    std::memcpy(c->bytes.data(), &x, sizeof(x));
  } else {
    return ImportContext::nodeError(ErrorCode::kINTERNAL_ERROR, node, "scalar constant of an unexpected type");
  }
  return ctx.constantTensor(c, node.name() + "_scalar");
}

Result<ITensor*> iterationCounter(ImportContext& ctx, ::onnx::NodeProto const& node, ILoop& loop, DataType type,
                                  ITensor* start, int64_t step) {
  if (start == nullptr) {
    KO_ASSIGN_OR_RETURN(start, scalarConstant(ctx, node, type, 0));
  }
  IRecurrenceLayer* r = loop.addRecurrence(*start);
  KO_RETURN_IF_ERROR(ctx.check(r, node, "counter"));
  KO_ASSIGN_OR_RETURN(ITensor * s, scalarConstant(ctx, node, type, static_cast<double>(step)));
  IElementWiseLayer* next = ctx.network().addElementWise(*r->getOutput(0), *s, ElementWiseOperation::kSUM);
  KO_RETURN_IF_ERROR(ctx.check(next, node, "counter_next"));
  r->setInput(1, *next->getOutput(0));
  return r->getOutput(0);
}

Result<ITensor*> distinctFrom(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t,
                              std::vector<ITensor*> const& boundary) {
  if (std::find(boundary.begin(), boundary.end(), t) == boundary.end()) {
    return t;
  }
  IIdentityLayer* l = ctx.network().addIdentity(*t);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "copy"));
  return l->getOutput(0);
}

}  // namespace kiln::onnx
