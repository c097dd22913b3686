// oneDNN tactics on fp32 for the ops that reduce or move along axes: SoftMax over one axis (softmax_onednn),
// layer normalization over the last axis with scale and bias (normalization_onednn_layer), Reduce sum/mean/max/
// min/product over static axes (reduce_onednn), and Shuffle's transpose-reshape-transpose as at most two reorders
// (shuffle_onednn_reorder, float32 or bf16; a pure reshape is one copy).
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "backends/cpu/onednn_util.h"
#include "backends/normalization_view.h"

namespace kiln::backends::cpu {
namespace {

using dnnl::memory;
using ir::OpType;

memory::desc plainDesc(memory::dims const& d, memory::data_type dt = memory::data_type::f32) {
  memory::dims strides(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;)
    strides[i - 1] = strides[i] * d[i];
  return memory::desc(d, dt, strides);
}

bool floatIo(std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out, size_t nIn) {
  if (in.size() < nIn || out.size() != 1 || out[0].dtype != DataType::kFLOAT)
    return false;
  for (size_t i = 0; i < nIn; ++i)
    if (in[i].dtype != DataType::kFLOAT)
      return false;
  return true;
}

std::optional<int32_t> normalize(int64_t a, int32_t rank) {
  if (a < 0)
    a += rank;
  if (a < 0 || a >= rank)
    return std::nullopt;
  return static_cast<int32_t>(a);
}

// One primitive with its descriptor, cached per shape and thread count.
template <typename Pd, typename Prim>
struct OnePrimitive {
  Pd pd;
  Prim prim;
};

// Runs `prim` with `args` plus the user scratchpad; errors name `who`.
template <typename Pd, typename Prim>
Status execute(std::string const& who, OnePrimitive<Pd, Prim> const& p, std::unordered_map<int, memory> args) {
  try {
    dnnl::engine& eng = engine();
    dnnl::stream stream(eng);
    memory::desc sp = p.pd.scratchpad_desc();
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(sp, eng, threadScratch(sp.get_size())));
    p.prim.execute(stream, args);
    stream.wait();
  } catch (dnnl::error const& e) {
    return internalError(who, ": oneDNN failed: ", e.what());
  }
  return Status::ok();
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// ---- SoftMax ----

using SoftmaxPrim = OnePrimitive<dnnl::softmax_forward::primitive_desc, dnnl::softmax_forward>;

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(std::string who, std::optional<int64_t> axis) : who_(std::move(who)), axis_(axis) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    if (!dimsEqual(x.shape, y.shape))
      return invalidArgument(who_, ": x ", dimsToString(x.shape), " and y ", dimsToString(y.shape), " differ");
    if (y.count() == 0)
      return Status::ok();
    int32_t rank = x.shape.nbDims;
    // Without the attribute: TensorRT's default axis (rank - 3, or 0 below rank 3), as the reference.
    int64_t a = axis_ ? *axis_ : (rank >= 3 ? rank - 3 : 0);
    auto axis = normalize(a, rank);
    if (!axis || rank > 12)
      return invalidArgument(who_, ": axis ", a, " is out of range for ", dimsToString(x.shape));
    OmpThreads threads(ctx, x.count());
    std::vector<int64_t> key = dimsToVector(x.shape);
    key.push_back(*axis);
    key.push_back(threads.count());
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<SoftmaxPrim const> p, cache_.get(std::move(key), [&]() -> Result<std::shared_ptr<SoftmaxPrim const>> {
      try {
        memory::desc md = plainDesc(toDnnl(x.shape));
        dnnl::softmax_forward::primitive_desc pd(
            dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, *axis), userScratchpad(), engine());
        return std::make_shared<SoftmaxPrim const>(SoftmaxPrim{pd, dnnl::softmax_forward(pd)});
      } catch (dnnl::error const& e) {
        return unsupported(who_, ": oneDNN has no softmax for ", dimsToString(x.shape), ": ", e.what());
      }
    }));
    dnnl::engine& eng = engine();
    return execute(who_, *p, {{DNNL_ARG_SRC, memory(p->pd.src_desc(), eng, x.data)},
                              {DNNL_ARG_DST, memory(p->pd.dst_desc(), eng, y.data)}});
  }

 private:
  std::string who_;
  std::optional<int64_t> axis_;
  PrimitiveCache<SoftmaxPrim> cache_;
};

