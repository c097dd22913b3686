// Shared pieces of the oneDNN CPU tactics (see onednn_util.h).
#include "backends/cpu/onednn_util.h"

#include <omp.h>

#include <vector>

namespace kiln::backends::cpu {

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

bool appendActivation(dnnl::post_ops& ops, int64_t activation, float alpha, float beta) {
  using A = dnnl::algorithm;
  if (activation < 0)
    return true;
  if (activation > static_cast<int64_t>(ActivationType::kGELU_TANH))
    return false;
  switch (static_cast<ActivationType>(activation)) {
    case ActivationType::kRELU:
      ops.append_eltwise(1.f, A::eltwise_relu, 0.f, 0.f);
      return true;
    case ActivationType::kSIGMOID:
      ops.append_eltwise(1.f, A::eltwise_logistic, 0.f, 0.f);
      return true;
    case ActivationType::kTANH:
      ops.append_eltwise(1.f, A::eltwise_tanh, 0.f, 0.f);
      return true;
    case ActivationType::kLEAKY_RELU:  // x > 0 ? x : alpha*x (equal at 0)
      ops.append_eltwise(1.f, A::eltwise_relu, alpha, 0.f);
      return true;
    case ActivationType::kELU:
      ops.append_eltwise(1.f, A::eltwise_elu, alpha, 0.f);
      return true;
    case ActivationType::kSELU:  // beta * elu_alpha(x)
      ops.append_eltwise(1.f, A::eltwise_elu, alpha, 0.f);
      ops.append_eltwise(1.f, A::eltwise_linear, beta, 0.f);
      return true;
    case ActivationType::kSOFTPLUS:  // alpha * log(1 + exp(beta*x)); oneDNN 2.6's soft_relu has no scale
      ops.append_eltwise(1.f, A::eltwise_linear, beta, 0.f);
      ops.append_eltwise(1.f, A::eltwise_soft_relu, 0.f, 0.f);
      ops.append_eltwise(1.f, A::eltwise_linear, alpha, 0.f);
      return true;
    case ActivationType::kCLIP:  // max(alpha, min(beta, x)) is min(max(x, alpha), beta) only when alpha <= beta
      if (!(alpha <= beta))
        return false;
      ops.append_eltwise(1.f, A::eltwise_clip_v2, alpha, beta);
      return true;
    case ActivationType::kHARD_SIGMOID:  // clip(alpha*x + beta, 0, 1)
      ops.append_eltwise(1.f, A::eltwise_linear, alpha, beta);
      ops.append_eltwise(1.f, A::eltwise_clip_v2, 0.f, 1.f);
      return true;
    case ActivationType::kSCALED_TANH:  // alpha * tanh(beta*x)
      ops.append_eltwise(1.f, A::eltwise_linear, beta, 0.f);
      ops.append_eltwise(1.f, A::eltwise_tanh, 0.f, 0.f);
      ops.append_eltwise(1.f, A::eltwise_linear, alpha, 0.f);
      return true;
    case ActivationType::kGELU_ERF:
      ops.append_eltwise(1.f, A::eltwise_gelu_erf, 0.f, 0.f);
      return true;
    case ActivationType::kGELU_TANH:
      ops.append_eltwise(1.f, A::eltwise_gelu_tanh, 0.f, 0.f);
      return true;
    case ActivationType::kSOFTSIGN:
    case ActivationType::kTHRESHOLDED_RELU:
      return false;
  }
  return false;
}

bool activationSupported(ir::Node const& node) {
  dnnl::post_ops ops;
  return appendActivation(ops, node.attrs.getInt("activation", -1), static_cast<float>(node.attrs.getFloat("act_alpha", 0.0)),
                          static_cast<float>(node.attrs.getFloat("act_beta", 0.0)));
}

OmpThreads::OmpThreads(LaunchContext const& ctx)
    : previous_(omp_get_max_threads()), count_(ctx.pool ? ctx.pool->threads() : 1) {
  if (count_ != previous_)
    omp_set_num_threads(count_);
}

OmpThreads::~OmpThreads() {
  if (count_ != previous_)
    omp_set_num_threads(previous_);
}

int currentThreads() { return omp_get_max_threads(); }

HostTensor const* constantInput(ir::Node const& node, size_t i) {
  ir::Value const* v = node.input(i);
  if (!v || !v->producer || v->producer->op != ir::OpType::kConstant || !v->producer->constant)
    return nullptr;
  return &*v->producer->constant;
}

dnnl::memory PackedWeights::get(dnnl::memory::desc const& want, dnnl::memory::desc const& plain, void const* data) {
  for (auto const& [desc, mem] : packed_)
    if (desc == want)
      return mem;
  dnnl::engine& eng = engine();
  dnnl::memory src(plain, eng, const_cast<void*>(data));
  dnnl::memory dst(want, eng);
  dnnl::stream stream(eng);
  dnnl::reorder(src, dst).execute(stream, src, dst);
  stream.wait();
  packed_.emplace_back(want, dst);
  return dst;
}

void* threadScratch(size_t bytes) {
  thread_local std::vector<unsigned char> buf;
  if (buf.size() < bytes + 64)
    buf.resize(bytes + 64);
  auto p = reinterpret_cast<uintptr_t>(buf.data());
  return reinterpret_cast<void*>((p + 63) & ~uintptr_t{63});
}

int64_t rightPadding(int64_t in, int64_t out, int64_t dk, int64_t stride, int64_t padBegin, int64_t padEnd) {
  int64_t pr = padEnd;
  if (in + padBegin + pr - dk < 0 || (in + padBegin + pr - dk) / stride + 1 != out)
    pr = (out - 1) * stride + dk - in - padBegin;
  return pr < 0 ? -1 : pr;
}

dnnl::memory::dims toDnnl(Dims const& d) {
  dnnl::memory::dims r;
  for (int32_t i = 0; i < d.nbDims; ++i)
    r.push_back(d.d[i]);
  return r;
}

}  // namespace kiln::backends::cpu
