// Spatial helpers shared by the ONNX convolution and pooling importers (Conv, ConvTranspose, MaxPool,
// AveragePool): kernel/stride/pad/dilation attributes, 1-D as 2-D reshapes, kernel and bias arguments, the
// IPoolingLayer mapping, and the window geometry and tap slices of pools composed from slices.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx::spatial {

using Node = ::onnx::NodeProto;

/// Spatial parameters shared by Conv, ConvTranspose and the pools.
struct Spatial {
  int32_t nb = 0;  ///< Number of spatial axes as given by the model (1, 2 or 3).
  Dims kernel{0, {}};
  Dims strides{0, {}};
  Dims pre{0, {}};
  Dims post{0, {}};
  Dims dilations{0, {}};
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
};

inline Dims filled(int32_t n, int64_t v) {
  Dims d{n, {}};
  for (int32_t i = 0; i < n; ++i) {
    d.d[i] = v;
  }
  return d;
}

/// Reads kernel_shape (or `kernelFromWeights`), strides, pads, dilations, auto_pad and ceil_mode.
inline Result<Spatial> readSpatial(Node const& node, int32_t nbSpatial, std::vector<int64_t> const& kernelFromWeights) {
  Spatial s;
  s.nb = nbSpatial;
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> k, attrInts(node, "kernel_shape", kernelFromWeights));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> st, attrInts(node, "strides"));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> pads, attrInts(node, "pads"));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> dil, attrInts(node, "dilations"));
  KO_ASSIGN_OR_RETURN(std::string autoPad, attrString(node, "auto_pad", "NOTSET"));
  KO_ASSIGN_OR_RETURN(int64_t ceil, attrInt(node, "ceil_mode", 0));
  auto const n = static_cast<size_t>(nbSpatial);
  if (k.size() != n || (!st.empty() && st.size() != n) || (!pads.empty() && pads.size() != 2 * n) ||
      (!dil.empty() && dil.size() != n)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "kernel_shape/strides/pads/dilations do not match ",
                                    nbSpatial, " spatial axes");
  }
  // Run 1-D as 2-D with a unit trailing axis.
  int32_t const r = nbSpatial == 1 ? 2 : nbSpatial;
  s.kernel = filled(r, 1);
  s.strides = filled(r, 1);
  s.pre = filled(r, 0);
  s.post = filled(r, 0);
  s.dilations = filled(r, 1);
  for (size_t i = 0; i < n; ++i) {
    s.kernel.d[i] = k[i];
    if (!st.empty()) {
      s.strides.d[i] = st[i];
    }
    if (!pads.empty()) {
      s.pre.d[i] = pads[i];
      s.post.d[i] = pads[i + n];
    }
    if (!dil.empty()) {
      s.dilations.d[i] = dil[i];
    }
    if (k[i] <= 0 || s.strides.d[i] <= 0 || s.dilations.d[i] <= 0 || s.pre.d[i] < 0 || s.post.d[i] < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "invalid kernel, stride, dilation or pad");
    }
  }
  if (autoPad == "SAME_UPPER") {
    s.mode = PaddingMode::kSAME_UPPER;
  } else if (autoPad == "SAME_LOWER") {
    s.mode = PaddingMode::kSAME_LOWER;
  } else if (autoPad == "VALID") {
    s.pre = filled(r, 0);
    s.post = filled(r, 0);
  } else if (autoPad != "NOTSET") {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "auto_pad '", autoPad, "' is invalid");
  }
  if (ceil != 0 && s.mode == PaddingMode::kEXPLICIT_ROUND_DOWN) {
    s.mode = PaddingMode::kEXPLICIT_ROUND_UP;
  }
  return s;
}

/// For 1-D ops: [N,C,L] -> [N,C,L,1].
inline Result<ITensor*> to2d(ImportContext& ctx, Node const& node, ITensor* x) {
  return reshape(ctx, node, x, Dims{4, {0, 0, 0, 1}});
}
inline Result<ITensor*> from2d(ImportContext& ctx, Node const& node, ITensor* x) {
  return reshape(ctx, node, x, Dims{3, {0, 0, 0}});
}