Tactic softmaxTactic() {
  Tactic t;
  t.name = "softmax_onednn";
  t.op = OpType::kSoftMax;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;
  t.supports = [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
    return floatIo(in, out, 1) && in.size() == 1 && in[0].shape.nbDims >= 1 && in[0].shape.nbDims <= 12;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    std::optional<int64_t> axis;
    if (node.attrs.has("axis"))
      axis = node.attrs.getInt("axis", 0);
    return std::unique_ptr<Kernel>(std::make_unique<SoftmaxKernel>(node.describe(), axis));
  };
  return t;
}

KILN_REGISTER_TACTIC(softmaxTactic);

// ---- Normalization over the last axis ----

using LnormPrim = OnePrimitive<dnnl::layer_normalization_forward::primitive_desc, dnnl::layer_normalization_forward>;

// True when `t` holds `c` values along the last axis of a rank-`rank` tensor and is 1 elsewhere.
bool lastAxisOnly(Dims const& t, int32_t rank, int64_t c) {
  if (t.nbDims < 1 || t.nbDims > rank || t.d[t.nbDims - 1] != c)
    return false;
  for (int32_t i = 0; i + 1 < t.nbDims; ++i)
    if (t.d[i] != 1)
      return false;
  return true;
}

// y = x + r over n elements, r repeating every rc (leading dims of the residual broadcast). A plain loop per run of
// r, so that it vectorizes (the per-element bounds test of one combined loop kept it scalar: 0.035 ms of BERT's
// 128 x 768 on this machine's cores, twice the norm's own time; 0.012 ms now), in chunks on `threads` OpenMP
// threads (the workers oneDNN's layer norm runs on next; OmpThreads keeps small tensors on the calling thread):
// operands coming from L3 or memory stream at twice one core's bandwidth.
KILN_CPU_CLONES void addChunk(float const* x, float const* r, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = x[j] + r[j];
}

