// ONNX Scan: opsets 9-21 as one ILoop (an iterator per scan input, a recurrence per state, kCONCATENATE or
// kREVERSE outputs on the requested axes); opset 8 (batch axis 0, scan axis 1) as a loop over the batch around
// that loop; opset 8's sequence_lens masks the steps past each item's length (zero scan outputs there).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/control_flow_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// One scan over `states` and `scans` (no batch axis): the loop, the body import and its outputs (N final
/// states then K scan outputs).
struct ScanSpec {
  std::vector<ITensor*> states;
  std::vector<ITensor*> scans;
  std::vector<int64_t> inAxes, inDirs, outAxes, outDirs;
};

Result<std::vector<ITensor*>> scanLoop(ImportContext& ctx, Node const& node, ::onnx::GraphProto const& body,
                                       ScanSpec const& s) {
  size_t const n = s.states.size();
  size_t const m = s.scans.size();
  if (m == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "num_scan_inputs must be at least 1");
  }
  if (body.input_size() != static_cast<int>(n + m)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the body has ", body.input_size(),
                                    " inputs; it needs ", n + m, " (", n, " states and ", m, " scan inputs)");
  }
  if (body.output_size() < static_cast<int>(n)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the body has ", body.output_size(),
                                    " outputs; it needs at least ", n);
  }
  size_t const k = static_cast<size_t>(body.output_size()) - n;
  ILoop* loop = ctx.network().addLoop();
  if (loop == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the network refused the loop");
  }
  loop->setName(cat(node.name().empty() ? "Scan" : node.name(), "_", ctx.newId()).c_str());
  std::vector<ITensor*> bodyIn;
  std::vector<IRecurrenceLayer*> recs;
  for (ITensor* st : s.states) {
    IRecurrenceLayer* r = loop->addRecurrence(*st);
    KO_RETURN_IF_ERROR(ctx.check(r, node, "state"));
    recs.push_back(r);
    bodyIn.push_back(r->getOutput(0));
  }
  for (size_t i = 0; i < m; ++i) {
    KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, s.scans[i]));
    int64_t axis = i < s.inAxes.size() ? s.inAxes[i] : 0;
    KO_ASSIGN_OR_RETURN(int32_t a, normalizeAxis(node, axis, rank));
    bool reverse = i < s.inDirs.size() && s.inDirs[i] != 0;
    IIteratorLayer* it = loop->addIterator(*s.scans[i], a, reverse);
    KO_RETURN_IF_ERROR(ctx.check(it, node, "scan_input"));
    bodyIn.push_back(it->getOutput(0));
  }
  std::vector<ITensor*> outs;
  KO_RETURN_IF_ERROR(importSubgraph(ctx, node, body, bodyIn, outs));
  std::vector<ITensor*> result;
  for (size_t i = 0; i < n; ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * next, distinctFrom(ctx, node, outs[i], bodyIn));
    recs[i]->setInput(1, *next);
    ILoopOutputLayer* o = loop->addLoopOutput(*recs[i]->getOutput(0), LoopOutput::kLAST_VALUE);
    KO_RETURN_IF_ERROR(ctx.check(o, node, "final_state"));
    result.push_back(o->getOutput(0));
  }
  for (size_t j = 0; j < k; ++j) {
    KO_ASSIGN_OR_RETURN(ITensor * v, distinctFrom(ctx, node, outs[n + j], bodyIn));
    KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, v));
    int64_t axis = j < s.outAxes.size() ? s.outAxes[j] : 0;
    KO_ASSIGN_OR_RETURN(int32_t a, normalizeAxis(node, axis, rank + 1));
    bool reverse = j < s.outDirs.size() && s.outDirs[j] != 0;
    ILoopOutputLayer* o = loop->addLoopOutput(*v, reverse ? LoopOutput::kREVERSE : LoopOutput::kCONCATENATE, a);
    KO_RETURN_IF_ERROR(ctx.check(o, node, "scan_output"));
    result.push_back(o->getOutput(0));
  }
  return result;
}

