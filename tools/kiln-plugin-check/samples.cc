// Sample fields and random valid inputs for the built-in plugins; command-line input and field specs.
#include "samples.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <sstream>

namespace kiln::plugincheck {
namespace {

using plugin::testing::dims;
using plugin::testing::floats;
using plugin::testing::ints;

int64_t volumeOf(Dims const& d) {
  int64_t v = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) v *= d.d[i];
  return v;
}

int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

std::vector<float> uniform(std::mt19937& rng, int64_t n, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  return v;
}

// Corner boxes x1 < x2, y1 < y2 in [0, 1], clustered so NMS suppresses some.
std::vector<float> boxes(std::mt19937& rng, int64_t count) {
  std::vector<float> r = uniform(rng, count * 4, 0.f, 1.f), b(static_cast<size_t>(count * 4));
  for (int64_t i = 0; i < count; ++i) {
    float cx = std::floor(r[i * 4] * 3) / 4 + 0.05f * r[i * 4 + 1];
    float cy = std::floor(r[i * 4 + 2] * 3) / 4 + 0.05f * r[i * 4 + 3];
    b[i * 4] = cx;
    b[i * 4 + 1] = cy;
    b[i * 4 + 2] = cx + 0.2f + 0.05f * r[i * 4 + 1];
    b[i * 4 + 3] = cy + 0.2f + 0.05f * r[i * 4 + 3];
  }
  return b;
}

// Distinct scores (a shuffled ramp) so that the NMS order does not depend on ties.
std::vector<float> distinctScores(std::mt19937& rng, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = (static_cast<float>(i) + 0.5f) / static_cast<float>(n);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

std::map<std::string, Sample> makeSamples() {
  std::map<std::string, Sample> m;
  m["EfficientNMS_TRT/1"] = {
      [](FieldSet& f) {
        f.add("score_threshold", 0.3f).add("iou_threshold", 0.5f).add("max_output_boxes", int32_t{10});
      },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 3), nb = pick(rng, 1, 60), nc = pick(rng, 1, 4);
        return std::vector<HostTensor>{floats(dims({n, nb, 4}), boxes(rng, n * nb)),
                                       floats(dims({n, nb, nc}), distinctScores(rng, n * nb * nc))};
      }};
  auto batched = Sample{
      [](FieldSet& f) {
        f.add("shareLocation", int32_t{1}).add("backgroundLabelId", int32_t{-1}).add("numClasses", int32_t{3});
        f.add("topK", int32_t{20}).add("keepTopK", int32_t{10}).add("scoreThreshold", 0.2f).add("iouThreshold", 0.5f);
      },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 3), nb = pick(rng, 1, 60);
        return std::vector<HostTensor>{floats(dims({n, nb, 1, 4}), boxes(rng, n * nb)),
                                       floats(dims({n, nb, 3}), distinctScores(rng, n * nb * 3))};
      }};
  m["BatchedNMSDynamic_TRT/1"] = batched;
  m["BatchedNMS_TRT/1"] = batched;
  auto detection = Sample{
      [](FieldSet& f) {
        f.add("numClasses", int32_t{3}).add("topK", int32_t{20}).add("keepTopK", int32_t{10});
        f.add("confidenceThreshold", 0.2f).add("nmsThreshold", 0.5f).add("backgroundLabelId", int32_t{0});
      },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 3), np = pick(rng, 1, 40);
        std::vector<float> priors = boxes(rng, np);
        for (int64_t i = 0; i < np; ++i) priors.insert(priors.end(), {0.1f, 0.1f, 0.2f, 0.2f});
        return std::vector<HostTensor>{floats(dims({n, np * 4, 1, 1}), uniform(rng, n * np * 4, -0.5f, 0.5f)),
                                       floats(dims({n, np * 3, 1, 1}), distinctScores(rng, n * np * 3)),
                                       floats(dims({1, 2, np * 4, 1}), priors)};
      }};
  m["NMS_TRT/1"] = detection;
  m["NMSDynamic_TRT/1"] = detection;
  m["InstanceNormalization_TRT/1"] = {
      [](FieldSet& f) {
        f.add("epsilon", 1e-5f).add("scales", std::vector<float>{1.f, 0.5f, 2.f}).add("bias",
                                                                                     std::vector<float>{0.f, 0.1f, -0.2f});
      },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 3), h = pick(rng, 1, 9), w = pick(rng, 1, 9);
        return std::vector<HostTensor>{floats(dims({n, 3, h, w}), uniform(rng, n * 3 * h * w))};
      },
      1e-3f};
  m["InstanceNormalization_TRT/2"] = m["InstanceNormalization_TRT/1"];
  m["GroupNormalizationPlugin/1"] = {
      [](FieldSet& f) { f.add("eps", 1e-5f).add("num_groups", int32_t{2}); },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 3), h = pick(rng, 1, 9), w = pick(rng, 1, 9);
        return std::vector<HostTensor>{floats(dims({n, 4, h, w}), uniform(rng, n * 4 * h * w)),
                                       floats(dims({4}), uniform(rng, 4, 0.5f, 1.5f)), floats(dims({4}), uniform(rng, 4))};
      },
      1e-3f};
  m["CustomSkipLayerNormPluginDynamic/1"] = {
      [](FieldSet& f) {
        std::mt19937 r(7);
        f.add("ld", int32_t{16}).add("type_id", int32_t{0}).add("beta", uniform(r, 16)).add("gamma", uniform(r, 16, 0.5f, 1.5f));
        f.add("bias", uniform(r, 16));
      },
      [](std::mt19937& rng) {
        int64_t s = pick(rng, 1, 8), b = pick(rng, 1, 3);
        return std::vector<HostTensor>{floats(dims({s, b, 16, 1, 1}), uniform(rng, s * b * 16)),
                                       floats(dims({s, b, 16, 1, 1}), uniform(rng, s * b * 16))};
      },
      1e-3f};
  m["CustomGeluPluginDynamic/1"] = {
      [](FieldSet& f) { f.add("type_id", int32_t{0}).add("bias", std::vector<float>{0.1f, -0.2f, 0.3f, 0.f, 0.5f, -1.f}); },
      [](std::mt19937& rng) {
        int64_t a = pick(rng, 1, 5), b = pick(rng, 1, 7);
        return std::vector<HostTensor>{floats(dims({a, b, 6}), uniform(rng, a * b * 6, -3.f, 3.f))};
      }};
  auto elementwise = [](std::mt19937& rng) {
    int32_t rank = static_cast<int32_t>(pick(rng, 1, 4));
    Dims d{};
    d.nbDims = rank;
    for (int32_t i = 0; i < rank; ++i) d.d[i] = pick(rng, 1, 7);
    return std::vector<HostTensor>{floats(d, uniform(rng, volumeOf(d), -2.f, 2.f))};
  };
  m["LReLU_TRT/1"] = {[](FieldSet& f) { f.add("negSlope", 0.1f); }, elementwise};
  m["Clip_TRT/1"] = {[](FieldSet& f) { f.add("clipMin", -0.5f).add("clipMax", 0.75f); }, elementwise};
  m["ScatterND/1"] = {
      [](FieldSet&) {},
      [](std::mt19937& rng) {
        int64_t d0 = pick(rng, 1, 8), d1 = pick(rng, 1, 5), d2 = pick(rng, 1, 4), u = pick(rng, 1, d0);
        std::vector<int32_t> rows(static_cast<size_t>(d0));
        std::iota(rows.begin(), rows.end(), 0);
        std::shuffle(rows.begin(), rows.end(), rng);  // distinct rows: the result does not depend on order
        rows.resize(static_cast<size_t>(u));
        return std::vector<HostTensor>{floats(dims({d0, d1, d2}), uniform(rng, d0 * d1 * d2)),
                                       ints(dims({u, 1}), rows), floats(dims({u, d1, d2}), uniform(rng, u * d1 * d2))};
      },
      0.f};
  m["ResizeNearest_TRT/1"] = {
      [](FieldSet& f) { f.add("scale", 2.f); },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 2), c = pick(rng, 1, 3), h = pick(rng, 1, 7), w = pick(rng, 1, 7);
        return std::vector<HostTensor>{floats(dims({n, c, h, w}), uniform(rng, n * c * h * w))};
      },
      0.f};
  auto reorg = Sample{[](FieldSet& f) { f.add("stride", int32_t{2}); },
                      [](std::mt19937& rng) {
                        int64_t n = pick(rng, 1, 2), c = 4 * pick(rng, 1, 3), h = 2 * pick(rng, 1, 4), w = 2 * pick(rng, 1, 4);
                        return std::vector<HostTensor>{floats(dims({n, c, h, w}), uniform(rng, n * c * h * w))};
                      },
                      0.f};
  m["ROIAlign_TRT/1"] = {
      [](FieldSet& f) {
        f.add("output_height", int32_t{3}).add("output_width", int32_t{2}).add("spatial_scale", 0.5f);
      },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 3), c = pick(rng, 1, 3), h = pick(rng, 2, 9), w = pick(rng, 2, 9), r = pick(rng, 1, 5);
        std::vector<float> rois(static_cast<size_t>(r * 4));
        std::vector<int32_t> idx(static_cast<size_t>(r));
        for (int64_t i = 0; i < r; ++i) {
          float a = uniform(rng, 1, 0.f, 2.f * w)[0], b = uniform(rng, 1, 0.f, 2.f * w)[0];
          float cc = uniform(rng, 1, 0.f, 2.f * h)[0], d = uniform(rng, 1, 0.f, 2.f * h)[0];
          rois[i * 4] = std::min(a, b);
          rois[i * 4 + 2] = std::max(a, b);
          rois[i * 4 + 1] = std::min(cc, d);
          rois[i * 4 + 3] = std::max(cc, d);
          idx[static_cast<size_t>(i)] = static_cast<int32_t>(pick(rng, 0, n - 1));
        }
        return std::vector<HostTensor>{floats(dims({n, c, h, w}), uniform(rng, n * c * h * w)), floats(dims({r, 4}), rois),
                                       ints(dims({r}), idx)};
      }};
  m["PriorBox_TRT/1"] = {
      [](FieldSet& f) {
        f.add("minSize", std::vector<float>{30.f}).add("maxSize", std::vector<float>{60.f});
        f.add("aspectRatios", std::vector<float>{2.f}).add("flip", int32_t{1}).add("clip", int32_t{1});
      },
      [](std::mt19937& rng) {
        int64_t h = pick(rng, 1, 8), w = pick(rng, 1, 8);
        return std::vector<HostTensor>{floats(dims({1, 2, h, w}), uniform(rng, 2 * h * w)),
                                       floats(dims({1, 1, 64, 64}), uniform(rng, 64 * 64))};
      },
      1e-5f};
  auto grid = [](bool rect) {
    return Sample{[rect](FieldSet& f) {
                    f.add("minSize", 0.2f).add("maxSize", 0.9f).add("numLayers", int32_t{3});
                    f.add("aspectRatios", std::vector<float>{1.f, 2.f, 0.5f, 3.f});
                    f.add("variance", std::vector<float>{0.1f, 0.1f, 0.2f, 0.2f});
                    f.add("featureMapShapes", rect ? std::vector<int32_t>{4, 6, 2, 3, 1, 2} : std::vector<int32_t>{5, 3, 1});
                  },
                  [](std::mt19937&) { return std::vector<HostTensor>{}; }, 1e-6f};
  };
  m["GridAnchor_TRT/1"] = grid(false);
  m["GridAnchorRect_TRT/1"] = grid(true);
  m["Normalize_TRT/1"] = {
      [](FieldSet& f) { f.add("weights", std::vector<float>{1.f, 2.f, 0.5f}).add("eps", 1e-6f); },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 3), h = pick(rng, 1, 6), w = pick(rng, 1, 6);
        return std::vector<HostTensor>{floats(dims({n, 3, h, w}), uniform(rng, n * 3 * h * w))};
      },
      1e-5f};
  m["Region_TRT/1"] = {
      [](FieldSet& f) { f.add("num", int32_t{2}).add("coords", int32_t{4}).add("classes", int32_t{3}); },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 2), h = pick(rng, 1, 6), w = pick(rng, 1, 6);
        return std::vector<HostTensor>{floats(dims({n, 16, h, w}), uniform(rng, n * 16 * h * w, -3.f, 3.f))};
      },
      1e-5f};
  m["Reorg_TRT/1"] = reorg;
  m["ModulatedDeformConv2d/1"] = {
      [](FieldSet& f) {
        f.add("stride", std::vector<int32_t>{1, 2}).add("padding", std::vector<int32_t>{1, 1});
        f.add("dilation", std::vector<int32_t>{1, 1}).add("group", int32_t{1}).add("deformable_group", int32_t{2});
      },
      [](std::mt19937& rng) {
        int64_t n = pick(rng, 1, 2), cin = 4, cout = pick(rng, 1, 3), h = pick(rng, 3, 7), w = pick(rng, 3, 7);
        int64_t ho = h, wo = (w + 2 - 3) / 2 + 1;
        return std::vector<HostTensor>{floats(dims({n, cin, h, w}), uniform(rng, n * cin * h * w)),
                                       floats(dims({n, 2 * 2 * 9, ho, wo}), uniform(rng, n * 36 * ho * wo, -1.5f, 1.5f)),
                                       floats(dims({n, 2 * 9, ho, wo}), uniform(rng, n * 18 * ho * wo, 0.f, 1.f)),
                                       floats(dims({cout, cin, 3, 3}), uniform(rng, cout * cin * 9)),
                                       floats(dims({cout}), uniform(rng, cout))};
      },
      1e-4f};
  m["Reorg_TRT/2"] = reorg;
  m["RPROI_TRT/1"] = {
      [](FieldSet& f) {
        f.add("poolingH", int32_t{2}).add("poolingW", int32_t{3}).add("featureStride", int32_t{4});
        f.add("preNmsTop", int32_t{24}).add("nmsMaxOut", int32_t{6}).add("iouThreshold", 0.5f);
        f.add("minBoxSize", 3.f).add("spatialScale", 0.25f).add("anchorsRatioCount", int32_t{3});
        f.add("anchorsScaleCount", int32_t{2}).add("anchorsRatios", std::vector<float>{0.5f, 1.f, 2.f});
        f.add("anchorsScales", std::vector<float>{1.f, 2.f});
      },
      [](std::mt19937& rng) {
        // 6 anchors; images a little larger or smaller than the grid times the stride, so that boxes clip.
        int64_t n = pick(rng, 1, 2), c = pick(rng, 1, 3), h = pick(rng, 1, 5), w = pick(rng, 1, 5);
        std::vector<float> info;
        for (int64_t b = 0; b < n; ++b) {
          std::vector<float> u = uniform(rng, 3, 0.8f, 1.2f);
          info.insert(info.end(), {u[0] * 4.f * static_cast<float>(h), u[1] * 4.f * static_cast<float>(w), u[2]});
        }
        return std::vector<HostTensor>{floats(dims({n, 12, h, w}), distinctScores(rng, n * 12 * h * w)),
                                       floats(dims({n, 24, h, w}), uniform(rng, n * 24 * h * w, -0.4f, 0.4f)),
                                       floats(dims({n, c, h, w}), uniform(rng, n * c * h * w)),
                                       floats(dims({n, 3}), info)};
      }};
  return m;
}

}  // namespace

