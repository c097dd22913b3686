// Tactic registry and the host evaluator over the reference tactics.
#include "backends/backend.h"
#include "backends/cpu_format.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace kiln::backends {

TacticRegistry& TacticRegistry::instance() {
  static TacticRegistry r;
  return r;
}

bool TacticRegistry::add(Tactic t) {
  if (find(t.name)) {
    std::fprintf(stderr, "kiln: tactic '%s' registered twice; keeping the first\n", t.name.c_str());
    return false;
  }
  tactics_.push_back(std::make_unique<Tactic>(std::move(t)));
  return true;
}

Tactic const* TacticRegistry::find(std::string const& name) const {
  for (auto const& t : tactics_)
    if (t->name == name) return t.get();
  return nullptr;
}

std::vector<Tactic const*> TacticRegistry::candidates(ir::Node const& node, std::vector<TensorInfo> const& in,
                                                      std::vector<TensorInfo> const& out, DeviceType device,
                                                      TacticSources sources) const {
  std::vector<Tactic const*> r;
  for (auto const& t : tactics_) {
    if (t->op != node.op || t->device != device) continue;
    if (!(sources & (1u << static_cast<uint32_t>(t->source)))) continue;
    if (!t->formatAware && nodeFormat(node) != TensorFormat::kLINEAR) continue;
    if (t->supports && !t->supports(node, in, out)) continue;
    r.push_back(t.get());
  }
  std::stable_sort(r.begin(), r.end(), [](Tactic const* a, Tactic const* b) { return a->priority > b->priority; });
  return r;
}

std::vector<Tactic const*> TacticRegistry::all() const {
  std::vector<Tactic const*> r;
  for (auto const& t : tactics_) r.push_back(t.get());
  return r;
}

Status evaluateOnHost(ir::Node const& node, std::vector<HostTensor const*> const& in, std::vector<HostTensor>& out) {
  std::vector<TensorInfo> inInfo, outInfo;
  LaunchContext ctx;
  for (HostTensor const* t : in) {
    if (t) {
      inInfo.push_back({t->dtype(), t->shape()});
      ctx.inputs.push_back({const_cast<void*>(t->data()), t->dtype(), t->shape()});
    } else {
      Dims none{};
      none.nbDims = -1;
      inInfo.push_back({DataType::kFLOAT, none});
      ctx.inputs.push_back({nullptr, DataType::kFLOAT, none});
    }
  }
  for (HostTensor& t : out) {
    outInfo.push_back({t.dtype(), t.shape()});
    ctx.outputs.push_back({t.mutableData(), t.dtype(), t.shape()});
  }
  auto cands = TacticRegistry::instance().candidates(node, inInfo, outInfo, DeviceType::kCPU,
                                                     1u << static_cast<uint32_t>(TacticSource::kREFERENCE));
  if (cands.empty())
    return unsupported(node.describe(), ": no reference kernel supports these input types");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, cands.front()->create(node));
  size_t ws = k->workspaceSize(inInfo, outInfo);
  HostBuffer wsBuf;
  if (ws) {
    KILN_ASSIGN_OR_RETURN(wsBuf, HostBuffer::allocate(ws, "reference kernel workspace"));
    ctx.workspace = wsBuf.data();
    ctx.workspaceSize = ws;
  }
  CpuStream stream;
  ctx.stream = &stream;
  return k->enqueue(ctx);
}

Result<std::vector<HostTensor>> evaluateOnHostDynamic(ir::Node const& node, std::vector<HostTensor const*> const& in,
                                                      std::vector<ir::TensorInfo> const& outInfo) {
  std::vector<TensorInfo> inInfo;
  LaunchContext ctx;
  for (HostTensor const* t : in) {
    Dims shape{};
    shape.nbDims = -1;
    DataType dt = DataType::kFLOAT;
    if (t) {
      shape = t->shape();
      dt = t->dtype();
    }
    inInfo.push_back({dt, shape});
    ctx.inputs.push_back({t ? const_cast<void*>(t->data()) : nullptr, dt, shape});
  }
  // Outputs with known shapes are allocated now; the others when the kernel asks.
  std::vector<std::optional<HostTensor>> outs(outInfo.size());
  for (size_t i = 0; i < outInfo.size(); ++i) {
    if (dimsKnown(outInfo[i].shape)) {
      KILN_ASSIGN_OR_RETURN(outs[i], HostTensor::allocate(outInfo[i].dtype, outInfo[i].shape, "host output"));
      ctx.outputs.push_back({outs[i]->mutableData(), outInfo[i].dtype, outInfo[i].shape});
    } else {
      ctx.outputs.push_back({nullptr, outInfo[i].dtype, outInfo[i].shape});
    }
  }
  std::string what = node.describe();
  ctx.allocateOutput = [&outs, &outInfo, what](size_t i, Dims const& shape) -> Result<void*> {
    if (i >= outs.size()) return invalidArgument(what, ": no output ", i);
    if (shape.nbDims < 0 || !dimsKnown(shape))
      return invalidArgument(what, ": cannot allocate output ", i, " of shape ", dimsToString(shape));
    if (dimsKnown(outInfo[i].shape)) {
      if (dimsToVector(outInfo[i].shape) != dimsToVector(shape))
        return invalidArgument(what, ": output ", i, " has shape ", dimsToString(outInfo[i].shape), ", not ",
                               dimsToString(shape));
      return outs[i]->mutableData();
    }
    if (outs[i]) return invalidArgument(what, ": output ", i, " was allocated twice");
    KILN_ASSIGN_OR_RETURN(outs[i], HostTensor::allocate(outInfo[i].dtype, shape, "data-dependent host output"));
    return outs[i]->mutableData();
  };
  auto cands = TacticRegistry::instance().candidates(node, inInfo, outInfo, DeviceType::kCPU,
                                                     1u << static_cast<uint32_t>(TacticSource::kREFERENCE));
  if (cands.empty()) return unsupported(what, ": no reference kernel supports these input types");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, cands.front()->create(node));
  size_t ws = k->workspaceSize(inInfo, outInfo);
  HostBuffer wsBuf;
  if (ws) {
    KILN_ASSIGN_OR_RETURN(wsBuf, HostBuffer::allocate(ws, "reference kernel workspace"));
    ctx.workspace = wsBuf.data();
    ctx.workspaceSize = ws;
  }
  CpuStream stream;
  ctx.stream = &stream;
  KILN_RETURN_IF_ERROR(k->enqueue(ctx));
  std::vector<HostTensor> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i]) return internalError(what, ": the kernel did not allocate its data-dependent output ", i);
    result.push_back(std::move(*outs[i]));
  }
  return result;
}

ir::HostEvaluator referenceEvaluator() { return &evaluateOnHost; }

}  // namespace kiln::backends

#ifndef KILN_HAVE_ONEDNN
namespace kiln::backends {
// Without oneDNN every CPU kernel is a reference kernel on plain tensors (the oneDNN build defines this in
// cpu/onednn_util.cc).
int64_t cpuPreferredActivationFormat() { return 0; }
bool cpuFusedAttentionFast() { return false; }
void cpuEvictCaches(int) {}
}  // namespace kiln::backends
#endif