/// Opset 8 with sequence_lens, for one batch item: the first `len` (0-D int64) of the T steps run the body;
/// the later ones keep the states and give zero scan outputs. Scan inputs are read by index (reversed: len-1-t)
/// rather than by iterators, so that a short item's outputs lie at the front, as a full one's do.
Result<std::vector<ITensor*>> maskedScanLoop(ImportContext& ctx, Node const& node, ::onnx::GraphProto const& body,
                                             ScanSpec const& s, ITensor* len) {
  size_t const n = s.states.size();
  size_t const m = s.scans.size();
  if (body.input_size() != static_cast<int>(n + m) || body.output_size() < static_cast<int>(n)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the body has ", body.input_size(), " inputs and ",
                                    body.output_size(), " outputs; it needs ", n + m, " inputs and at least ", n,
                                    " outputs");
  }
  auto ew = [&](ITensor* a, ITensor* b, ElementWiseOperation op) -> Result<ITensor*> {
    IElementWiseLayer* l = ctx.network().addElementWise(*a, *b, op);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "scan_step"));
    return l->getOutput(0);
  };
  auto shapeOf = [&](ITensor* t) -> Result<ITensor*> {
    IShapeLayer* l = ctx.network().addShape(*t);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "shape"));
    ITensor* r = l->getOutput(0);
    if (r->getType() != DataType::kINT64) {
      ICastLayer* c = ctx.network().addCast(*r, DataType::kINT64);
      KO_RETURN_IF_ERROR(ctx.check(c, node, "cast"));
      r = c->getOutput(0);
    }
    return r;
  };
  // `mask` (0-D bool) reshaped to broadcast against a tensor of rank `rank`.
  auto maskFor = [&](ITensor* mask, int32_t rank) -> Result<ITensor*> {
    Dims ones{rank, {}};
    for (int32_t i = 0; i < rank; ++i) {
      ones.d[i] = 1;
    }
    return rank == 0 ? Result<ITensor*>(mask) : reshape(ctx, node, mask, ones, false);
  };
  auto select = [&](ITensor* c, ITensor* a, ITensor* b) -> Result<ITensor*> {
    ISelectLayer* l = ctx.network().addSelect(*c, *a, *b);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "scan_mask"));
    return l->getOutput(0);
  };
  ILoop* loop = ctx.network().addLoop();
  if (loop == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the network refused the loop");
  }
  loop->setName(cat(node.name().empty() ? "Scan" : node.name(), "_", ctx.newId()).c_str());
  KO_ASSIGN_OR_RETURN(ITensor * zero, scalarConstant(ctx, node, DataType::kINT64, 0));
  KO_ASSIGN_OR_RETURN(ITensor * one, scalarConstant(ctx, node, DataType::kINT64, 1));
  KO_ASSIGN_OR_RETURN(ITensor * shape0, shapeOf(s.scans[0]));
  IGatherLayer* tl = ctx.network().addGather(*shape0, *zero, 0);
  KO_RETURN_IF_ERROR(ctx.check(tl, node, "steps"));
  ITensor* steps = tl->getOutput(0);
  KO_RETURN_IF_ERROR(ctx.check(loop->addTripLimit(*steps, TripLimit::kCOUNT), node, "trip_count"));
  KO_ASSIGN_OR_RETURN(ITensor * lastStep, ew(steps, one, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * lastValid, ew(len, one, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * t, iterationCounter(ctx, node, *loop, DataType::kINT64));
  KO_ASSIGN_OR_RETURN(ITensor * valid, ew(t, len, ElementWiseOperation::kLESS));
  std::vector<ITensor*> bodyIn;
  std::vector<IRecurrenceLayer*> recs;
  for (ITensor* st : s.states) {
    IRecurrenceLayer* r = loop->addRecurrence(*st);
    KO_RETURN_IF_ERROR(ctx.check(r, node, "state"));
    recs.push_back(r);
    bodyIn.push_back(r->getOutput(0));
  }
  for (size_t i = 0; i < m; ++i) {
    ITensor* idx = t;
    if (i < s.inDirs.size() && s.inDirs[i] != 0) {
      KO_ASSIGN_OR_RETURN(idx, ew(lastValid, t, ElementWiseOperation::kSUB));
    }
    // Past the item's length the index is clamped into range; the step is masked anyway.
    KO_ASSIGN_OR_RETURN(idx, ew(idx, lastStep, ElementWiseOperation::kMIN));
    KO_ASSIGN_OR_RETURN(idx, ew(idx, zero, ElementWiseOperation::kMAX));
    IGatherLayer* g = ctx.network().addGather(*s.scans[i], *idx, 0);
    KO_RETURN_IF_ERROR(ctx.check(g, node, "scan_input"));
    bodyIn.push_back(g->getOutput(0));
  }
  std::vector<ITensor*> outs;
  KO_RETURN_IF_ERROR(importSubgraph(ctx, node, body, bodyIn, outs));
  std::vector<ITensor*> result;
  for (size_t i = 0; i < n; ++i) {
    KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, outs[i]));
    KO_ASSIGN_OR_RETURN(ITensor * mask, maskFor(valid, rank));
    KO_ASSIGN_OR_RETURN(ITensor * next, select(mask, outs[i], recs[i]->getOutput(0)));
    recs[i]->setInput(1, *next);
    ILoopOutputLayer* o = loop->addLoopOutput(*recs[i]->getOutput(0), LoopOutput::kLAST_VALUE);
    KO_RETURN_IF_ERROR(ctx.check(o, node, "final_state"));
    result.push_back(o->getOutput(0));
  }
  for (size_t j = n; j < outs.size(); ++j) {
    ITensor* v = outs[j];
    if (v->getType() == DataType::kBOOL) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node,
                                      "bool scan outputs with sequence_lens are not supported");
    }
    KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, v));
    KO_ASSIGN_OR_RETURN(ITensor * mask, maskFor(valid, rank));
    IFillLayer* f = ctx.network().addFill(Dims{0, {}}, FillOperation::kLINSPACE, v->getType());
    KO_RETURN_IF_ERROR(ctx.check(f, node, "zeros"));
    f->setAlpha(0.0);
    f->setBeta(0.0);
    if (rank > 0) {
      KO_ASSIGN_OR_RETURN(ITensor * vs, shapeOf(v));
      f->setInput(0, *vs);
    }
    ITensor* zeros = f->getOutput(0);
    KO_ASSIGN_OR_RETURN(ITensor * masked, select(mask, v, zeros));
    ILoopOutputLayer* o = loop->addLoopOutput(*masked, LoopOutput::kCONCATENATE, 0);
    KO_RETURN_IF_ERROR(ctx.check(o, node, "scan_output"));
    result.push_back(o->getOutput(0));
  }
  return result;
}

