// Reference kernel of Convolution: direct N-D (1-D, 2-D, 3-D) grouped, dilated convolution with TensorRT's
// padding modes, fused bias, residual (added before the activation) and activation; fp64 accumulation.
#include <array>
#include <vector>

#include <cmath>

#include "backends/reference/activation_math.h"
#include "backends/reference/reference_util.h"
#include "ir/infer/window_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

std::vector<double> loadAll(TensorView const& v) {
  std::vector<double> r(static_cast<size_t>(std::max<int64_t>(0, v.count())));
  for (int64_t i = 0; i < static_cast<int64_t>(r.size()); ++i)
    r[i] = loadAsDouble(v, i);
  return r;
}

// Runs fn(i) for i in [0, n), on the pool when there is one; each i writes only its own outputs.
template <typename F>
void forAll(ThreadPool* pool, int64_t n, F const& fn) {
  if (pool && n > 1) {
    pool->parallelFor(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        fn(i);
    });
  } else {
    for (int64_t i = 0; i < n; ++i)
      fn(i);
  }
}

struct ConvParams {
  std::string who;
  ir::WindowParams window;
  int64_t groups = 1;
  int64_t activation = -1;
  bool swish = false;  // cpu_swish: y * sigmoid(y) after the activation (fused by the CPU builder)
  double alpha = 0, beta = 0;
};

Status runConv(ConvParams const& cp, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& w = ctx.inputs[1];
  TensorView const* bias = ctx.inputs.size() > 2 && ctx.inputs[2].data ? &ctx.inputs[2] : nullptr;
  TensorView const* res = ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
  TensorView const& y = ctx.outputs[0];
  ir::WindowParams const& p = cp.window;
  int32_t ns = p.nbSpatial;
  if (x.shape.nbDims != ns + 2 || w.shape.nbDims != ns + 2 || y.shape.nbDims != ns + 2)
    return invalidArgument(cp.who, ": x, w and y must have rank ", ns + 2);
  int64_t n = x.shape.d[0], c = x.shape.d[1], k = w.shape.d[0], cg = w.shape.d[1];
  if (cg * cp.groups != c || k % cp.groups != 0 || y.shape.d[1] != k || y.shape.d[0] != n)
    return invalidArgument(cp.who, ": shapes x ", dimsToString(x.shape), ", w ", dimsToString(w.shape), ", y ",
                           dimsToString(y.shape), " do not agree with groups = ", cp.groups);
  std::vector<int64_t> in(ns), out(ns);
  for (int32_t i = 0; i < ns; ++i) {
    in[i] = x.shape.d[2 + i];
    out[i] = y.shape.d[2 + i];
    if (w.shape.d[2 + i] != p.kernel[i])
      return invalidArgument(cp.who, ": weights do not match kernel_shape");
  }
  std::vector<ir::WindowDim> geo = ir::computeWindow(p, in);
  for (int32_t i = 0; i < ns; ++i)
    if (in[i] > 0 && geo[i].out != out[i])
      return invalidArgument(cp.who, ": output ", dimsToString(y.shape), " does not match the window geometry");
  if (bias && bias->count() != k)
    return invalidArgument(cp.who, ": bias must hold ", k, " values");
  if (res && !dimsEqual(res->shape, y.shape))
    return invalidArgument(cp.who, ": residual must have y's shape");

  int64_t inSpatial = 1, outSpatial = 1;
  for (int32_t i = 0; i < ns; ++i) {
    inSpatial *= in[i];
    outSpatial *= out[i];
  }
  // Every kernel tap as (per-dim offset within the kernel, linear index within the weights' spatial block).
  std::vector<std::array<int64_t, 3>> taps;
  {
    int64_t kVol = 1;
    for (int32_t i = 0; i < ns; ++i)
      kVol *= p.kernel[i];
    for (int64_t t = 0; t < kVol; ++t) {
      std::array<int64_t, 3> kk{0, 0, 0};
      int64_t rem = t;
      for (int32_t i = ns - 1; i >= 0; --i) {
        kk[i] = rem % p.kernel[i];
        rem /= p.kernel[i];
      }
      taps.push_back(kk);
    }
  }
  int64_t kVol = static_cast<int64_t>(taps.size());
  std::vector<double> xd = loadAll(x), wd = loadAll(w);
  std::vector<double> bd = bias ? loadAll(*bias) : std::vector<double>{};
  int64_t kPerGroup = k / cp.groups;
  forAll(ctx.pool, n * k, [&](int64_t nk) {
    int64_t b = nk / k, oc = nk % k, g = oc / kPerGroup;
    std::array<int64_t, 3> o{0, 0, 0}, pos{0, 0, 0};
    for (int64_t os = 0; os < outSpatial; ++os) {
      int64_t rem = os;
      for (int32_t i = ns - 1; i >= 0; --i) {
        o[i] = rem % out[i];
        rem /= out[i];
      }
      double acc = 0.0;
      for (int64_t ci = 0; ci < cg; ++ci) {
        double const* xc = xd.data() + (b * c + g * cg + ci) * inSpatial;
        double const* wc = wd.data() + (oc * cg + ci) * kVol;
        for (int64_t t = 0; t < kVol; ++t) {
          int64_t lin = 0;
          bool inside = true;
          for (int32_t i = 0; i < ns; ++i) {
            pos[i] = o[i] * p.strides[i] - geo[i].padBegin + taps[t][i] * p.dilations[i];
            if (pos[i] < 0 || pos[i] >= in[i]) {
              inside = false;
              break;
            }
            lin = lin * in[i] + pos[i];
          }
          if (inside)
            acc += xc[lin] * wc[t];
        }
      }
      int64_t yi = nk * outSpatial + os;
      if (bias)
        acc += bd[oc];
      if (res)
        acc += loadAsDouble(*res, yi);
      if (cp.activation >= 0)
        acc = applyActivation(static_cast<ActivationType>(cp.activation), acc, cp.alpha, cp.beta);
      if (cp.swish)
        acc = acc / (1.0 + std::exp(-acc));
      storeFromDouble(y, yi, acc);
    }
  });
  return Status::ok();
}

