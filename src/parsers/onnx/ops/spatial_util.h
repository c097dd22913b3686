// Spatial helpers shared by the ONNX convolution and pooling importers (Conv, ConvTranspose, MaxPool,
// AveragePool): kernel/stride/pad/dilation attributes, 1-D as 2-D reshapes, kernel and bias arguments, and the
// IPoolingLayer mapping.
#pragma once

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
