// ONNX Loop (opsets 1-21, tensor values): an ILoop with a kCOUNT limit for M, a recurrence for the condition
// (kWHILE) and one per loop-carried value, an iteration counter when the body reads it, and kCONCATENATE outputs
// for the scan outputs. The body is imported once; outer values it reads are captured by the loop.
#include <algorithm>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/control_flow_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// Trip counts at least this large with a condition are "no count" (exporters write INT64_MAX for while loops).
constexpr int64_t kUnboundedTripCount = int64_t{1} << 31;

Status importLoop(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(::onnx::GraphProto const* body, attrGraph(node, "body"));
  int const n = std::max(0, node.input_size() - 2);  // loop-carried values
  if (body->input_size() != n + 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the body has ", body->input_size(),
                                    " inputs; it needs ", n + 2, " (iteration, condition and ", n,
                                    " loop-carried values)");
  }
  int const k = body->output_size() - 1 - n;  // scan outputs
  if (k < 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the body has ", body->output_size(),
                                    " outputs; it needs at least ", n + 1);
  }
  if (node.output_size() > n + k) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the node has ", node.output_size(),
                                    " outputs but its body makes ", n + k);
  }
  bool const hasCond = ImportContext::hasInput(node, 1);
  ILoop* loop = ctx.network().addLoop();
  if (loop == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the network refused the loop");
  }
  loop->setName(cat(node.name().empty() ? "Loop" : node.name(), "_", ctx.newId()).c_str());
  if (ImportContext::hasInput(node, 0)) {
    Constant const* mc = ctx.constant(node, 0);
    bool const unbounded = hasCond && mc != nullptr && mc->count() == 1 && mc->asInt(0) >= kUnboundedTripCount;
    if (!unbounded) {
      KO_ASSIGN_OR_RETURN(ITensor * m, ctx.tensor(node, 0));
      KO_ASSIGN_OR_RETURN(m, scalarOf(ctx, node, m, "M"));
      KO_RETURN_IF_ERROR(ctx.check(loop->addTripLimit(*m, TripLimit::kCOUNT), node, "trip_count"));
    }
  }
  std::vector<ITensor*> bodyIn;
  // The iteration number, only when the body reads it.
  if (graphReads(*body, body->input(0).name())) {
    KO_ASSIGN_OR_RETURN(ITensor * counter, iterationCounter(ctx, node, *loop, DataType::kINT64));
    bodyIn.push_back(counter);
  } else {
    bodyIn.push_back(nullptr);
  }
  IRecurrenceLayer* condRec = nullptr;
  if (hasCond) {
    KO_ASSIGN_OR_RETURN(ITensor * c, ctx.tensor(node, 1));
    KO_ASSIGN_OR_RETURN(c, scalarOf(ctx, node, c, "cond"));
    if (c->getType() != DataType::kBOOL) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "cond must be bool");
    }
    condRec = loop->addRecurrence(*c);
    KO_RETURN_IF_ERROR(ctx.check(condRec, node, "condition"));
    KO_RETURN_IF_ERROR(ctx.check(loop->addTripLimit(*condRec->getOutput(0), TripLimit::kWHILE), node, "while"));
    bodyIn.push_back(condRec->getOutput(0));
  } else if (graphReads(*body, body->input(1).name())) {
    // No condition input: the body's cond_in is true on every iteration (and its cond_out is ignored).
    KO_ASSIGN_OR_RETURN(Constant * t, ctx.newConstant(DataType::kBOOL, Dims{0, {}}));
    t->bytes[0] = 1;
    KO_ASSIGN_OR_RETURN(ITensor * tt, ctx.constantTensor(t, node.name() + "_cond"));
    bodyIn.push_back(tt);
  } else {
    bodyIn.push_back(nullptr);
  }
  std::vector<IRecurrenceLayer*> carried;
  for (int j = 0; j < n; ++j) {
    if (!ImportContext::hasInput(node, 2 + j)) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "loop-carried value ", j,
                                      " is omitted (optional values are not supported)");
    }
    KO_ASSIGN_OR_RETURN(ITensor * init, ctx.tensor(node, 2 + j));
    IRecurrenceLayer* r = loop->addRecurrence(*init);
    KO_RETURN_IF_ERROR(ctx.check(r, node, "carried"));
    carried.push_back(r);
    bodyIn.push_back(r->getOutput(0));
  }
  std::vector<ITensor*> outs;
  KO_RETURN_IF_ERROR(importSubgraph(ctx, node, *body, bodyIn, outs));
  if (condRec != nullptr) {
    KO_ASSIGN_OR_RETURN(ITensor * next, scalarOf(ctx, node, outs[0], "cond_out"));
    KO_ASSIGN_OR_RETURN(next, distinctFrom(ctx, node, next, bodyIn));
    condRec->setInput(1, *next);
  }
  for (int j = 0; j < n; ++j) {
    KO_ASSIGN_OR_RETURN(ITensor * next, distinctFrom(ctx, node, outs[static_cast<size_t>(1 + j)], bodyIn));
    carried[static_cast<size_t>(j)]->setInput(1, *next);
  }
  for (int j = 0; j < node.output_size(); ++j) {
    if (node.output(j).empty()) {
      continue;
    }
    ILoopOutputLayer* o = nullptr;
    if (j < n) {
      o = loop->addLoopOutput(*carried[static_cast<size_t>(j)]->getOutput(0), LoopOutput::kLAST_VALUE);
    } else {
      KO_ASSIGN_OR_RETURN(ITensor * s, distinctFrom(ctx, node, outs[static_cast<size_t>(1 + j)], bodyIn));
      o = loop->addLoopOutput(*s, LoopOutput::kCONCATENATE, 0);
    }
    KO_RETURN_IF_ERROR(ctx.check(o, node, j < n ? "final_value" : "scan_output"));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, j, o->getOutput(0)));
  }
  return Status::success();
}

}  // namespace

KILN_ONNX_REGISTER("", "Loop", importLoop);

}  // namespace kiln::onnx