void addResidual(float const* x, float const* r, float* y, int64_t n, int64_t rc, int threads) {
  constexpr int64_t kChunk = 16384;
  int64_t const chunks = (n + kChunk - 1) / kChunk;
#ifdef _OPENMP  // -fopenmp (GCC builds); elsewhere the loop runs on the calling thread
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && chunks > 1)
#endif
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t const end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end;) {
      int64_t const off = i % rc, len = std::min(end - i, rc - off);
      addChunk(x + i, r + off, y + i, len);
      i += len;
    }
  }
}

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(std::string who, float eps) : who_(std::move(who)), eps_(eps) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& scale = ctx.inputs[1];
    TensorView const& bias = ctx.inputs[2];
    TensorView const& y = ctx.outputs[0];
    int32_t rank = x.shape.nbDims;
    if (!dimsEqual(x.shape, y.shape) || rank < 2 || rank > 12)
      return invalidArgument(who_, ": x ", dimsToString(x.shape), " and y ", dimsToString(y.shape), " differ");
    int64_t c = x.shape.d[rank - 1];
    if (!lastAxisOnly(scale.shape, rank, c) || !lastAxisOnly(bias.shape, rank, c))
      return invalidArgument(who_, ": scale ", dimsToString(scale.shape), " and bias ", dimsToString(bias.shape),
                             " must hold ", c, " values along the last axis");
    if (y.count() == 0)
      return Status::ok();
    OmpThreads threads(ctx, x.count());
    void* src = x.data;
    if (ctx.inputs.size() > 3 && ctx.inputs[3].data) {
      // The fused residual: y = x + residual, then normalized in place (oneDNN's layer norm allows src == dst).
      TensorView const& r = ctx.inputs[3];
      if (!residualFits(r.shape, x.shape))
        return invalidArgument(who_, ": residual ", dimsToString(r.shape), " must have x's shape ",
                               dimsToString(x.shape), " or it with leading dims 1");
      addResidual(static_cast<float const*>(x.data), static_cast<float const*>(r.data), static_cast<float*>(y.data),
                  x.count(), std::max<int64_t>(r.count(), 1), threads.count());
      src = y.data;
    }
    std::vector<int64_t> key = dimsToVector(x.shape);
    key.push_back(threads.count());
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<LnormPrim const> p, cache_.get(std::move(key), [&]() -> Result<std::shared_ptr<LnormPrim const>> {
      try {
        memory::desc md = plainDesc(toDnnl(x.shape));
        dnnl::layer_normalization_forward::primitive_desc pd(
            dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, eps_,
                                                    dnnl::normalization_flags::use_scale |
                                                        dnnl::normalization_flags::use_shift),
            userScratchpad(), engine());
        return std::make_shared<LnormPrim const>(LnormPrim{pd, dnnl::layer_normalization_forward(pd)});
      } catch (dnnl::error const& e) {
        return unsupported(who_, ": oneDNN has no layer normalization for ", dimsToString(x.shape), ": ", e.what());
      }
    }));
    dnnl::engine& eng = engine();
    memory::desc cMd({c}, memory::data_type::f32, memory::format_tag::a);
    return execute(who_, *p, {{DNNL_ARG_SRC, memory(p->pd.src_desc(), eng, src)},
                              {DNNL_ARG_DST, memory(p->pd.dst_desc(), eng, y.data)},
                              {DNNL_ARG_SCALE, memory(cMd, eng, scale.data)},
                              {DNNL_ARG_SHIFT, memory(cMd, eng, bias.data)}});
  }

 private:
  std::string who_;
  float eps_;
  PrimitiveCache<LnormPrim> cache_;
};

// Normalization over exactly the last axis, one group, scale and bias of the last axis' size; with or without
// the fused fp32 residual.
bool supportsLayerNorm(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  if (in.size() < 3 || in.size() > 4 || !floatIo(in, out, 3) || node.attrs.getInt("num_groups", 1) > 1)
    return false;
  if (in.size() == 4 && in[3].shape.nbDims >= 0 && in[3].dtype != DataType::kFLOAT)
    return false;
  int32_t rank = in[0].shape.nbDims;
  if (rank < 2 || rank > 12)  // oneDNN normalizes rows: at least [rows, C]
    return false;
  std::vector<int64_t> axes = node.attrs.getInts("axes");
  if (axes.size() != 1 || normalize(axes[0], rank) != rank - 1)
    return false;
  int64_t c = in[0].shape.d[rank - 1];
  if (c <= 0)
    return c < 0;  // known later; enqueue checks
  return lastAxisOnly(in[1].shape, rank, c) && lastAxisOnly(in[2].shape, rank, c);
}

Tactic layerNormTactic() {
  Tactic t;
  t.name = "normalization_onednn_layer";
  t.op = OpType::kNormalization;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;
  t.supports = supportsLayerNorm;
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(
        std::make_unique<LayerNormKernel>(node.describe(), static_cast<float>(node.attrs.getFloat("epsilon", 1e-5))));
  };
  return t;
}

KILN_REGISTER_TACTIC(layerNormTactic);

// ---- Reduce ----

using ReducePrim = OnePrimitive<dnnl::reduction::primitive_desc, dnnl::reduction>;

