// Comparisons of engine tensors against the reference backend for kilnexec --check / --check-layers.
#include "check.h"

#include <cmath>
#include <cstdio>

#include "options.h"

namespace kilnexec {

Comparison compareTensors(Tensor const& actual, Tensor const& reference, double atol, double rtol) {
  Comparison c;
  c.name = reference.name;
  if (actual.dims != reference.dims) {
    c.pass = false;
    c.problem = "shape " + formatDims(actual.dims) + " differs from the reference's " + formatDims(reference.dims);
    return c;
  }
  std::vector<double> const a = toDoubles(actual), r = toDoubles(reference);
  if (a.size() != r.size()) {
    c.pass = false;
    c.problem = std::to_string(a.size()) + " elements against the reference's " + std::to_string(r.size());
    return c;
  }
  c.count = a.size();
  double sumAbs = 0, sumRel = 0, diffSq = 0, refSq = 0;
  size_t relCount = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    bool const aNan = std::isnan(a[i]), rNan = std::isnan(r[i]);
    if (aNan || rNan) {
      if (aNan != rNan) {
        ++c.mismatches;
        if (!std::isinf(c.maxAbs)) {
          c.maxAbs = INFINITY;
          c.worstIndex = i;
          c.worstValue = a[i];
          c.worstReference = r[i];
        }
      }
      continue;
    }
    double const diff = (a[i] == r[i]) ? 0.0 : std::fabs(a[i] - r[i]);  // equal infinities differ by 0
    if (diff > c.maxAbs) {
      c.maxAbs = diff;
      c.worstIndex = i;
      c.worstValue = a[i];
      c.worstReference = r[i];
    }
    sumAbs += diff;
    if (r[i] != 0 && std::isfinite(r[i])) {
      double const rel = diff / std::fabs(r[i]);
      c.maxRel = std::max(c.maxRel, rel);
      sumRel += rel;
      ++relCount;
    }
    if (std::isfinite(diff)) diffSq += diff * diff;
    if (std::isfinite(r[i])) refSq += r[i] * r[i];
    if (!(diff <= atol + rtol * std::fabs(r[i]))) ++c.mismatches;
  }
  c.meanAbs = a.empty() ? 0 : sumAbs / static_cast<double>(a.size());
  c.meanRel = relCount ? sumRel / static_cast<double>(relCount) : 0;
  c.normRel = refSq > 0 ? std::sqrt(diffSq) / std::sqrt(refSq) : diffSq > 0 ? INFINITY : 0;
  c.pass = c.mismatches == 0;
  return c;
}

std::string formatComparison(Comparison const& c) {
  if (!c.problem.empty()) return c.name + ": " + c.problem + ", FAIL";
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "%s: %zu elements, max abs %.3g, mean abs %.3g, max rel %.3g, mean rel %.3g, norm rel %.3g, "
                "%zu over tolerance, %s",
                c.name.c_str(), c.count, c.maxAbs, c.meanAbs, c.maxRel, c.meanRel, c.normRel, c.mismatches,
                c.pass ? "PASS" : "FAIL");
  std::string s = buf;
  if (!c.pass && c.count) {
    std::snprintf(buf, sizeof(buf), " (worst at element %zu: %.9g vs reference %.9g)", c.worstIndex, c.worstValue,
                  c.worstReference);
    s += buf;
  }
  return s;
}

LayerCheck checkLayers(std::vector<std::pair<std::string, std::string>> const& order, std::vector<Tensor> const& actual,
                       std::vector<Tensor> const& reference, double atol, double rtol) {
  LayerCheck out;
  auto find = [](std::vector<Tensor> const& v, std::string const& name) -> Tensor const* {
    for (auto const& t : v)
      if (t.name == name) return &t;
    return nullptr;
  };
  for (auto const& [tensor, layer] : order) {
    Tensor const* a = find(actual, tensor);
    Tensor const* r = find(reference, tensor);
    if (!a || !r) continue;
    Comparison c = compareTensors(*a, *r, atol, rtol);
    if (!c.pass && out.firstFailure < 0) out.firstFailure = static_cast<int64_t>(out.tensors.size());
    out.tensors.emplace_back(layer, std::move(c));
  }
  return out;
}

}  // namespace kilnexec