Status checkCount(Node const& node, char const* name, std::vector<int64_t> const& v, size_t want) {
  if (!v.empty() && v.size() != want) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute '", name, "' has ", v.size(),
                                    " entries; it needs ", want);
  }
  return Status::success();
}

Status importScan9(ImportContext& ctx, Node const& node, ::onnx::GraphProto const& body, int64_t m) {
  int64_t const n = node.input_size() - m;
  if (n < 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "num_scan_inputs ", m, " exceeds the ",
                                    node.input_size(), " inputs");
  }
  ScanSpec s;
  for (int i = 0; i < node.input_size(); ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    (i < n ? s.states : s.scans).push_back(t);
  }
  KO_ASSIGN_OR_RETURN(s.inAxes, attrInts(node, "scan_input_axes"));
  KO_ASSIGN_OR_RETURN(s.inDirs, attrInts(node, "scan_input_directions"));
  KO_ASSIGN_OR_RETURN(s.outAxes, attrInts(node, "scan_output_axes"));
  KO_ASSIGN_OR_RETURN(s.outDirs, attrInts(node, "scan_output_directions"));
  size_t const k = static_cast<size_t>(std::max<int64_t>(0, body.output_size() - n));
  KO_RETURN_IF_ERROR(checkCount(node, "scan_input_axes", s.inAxes, static_cast<size_t>(m)));
  KO_RETURN_IF_ERROR(checkCount(node, "scan_input_directions", s.inDirs, static_cast<size_t>(m)));
  KO_RETURN_IF_ERROR(checkCount(node, "scan_output_axes", s.outAxes, k));
  KO_RETURN_IF_ERROR(checkCount(node, "scan_output_directions", s.outDirs, k));
  KO_ASSIGN_OR_RETURN(std::vector<ITensor*> outs, scanLoop(ctx, node, body, s));
  for (int i = 0; i < node.output_size() && i < static_cast<int>(outs.size()); ++i) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, i, outs[static_cast<size_t>(i)]));
  }
  return Status::success();
}

