// Dims helpers: volume with overflow checks, comparison, printing, construction, broadcasting.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/status.h"
#include "kiln/kiln_base.h"

namespace kiln {

/// Dims from a list (at most Dims::MAX_DIMS entries; more is an internal error caught by callers).
Dims makeDims(std::initializer_list<int64_t> d);
Dims makeDims(std::vector<int64_t> const& d);
std::vector<int64_t> dimsToVector(Dims const& d);
bool dimsEqual(Dims const& a, Dims const& b);
/// "[1,3,224,224]"; unknown dims print as -1.
std::string dimsToString(Dims const& d);
/// True when every dim is >= 0 and nbDims >= 0.
bool dimsKnown(Dims const& d);
/// Product of dims, or an error on a negative dim or overflow past int64.
Result<int64_t> checkedVolume(Dims const& d);
/// Product of dims; -1 if any dim is unknown; INT64_MAX when the product overflows int64 (shapes from models
/// may be absurd: compare it with a limit before multiplying it by anything).
int64_t volume(Dims const& d);
/// a*b, or an error on overflow.
Result<int64_t> checkedMul(int64_t a, int64_t b);
/// Bytes of `count` elements of `elemSize` with overflow check.
Result<size_t> checkedBytes(int64_t count, size_t elemSize);
/// Numpy-style broadcast of two shapes (right-aligned); unknown (-1) dims stay unknown unless the other is > 1.
Result<Dims> broadcastShapes(Dims const& a, Dims const& b);
/// Row-major strides of a shape (in elements).
std::vector<int64_t> rowMajorStrides(Dims const& d);
/// Normalizes a possibly negative axis against rank; error if out of range.
Result<int32_t> normalizeAxis(int64_t axis, int32_t rank);

}  // namespace kiln
