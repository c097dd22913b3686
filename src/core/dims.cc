// Dims helpers.
#include "core/dims.h"

#include <algorithm>
#include <limits>

namespace kiln {

Dims makeDims(std::initializer_list<int64_t> d) { return makeDims(std::vector<int64_t>(d)); }

Dims makeDims(std::vector<int64_t> const& d) {
  Dims r{};
  r.nbDims = static_cast<int32_t>(std::min<size_t>(d.size(), Dims::MAX_DIMS));
  for (int32_t i = 0; i < r.nbDims; ++i) r.d[i] = d[i];
  return r;
}

std::vector<int64_t> dimsToVector(Dims const& d) {
  if (d.nbDims <= 0) return {};
  return std::vector<int64_t>(d.d, d.d + d.nbDims);
}

bool dimsEqual(Dims const& a, Dims const& b) {
  if (a.nbDims != b.nbDims) return false;
  for (int32_t i = 0; i < a.nbDims; ++i)
    if (a.d[i] != b.d[i]) return false;
  return true;
}

std::string dimsToString(Dims const& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (i) s += ",";
    s += std::to_string(d.d[i]);
  }
  return s + "]";
}

bool dimsKnown(Dims const& d) {
  if (d.nbDims < 0 || d.nbDims > Dims::MAX_DIMS) return false;
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (d.d[i] < 0) return false;
  return true;
}

Result<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return invalidArgument("size overflow: ", a, " * ", b);
  return r;
}

Result<int64_t> checkedVolume(Dims const& d) {
  if (d.nbDims < 0 || d.nbDims > Dims::MAX_DIMS) return invalidArgument("invalid rank ", d.nbDims);
  int64_t v = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (d.d[i] < 0) return invalidArgument("shape ", dimsToString(d), " has an unknown or negative dimension");
    KILN_ASSIGN_OR_RETURN(v, checkedMul(v, d.d[i]));
  }
  return v;
}

// Saturates at INT64_MAX rather than overflowing: dims from models and plans may be absurd, and callers compare
// the product with a limit before using it.
int64_t volume(Dims const& d) {
  bool zero = false;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (d.d[i] < 0) return -1;
    zero = zero || d.d[i] == 0;
  }
  if (zero) return 0;
  int64_t v = 1;
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (__builtin_mul_overflow(v, d.d[i], &v)) return std::numeric_limits<int64_t>::max();
  return v;
}

Result<size_t> checkedBytes(int64_t count, size_t elemSize) {
  if (count < 0) return invalidArgument("negative element count ", count);
  KILN_ASSIGN_OR_RETURN(int64_t b, checkedMul(count, static_cast<int64_t>(elemSize)));
  return static_cast<size_t>(b);
}

Result<Dims> broadcastShapes(Dims const& a, Dims const& b) {
  int32_t rank = std::max(a.nbDims, b.nbDims);
  Dims r{};
  r.nbDims = rank;
  for (int32_t i = 0; i < rank; ++i) {
    int32_t ia = i - (rank - a.nbDims), ib = i - (rank - b.nbDims);
    int64_t da = ia >= 0 ? a.d[ia] : 1, db = ib >= 0 ? b.d[ib] : 1;
    int64_t out;
    if (da == db) out = da;
    else if (da == 1) out = db;
    else if (db == 1) out = da;
    else if (da < 0) out = db;  // unknown vs known: must equal the known one (checked at run time)
    else if (db < 0) out = da;
    else return invalidArgument("shapes ", dimsToString(a), " and ", dimsToString(b), " cannot be broadcast");
    r.d[i] = out;
  }
  return r;
}

std::vector<int64_t> rowMajorStrides(Dims const& d) {
  std::vector<int64_t> s(std::max(d.nbDims, 0), 1);
  for (int32_t i = d.nbDims - 2; i >= 0; --i) s[i] = s[i + 1] * std::max<int64_t>(d.d[i + 1], 0);
  return s;
}

Result<int32_t> normalizeAxis(int64_t axis, int32_t rank) {
  if (axis < -rank || axis >= rank) return invalidArgument("axis ", axis, " is out of range for rank ", rank);
  return static_cast<int32_t>(axis < 0 ? axis + rank : axis);
}

}  // namespace kiln
