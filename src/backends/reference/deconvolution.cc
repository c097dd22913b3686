// Reference kernel of Deconvolution: direct N-D (1-D, 2-D, 3-D) grouped, dilated transposed convolution with
// TensorRT's padding modes and bias, written as a gather per output element (fp64 accumulation).
#include <array>
#include <vector>

#include "backends/reference/reference_util.h"
#include "ir/infer/deconvolution_infer.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

bool isFloatOrDouble(DataType t) { return isComputeFloat(t) || t == DataType::kFLOAT64; }

std::vector<double> loadAll(TensorView const& v) {
  std::vector<double> r(static_cast<size_t>(std::max<int64_t>(0, v.count())));
  for (int64_t i = 0; i < static_cast<int64_t>(r.size()); ++i) r[i] = loadAsDouble(v, i);
  return r;
}

struct DeconvParams {
  std::string who;
  ir::WindowParams window;
  int64_t groups = 1;
};

Status runDeconv(DeconvParams const& dp, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& w = ctx.inputs[1];
  TensorView const* bias = ctx.inputs.size() > 2 && ctx.inputs[2].data ? &ctx.inputs[2] : nullptr;
  TensorView const& y = ctx.outputs[0];
  ir::WindowParams const& p = dp.window;
  int32_t ns = p.nbSpatial;
  if (x.shape.nbDims != ns + 2 || w.shape.nbDims != ns + 2 || y.shape.nbDims != ns + 2)
    return invalidArgument(dp.who, ": x, w and y must have rank ", ns + 2);
  int64_t n = x.shape.d[0], c = x.shape.d[1], kg = w.shape.d[1], k = kg * dp.groups;
  if (w.shape.d[0] != c || c % dp.groups != 0 || y.shape.d[0] != n || y.shape.d[1] != k)
    return invalidArgument(dp.who, ": shapes x ", dimsToString(x.shape), ", w ", dimsToString(w.shape), ", y ",
                           dimsToString(y.shape), " do not agree with groups = ", dp.groups);
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kern{1, 1, 1}, str{1, 1, 1}, dil{1, 1, 1}, pad{0, 0, 0};
  for (int32_t i = 0; i < ns; ++i) {
    in[i] = x.shape.d[2 + i];
    out[i] = y.shape.d[2 + i];
    kern[i] = p.kernel[i];
    str[i] = p.strides[i];
    dil[i] = p.dilations[i];
    if (w.shape.d[2 + i] != p.kernel[i]) return invalidArgument(dp.who, ": weights do not match kernel_shape");
    ir::WindowDim wd =
        ir::deconvWindowDim(in[i], p.kernel[i], p.strides[i], p.dilations[i], p.padsBegin[i], p.padsEnd[i], p.mode);
    if (wd.out != out[i])
      return invalidArgument(dp.who, ": output ", dimsToString(y.shape), " does not match the window geometry");
    pad[i] = wd.padBegin;
  }
  if (bias && bias->count() != k) return invalidArgument(dp.who, ": bias must hold ", k, " values");
  std::vector<double> xd = loadAll(x), wdat = loadAll(w);
  std::vector<double> bd = bias ? loadAll(*bias) : std::vector<double>{};
  int64_t cg = c / dp.groups;
  int64_t inVol = in[0] * in[1] * in[2], kVol = kern[0] * kern[1] * kern[2];
  int64_t outVol = out[0] * out[1] * out[2];
  auto one = [&](int64_t nk) {
    int64_t b = nk / k, oc = nk % k, g = oc / kg, ocl = oc % kg;
    for (int64_t os = 0; os < outVol; ++os) {
      std::array<int64_t, 3> o{os / (out[1] * out[2]), (os / out[2]) % out[1], os % out[2]};
      double acc = bias ? bd[oc] : 0.0;
      for (int64_t t = 0; t < kVol; ++t) {
        std::array<int64_t, 3> kk{t / (kern[1] * kern[2]), (t / kern[2]) % kern[1], t % kern[2]};
        int64_t lin = 0;
        bool hit = true;
        for (int32_t i = 0; i < 3 && hit; ++i) {
          int64_t q = o[i] + pad[i] - kk[i] * dil[i];
          if (q < 0 || q % str[i] != 0 || q / str[i] >= in[i])
            hit = false;
          else
            lin = lin * in[i] + q / str[i];
        }
        if (!hit) continue;
        for (int64_t ci = 0; ci < cg; ++ci) {
          int64_t cin = g * cg + ci;
          acc += xd[(b * c + cin) * inVol + lin] * wdat[(cin * kg + ocl) * kVol + t];
        }
      }
      storeFromDouble(y, nk * outVol + os, acc);
    }
  };
  if (ctx.pool && n * k > 1) {
    ctx.pool->parallelFor(n * k, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < n * k; ++i) one(i);
  }
  return Status::ok();
}

Tactic deconvolutionTactic() {
  return makeTactic(
      "deconvolution_reference", OpType::kDeconvolution,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        ir::Value const* w = node.input(1);
        int32_t ns = node.attrs.has("kernel_shape") ? static_cast<int32_t>(node.attrs.getInts("kernel_shape").size())
                                                    : (w ? w->shape.nbDims - 2 : -1);
        if (ns < 1 || ns > 3) return invalidGraph(node.describe(), ": needs 1, 2 or 3 spatial dims");
        std::vector<int64_t> fallback;
        if (w && dimsKnown(w->shape))
          for (int32_t i = 2; i < w->shape.nbDims; ++i) fallback.push_back(w->shape.d[i]);
        DeconvParams dp;
        dp.who = node.describe();
        KILN_ASSIGN_OR_RETURN(dp.window, ir::readWindowParams(node, "kernel_shape", ns, true, fallback));
        dp.groups = node.attrs.getInt("groups", 1);
        if (dp.groups < 1) return invalidGraph(dp.who, ": groups must be >= 1");
        return makeKernel([dp](LaunchContext const& ctx) { return runDeconv(dp, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.size() < 2 || in.size() > 3 || out.size() != 1) return false;
        for (auto const& t : in)
          if (t.shape.nbDims >= 0 && !isFloatOrDouble(t.dtype)) return false;
        return isFloatOrDouble(out[0].dtype);
      });
}

KILN_REGISTER_TACTIC(deconvolutionTactic);

}  // namespace
}  // namespace kiln::backends::reference
