// Shape inference of Shuffle (TensorRT's IShuffleLayer): first transpose, then reshape (attribute `reshape` or
// the contents of the 1-D shape tensor input 1; 0 copies the transposed input's dim when zero_is_placeholder,
// one -1 is inferred from the volume), then second transpose.
#include <vector>

#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

// Checks that `perm` (absent: identity) permutes 0..rank-1.
Status checkPerm(InferContext const& ctx, char const* name, std::vector<int64_t> const& perm, int32_t rank) {
  if (perm.empty() && rank != 0)
    return Status::ok();
  if (static_cast<int64_t>(perm.size()) != rank)
    return ctx.error(name, " has ", perm.size(), " entries for a tensor of rank ", rank);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)])
      return ctx.error(name, " is not a permutation of 0..", rank - 1);
    seen[static_cast<size_t>(p)] = true;
  }
  return Status::ok();
}

Dims applyPerm(Dims const& d, std::vector<int64_t> const& perm) {
  if (perm.empty())
    return d;
  Dims r = d;
  for (int32_t i = 0; i < d.nbDims; ++i)
    r.d[i] = d.d[perm[static_cast<size_t>(i)]];
  return r;
}

// The reshaped dims of `t` given the requested dims `req` (0 and -1 as TensorRT's setReshapeDimensions).
Result<Dims> reshapeDims(InferContext const& ctx, Dims const& t, std::vector<int64_t> const& req,
                         bool zeroIsPlaceholder) {
  if (req.size() > static_cast<size_t>(Dims::MAX_DIMS))
    return ctx.error("reshape dims have ", req.size(), " entries (at most ", Dims::MAX_DIMS, ")");
  Dims r{};
  r.nbDims = static_cast<int32_t>(req.size());
  int32_t inferAt = -1;
  bool othersKnown = true;
  int64_t others = 1;
  for (int32_t i = 0; i < r.nbDims; ++i) {
    int64_t v = req[static_cast<size_t>(i)];
    if (v == 0 && zeroIsPlaceholder) {
      if (i >= t.nbDims)
        return ctx.error("reshape dim ", i, " is 0 (copy) but the input has rank ", t.nbDims);
      v = t.d[i];
    } else if (v == -1) {
      if (inferAt >= 0)
        return ctx.error("reshape dims ", dimsToString(makeDims(req)), " have more than one -1");
      inferAt = i;
    } else if (v < 0) {
      return ctx.error("reshape dim ", i, " is ", v);
    }
    r.d[i] = v;
    if (i == inferAt)
      continue;
    if (v < 0) {
      othersKnown = false;
    } else {
      Result<int64_t> m = checkedMul(others, v);
      if (!m.isOk())
        return ctx.error("reshape dims overflow");
      others = *m;
    }
  }
  if (!dimsKnown(t)) {
    if (inferAt >= 0)
      r.d[inferAt] = -1;
    return r;
  }
  Result<int64_t> inVolume = checkedVolume(t);
  if (!inVolume.isOk())
    return ctx.error(inVolume.status().message());
  if (inferAt >= 0) {
    if (!othersKnown) {
      r.d[inferAt] = -1;
    } else if (others == 0) {
      if (*inVolume != 0)
        return ctx.error("cannot reshape ", dimsToString(t), " to ", dimsToString(makeDims(req)));
      return ctx.error("reshape dims ", dimsToString(makeDims(req)), " leave the -1 ambiguous for an empty input");
    } else {
      if (*inVolume % others != 0)
        return ctx.error("cannot reshape ", dimsToString(t), " to ", dimsToString(makeDims(req)));
      r.d[inferAt] = *inVolume / others;
    }
  } else if (othersKnown && others != *inVolume) {
    return ctx.error("cannot reshape ", dimsToString(t), " (volume ", *inVolume, ") to ", dimsToString(r));
  }
  return r;
}

Status inferShuffle(InferContext& ctx) {
  if (ctx.numInputs() < 1 || ctx.numInputs() > 2 || !ctx.present(0))
    return ctx.error("needs one or two inputs");
  Attributes const& a = ctx.node.attrs;
  Dims const& in = ctx.in[0].shape;
  std::vector<int64_t> perm1 = a.getInts("first_perm");
  std::vector<int64_t> perm2 = a.getInts("second_perm");
  bool zeroIsPlaceholder = a.getInt("zero_is_placeholder", 1) != 0;
  KILN_RETURN_IF_ERROR(checkPerm(ctx, "first_perm", perm1, in.nbDims));
  Dims t = applyPerm(in, perm1);
  Dims r = t;
  if (ctx.present(1)) {
    TensorInfo const& s = ctx.in[1];
    if (s.dtype != DataType::kINT32 && s.dtype != DataType::kINT64)
      return ctx.error("reshape dims tensor must be int32 or int64, not ", dataTypeName(s.dtype));
    if (s.shape.nbDims != 1 || s.shape.d[0] < 0)
      return ctx.error("reshape dims tensor must be 1-D of known length, not ", dimsToString(s.shape));
    if (s.shape.d[0] > Dims::MAX_DIMS)
      return ctx.error("reshape dims tensor has ", s.shape.d[0], " entries");
    if (ctx.inValues[1]) {
      KILN_ASSIGN_OR_RETURN(r, reshapeDims(ctx, t, ctx.inValues[1]->toInt64Vector(), zeroIsPlaceholder));
    } else {
      r = Dims{};
      r.nbDims = static_cast<int32_t>(s.shape.d[0]);
      for (int32_t i = 0; i < r.nbDims; ++i)
        r.d[i] = -1;
    }
  } else if (a.has("reshape")) {
    KILN_ASSIGN_OR_RETURN(r, reshapeDims(ctx, t, a.getInts("reshape"), zeroIsPlaceholder));
  }
  KILN_RETURN_IF_ERROR(checkPerm(ctx, "second_perm", perm2, r.nbDims));
  ctx.out[0] = {ctx.in[0].dtype, applyPerm(r, perm2)};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kShuffle, inferShuffle);

}  // namespace kiln::ir
