// Shared pieces of the oneDNN CPU tactics (see onednn_util.h).
#include "backends/cpu/onednn_util.h"
#include "backends/cpu_format.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
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

OmpThreads::OmpThreads(LaunchContext const& ctx, int64_t elements)
    : previous_(omp_get_max_threads()), count_(ctx.pool && elements >= kSmallWork ? ctx.pool->threads() : 1) {
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

void* threadScratch(size_t bytes, int slot) {
  thread_local std::vector<unsigned char> bufs[4];
  std::vector<unsigned char>& buf = bufs[slot < 0 || slot > 3 ? 0 : slot];
  if (buf.size() < bytes + 64)
    buf.resize(bytes + 64);
  auto p = reinterpret_cast<uintptr_t>(buf.data());
  return reinterpret_cast<void*>((p + 63) & ~uintptr_t{63});
}

bool validActFormat(int64_t v) {
  switch (static_cast<ActFormat>(v)) {
    case ActFormat::kPLAIN:
    case ActFormat::kNHWC:
    case ActFormat::kNCHW8C:
    case ActFormat::kNCHW16C:
      return true;
  }
  return false;
}

ActFormat nodeFormat(ir::Node const& node, char const* key, size_t i) {
  if (!node.attrs.has(key))
    return ActFormat::kPLAIN;
  std::vector<int64_t> v = node.attrs.getInts(key);
  if (i >= v.size() || !validActFormat(v[i]))
    return ActFormat::kPLAIN;
  return static_cast<ActFormat>(v[i]);
}

Result<dnnl::memory::desc> activationDesc(Dims const& d, ActFormat f, dnnl::memory::data_type dt) {
  using tag = dnnl::memory::format_tag;
  if (f == ActFormat::kPLAIN) {
    if (d.nbDims < 1 || d.nbDims > 6)
      return unsupported("a plain activation of rank ", d.nbDims);
    tag t = d.nbDims == 1 ? tag::a
            : d.nbDims == 2 ? tag::ab
            : d.nbDims == 3 ? tag::abc
            : d.nbDims == 4 ? tag::abcd
            : d.nbDims == 5 ? tag::abcde
                            : tag::abcdef;
    return dnnl::memory::desc(toDnnl(d), dt, t);
  }
  if (d.nbDims != 4)
    return unsupported("activation format ", static_cast<int64_t>(f), " needs rank 4, not ", d.nbDims);
  switch (f) {
    case ActFormat::kNHWC:
      return dnnl::memory::desc(toDnnl(d), dt, tag::nhwc);
    case ActFormat::kNCHW8C:
    case ActFormat::kNCHW16C: {
      int64_t block = static_cast<int64_t>(f);
      if (d.d[1] % block != 0)
        return unsupported("activation format nChw", block, "c needs C divisible by ", block, ", not ", d.d[1]);
      return dnnl::memory::desc(toDnnl(d), dt, f == ActFormat::kNCHW8C ? tag::nChw8c : tag::nChw16c);
    }
    case ActFormat::kPLAIN:
      break;
  }
  return unsupported("activation format ", static_cast<int64_t>(f));
}

ActFormat preferredConvFormat() {
  static ActFormat const f = [] {
    // KILN_CPU_ACTIVATION_FORMAT (0, 1, 8 or 16) overrides oneDNN's answer, for experiments.
    if (char const* env = std::getenv("KILN_CPU_ACTIVATION_FORMAT")) {
      char* end = nullptr;
      long v = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && validActFormat(v))
        return static_cast<ActFormat>(v);
    }
    try {
      using tag = dnnl::memory::format_tag;
      auto f32 = dnnl::memory::data_type::f32;
      dnnl::memory::desc any({1, 64, 28, 28}, f32, tag::any);
      dnnl::memory::desc w({64, 64, 3, 3}, f32, tag::any);
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any, w,
                                        any, {1, 1}, {0, 0}, {1, 1}, {1, 1});
      dnnl::convolution_forward::primitive_desc pd(d, engine());
      dnnl::memory::dims dims{1, 64, 28, 28};
      for (ActFormat c : {ActFormat::kNCHW16C, ActFormat::kNCHW8C, ActFormat::kNHWC})
        if (pd.src_desc() == *activationDesc(makeDims({1, 64, 28, 28}), c))
          return c;
    } catch (dnnl::error const&) {
    }
    return ActFormat::kPLAIN;
  }();
  return f;
}

std::shared_ptr<dnnl::reorder const> makeReorder(dnnl::memory::desc const& from, dnnl::memory::desc const& to) {
  if (from == to)
    return nullptr;
  dnnl::engine& eng = engine();
  return std::make_shared<dnnl::reorder const>(dnnl::reorder::primitive_desc(eng, from, eng, to));
}

void runReorder(dnnl::reorder const* r, dnnl::memory::desc const& from, void const* src, dnnl::memory::desc const& to,
                void* dst, dnnl::stream& stream) {
  if (!r) {
    if (src != dst)
      std::memcpy(dst, src, from.get_size());
    return;
  }
  dnnl::engine& eng = engine();
  dnnl::memory s(from, eng, const_cast<void*>(src)), d(to, eng, dst);
  r->execute(stream, s, d);
}

int64_t rightPadding(int64_t in, int64_t out, int64_t dk, int64_t stride, int64_t padBegin, int64_t padEnd) {
  int64_t pr = padEnd;
  if (in + padBegin + pr - dk < 0 || (in + padBegin + pr - dk) / stride + 1 != out)
    pr = (out - 1) * stride + dk - in - padBegin;
  return pr < 0 ? -1 : pr;
}

bool onednnAvx512() {
  // cpu_isa values are sets of feature bits: avx512_core's bits all present means AVX-512 (avx2_vnni, for one, is
  // numerically larger without them).
  static bool const has = [] {
    auto const isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto const need = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & need) == need;
  }();
  return has;
}

bool bf16Supported() { return onednnAvx512(); }

std::optional<dnnl::memory::data_type> dnnlFloatType(DataType t) {
  if (t == DataType::kFLOAT) return dnnl::memory::data_type::f32;
  if (t == DataType::kBF16 && bf16Supported()) return dnnl::memory::data_type::bf16;
  return std::nullopt;
}

dnnl::memory::dims toDnnl(Dims const& d) {
  dnnl::memory::dims r;
  for (int32_t i = 0; i < d.nbDims; ++i)
    r.push_back(d.d[i]);
  return r;
}

}  // namespace kiln::backends::cpu

namespace kiln::backends {
int64_t cpuPreferredActivationFormat() { return static_cast<int64_t>(cpu::preferredConvFormat()); }

void cpuEvictCaches(int threads) {
  static size_t const bytes = [] {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return 2 * static_cast<size_t>(l2 > 0 ? l2 : long{2} << 20);
  }();
  // A new value each time, so that no write is a no-op.
  static std::atomic<unsigned> round{0};
  int value = static_cast<int>(++round & 0xff);
#pragma omp parallel num_threads(std::max(1, threads))
  {
    thread_local std::vector<unsigned char> buffer;
    buffer.resize(bytes);
    std::memset(buffer.data(), value, bytes);
  }
}
}  // namespace kiln::backends
