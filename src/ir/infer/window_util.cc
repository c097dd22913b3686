// Sliding-window geometry shared by Convolution and Pooling: attribute reading and TensorRT's padding formulas.
#include "ir/infer/window_util.h"

#include <algorithm>

namespace kiln::ir {
namespace {

// floor(a / b) and ceil(a / b) for b > 0 and any sign of a.
int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

Result<std::vector<int64_t>> readList(Node const& node, char const* name, int32_t n, int64_t def) {
  if (!node.attrs.has(name))
    return std::vector<int64_t>(static_cast<size_t>(n), def);
  std::vector<int64_t> v = node.attrs.getInts(name);
  if (static_cast<int32_t>(v.size()) != n)
    return invalidGraph(node.describe(), ": attribute '", name, "' has ", v.size(), " entries for ", n,
                        " spatial dims");
  return v;
}

}  // namespace

WindowDim computeWindowDim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                           int64_t padEnd, PaddingMode mode) {
  if (in < 0)
    return {-1, -1, -1};
  int64_t dk = dilation * (kernel - 1) + 1;
  switch (mode) {
    case PaddingMode::kEXPLICIT_ROUND_DOWN:
      return {padBegin, padEnd, floorDiv(in + padBegin + padEnd - dk, stride) + 1};
    case PaddingMode::kEXPLICIT_ROUND_UP:
      return {padBegin, padEnd, ceilDiv(in + padBegin + padEnd - dk, stride) + 1};
    case PaddingMode::kSAME_UPPER:
    case PaddingMode::kSAME_LOWER: {
      int64_t out = ceilDiv(in, stride);
      int64_t total = std::max<int64_t>(0, (out - 1) * stride + dk - in);
      int64_t half = total / 2;
      if (mode == PaddingMode::kSAME_UPPER)
        return {half, total - half, out};
      return {total - half, half, out};
    }
  }
  return {padBegin, padEnd, -1};
}

Result<WindowParams> readWindowParams(Node const& node, char const* kernelAttr, int32_t nbSpatial, bool withDilation,
                                      std::vector<int64_t> const& fallbackKernel) {
  WindowParams p;
  p.nbSpatial = nbSpatial;
  if (node.attrs.has(kernelAttr)) {
    p.kernel = node.attrs.getInts(kernelAttr);
  } else if (!fallbackKernel.empty()) {
    p.kernel = fallbackKernel;
  } else {
    return invalidGraph(node.describe(), ": attribute '", kernelAttr, "' is missing");
  }
  if (static_cast<int32_t>(p.kernel.size()) != nbSpatial)
    return invalidGraph(node.describe(), ": attribute '", kernelAttr, "' has ", p.kernel.size(), " entries for ",
                        nbSpatial, " spatial dims");
  KILN_ASSIGN_OR_RETURN(p.strides, readList(node, "strides", nbSpatial, 1));
  KILN_ASSIGN_OR_RETURN(p.padsBegin, readList(node, "pads_begin", nbSpatial, 0));
  KILN_ASSIGN_OR_RETURN(p.padsEnd, readList(node, "pads_end", nbSpatial, 0));
  if (withDilation) {
    KILN_ASSIGN_OR_RETURN(p.dilations, readList(node, "dilations", nbSpatial, 1));
  } else {
    p.dilations.assign(static_cast<size_t>(nbSpatial), 1);
  }
  int64_t mode = node.attrs.getInt("padding_mode", static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_DOWN));
  if (mode < 0 || mode >= EnumMax<PaddingMode>())
    return invalidGraph(node.describe(), ": unknown padding_mode ", mode);
  p.mode = static_cast<PaddingMode>(mode);
  // Each value fits 31 bits (as TensorRT's int32 window fields), so that no window arithmetic on them (the dilated
  // extent, padded input sizes, (out - 1) * stride) overflows 64 bits.
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  for (int32_t i = 0; i < nbSpatial; ++i) {
    if (p.kernel[i] > kMax || p.strides[i] > kMax || p.dilations[i] > kMax || p.padsBegin[i] > kMax ||
        p.padsEnd[i] > kMax)
      return invalidGraph(node.describe(), ": a window value of spatial dim ", i, " (kernel ", p.kernel[i], ", stride ",
                          p.strides[i], ", dilation ", p.dilations[i], ", padding ", p.padsBegin[i], "+",
                          p.padsEnd[i], ") exceeds ", kMax);
    if (p.kernel[i] < 1)
      return invalidGraph(node.describe(), ": ", kernelAttr, "[", i, "] = ", p.kernel[i], " must be >= 1");
    if (p.strides[i] < 1)
      return invalidGraph(node.describe(), ": strides[", i, "] = ", p.strides[i], " must be >= 1");
    if (p.dilations[i] < 1)
      return invalidGraph(node.describe(), ": dilations[", i, "] = ", p.dilations[i], " must be >= 1");
    if (p.padsBegin[i] < 0 || p.padsEnd[i] < 0)
      return invalidGraph(node.describe(), ": padding of spatial dim ", i, " must not be negative");
  }
  return p;
}

std::vector<WindowDim> computeWindow(WindowParams const& p, std::vector<int64_t> const& in) {
  std::vector<WindowDim> r;
  for (int32_t i = 0; i < p.nbSpatial; ++i)
    r.push_back(
        computeWindowDim(in[i], p.kernel[i], p.strides[i], p.dilations[i], p.padsBegin[i], p.padsEnd[i], p.mode));
  return r;
}

}  // namespace kiln::ir
