// Reference kernel of Pooling: N-D max, average (counting or excluding padding) and max-average blend with
// TensorRT's padding modes; padding never wins a max; fp64 accumulation.
#include <array>
#include <cmath>
#include <vector>

#include "backends/reference/reference_util.h"
#include "ir/infer/window_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

struct PoolParams {
  std::string who;
  ir::WindowParams window;
  PoolingType type = PoolingType::kMAX;
  double blend = 0.0;
  bool excludePadding = true;
};

Status runPool(PoolParams const& pp, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  ir::WindowParams const& p = pp.window;
  int32_t ns = p.nbSpatial;
  if (x.shape.nbDims != ns + 2 || y.shape.nbDims != ns + 2 || x.shape.d[0] != y.shape.d[0] ||
      x.shape.d[1] != y.shape.d[1])
    return invalidArgument(pp.who, ": x ", dimsToString(x.shape), " and y ", dimsToString(y.shape), " do not match a ",
                           ns, "-D pooling");
  std::vector<int64_t> in(ns), out(ns);
  for (int32_t i = 0; i < ns; ++i) {
    in[i] = x.shape.d[2 + i];
    out[i] = y.shape.d[2 + i];
  }
  std::vector<ir::WindowDim> geo = ir::computeWindow(p, in);
  int64_t inSpatial = 1, outSpatial = 1, kVol = 1;
  for (int32_t i = 0; i < ns; ++i) {
    if (in[i] > 0 && geo[i].out != out[i])
      return invalidArgument(pp.who, ": output ", dimsToString(y.shape), " does not match the window geometry");
    inSpatial *= in[i];
    outSpatial *= out[i];
    kVol *= p.kernel[i];
  }
  int64_t planes = x.shape.d[0] * x.shape.d[1];
  for (int64_t pl = 0; pl < planes; ++pl) {
    std::array<int64_t, 3> o{0, 0, 0}, kk{0, 0, 0};
    for (int64_t os = 0; os < outSpatial; ++os) {
      int64_t rem = os;
      for (int32_t i = ns - 1; i >= 0; --i) {
        o[i] = rem % out[i];
        rem /= out[i];
      }
      double mx = -INFINITY, sum = 0.0;
      int64_t valid = 0, padded = 0;
      for (int64_t t = 0; t < kVol; ++t) {
        int64_t r = t;
        for (int32_t i = ns - 1; i >= 0; --i) {
          kk[i] = r % p.kernel[i];
          r /= p.kernel[i];
        }
        bool inside = true, inPadded = true;
        int64_t lin = 0;
        for (int32_t i = 0; i < ns; ++i) {
          int64_t pos = o[i] * p.strides[i] - geo[i].padBegin + kk[i];
          if (pos < -geo[i].padBegin || pos >= in[i] + geo[i].padEnd)
            inPadded = false;
          if (pos < 0 || pos >= in[i])
            inside = false;
          lin = lin * in[i] + pos;
        }
        if (inPadded)
          ++padded;
        if (!inside)
          continue;
        double v = loadAsDouble(x, pl * inSpatial + lin);
        ++valid;
        sum += v;
        if (v > mx || std::isnan(v)) {
          if (!std::isnan(mx))
            mx = v;
        }
      }
      // A window that holds no input element (possible with kEXPLICIT_ROUND_UP) gives 0.
      double maxV = valid > 0 ? mx : 0.0;
      int64_t count = pp.excludePadding ? valid : padded;
      double avgV = count > 0 ? sum / static_cast<double>(count) : 0.0;
      double r = 0.0;
      switch (pp.type) {
        case PoolingType::kMAX:
          r = maxV;
          break;
        case PoolingType::kAVERAGE:
          r = avgV;
          break;
        case PoolingType::kMAX_AVERAGE_BLEND:
          r = (1.0 - pp.blend) * maxV + pp.blend * avgV;  // TensorRT: (1-b)*max + b*avg
          break;
      }
      storeFromDouble(y, pl * outSpatial + os, r);
    }
  }
  return Status::ok();
}

Tactic poolingTactic() {
  return makeTactic(
      "pooling_reference", OpType::kPooling,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        ir::Value const* x = node.input(0);
        int32_t ns = node.attrs.has("window") ? static_cast<int32_t>(node.attrs.getInts("window").size())
                                              : (x ? x->shape.nbDims - 2 : -1);
        if (ns < 1 || ns > 3)
          return invalidGraph(node.describe(), ": needs 1, 2 or 3 spatial dims");
        PoolParams pp;
        pp.who = node.describe();
        KILN_ASSIGN_OR_RETURN(pp.window, ir::readWindowParams(node, "window", ns, false));
        int64_t type = node.attrs.getInt("type", 0);
        if (type < 0 || type >= EnumMax<PoolingType>())
          return invalidGraph(node.describe(), ": unknown pooling type ", type);
        pp.type = static_cast<PoolingType>(type);
        pp.blend = node.attrs.getFloat("blend_factor", 0.0);
        pp.excludePadding = node.attrs.getInt("exclude_padding", 1) != 0;
        return makeKernel([pp](LaunchContext const& ctx) { return runPool(pp, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 1 && out.size() == 1 && isComputeFloat(in[0].dtype) && isComputeFloat(out[0].dtype);
      });
}

KILN_REGISTER_TACTIC(poolingTactic);

}  // namespace
}  // namespace kiln::backends::reference