bool builtinSample(std::string const& name, std::string const& version, Sample& out) {
  static auto const* samples = new std::map<std::string, Sample>(makeSamples());
  auto it = samples->find(name + "/" + version);
  if (it == samples->end()) return false;
  out = it->second;
  return true;
}

bool sampleFromSpec(std::string const& spec, Sample& out, std::string& error) {
  struct Tensor {
    std::vector<std::pair<int64_t, int64_t>> dims;
    bool isInt = false;
  };
  std::vector<Tensor> tensors;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    Tensor t;
    std::string shape = item;
    if (auto colon = item.find(':'); colon != std::string::npos) {
      std::string type = item.substr(colon + 1);
      shape = item.substr(0, colon);
      if (type == "i32") {
        t.isInt = true;
      } else if (type != "f32") {
        error = "unknown type '" + type + "' in input '" + item + "' (f32 or i32)";
        return false;
      }
    }
    std::stringstream ds(shape);
    std::string dim;
    while (std::getline(ds, dim, 'x')) {
      char* end = nullptr;
      long long lo = std::strtoll(dim.c_str(), &end, 10), hi = lo;
      if (end && *end == '-') hi = std::strtoll(end + 1, &end, 10);
      if (dim.empty() || !end || *end != '\0' || lo < 0 || hi < lo) {
        error = "bad dimension '" + dim + "' in input '" + item + "' (N or LO-HI)";
        return false;
      }
      t.dims.emplace_back(lo, hi);
    }
    if (t.dims.size() > static_cast<size_t>(Dims::MAX_DIMS)) {
      error = "input '" + item + "' has more than 8 dimensions";
      return false;
    }
    tensors.push_back(t);
  }
  if (tensors.empty()) {
    error = "--inputs= names no tensor";
    return false;
  }
  out.fields = [](FieldSet&) {};
  out.inputs = [tensors](std::mt19937& rng) {
    std::map<std::pair<int64_t, int64_t>, int64_t> draws;  // equal ranges share one draw per shape
    std::vector<HostTensor> v;
    for (auto const& t : tensors) {
      Dims d{};
      d.nbDims = static_cast<int32_t>(t.dims.size());
      for (size_t i = 0; i < t.dims.size(); ++i) {
        auto r = t.dims[i];
        if (!draws.count(r)) draws[r] = pick(rng, r.first, r.second);
        d.d[i] = draws[r];
      }
      int64_t n = volumeOf(d);
      if (t.isInt) {
        std::vector<int32_t> iv(static_cast<size_t>(n));
        for (auto& x : iv) x = static_cast<int32_t>(pick(rng, 0, 3));
        v.push_back(ints(d, iv));
      } else {
        v.push_back(floats(d, uniform(rng, n)));
      }
    }
    return v;
  };
  return true;
}

