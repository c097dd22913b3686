// Reference kernel of Fill.
//   kLINSPACE: y[i0, i1, ...] = alpha + sum_d i_d * beta_d (beta: one step per axis, or one scalar step used on
//     every axis); exact in int64 for integer outputs given integer alpha/beta, in double otherwise.
//   kRANDOM_UNIFORM (alpha min, beta max) and kRANDOM_NORMAL (alpha mean, beta stddev): a counter-based generator
//     so that the same `seed` attribute gives the same tensor whatever the thread count:
//       key = splitmix64(seed); draw(c) = top 53 bits of splitmix64(key + c) / 2^53, in [0, 1);
//       uniform element i = alpha + (beta - alpha) * draw(i);
//       normal element i = alpha + beta * sqrt(-2 ln(1 - draw(2i))) * cos(2 pi draw(2i + 1)) (Box-Muller).
#include <cmath>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

uint64_t splitMix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double draw(uint64_t key, uint64_t counter) {
  return static_cast<double>(splitMix64(key + counter) >> 11) * (1.0 / 9007199254740992.0);
}

struct FillParams {
  FillOperation op = FillOperation::kLINSPACE;
  double alpha = 0, beta = 1;
  int64_t alphaInt = 0, betaInt = 1;
  bool useInt = false;
  uint64_t seed = 0;
};

Status runFill(LaunchContext const& ctx, FillParams p, std::string const& what) {
  TensorView const& y = ctx.outputs[0];
  int32_t rank = y.shape.nbDims;
  if (ctx.inputs.size() > 0 && ctx.inputs[0].data) {
    TensorView const& s = ctx.inputs[0];
    bool fits = s.count() == rank;
    for (int32_t d = 0; fits && d < rank; ++d) fits = loadAsInt(s, d) == y.shape.d[d];
    if (!fits) return invalidArgument(what, ": output ", dimsToString(y.shape), " does not match the shape input");
  }
  bool intAlpha = p.useInt, intBeta = p.useInt;
  if (ctx.inputs.size() > 1 && ctx.inputs[1].data) {
    TensorView const& a = ctx.inputs[1];
    intAlpha = !isFloatType(a.dtype);
    p.alpha = loadAsDouble(a, 0);
    p.alphaInt = intAlpha ? loadAsInt(a, 0) : 0;
  }
  std::vector<double> steps(static_cast<size_t>(rank), p.beta);
  std::vector<int64_t> intSteps(static_cast<size_t>(rank), p.betaInt);
  if (ctx.inputs.size() > 2 && ctx.inputs[2].data) {
    TensorView const& b = ctx.inputs[2];
    intBeta = !isFloatType(b.dtype);
    bool perAxis = b.shape.nbDims == 1;
    if (perAxis && b.count() != rank)
      return invalidArgument(what, ": beta has ", b.count(), " steps for an output of rank ", rank);
    p.beta = loadAsDouble(b, 0);
    for (int32_t d = 0; d < rank; ++d) {
      steps[d] = loadAsDouble(b, perAxis ? d : 0);
      intSteps[d] = intBeta ? loadAsInt(b, perAxis ? d : 0) : 0;
    }
  }
  int64_t n = y.count();
  switch (p.op) {
    case FillOperation::kLINSPACE: {
      bool exact = !isFloatType(y.dtype) && intAlpha && intBeta;
      std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
      for (int64_t i = 0; i < n; ++i) {
        if (exact) {
          uint64_t v = static_cast<uint64_t>(p.alphaInt);  // wraps like the stored type would
          for (int32_t d = 0; d < rank; ++d) v += static_cast<uint64_t>(idx[d]) * static_cast<uint64_t>(intSteps[d]);
          storeFromInt(y, i, static_cast<int64_t>(v));
        } else {
          double v = intAlpha ? static_cast<double>(p.alphaInt) : p.alpha;
          for (int32_t d = 0; d < rank; ++d)
            v += static_cast<double>(idx[d]) * (intBeta ? static_cast<double>(intSteps[d]) : steps[d]);
          storeFromDouble(y, i, v);
        }
        for (int32_t d = rank - 1; d >= 0; --d) {
          if (++idx[d] < y.shape.d[d]) break;
          idx[d] = 0;
        }
      }
      return Status::ok();
    }
    case FillOperation::kRANDOM_UNIFORM:
    case FillOperation::kRANDOM_NORMAL: {
      if (!isFloatType(y.dtype))
        return unsupported(what, ": random fills of ", dataTypeName(y.dtype), " tensors are not supported yet");
      double a = intAlpha ? static_cast<double>(p.alphaInt) : p.alpha;
      double b = intBeta ? static_cast<double>(intSteps.empty() ? p.betaInt : intSteps[0]) : p.beta;
      uint64_t key = splitMix64(p.seed);
      constexpr double kTwoPi = 6.283185307179586476925286766559;
      for (int64_t i = 0; i < n; ++i) {
        auto c = static_cast<uint64_t>(i);
        double v = p.op == FillOperation::kRANDOM_UNIFORM
                       ? a + (b - a) * draw(key, c)
                       : a + b * std::sqrt(-2.0 * std::log(1.0 - draw(key, 2 * c))) * std::cos(kTwoPi * draw(key, 2 * c + 1));
        storeFromDouble(y, i, v);
      }
      return Status::ok();
    }
  }
  return invalidArgument(what, ": unknown fill operation");
}

Tactic fillTactic() {
  return makeTactic(
      "fill_reference", ir::OpType::kFill,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        FillParams p;
        int64_t op = node.attrs.getInt("op", 0);
        if (op < 0 || op >= EnumMax<FillOperation>()) return invalidGraph(node.describe(), ": unknown fill operation");
        p.op = static_cast<FillOperation>(op);
        p.alpha = node.attrs.getFloat("alpha", 0.0);
        p.beta = node.attrs.getFloat("beta", 1.0);
        p.alphaInt = node.attrs.getInt("alpha_int", 0);
        p.betaInt = node.attrs.getInt("beta_int", 1);
        p.useInt = node.attrs.getInt("alpha_beta_int64", 0) != 0;
        p.seed = static_cast<uint64_t>(node.attrs.getInt("seed", 0));
        std::string what = node.describe();
        return makeKernel([=](LaunchContext const& ctx) { return runFill(ctx, p, what); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const&, std::vector<TensorInfo> const& out) {
        return out.size() == 1 && out[0].dtype != DataType::kBOOL && isSupportedType(out[0].dtype);
      });
}

KILN_REGISTER_TACTIC(fillTactic);

}  // namespace
}  // namespace kiln::backends::reference
