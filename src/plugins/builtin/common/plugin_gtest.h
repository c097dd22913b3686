// gtest helpers shared by the built-in plugins' tests: the creator of a built-in by name, and the checks every
// plugin test makes (serialize/deserialize and clone give plugins computing the same bytes, bad fields are
// refused).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/testing.h"

namespace kiln::plugin::testing {

/// The built-in creator named `name` / `version` (owned by a static list; fails the test when missing).
inline IPluginCreator& builtinCreator(std::string const& name, std::string const& version = "1") {
  static auto* list = new std::vector<std::unique_ptr<IPluginCreator>>(makeBuiltinCreators());
  for (auto& c : *list) {
    if (name == c->getPluginName() && version == c->getPluginVersion()) return *c;
  }
  ADD_FAILURE() << "no built-in creator " << name << " version " << version;
  return *list->front();
}

/// Runs `p`, its deserialized copy and its clone on `inputs`; all must succeed with identical output bytes.
/// Returns the outputs of `p`.
inline std::vector<HostTensor> expectRoundTrips(IPluginCreator& creator, IPluginV2DynamicExt& p,
                                                std::vector<HostTensor> const& inputs) {
  std::vector<HostTensor> ref;
  EXPECT_EQ(runHost(p, inputs, ref), 0);
  PluginPtr d = reserialize(creator, p);
  PluginPtr c = clonePlugin(p);
  EXPECT_TRUE(d) << "deserializePlugin failed";
  EXPECT_TRUE(c) << "clone failed";
  if (!d || !c) return ref;
  EXPECT_EQ(serialized(*d), serialized(p));
  EXPECT_EQ(serialized(*c), serialized(p));
  EXPECT_STREQ(c->getPluginNamespace(), p.getPluginNamespace());
  for (IPluginV2DynamicExt* q : {d.get(), c.get()}) {
    std::vector<HostTensor> out;
    EXPECT_EQ(runHost(*q, inputs, out), 0);
    EXPECT_EQ(out.size(), ref.size());
    for (size_t i = 0; i < out.size() && i < ref.size(); ++i) EXPECT_EQ(out[i].bytes, ref[i].bytes) << "output " << i;
  }
  // Truncated bytes are refused.
  std::vector<char> bytes = serialized(p);
  if (!bytes.empty()) {
    IPluginV2* t = creator.deserializePlugin("t", bytes.data(), bytes.size() - 1);
    EXPECT_EQ(t, nullptr) << "truncated serialization accepted";
    if (t) t->destroy();
  }
  return ref;
}

/// Expects createPlugin to refuse `fields`.
inline void expectRefused(IPluginCreator& creator, FieldSet& fields) {
  IPluginV2* p = creator.createPlugin("bad", fields.get());
  EXPECT_EQ(p, nullptr) << creator.getPluginName() << " accepted bad fields";
  if (p) p->destroy();
}

/// Expects `a` and `b` (fp32 values) to agree within `tol` (absolute + relative).
inline void expectNear(float const* a, std::vector<float> const& b, float tol) {
  for (size_t i = 0; i < b.size(); ++i) {
    ASSERT_NEAR(a[i], b[i], tol * (1.f + std::fabs(b[i]))) << "at " << i;
  }
}

inline bool sameDims(Dims const& a, Dims const& b) {
  if (a.nbDims != b.nbDims) return false;
  for (int32_t i = 0; i < a.nbDims; ++i) {
    if (a.d[i] != b.d[i]) return false;
  }
  return true;
}

}  // namespace kiln::plugin::testing