std::optional<dnnl::algorithm> reduceAlgorithm(int64_t op) {
  using A = dnnl::algorithm;
  if (op < 0 || op > static_cast<int64_t>(ReduceOperation::kAVG))
    return std::nullopt;
  switch (static_cast<ReduceOperation>(op)) {
    case ReduceOperation::kSUM:
      return A::reduction_sum;
    case ReduceOperation::kPROD:
      return A::reduction_mul;
    case ReduceOperation::kMAX:
      return A::reduction_max;
    case ReduceOperation::kMIN:
      return A::reduction_min;
    case ReduceOperation::kAVG:
      return A::reduction_mean;
  }
  return std::nullopt;
}

// Column sums of a strided block: out[i] = sum over r < nrows of x[r * stride + i], for i < 64 (Sum64) or 16
// (Sum16). The accumulators stay in registers (four or one 16-float vectors) while the rows stream by; built for
// AVX-512, AVX2 and baseline x86-64, chosen when the library loads (the rest of Kiln is built for the baseline).
using Vec16 = float __attribute__((vector_size(64), aligned(4)));

KILN_CPU_CLONES void columnSum64(float const* x, int64_t stride, int64_t nrows, float* out) {
  Vec16 a0{}, a1{}, a2{}, a3{};
  for (int64_t r = 0; r < nrows; ++r) {
    float const* row = x + r * stride;
    Vec16 v0, v1, v2, v3;
    std::memcpy(&v0, row, sizeof v0);
    std::memcpy(&v1, row + 16, sizeof v1);
    std::memcpy(&v2, row + 32, sizeof v2);
    std::memcpy(&v3, row + 48, sizeof v3);
    a0 += v0;
    a1 += v1;
    a2 += v2;
    a3 += v3;
  }
  std::memcpy(out, &a0, sizeof a0);
  std::memcpy(out + 16, &a1, sizeof a1);
  std::memcpy(out + 32, &a2, sizeof a2);
  std::memcpy(out + 48, &a3, sizeof a3);
}

