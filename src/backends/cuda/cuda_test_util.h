// The gpu test harness: a one-node graph run by the reference backend (fp64 math) and by every CUDA tactic that
// supports it, on random inputs, outputs poisoned before each run, compared by norm-relative error (exactly for
// integer and bool outputs). Tests skip where no CUDA device is present.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/cuda_util.h"
#include "backends/device.h"
#include "backends/reference/kernel_test_util.h"
#include "ir/shape_inference.h"

namespace kiln::cudatest {

using reftest::cst;
using reftest::In;
using reftest::none;
using reftest::var;

/// True when a CUDA device is usable; installs the backend (its tactics and the host fallbacks) on first use.
inline bool gpuAvailable() {
  static bool const ok = [] {
    std::string why;
    auto b = cuda::makeCudaBackend(&why);
    if (!b) {
      std::fprintf(stderr, "kiln gpu tests: %s\n", why.c_str());
      return false;
    }
    return backends::installGpuBackend(std::move(b)).isOk();
  }();
  return ok;
}

#define KILN_REQUIRE_GPU()                                                   \
  do {                                                                       \
    if (!::kiln::cudatest::gpuAvailable()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

inline backends::DeviceBackend* device() { return *backends::gpuBackend(); }

/// The tolerances on norm-relative error: fp32 1e-5, fp16 5e-3, bf16 2e-2; fp8 1e-1; others exact.
inline double defaultTolerance(DataType t) {
  switch (t) {
    case DataType::kFLOAT:
      return 1e-5;
    case DataType::kHALF:
      return 5e-3;
    case DataType::kBF16:
      return 2e-2;
    case DataType::kFP8:
      return 1e-1;
    default:
      return 0;
  }
}
constexpr double kTf32Tolerance = 3e-3;

/// n values uniform in [lo, hi).
inline std::vector<double> randomValues(size_t n, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

/// A tensor of random values (integers rounded) in [lo, hi).
inline HostTensor randomTensor(DataType t, std::vector<int64_t> const& shape, uint32_t seed, double lo = -1,
                               double hi = 1) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto v = randomValues(static_cast<size_t>(n), seed, lo, hi);
  if (!isFloatType(t))
    for (auto& x : v) x = t == DataType::kBOOL ? (x > (lo + hi) / 2 ? 1 : 0) : std::floor(x);
  return HostTensor::fromVector(t, makeDims(shape), v);
}

/// Norm-relative error ||a - ref|| / ||ref|| (absolute when ref is all zeros); positions where ref is NaN must be
/// NaN in `a`, infinities must match; returns +inf on a mismatch of those.
inline double normRelativeError(HostTensor const& a, HostTensor const& ref) {
  if (a.count() != ref.count()) return INFINITY;
  double num = 0, den = 0;
  for (int64_t i = 0; i < ref.count(); ++i) {
    double r = ref.doubleAt(i), x = a.doubleAt(i);
    if (std::isnan(r)) {
      if (!std::isnan(x)) return INFINITY;
      continue;
    }
    if (std::isinf(r)) {
      if (x != r) return INFINITY;
      continue;
    }
    if (!std::isfinite(x)) return INFINITY;
    num += (x - r) * (x - r);
    den += r * r;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct TacticResult {
  std::string tactic;
  double error = 0;
};

struct NodeSpec {
  ir::OpType op;
  ir::Attributes attrs;
  std::vector<In> inputs;
  int numOutputs = 1;
  /// Run the CUDA tactics with the node channels-last (attribute `format` = kHWC): 4-D inputs of more than one
  /// element go to the device in kHWC and 4-D outputs come back from it (the reference runs row-major).
  bool hwc = false;
  /// Run only the tactic of this name (empty: every device tactic that takes the node).
  std::string only = {};
};

/// A host copy of the 4-D tensor `t` moved between row-major and channels-last memory.
inline HostTensor reformatHost(HostTensor const& t, bool toHwc) {
  HostTensor r = *HostTensor::allocate(t.dtype(), t.shape(), "test reformat");
  Dims const& d = t.shape();
  int64_t n = d.d[0], c = d.d[1], hw = d.d[2] * d.d[3];
  size_t e = dataTypeSize(t.dtype());
  auto const* src = static_cast<unsigned char const*>(t.data());
  auto* dst = static_cast<unsigned char*>(r.mutableData());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < hw; ++s) {
        int64_t lin = (b * c + ch) * hw + s, hwc = (b * hw + s) * c + ch;
        std::memcpy(dst + (toHwc ? hwc : lin) * e, src + (toHwc ? lin : hwc) * e, e);
      }
  return r;
}
inline bool movesToHwc(HostTensor const& t) { return t.shape().nbDims == 4 && t.count() > 1; }

/// Runs the node on the reference backend and on every non-fallback CUDA tactic that supports it, and expects
/// each output within `tolerance` (negative: defaultTolerance of the output type; integers and bools exact).
/// Expects at least `minTactics` CUDA tactics. Returns what each tactic scored (worst output).
inline std::vector<TacticResult> expectMatchesReference(NodeSpec const& spec, double tolerance = -1,
                                                        size_t minTactics = 1) {
  std::vector<TacticResult> results;
  ir::Graph g;
  std::vector<ir::Value*> vals;
  std::vector<HostTensor const*> ptrs;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    auto const& in = spec.inputs[i];
    if (in.absent) {
      vals.push_back(nullptr);
      ptrs.push_back(nullptr);
    } else if (in.constant) {
      vals.push_back(g.addConstant(strCat("c", i), in.t)->output(0));
      ptrs.push_back(&in.t);
    } else {
      vals.push_back(*g.addInput(strCat("x", i), in.t.dtype(), in.t.shape()));
      ptrs.push_back(&in.t);
    }
  }
  ir::Node* n = g.addNode(spec.op, "node", vals, spec.numOutputs);
  n->attrs = spec.attrs;
  for (ir::Value* o : n->outputs) g.markOutput(o);
  ir::HostEvaluator eval = backends::referenceEvaluator();
  Status inf = ir::inferGraphInPlace(g, &eval);
  EXPECT_TRUE(inf.isOk()) << inf.toString();
  if (!inf.isOk()) return results;
  std::vector<ir::TensorInfo> inInfo, outInfo;
  for (ir::Value* v : n->inputs) {
    ir::TensorInfo t;
    if (v)
      t = {v->dtype, v->shape};
    else
      t.shape.nbDims = -1;
    inInfo.push_back(t);
  }
  for (ir::Value* v : n->outputs) outInfo.push_back({v->dtype, v->shape});
  auto ref = backends::evaluateOnHostDynamic(*n, ptrs, outInfo);
  EXPECT_TRUE(ref.isOk()) << ref.status().toString();
  if (!ref.isOk()) return results;

  backends::DeviceBackend* dev = device();
  if (spec.hwc) n->attrs.setInt("format", static_cast<int64_t>(TensorFormat::kHWC));
  auto cands = backends::TacticRegistry::instance().candidates(*n, inInfo, outInfo, DeviceType::kGPU, ~0u);
  size_t tried = 0;
  void* stream = *dev->createStream();
  for (backends::Tactic const* t : cands) {
    if (backends::isHostFallback(*t) || (!spec.only.empty() && t->name != spec.only)) continue;
    ++tried;
    SCOPED_TRACE("tactic " + t->name);
    auto k = t->create(*n);
    EXPECT_TRUE(k.isOk()) << k.status().toString();
    if (!k.isOk()) continue;
    std::vector<backends::DeviceBuffer> bufs;
    backends::LaunchContext ctx;
    backends::DeviceStream ds(dev, stream);
    ctx.stream = &ds;
    for (size_t i = 0; i < ptrs.size(); ++i) {
      if (!ptrs[i]) {
        ctx.inputs.push_back({nullptr, DataType::kFLOAT, inInfo[i].shape});
        continue;
      }
      auto b = backends::DeviceBuffer::allocate(dev, ptrs[i]->bytes(), "test input");
      EXPECT_TRUE(b.isOk());
      if (!b.isOk()) return results;
      HostTensor moved;
      HostTensor const* src = ptrs[i];
      if (spec.hwc && movesToHwc(*src)) {
        moved = reformatHost(*src, true);
        src = &moved;
      }
      EXPECT_TRUE(dev->copy(b->data(), src->data(), src->bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
      EXPECT_TRUE(dev->synchronize(stream).isOk());
      ctx.inputs.push_back({b->data(), ptrs[i]->dtype(), ptrs[i]->shape()});
      bufs.push_back(std::move(*b));
    }
    std::vector<std::optional<backends::DeviceBuffer>> outBufs(outInfo.size());
    std::vector<Dims> outShapes;
    for (size_t i = 0; i < outInfo.size(); ++i) {
      outShapes.push_back(outInfo[i].shape);
      if (!dimsKnown(outInfo[i].shape)) {
        ctx.outputs.push_back({nullptr, outInfo[i].dtype, outInfo[i].shape});
        continue;
      }
      size_t bytes = static_cast<size_t>(volume(outInfo[i].shape)) * dataTypeSize(outInfo[i].dtype);
      auto b = backends::DeviceBuffer::allocate(dev, bytes, "test output");
      EXPECT_TRUE(b.isOk());
      if (!b.isOk()) return results;
      EXPECT_TRUE(dev->fill(b->data(), 0xff, bytes, stream).isOk());  // poison: NaN for floats, -1 for integers
      ctx.outputs.push_back({b->data(), outInfo[i].dtype, outInfo[i].shape});
      outBufs[i] = std::move(*b);
    }
    ctx.allocateOutput = [&](size_t i, Dims const& shape) -> Result<void*> {
      size_t bytes = static_cast<size_t>(volume(shape)) * dataTypeSize(outInfo[i].dtype);
      KILN_ASSIGN_OR_RETURN(auto b, backends::DeviceBuffer::allocate(dev, bytes, "test output"));
      KILN_RETURN_IF_ERROR(dev->fill(b.data(), 0xff, bytes, stream));
      outBufs[i] = std::move(b);
      outShapes[i] = shape;
      ctx.outputs[i].data = outBufs[i]->data();
      ctx.outputs[i].shape = shape;
      return outBufs[i]->data();
    };
    size_t ws = (*k)->workspaceSize(inInfo, outInfo);
    auto wsb = backends::DeviceBuffer::allocate(dev, ws, "test workspace");
    EXPECT_TRUE(wsb.isOk());
    if (!wsb.isOk()) return results;
    ctx.workspace = wsb->data();
    ctx.workspaceSize = ws;
    Status s = (*k)->enqueue(ctx);
    EXPECT_TRUE(s.isOk()) << s.toString();
    Status sy = dev->synchronize(stream);
    EXPECT_TRUE(sy.isOk()) << sy.toString();
    if (!s.isOk() || !sy.isOk()) continue;
    TacticResult tr{t->name, 0};
    for (size_t i = 0; i < outInfo.size(); ++i) {
      HostTensor const& r = (*ref)[i];
      EXPECT_EQ(dimsToString(outShapes[i]), dimsToString(r.shape())) << "output " << i;
      if (!outBufs[i] || dimsToString(outShapes[i]) != dimsToString(r.shape())) continue;
      auto host = HostTensor::allocate(r.dtype(), r.shape(), "test download");
      EXPECT_TRUE(
          dev->copy(host->mutableData(), outBufs[i]->data(), r.bytes(), backends::CopyKind::kDeviceToHost, stream)
              .isOk());
      EXPECT_TRUE(dev->synchronize(stream).isOk());
      HostTensor got = std::move(*host);
      if (spec.hwc && movesToHwc(got)) got = reformatHost(got, false);
      double tol = tolerance >= 0 ? tolerance : defaultTolerance(r.dtype());
      double err = normRelativeError(got, r);
      tr.error = std::max(tr.error, err);
      EXPECT_LE(err, tol) << "output " << i << " (" << dataTypeName(r.dtype()) << ", shape " << dimsToString(r.shape())
                          << ") of " << t->name;
    }
    results.push_back(tr);
  }
  dev->destroyStream(stream);
  EXPECT_GE(tried, minTactics) << "CUDA tactics supporting " << n->describe();
  return results;
}

/// Device memory (cudaMalloc) freed on scope exit, for tests that call the launchers directly; a failed allocation
/// fails the test and leaves p null.
struct DeviceMemory {
  void* p = nullptr;
  explicit DeviceMemory(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  ~DeviceMemory() { (void)cudaFree(p); }
  DeviceMemory(DeviceMemory const&) = delete;
  DeviceMemory& operator=(DeviceMemory const&) = delete;
};

inline ir::Attributes attrs(std::initializer_list<std::pair<std::string const, ir::AttrValue>> kv) {
  return reftest::attrs(kv);
}

}  // namespace kiln::cudatest