/// Opset 8: inputs [sequence_lens], states [B, ...], scan inputs [B, S, ...]; the body sees one batch item.
Status importScan8(ImportContext& ctx, Node const& node, ::onnx::GraphProto const& body, int64_t m) {
  int64_t const n = node.input_size() - 1 - m;
  if (n < 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "num_scan_inputs ", m, " exceeds the ",
                                    node.input_size() - 1, " inputs after sequence_lens");
  }
  std::vector<ITensor*> all;
  for (int i = 1; i < node.input_size(); ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    all.push_back(t);
  }
  for (size_t i = 0; i < all.size(); ++i) {
    KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, all[i]));
    int32_t const need = static_cast<int64_t>(i) < n ? 1 : 2;  // scan inputs also need their scan axis
    if (rank < need) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input ", i + 1, " has rank ", rank,
                                      "; it needs a batch axis", need == 2 ? " and a scan axis" : "");
    }
  }
  // sequence_lens: ignored when it is a constant equal to the full length, else masked per item.
  ITensor* lens = nullptr;
  if (ImportContext::hasInput(node, 0)) {
    Constant const* c = ctx.constant(node, 0);
    int64_t const full = all[static_cast<size_t>(n)]->getDimensions().d[1];
    bool allFull = c != nullptr && full >= 0;
    for (int64_t i = 0; allFull && i < c->count(); ++i) {
      allFull = c->asInt(i) == full;
    }
    if (!allFull) {
      KO_ASSIGN_OR_RETURN(lens, ctx.tensor(node, 0));
      if (lens->getType() != DataType::kINT64) {
        ICastLayer* l = ctx.network().addCast(*lens, DataType::kINT64);
        KO_RETURN_IF_ERROR(ctx.check(l, node, "cast"));
        lens = l->getOutput(0);
      }
    }
  }
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> dirs, attrInts(node, "directions"));
  KO_RETURN_IF_ERROR(checkCount(node, "directions", dirs, static_cast<size_t>(m)));
  // The outer loop walks the batch: each input contributes its item as a state or scan input of the inner scan.
  ILoop* outer = ctx.network().addLoop();
  if (outer == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the network refused the loop");
  }
  outer->setName(cat(node.name().empty() ? "Scan" : node.name(), "_batch_", ctx.newId()).c_str());
  ScanSpec s;
  for (size_t i = 0; i < all.size(); ++i) {
    IIteratorLayer* it = outer->addIterator(*all[i], 0, false);
    KO_RETURN_IF_ERROR(ctx.check(it, node, "batch_item"));
    (static_cast<int64_t>(i) < n ? s.states : s.scans).push_back(it->getOutput(0));
  }
  s.inDirs = dirs;
  std::vector<ITensor*> outs;
  if (lens != nullptr) {
    IIteratorLayer* it = outer->addIterator(*lens, 0, false);
    KO_RETURN_IF_ERROR(ctx.check(it, node, "item_length"));
    KO_ASSIGN_OR_RETURN(outs, maskedScanLoop(ctx, node, body, s, it->getOutput(0)));
  } else {
    KO_ASSIGN_OR_RETURN(outs, scanLoop(ctx, node, body, s));
  }
  for (int i = 0; i < node.output_size() && i < static_cast<int>(outs.size()); ++i) {
    if (node.output(i).empty()) {
      continue;
    }
    ILoopOutputLayer* o = outer->addLoopOutput(*outs[static_cast<size_t>(i)], LoopOutput::kCONCATENATE, 0);
    KO_RETURN_IF_ERROR(ctx.check(o, node, "batch_output"));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, i, o->getOutput(0)));
  }
  return Status::success();
}

Status importScan(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(::onnx::GraphProto const* body, attrGraph(node, "body"));
  KO_ASSIGN_OR_RETURN(int64_t m, attrInt(node, "num_scan_inputs", -1));
  if (m < 1) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "num_scan_inputs must be given and >= 1");
  }
  return ctx.opset() < 9 ? importScan8(ctx, node, *body, m) : importScan9(ctx, node, *body, m);
}

}  // namespace

KILN_ONNX_REGISTER("", "Scan", importScan);

}  // namespace kiln::onnx
