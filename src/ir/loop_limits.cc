// The Loop iteration cap (loop_limits.h).
#include "ir/loop_limits.h"

#include <cstdlib>

namespace kiln::ir {

int64_t maxLoopIterations() {
  static int64_t const limit = [] {
    int64_t v = int64_t{1} << 24;
    if (char const* env = std::getenv("KILN_MAX_LOOP_ITERATIONS"); env && *env) {
      char* end = nullptr;
      long long parsed = std::strtoll(env, &end, 10);
      if (end && *end == '\0' && parsed > 0) v = parsed;
    }
    return v;
  }();
  return limit;
}

}  // namespace kiln::ir