/// Checks the data input has rank 3..5 and returns the number of spatial axes.
inline Result<int32_t> spatialAxes(Node const& node, ITensor* x) {
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  if (r < 3 || r > 5) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "input rank ", r,
                                    " is not supported (1-D, 2-D or 3-D spatial only)");
  }
  return r - 2;
}

/// Weights of a constant kernel (optionally with a unit trailing axis), or empty with the tensor as input 1.
struct KernelArg {
  Weights weights{DataType::kFLOAT, nullptr, 0};
  ITensor* tensor = nullptr;
  Dims dims{0, {}};
};

inline Result<KernelArg> kernelArg(ImportContext& ctx, Node const& node, bool oneD) {
  KernelArg k;
  Constant const* w = ctx.constant(node, 1);
  if (w != nullptr) {
    k.weights = w->weights();
    k.dims = w->dims;
    return k;
  }
  KO_ASSIGN_OR_RETURN(k.tensor, ctx.tensor(node, 1));
  k.dims = k.tensor->getDimensions();
  if (oneD) {
    KO_ASSIGN_OR_RETURN(k.tensor, to2d(ctx, node, k.tensor));
  }
  return k;
}

inline Result<Weights> biasArg(ImportContext& ctx, Node const& node) {
  if (!ImportContext::hasInput(node, 2)) {
    return Weights{DataType::kFLOAT, nullptr, 0};
  }
  Constant const* b = ctx.constant(node, 2);
  if (b == nullptr) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_INPUT, node, "bias must be a constant");
  }
  return b->weights();
}

/// Per-axis geometry of pooling windows over static spatial extents, for importers that compose a pool from
/// slices (dilated MaxPool/AveragePool): along spatial axis i there are out[i] windows; window o reads the
/// kernel[i] taps at o * strides[i] - begin[i] + j * dilations[i], j < kernel[i]. begin/padEnd are the padding
/// in effect (explicit pads, or what SAME computes); reads past padEnd are ceil_mode overhang.
struct WindowGeometry {
  std::vector<int64_t> extent;  ///< Input extent of each spatial axis.
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> out;
  std::vector<int64_t> begin;
  std::vector<int64_t> padEnd;
  int64_t windowElements = 1;  ///< Taps per window (the product of kernel).
};

/// Reads kernel_shape, strides, pads, dilations, auto_pad and ceil_mode of `node` for an input of static dims
/// `in` (rank 3..5) and computes the windows; windows of more than `maxWindowElements` taps are refused.
inline Result<WindowGeometry> windowGeometry(Node const& node, Dims const& in, int64_t maxWindowElements) {
  int32_t const r = in.nbDims;
  for (int32_t i = 0; i < r; ++i) {
    if (in.d[i] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "this pooling form needs static input extents, got ", dimsString(in));
    }
  }
  auto const n = static_cast<size_t>(r - 2);
  WindowGeometry g;
  KO_ASSIGN_OR_RETURN(g.kernel, attrInts(node, "kernel_shape"));
  KO_ASSIGN_OR_RETURN(g.strides, attrInts(node, "strides"));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> pads, attrInts(node, "pads"));
  KO_ASSIGN_OR_RETURN(g.dilations, attrInts(node, "dilations"));
  KO_ASSIGN_OR_RETURN(std::string autoPad, attrString(node, "auto_pad", "NOTSET"));
  KO_ASSIGN_OR_RETURN(int64_t ceilMode, attrInt(node, "ceil_mode", 0));
  if (g.kernel.size() != n || (!g.strides.empty() && g.strides.size() != n) ||
      (!pads.empty() && pads.size() != 2 * n) || (!g.dilations.empty() && g.dilations.size() != n)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "kernel_shape/strides/pads/dilations do not match ",
                                    n, " spatial axes");
  }
  g.strides.resize(n, 1);
  g.dilations.resize(n, 1);
  pads.resize(2 * n, 0);
  g.extent.resize(n);
  g.out.resize(n);
  g.begin.resize(n);
  g.padEnd.resize(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t const k = g.kernel[i], st = g.strides[i], dil = g.dilations[i];
    if (k <= 0 || st <= 0 || dil <= 0 || pads[i] < 0 || pads[i + n] < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "invalid kernel, stride, dilation or pad");
    }
    g.windowElements *= k;
    if (g.windowElements > maxWindowElements) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "a window of more than ", maxWindowElements,
                                      " elements is not supported here");
    }
    int64_t const span = (k - 1) * dil + 1;
    int64_t const len = in.d[i + 2];
    g.extent[i] = len;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      g.out[i] = (len + st - 1) / st;
      int64_t const total = std::max<int64_t>(0, (g.out[i] - 1) * st + span - len);
      g.begin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.padEnd[i] = total - g.begin[i];
    } else {
      int64_t pb = pads[i], pe = pads[i + n];
      if (autoPad == "VALID") {
        pb = pe = 0;
      } else if (autoPad != "NOTSET") {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "auto_pad '", autoPad, "' is invalid");
      }
      int64_t const room = len + pb + pe - span;
      if (room < 0) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the window is larger than the padded input");
      }
      g.out[i] = (ceilMode != 0 ? (room + st - 1) / st : room / st) + 1;
      // With ceil_mode the last window must start inside the input or its begin padding.
      if (ceilMode != 0 && (g.out[i] - 1) * st >= len + pb) {
        --g.out[i];
      }
      g.begin[i] = pb;
      g.padEnd[i] = pe;
    }
  }
  return g;
}