KILN_CPU_CLONES void columnSum16(float const* x, int64_t stride, int64_t nrows, float* out) {
  Vec16 a{};
  for (int64_t r = 0; r < nrows; ++r) {
    Vec16 v;
    std::memcpy(&v, x + r * stride, sizeof v);
    a += v;
  }
  std::memcpy(out, &a, sizeof a);
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(std::string who, dnnl::algorithm alg, std::vector<int64_t> axes, ActFormat xFormat)
      : who_(std::move(who)), alg_(alg), axes_(std::move(axes)), xFormat_(xFormat) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    int32_t rank = x.shape.nbDims;
    if (rank < 1 || rank > 12)
      return unsupported(who_, ": oneDNN reduces ranks 1 to 12, not ", rank);
    memory::dims yd = toDnnl(x.shape);
    for (int64_t a : axes_) {
      auto axis = normalize(a, rank);
      if (!axis || (yd[static_cast<size_t>(*axis)] == 1 && x.shape.d[*axis] != 1))
        return invalidArgument(who_, ": axis ", a, " is out of range or listed twice for ", dimsToString(x.shape));
      yd[static_cast<size_t>(*axis)] = 1;
    }
    int64_t yCount = 1;
    for (int64_t d : yd)
      yCount *= d;
    if (yCount != y.count())
      return invalidArgument(who_, ": y ", dimsToString(y.shape), " does not hold the reduced ", dimsToString(x.shape));
    if (y.count() == 0)
      return Status::ok();
    if (x.count() == 0)
      return unsupported(who_, ": oneDNN reduces non-empty tensors only");
    // A spatial reduction (a global pooling) of a channels-last or blocked x: the same as reducing the rows of
    // [outer, H*W, inner] ([N, H*W, C], or [N*C/b, H*W, b]); y's bytes are [N, C, 1, 1]'s either way. oneDNN
    // 2.6 reduces such middle axes with its slow reference code, so this loop does it.
    if (xFormat_ != ActFormat::kPLAIN && rank == 4 && yd[0] == x.shape.d[0] && yd[1] == x.shape.d[1] && yd[2] == 1 &&
        yd[3] == 1 && alg_ != dnnl::algorithm::reduction_mul) {
      int64_t n = x.shape.d[0], c = x.shape.d[1], hw = x.shape.d[2] * x.shape.d[3];
      int64_t inner = xFormat_ == ActFormat::kNHWC ? c : static_cast<int64_t>(xFormat_);
      OmpThreads threads(ctx, x.count());
      reduceRows(static_cast<float const*>(x.data), static_cast<float*>(y.data), n * c / inner, hw, inner,
                 threads.count());
      return Status::ok();
    }
    OmpThreads threads(ctx, x.count());
    std::vector<int64_t> key = dimsToVector(x.shape);
    for (int64_t d : yd)
      key.push_back(d);
    key.push_back(threads.count());
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<ReducePrim const> p, cache_.get(std::move(key), [&]() -> Result<std::shared_ptr<ReducePrim const>> {
      // x in its recorded format (plain unless the builder chose one); y is always plain.
      KILN_ASSIGN_OR_RETURN(memory::desc xMd, xFormat_ == ActFormat::kPLAIN ? Result<memory::desc>(plainDesc(toDnnl(x.shape)))
                                                                             : activationDesc(x.shape, xFormat_));
      memory::desc yMd = plainDesc(yd);
      try {
        dnnl::reduction::primitive_desc pd(
            dnnl::reduction::desc(alg_, xMd, yMd, 0.f, 0.f), userScratchpad(),
            engine());
        return std::make_shared<ReducePrim const>(ReducePrim{pd, dnnl::reduction(pd)});
      } catch (dnnl::error const& e) {
        return unsupported(who_, ": oneDNN has no reduction for ", dimsToString(x.shape), ": ", e.what());
      }
    }));
    dnnl::engine& eng = engine();
    return execute(who_, *p, {{DNNL_ARG_SRC, memory(p->pd.src_desc(), eng, x.data)},
                              {DNNL_ARG_DST, memory(p->pd.dst_desc(), eng, y.data)}});
  }

 private:
  // y[o, i] = reduce over r of x[o, r, i], on `threads` OpenMP threads. The rows of each o are cut into
  // `splits` ranges so that both threads of a batch-1 pooling stream half the tensor each (o alone gives them one
  // item, or 9 uneven ones for 144 channels in nChw16c); each (o, range) item reduces into its own partial row,
  // and the partials are combined in order (the result does not depend on which thread ran what). Sums go through
  // float partials over blocks of 64 rows (vectorized over i, the contiguous channels), added into double: each
  // rounding is a 64-term float sum's, not the whole row count's.
  void reduceRows(float const* x, float* y, int64_t outer, int64_t rows, int64_t inner, int threads) const {
    bool isMax = alg_ == dnnl::algorithm::reduction_max, isMin = alg_ == dnnl::algorithm::reduction_min;
    bool extremum = isMax || isMin;
    int64_t const splits =
        threads <= 1 || outer >= 4 * threads ? 1 : std::min<int64_t>(rows, (4 * threads + outer - 1) / outer);
    int64_t const items = outer * splits;
    // Partial rows: double sums, or float extrema (in the same bytes' worth of doubles).
    auto* partial = static_cast<double*>(threadScratch(static_cast<size_t>(items * inner) * sizeof(double), 1));
    constexpr int64_t kBlock = 64;
#ifdef _OPENMP  // -fopenmp (GCC builds); elsewhere the loop runs on the calling thread
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && items > 1)
#endif
    for (int64_t it = 0; it < items; ++it) {
      int64_t const o = it / splits, s = it % splits;
      int64_t const r0 = rows * s / splits, r1 = rows * (s + 1) / splits;
      float const* base = x + o * rows * inner;
      double* acc = partial + it * inner;
      if (extremum) {
        auto* out = reinterpret_cast<float*>(acc);
        std::copy(base + r0 * inner, base + (r0 + 1) * inner, out);
        for (int64_t r = r0 + 1; r < r1; ++r) {
          float const* row = base + r * inner;
          if (isMax) {
            for (int64_t i = 0; i < inner; ++i) out[i] = std::max(out[i], row[i]);
          } else {
            for (int64_t i = 0; i < inner; ++i) out[i] = std::min(out[i], row[i]);
          }
        }
        continue;
      }
      std::fill(acc, acc + inner, 0.0);
      float part[64];
      for (int64_t b0 = r0; b0 < r1; b0 += kBlock) {
        int64_t const n = std::min(r1, b0 + kBlock) - b0;
        float const* block = base + b0 * inner;
        int64_t i = 0;
        for (; i + 64 <= inner; i += 64) {
          columnSum64(block + i, inner, n, part);
          for (int64_t j = 0; j < 64; ++j) acc[i + j] += part[j];
        }
        for (; i + 16 <= inner; i += 16) {
          columnSum16(block + i, inner, n, part);
          for (int64_t j = 0; j < 16; ++j) acc[i + j] += part[j];
        }
        for (; i < inner; ++i) {  // channels-last with C not a multiple of 16, nChw8c
          float sum = 0.f;
          for (int64_t r = 0; r < n; ++r) sum += block[r * inner + i];
          acc[i] += sum;
        }
      }
    }
    double scale = alg_ == dnnl::algorithm::reduction_mean ? 1.0 / static_cast<double>(rows) : 1.0;
    for (int64_t o = 0; o < outer; ++o) {
      float* out = y + o * inner;
      double const* first = partial + o * splits * inner;
      if (extremum) {
        std::copy(reinterpret_cast<float const*>(first), reinterpret_cast<float const*>(first) + inner, out);
        for (int64_t s = 1; s < splits; ++s) {
          auto const* q = reinterpret_cast<float const*>(first + s * inner);
          for (int64_t i = 0; i < inner; ++i) out[i] = isMax ? std::max(out[i], q[i]) : std::min(out[i], q[i]);
        }
        continue;
      }
      for (int64_t i = 0; i < inner; ++i) {
        double sum = first[i];
        for (int64_t s = 1; s < splits; ++s) sum += first[s * inner + i];
        out[i] = static_cast<float>(sum * scale);
      }
    }
  }

  std::string who_;
  dnnl::algorithm alg_;
  std::vector<int64_t> axes_;
  ActFormat xFormat_;
  PrimitiveCache<ReducePrim> cache_;
};

