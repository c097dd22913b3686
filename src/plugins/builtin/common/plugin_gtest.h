// gtest helpers shared by the built-in plugins' tests: the creator of a built-in by name, and the checks every
// plugin test makes (serialize/deserialize and clone give plugins computing the same bytes, bad fields are
// refused).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
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

/// Reference helpers several plugin tests share.
/// Normalizes x over [start, start + len) in double.
inline void refNorm(std::vector<double>& y, std::vector<float> const& x, size_t start, size_t len, double eps) {
  double m = 0, v = 0;
  for (size_t i = 0; i < len; ++i) m += x[start + i];
  m /= static_cast<double>(len);
  for (size_t i = 0; i < len; ++i) v += (x[start + i] - m) * (x[start + i] - m);
  v /= static_cast<double>(len);
  for (size_t i = 0; i < len; ++i) y[start + i] = (x[start + i] - m) / std::sqrt(v + eps);
}

/// IoU of corner boxes a, b (offset 1: Caffe unnormalized semantics), in double.
inline double iouRef(float const* a, float const* b, double off) {
  double w = std::min(a[2], b[2]) - std::max(a[0], b[0]) + off, h = std::min(a[3], b[3]) - std::max(a[1], b[1]) + off;
  double inter = (w > 0 && h > 0) ? w * h : 0;
  double u = (a[2] - a[0] + off) * (a[3] - a[1] + off) + (b[2] - b[0] + off) * (b[3] - b[1] + off) - inter;
  return u > 0 ? inter / u : 0;
}

/// Random well-formed corner boxes in [0, 1] with clusters so that suppression happens.
inline std::vector<float> randomBoxes(size_t n, uint32_t seed) {
  std::vector<float> r = randomFloats(n * 4, seed, 0.f, 1.f), b(n * 4);
  for (size_t i = 0; i < n; ++i) {
    float cx = std::floor(r[i * 4] * 3) / 3 + 0.05f * r[i * 4 + 1], cy = std::floor(r[i * 4 + 2] * 2) / 2 + 0.05f * r[i * 4 + 3];
    b[i * 4] = cx;
    b[i * 4 + 1] = cy;
    b[i * 4 + 2] = cx + 0.3f;
    b[i * 4 + 3] = cy + 0.4f;
  }
  return b;
}

}  // namespace kiln::plugin::testing