/// The taps at window offset `offset` (one index per spatial axis) of every window of `g`: a strided kFILL
/// slice of `x` whose out-of-bounds reads take the 0-D `fill`.
inline Result<ITensor*> windowTaps(ImportContext& ctx, Node const& node, ITensor* x, WindowGeometry const& g,
                                   std::vector<int64_t> const& offset, ITensor* fill) {
  Dims const in = x->getDimensions();
  int32_t const r = in.nbDims;
  Dims start{r, {}}, size{r, {}}, stride{r, {}};
  for (int32_t i = 0; i < 2; ++i) {
    start.d[i] = 0;
    size.d[i] = in.d[i];
    stride.d[i] = 1;
  }
  for (size_t i = 0; i < offset.size(); ++i) {
    start.d[i + 2] = offset[i] * g.dilations[i] - g.begin[i];
    size.d[i + 2] = g.out[i];
    stride.d[i + 2] = g.strides[i];
  }
  ISliceLayer* s = ctx.network().addSlice(*x, start, size, stride);
  KO_RETURN_IF_ERROR(ctx.check(s, node, "window"));
  s->setMode(SampleMode::kFILL);
  s->setInput(4, *fill);
  return s->getOutput(0);
}

/// Steps `offset` to the next window offset of `g` (last axis fastest); false after the last one.
inline bool nextWindowOffset(WindowGeometry const& g, std::vector<int64_t>& offset) {
  for (size_t i = offset.size(); i-- > 0;) {
    if (++offset[i] < g.kernel[i]) {
      return true;
    }
    offset[i] = 0;
  }
  return false;
}

inline Status pool(ImportContext& ctx, Node const& node, PoolingType type) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t nbSpatial, spatialAxes(node, x));
  if (node.output_size() > 1 && !node.output(1).empty()) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "the Indices output is not supported yet");
  }
  KO_ASSIGN_OR_RETURN(Spatial s, readSpatial(node, nbSpatial, {}));
  for (int32_t i = 0; i < s.dilations.nbDims; ++i) {
    if (s.dilations.d[i] != 1) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "dilated pooling is not supported here");
    }
  }
  bool const oneD = nbSpatial == 1;
  if (oneD) {
    KO_ASSIGN_OR_RETURN(x, to2d(ctx, node, x));
  }
  IPoolingLayer* l = ctx.network().addPoolingNd(*x, type, s.kernel);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "pool"));
  l->setStrideNd(s.strides);
  l->setPrePadding(s.pre);
  l->setPostPadding(s.post);
  l->setPaddingMode(s.mode);
  if (type == PoolingType::kAVERAGE) {
    KO_ASSIGN_OR_RETURN(int64_t includePad, attrInt(node, "count_include_pad", 0));
    l->setAverageCountExcludesPadding(includePad == 0);
  }
  ITensor* y = l->getOutput(0);
  if (oneD) {
    KO_ASSIGN_OR_RETURN(y, from2d(ctx, node, y));
  }
  return ctx.setOutput(node, 0, y);
}

}  // namespace kiln::onnx::spatial
