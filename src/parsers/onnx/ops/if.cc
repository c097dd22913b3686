// ONNX If (opsets 1-21, tensor outputs): both branches become the branches of one IIfConditional; outer values a
// branch reads enter through IIfConditional::addInput so that the branch's layers run only when it is taken.
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// Imports one branch: every outer tensor it reads is rebound (in a scope around the branch) to the
/// conditional's input layer for it, created once per conditional.
Status importBranch(ImportContext& ctx, Node const& node, IIfConditional& cond, ::onnx::GraphProto const& g,
                    std::unordered_map<ITensor*, ITensor*>& entered, std::vector<ITensor*>& outs) {
  if (g.input_size() != 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "branch '", g.name(), "' must have no inputs");
  }
  ctx.pushScope(cat(node.name().empty() ? "If" : node.name(), "/in_", ctx.newId(), "/"));
  Status s = Status::success();
  for (auto const& name : outerReferences(g)) {
    auto it = ctx.values().find(name);
    if (it == ctx.values().end() || it->second.tensor == nullptr) {
      continue;  // a constant is copied into the branch; an unknown name fails in the branch, naming its node
    }
    ITensor*& in = entered[it->second.tensor];
    if (in == nullptr) {
      IIfConditionalInputLayer* l = cond.addInput(*it->second.tensor);
      s = ctx.check(l, node, "if_input");
      if (!s.ok()) {
        break;
      }
      in = l->getOutput(0);
    }
    s = ctx.define(name, Value{in, nullptr});
    if (!s.ok()) {
      break;
    }
  }
  if (s.ok()) {
    s = importSubgraph(ctx, node, g, {}, outs);
  }
  ctx.popScope();
  return s;
}

Status importIf(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(::onnx::GraphProto const* thenG, attrGraph(node, "then_branch"));
  KO_ASSIGN_OR_RETURN(::onnx::GraphProto const* elseG, attrGraph(node, "else_branch"));
  if (thenG->output_size() != elseG->output_size()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "then_branch has ", thenG->output_size(),
                                    " outputs but else_branch has ", elseG->output_size());
  }
  if (thenG->output_size() < node.output_size()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the node has ", node.output_size(),
                                    " outputs but its branches only ", thenG->output_size());
  }
  KO_ASSIGN_OR_RETURN(ITensor * c, ctx.tensor(node, 0));
  if (c->getType() != DataType::kBOOL) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "the condition must be bool");
  }
  Dims cd = c->getDimensions();
  if (cd.nbDims != 0) {
    // A single-element condition of any rank: the conditional wants a 0-D one.
    KO_ASSIGN_OR_RETURN(c, reshape(ctx, node, c, Dims{0, {}}));
  }
  IIfConditional* cond = ctx.network().addIfConditional();
  if (cond == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the network refused the conditional");
  }
  cond->setName(cat(node.name().empty() ? "If" : node.name(), "_", ctx.newId()).c_str());
  KO_RETURN_IF_ERROR(ctx.check(cond->setCondition(*c), node, "condition"));
  std::unordered_map<ITensor*, ITensor*> entered;
  std::vector<ITensor*> thenOuts;
  std::vector<ITensor*> elseOuts;
  KO_RETURN_IF_ERROR(importBranch(ctx, node, *cond, *thenG, entered, thenOuts));
  KO_RETURN_IF_ERROR(importBranch(ctx, node, *cond, *elseG, entered, elseOuts));
  // A branch that returns an outer value unchanged returns a copy: a conditional input is no branch output.
  auto own = [&](ITensor* t) -> Result<ITensor*> {
    for (auto const& kv : entered) {
      if (kv.second == t) {
        IIdentityLayer* l = ctx.network().addIdentity(*t);
        KO_RETURN_IF_ERROR(ctx.check(l, node, "copy"));
        return l->getOutput(0);
      }
    }
    return t;
  };
  for (int i = 0; i < node.output_size(); ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * t, own(thenOuts[static_cast<size_t>(i)]));
    KO_ASSIGN_OR_RETURN(ITensor * e, own(elseOuts[static_cast<size_t>(i)]));
    if (t->getType() != e->getType()) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "output ", i,
                                      " is of another type in each "
                                      "branch");
    }
    if (t->getDimensions().nbDims != e->getDimensions().nbDims) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "output ", i, " has rank ",
                                      t->getDimensions().nbDims, " in then_branch but ", e->getDimensions().nbDims,
                                      " in else_branch");
    }
    IIfConditionalOutputLayer* o = cond->addOutput(*t, *e);
    KO_RETURN_IF_ERROR(ctx.check(o, node, "if_output"));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, i, o->getOutput(0)));
  }
  return Status::success();
}

}  // namespace

KILN_ONNX_REGISTER("", "If", importIf);

}  // namespace kiln::onnx