bool addFieldSetting(std::string const& setting, FieldSet& fields, std::string& error) {
  auto eq = setting.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "field setting '" + setting + "' is not NAME=VALUE";
    return false;
  }
  std::string name = setting.substr(0, eq), value = setting.substr(eq + 1);
  if (value.rfind("s:", 0) == 0) {
    std::string s = value.substr(2);
    fields.addRaw(name, PluginFieldType::kCHAR, s.data(), static_cast<int32_t>(s.size()), 1);
    return true;
  }
  std::vector<std::string> parts;
  std::stringstream ss(value);
  std::string p;
  while (std::getline(ss, p, ',')) parts.push_back(p);
  bool isFloat = value.find_first_of(".eEf") != std::string::npos;
  std::vector<float> fv;
  std::vector<int32_t> iv;
  for (auto const& part : parts) {
    char* end = nullptr;
    if (isFloat) {
      fv.push_back(std::strtof(part.c_str(), &end));
      if (end && *end == 'f') ++end;
    } else {
      iv.push_back(static_cast<int32_t>(std::strtol(part.c_str(), &end, 10)));
    }
    if (part.empty() || !end || *end != '\0') {
      error = "field '" + name + "': cannot parse '" + part + "' as a number";
      return false;
    }
  }
  if (parts.empty()) {
    error = "field '" + name + "' has no value";
    return false;
  }
  if (isFloat) {
    if (fv.size() == 1) fields.add(name, fv[0]); else fields.add(name, fv);
  } else {
    if (iv.size() == 1) fields.add(name, iv[0]); else fields.add(name, iv);
  }
  return true;
}

}  // namespace kiln::plugincheck