Tactic reduceTactic() {
  Tactic t;
  t.name = "reduce_onednn";
  t.op = OpType::kReduce;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;
  t.supports = [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
    // Static axes only (an axes input is read at run time); at least one element reduced per output.
    if (in.size() != 1 || !floatIo(in, out, 1) || !reduceAlgorithm(node.attrs.getInt("op", -1)))
      return false;
    int32_t rank = in[0].shape.nbDims;
    if (rank < 1 || rank > 12 || node.attrs.getInts("axes").empty())
      return false;
    for (int64_t a : node.attrs.getInts("axes")) {
      auto axis = normalize(a, rank);
      if (!axis || in[0].shape.d[*axis] == 0)
        return false;
    }
    return true;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    auto alg = reduceAlgorithm(node.attrs.getInt("op", -1));
    if (!alg)
      return invalidGraph(node.describe(), ": reduce op ", node.attrs.getInt("op", -1), " has no oneDNN reduction");
    if (nodeFormat(node, "cpu_formats_out", 0) != ActFormat::kPLAIN)
      return invalidGraph(node.describe(), ": a reduction writes plain tensors only");
    return std::unique_ptr<Kernel>(std::make_unique<ReduceKernel>(node.describe(), *alg, node.attrs.getInts("axes"),
                                                                  nodeFormat(node, "cpu_formats_in", 0)));
  };
  return t;
}

