// Tests of the built-in plugins' shared helpers: fp16 conversion.
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(Fp16, ConversionsRoundTrip) {
  for (float v : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f}) {
    EXPECT_EQ(halfToFloat(floatToHalf(v)), v) << v;
  }
  EXPECT_EQ(floatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 1.f / 4096)), 1.0f);  // ties to even
}

}  // namespace
}  // namespace kiln::plugin::testing
