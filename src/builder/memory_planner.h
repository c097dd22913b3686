// Memory planner: places buffers with known sizes and lifetimes (step intervals) in one arena, reusing
// space between buffers whose lifetimes do not overlap (greedy best fit by decreasing size).
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::builder {

/// A buffer live from step `first` to step `last` inclusive.
struct BufferRequest {
  int64_t size = 0;
  int32_t first = 0;
  int32_t last = 0;
};

struct ArenaPlan {
  std::vector<int64_t> offsets;  // one per request, aligned
  int64_t size = 0;              // total arena bytes
};

/// Places every request; two requests share bytes only if their lifetimes are disjoint. Zero-size requests
/// get offset 0. Offsets are multiples of `alignment`.
ArenaPlan planArena(std::vector<BufferRequest> const& requests, int64_t alignment = 256);

/// True when no two requests with overlapping lifetimes overlap in memory (for tests and debug checks).
bool arenaPlanIsValid(std::vector<BufferRequest> const& requests, ArenaPlan const& plan);

}  // namespace kiln::builder