KILN_REGISTER_TACTIC(reduceTactic);

// ---- Shuffle ----

// A transpose of a row-major tensor `in` by `perm` (output dim i is input dim perm[i]) as a oneDNN reorder
// source: the output dims over the input's strides.
memory::desc transposedSource(memory::dims const& in, std::vector<int64_t> const& perm, memory::data_type dt) {
  memory::dims strides(in.size(), 1);
  for (size_t i = in.size(); i-- > 1;)
    strides[i - 1] = strides[i] * in[i];
  memory::dims od(in.size()), os(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    od[i] = in[static_cast<size_t>(perm[i])];
    os[i] = strides[static_cast<size_t>(perm[i])];
  }
  return memory::desc(od, dt, os);
}

bool isIdentity(std::vector<int64_t> const& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

bool validPerm(std::vector<int64_t> const& perm, int32_t rank) {
  if (perm.empty())
    return true;
  if (static_cast<int32_t>(perm.size()) != rank)
    return false;
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)])
      return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

// True when `perm` over `dims` keeps every axis longer than 1 in its order (it moves only axes of length 1, as
// the [B, S, E] <-> [S, B, E] transposes of torch.nn.MultiheadAttention at batch 1): the bytes do not move.
bool movesOnlyUnitAxes(memory::dims const& dims, std::vector<int64_t> const& perm) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (dims[static_cast<size_t>(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

// memcpy of n bytes in chunks on `threads` OpenMP threads: a tensor coming from memory or L3 copies at twice one
// core's bandwidth (ViT's 197 x 768 batch-first transposes at batch 1: 0.036 ms single-threaded in the network
// against 0.029 ms for oneDNN's two-thread reorder).
void copyOnThreads(void const* x, void* y, int64_t n, int threads) {
  constexpr int64_t kChunk = 16384 * sizeof(float);
  int64_t const chunks = (n + kChunk - 1) / kChunk;
  auto const* src = static_cast<char const*>(x);
  auto* dst = static_cast<char*>(y);
#ifdef _OPENMP  // -fopenmp (GCC builds); elsewhere the loop runs on the calling thread
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && chunks > 1)
#endif
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t const begin = c * kChunk;
    std::memcpy(dst + begin, src + begin, static_cast<size_t>(std::min(kChunk, n - begin)));
  }
}

struct ShufflePlan {
  // Each step: a reorder from `from` (over the step's source buffer) into plain `to`. Empty: y is a copy of x.
  std::vector<std::pair<memory::desc, memory::desc>> steps;
  std::vector<std::shared_ptr<dnnl::reorder const>> reorders;
};

class ShuffleKernel final : public Kernel {
 public:
  ShuffleKernel(std::string who, std::vector<int64_t> first, std::vector<int64_t> second, memory::data_type dt)
      : who_(std::move(who)), first_(std::move(first)), second_(std::move(second)), dt_(dt) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    if (x.count() != y.count())
      return invalidArgument(who_, ": x ", dimsToString(x.shape), " and y ", dimsToString(y.shape), " differ in size");
    if (y.count() == 0)
      return Status::ok();
    if (x.shape.nbDims > 12 || y.shape.nbDims > 12)
      return unsupported(who_, ": oneDNN reorders ranks up to 12");
    if (!validPerm(first_, x.shape.nbDims) || !validPerm(second_, y.shape.nbDims))
      return invalidArgument(who_, ": a permutation does not fit x ", dimsToString(x.shape), " or y ",
                             dimsToString(y.shape));
    std::vector<int64_t> key = dimsToVector(x.shape);
    key.push_back(-1);
    for (int64_t v : dimsToVector(y.shape))
      key.push_back(v);
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<ShufflePlan const> p, cache_.get(std::move(key), [&] { return build(x.shape, y.shape); }));
    OmpThreads threads(ctx, x.count());
    if (p->steps.empty()) {
      if (x.data != y.data)
        copyOnThreads(x.data, y.data, y.count() * static_cast<int64_t>(memory::data_type_size(dt_)), threads.count());
      return Status::ok();
    }
    try {
      dnnl::engine& eng = engine();
      dnnl::stream stream(eng);
      void const* src = x.data;
      for (size_t i = 0; i < p->steps.size(); ++i) {
        void* dst = i + 1 == p->steps.size() ? y.data : threadScratch(p->steps[i].second.get_size(), 1);
        runReorder(p->reorders[i].get(), p->steps[i].first, src, p->steps[i].second, dst, stream);
        src = dst;
      }
      stream.wait();
    } catch (dnnl::error const& e) {
      return internalError(who_, ": oneDNN reorder failed: ", e.what());
    }
    return Status::ok();
  }

 private:
  Result<std::shared_ptr<ShufflePlan const>> build(Dims const& x, Dims const& y) const {
    auto p = std::make_shared<ShufflePlan>();
    try {
      memory::dims xd = toDnnl(x);
      // Permutations that move only unit axes take no step (a pure reshape: one copy, or none in place).
      if (!first_.empty() && !isIdentity(first_) && !movesOnlyUnitAxes(xd, first_)) {
        memory::desc from = transposedSource(xd, first_, dt_);
        p->steps.push_back({from, plainDesc(from.dims(), dt_)});
      }
      if (!second_.empty() && !isIdentity(second_)) {
        // The reshaped dims r are y before the second transpose: r[second[i]] = y[i].
        memory::dims r(static_cast<size_t>(y.nbDims));
        for (int32_t i = 0; i < y.nbDims; ++i)
          r[static_cast<size_t>(second_[i])] = y.d[i];
        if (!movesOnlyUnitAxes(r, second_)) {
          memory::desc from = transposedSource(r, second_, dt_);
          p->steps.push_back({from, plainDesc(toDnnl(y), dt_)});
        }
      }
      for (auto const& [from, to] : p->steps)
        p->reorders.push_back(std::make_shared<dnnl::reorder const>(
            dnnl::reorder::primitive_desc(engine(), from, engine(), to)));
    } catch (dnnl::error const& e) {
      return unsupported(who_, ": oneDNN has no reorder for x ", dimsToString(x), ": ", e.what());
    }
    return std::shared_ptr<ShufflePlan const>(std::move(p));
  }

  std::string who_;
  std::vector<int64_t> first_, second_;
  memory::data_type dt_;  // f32 or bf16: the reorders move elements of either
  PrimitiveCache<ShufflePlan> cache_;
};

Tactic shuffleTactic() {
  Tactic t;
  t.name = "shuffle_onednn_reorder";
  t.op = OpType::kShuffle;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;
  t.supports = [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
    if (in.empty() || out.size() != 1 || in[0].dtype != out[0].dtype || !dnnlFloatType(in[0].dtype)) return false;
    return in[0].shape.nbDims <= 12 && out[0].shape.nbDims <= 12 &&
           validPerm(node.attrs.getInts("first_perm"), in[0].shape.nbDims) &&
           validPerm(node.attrs.getInts("second_perm"), out[0].shape.nbDims);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    ir::Value const* x = node.input(0);
    std::optional<memory::data_type> dt = x ? dnnlFloatType(x->dtype) : std::nullopt;
    if (!dt) return invalidGraph(node.describe(), ": the oneDNN shuffle moves float32 or bf16 elements only");
    return std::unique_ptr<Kernel>(std::make_unique<ShuffleKernel>(node.describe(), node.attrs.getInts("first_perm"),
                                                                   node.attrs.getInts("second_perm"), *dt));
  };
  return t;
}

KILN_REGISTER_TACTIC(shuffleTactic);

}  // namespace
}  // namespace kiln::backends::cpu