Tactic convolutionTactic() {
  return makeTactic(
      "convolution_reference", OpType::kConvolution,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        ir::Value const* w = node.input(1);
        int32_t ns = node.attrs.has("kernel_shape") ? static_cast<int32_t>(node.attrs.getInts("kernel_shape").size())
                                                    : (w ? w->shape.nbDims - 2 : -1);
        if (ns < 1 || ns > 3)
          return invalidGraph(node.describe(), ": needs 1, 2 or 3 spatial dims");
        std::vector<int64_t> fallback;
        if (w && dimsKnown(w->shape))
          for (int32_t i = 2; i < w->shape.nbDims; ++i)
            fallback.push_back(w->shape.d[i]);
        ConvParams cp;
        cp.who = node.describe();
        KILN_ASSIGN_OR_RETURN(cp.window, ir::readWindowParams(node, "kernel_shape", ns, true, fallback));
        cp.groups = node.attrs.getInt("groups", 1);
        if (cp.groups < 1)
          return invalidGraph(node.describe(), ": groups must be >= 1");
        cp.activation = node.attrs.getInt("activation", -1);
        if (cp.activation != -1 && !isActivationType(cp.activation))
          return invalidGraph(node.describe(), ": unknown activation ", cp.activation);
        cp.alpha = node.attrs.getFloat("act_alpha", 0.0);
        cp.beta = node.attrs.getFloat("act_beta", 0.0);
        cp.swish = node.attrs.getInt("cpu_swish", 0) != 0;
        return makeKernel([cp](LaunchContext const& ctx) { return runConv(cp, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.size() < 2 || out.size() != 1)
          return false;
        for (size_t i = 0; i < in.size(); ++i)
          if (in[i].shape.nbDims >= 0 && !isComputeFloat(in[i].dtype))
            return false;
        return isComputeFloat(out[0].dtype);
      });
}

KILN_REGISTER_TACTIC(convolutionTactic);

}  // namespace
}  // namespace kiln::backends::reference
