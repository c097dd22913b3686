// End to end, one gtest case per layer family (and variant): a tiny network built through the public API only,
// built for DeviceType::kCPU at optimization levels 0 and 3, serialized, deserialized, run with enqueueV3 and
// compared with values computed here (by hand or with a naive loop).
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace kiln {
namespace {

struct Logger : ILogger {
  void log(Severity severity, AsciiChar const* msg) noexcept override {
    if (severity <= Severity::kERROR) {
      last = msg == nullptr ? "" : msg;
    }
  }
  std::string last;
};

// Host buffers grown on request; records the last shape it is told per tensor.
struct Allocator : IOutputAllocator {
  void* reallocateOutputAsync(char const* name, void*, uint64_t size, uint64_t, cudaStream_t) override {
    auto& b = buffers[name];
    if (size + 1 > b.size()) b.resize(size + 1);
    return b.data();
  }
  void notifyShape(char const* name, Dims const& dims) noexcept override { shapes[name] = dims; }
  std::map<std::string, std::vector<uint8_t>> buffers;
  std::map<std::string, Dims> shapes;
};

Dims dimsOf(std::vector<int64_t> const& v) {
  Dims d{};
  d.nbDims = static_cast<int32_t>(v.size());
  for (size_t i = 0; i < v.size(); ++i) d.d[i] = v[i];
  return d;
}

int64_t volumeOf(Dims const& d) {
  int64_t v = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) v *= d.d[i];
  return v;
}

std::string dimsStr(Dims const& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "," : "") + std::to_string(d.d[i]);
  return s + "]";
}

size_t elemSize(DataType t) {
  switch (t) {
    case DataType::kFLOAT:
      return 4;
    case DataType::kHALF:
      return 2;
    case DataType::kINT8:
      return 1;
    case DataType::kINT32:
      return 4;
    case DataType::kBOOL:
      return 1;
    case DataType::kUINT8:
      return 1;
    case DataType::kFP8:
      return 1;
    case DataType::kBF16:
      return 2;
    case DataType::kINT64:
      return 8;
    case DataType::kINT4:
      return 1;
    case DataType::kFP4:
      return 1;
    case DataType::kE8M0:
      return 1;
    case DataType::kFLOAT64:
      return 8;
    case DataType::kINT16:
      return 2;
    case DataType::kUINT16:
      return 2;
    case DataType::kUINT32:
      return 4;
    case DataType::kUINT64:
      return 8;
  }
  return 0;
}

// IEEE binary16 <-> float, written here so the test needs nothing but the public API.
uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t const sign = (x >> 16) & 0x8000U;
  int32_t const exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFFU;
  if (((x >> 23) & 0xFF) == 0xFF) return static_cast<uint16_t>(sign | 0x7C00U | (mant ? 0x200U : 0U));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00U);
  if (exp <= 0) {  // subnormal or zero: value / 2^-24, rounded to nearest even
    double const v = std::fabs(static_cast<double>(f)) * 16777216.0;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(v)));
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t const rest = mant & 0x1FFFU;
  if (rest > 0x1000U || (rest == 0x1000U && (h & 1U))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float halfToFloat(uint16_t h) {
  uint32_t const sign = (h & 0x8000U) ? 1 : 0;
  int32_t const exp = (h >> 10) & 0x1F;
  uint32_t const mant = h & 0x3FFU;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(static_cast<double>(mant | 0x400U), exp - 25);
  }
  return static_cast<float>(sign ? -v : v);
}

std::vector<uint8_t> encode(DataType t, std::vector<double> const& values) {
  std::vector<uint8_t> out(values.size() * elemSize(t) + 1);
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t* p = out.data() + i * elemSize(t);
    double const v = values[i];
    if (t == DataType::kFLOAT) {
      float const f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else if (t == DataType::kHALF) {
      uint16_t const h = floatToHalf(static_cast<float>(v));
      std::memcpy(p, &h, 2);
    } else if (t == DataType::kFLOAT64) {
      std::memcpy(p, &v, 8);
    } else if (t == DataType::kINT32) {
      int32_t const k = static_cast<int32_t>(v);
      std::memcpy(p, &k, 4);
    } else if (t == DataType::kINT64) {
      int64_t const k = static_cast<int64_t>(v);
      std::memcpy(p, &k, 8);
    } else if (t == DataType::kINT8) {
      int8_t const k = static_cast<int8_t>(v);
      std::memcpy(p, &k, 1);
    } else if (t == DataType::kUINT8) {
      *p = static_cast<uint8_t>(v);
    } else if (t == DataType::kBOOL) {
      *p = v != 0 ? 1 : 0;
    } else {
      ADD_FAILURE() << "encode: type " << static_cast<int>(t) << " not handled by the test";
    }
  }
  return out;
}

double decodeAt(DataType t, uint8_t const* base, size_t i) {
  uint8_t const* p = base + i * elemSize(t);
  if (t == DataType::kFLOAT) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (t == DataType::kHALF) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  }
  if (t == DataType::kFLOAT64) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (t == DataType::kINT32) {
    int32_t k;
    std::memcpy(&k, p, 4);
    return k;
  }
  if (t == DataType::kINT64) {
    int64_t k;
    std::memcpy(&k, p, 8);
    return static_cast<double>(k);
  }
  if (t == DataType::kINT8) {
    int8_t k;
    std::memcpy(&k, p, 1);
    return k;
  }
  if (t == DataType::kUINT8 || t == DataType::kBOOL) {
    return *p;
  }
  ADD_FAILURE() << "decode: type " << static_cast<int>(t) << " not handled by the test";
  return 0;
}

// A named tensor: the values of a network input, or the expected values of a network output.
struct TensorSpec {
  std::string name;
  DataType type;
  std::vector<int64_t> dims;
  std::vector<double> values;
};

// Network-building helpers; keeps weight memory alive until the build is done.
struct Net {
  IBuilder* builder;
  INetworkDefinition* net;
  IBuilderConfig* config;
  std::deque<std::vector<uint8_t>> storage;

  ITensor* input(char const* name, DataType t, std::vector<int64_t> const& dims) {
    return net->addInput(name, t, dimsOf(dims));
  }
  Weights weights(DataType t, std::vector<double> const& v) {
    storage.push_back(encode(t, v));
    return Weights{t, storage.back().data(), static_cast<int64_t>(v.size())};
  }
  ITensor* constant(DataType t, std::vector<int64_t> const& dims, std::vector<double> const& v) {
    IConstantLayer* c = net->addConstant(dimsOf(dims), weights(t, v));
    return c == nullptr ? nullptr : c->getOutput(0);
  }
  ITensor* cf(std::vector<int64_t> const& dims, std::vector<double> const& v) {
    return constant(DataType::kFLOAT, dims, v);
  }
  ITensor* ci32(std::vector<int64_t> const& dims, std::vector<double> const& v) {
    return constant(DataType::kINT32, dims, v);
  }
  ITensor* ci64(std::vector<int64_t> const& dims, std::vector<double> const& v) {
    return constant(DataType::kINT64, dims, v);
  }
  // Marks layer output `index` as network output `name`; false if the layer is missing.
  bool out(ILayer* layer, char const* name, int32_t index = 0) {
    if (layer == nullptr || layer->getOutput(index) == nullptr) return false;
    return out(layer->getOutput(index), name);
  }
  bool out(ITensor* t, char const* name) {
    if (t == nullptr) return false;
    t->setName(name);
    net->markOutput(*t);
    return true;
  }
  // One optimization profile for input `name`.
  void profile(char const* name, std::vector<int64_t> const& mn, std::vector<int64_t> const& opt,
               std::vector<int64_t> const& mx) {
    IOptimizationProfile* p = builder->createOptimizationProfile();
    p->setDimensions(name, OptProfileSelector::kMIN, dimsOf(mn));
    p->setDimensions(name, OptProfileSelector::kOPT, dimsOf(opt));
    p->setDimensions(name, OptProfileSelector::kMAX, dimsOf(mx));
    config->addOptimizationProfile(p);
  }
};

using DefineFn = std::function<bool(Net&)>;

struct LayerCase {
  std::string name;
  DefineFn define;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  double tol = 1e-5;                   // |got - want| <= tol * (1 + |want|)
  std::vector<std::string> allocated;  // outputs delivered through an IOutputAllocator
  std::string knownIssue;              // non-empty: GTEST_SKIP with this text
  bool expectRunFailure = false;       // enqueueV3 must fail (e.g. a failing assertion)
  std::string runFailureText;          // ...with this text in the logged error
  int32_t level3Layers = -1;           // >= 0: the engine built at level 3 has this many layers (a fusion fired)
};

void PrintTo(LayerCase const& c, std::ostream* os) { *os << c.name; }

// Builds, serializes, deserializes and runs `c` at `level`; checks every expected output.
void runCase(LayerCase const& c, int32_t level) {
  SCOPED_TRACE("optimization level " + std::to_string(level));
  Logger logger;
  std::unique_ptr<IBuilder> builder(createInferBuilder(logger));
  ASSERT_NE(builder, nullptr);
  std::unique_ptr<INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<IBuilderConfig> config(builder->createBuilderConfig());
  ASSERT_TRUE(network && config);
  config->setDefaultDeviceType(DeviceType::kCPU);
  config->setBuilderOptimizationLevel(level);
  Net net{builder.get(), network.get(), config.get(), {}};
  ASSERT_TRUE(c.define(net)) << "define failed: " << logger.last;
  std::unique_ptr<IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  ASSERT_NE(plan, nullptr) << "build failed: " << logger.last;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr) << "deserialize failed: " << logger.last;
  if (level == 3 && c.level3Layers >= 0) {
    EXPECT_EQ(engine->getNbLayers(), c.level3Layers);
  }
  std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_NE(ctx, nullptr) << logger.last;

  std::vector<std::vector<uint8_t>> inBuffers;
  for (auto const& in : c.inputs) {
    Dims const engineDims = engine->getTensorShape(in.name.c_str());
    bool dynamic = false;
    for (int32_t i = 0; i < engineDims.nbDims; ++i) dynamic = dynamic || engineDims.d[i] < 0;
    if (dynamic) {
      ASSERT_TRUE(ctx->setInputShape(in.name.c_str(), dimsOf(in.dims))) << in.name << ": " << logger.last;
    }
    ASSERT_EQ(engine->getTensorDataType(in.name.c_str()), in.type) << in.name;
    inBuffers.push_back(encode(in.type, in.values));
    ASSERT_TRUE(ctx->setTensorAddress(in.name.c_str(), inBuffers.back().data())) << in.name << ": " << logger.last;
  }
  Allocator alloc;
  std::vector<std::vector<uint8_t>> outBuffers(c.outputs.size());
  for (size_t k = 0; k < c.outputs.size(); ++k) {
    auto const& o = c.outputs[k];
    ASSERT_EQ(engine->getTensorDataType(o.name.c_str()), o.type) << o.name;
    if (std::find(c.allocated.begin(), c.allocated.end(), o.name) != c.allocated.end()) {
      ASSERT_TRUE(ctx->setOutputAllocator(o.name.c_str(), &alloc)) << o.name;
      continue;
    }
    Dims const d = ctx->getTensorShape(o.name.c_str());
    ASSERT_TRUE(d.nbDims >= 0 && volumeOf(d) >= 0) << o.name << " has shape " << dimsStr(d) << ": " << logger.last;
    outBuffers[k].assign(static_cast<size_t>(volumeOf(d)) * elemSize(o.type) + 1, 0xCD);
    ASSERT_TRUE(ctx->setTensorAddress(o.name.c_str(), outBuffers[k].data())) << o.name << ": " << logger.last;
  }
  bool const ok = ctx->enqueueV3(nullptr);
  if (c.expectRunFailure) {
    EXPECT_FALSE(ok);
    EXPECT_NE(logger.last.find(c.runFailureText), std::string::npos) << logger.last;
    return;
  }
  ASSERT_TRUE(ok) << "enqueueV3 failed: " << logger.last;
  for (size_t k = 0; k < c.outputs.size(); ++k) {
    auto const& o = c.outputs[k];
    SCOPED_TRACE("output " + o.name);
    uint8_t const* data = outBuffers[k].data();
    Dims got = ctx->getTensorShape(o.name.c_str());
    if (outBuffers[k].empty()) {
      ASSERT_EQ(alloc.shapes.count(o.name), 1U) << "no notifyShape";
      got = alloc.shapes[o.name];
      data = alloc.buffers[o.name].data();
    }
    ASSERT_EQ(dimsStr(got), dimsStr(dimsOf(o.dims)));
    ASSERT_EQ(static_cast<size_t>(volumeOf(got)), o.values.size()) << "bad test: value count";
    for (size_t i = 0; i < o.values.size(); ++i) {
      double const g = decodeAt(o.type, data, i);
      double const w = o.values[i];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << "element " << i;
      } else if (std::isinf(w)) {
        EXPECT_EQ(g, w) << "element " << i;
      } else {
        EXPECT_NEAR(g, w, c.tol * (1 + std::fabs(w))) << "element " << i;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Naive reference helpers.

std::vector<double> iota(size_t n, double start = 0, double step = 1) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<double>(i);
  return v;
}

// A deterministic pseudo-random vector in [-1, 1).
std::vector<double> pseudo(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t s = seed * 2654435761U + 12345U;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525U + 1013904223U;
    v[i] = static_cast<double>(s >> 8) / static_cast<double>(1U << 24) * 2.0 - 1.0;
    v[i] = static_cast<double>(static_cast<float>(v[i]));
  }
  return v;
}

// 2-D convolution, N = 1, groups = 1: x[C,H,W], w[K,C,kh,kw] -> [K,Ho,Wo].
std::vector<double> conv2d(std::vector<double> const& x, int64_t C, int64_t H, int64_t W, std::vector<double> const& w,
                           int64_t K, int64_t kh, int64_t kw, std::vector<double> const& b, int64_t s, int64_t p,
                           int64_t& Ho, int64_t& Wo) {
  Ho = (H + 2 * p - kh) / s + 1;
  Wo = (W + 2 * p - kw) / s + 1;
  std::vector<double> y(static_cast<size_t>(K * Ho * Wo));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t i = 0; i < Ho; ++i)
      for (int64_t j = 0; j < Wo; ++j) {
        double acc = b.empty() ? 0 : b[static_cast<size_t>(k)];
        for (int64_t c = 0; c < C; ++c)
          for (int64_t u = 0; u < kh; ++u)
            for (int64_t v = 0; v < kw; ++v) {
              int64_t const r = i * s - p + u, q = j * s - p + v;
              if (r < 0 || r >= H || q < 0 || q >= W) continue;
              acc +=
                  x[static_cast<size_t>((c * H + r) * W + q)] * w[static_cast<size_t>(((k * C + c) * kh + u) * kw + v)];
            }
        y[static_cast<size_t>((k * Ho + i) * Wo + j)] = acc;
      }
  return y;
}

// 2-D pooling of one [H, W] plane; type 0 max, 1 average (padding excluded from the count when `exclude`).
std::vector<double> pool2d(std::vector<double> const& x, int64_t H, int64_t W, int64_t win, int64_t s, int64_t p,
                           int type, bool exclude, int64_t& Ho, int64_t& Wo) {
  Ho = (H + 2 * p - win) / s + 1;
  Wo = (W + 2 * p - win) / s + 1;
  std::vector<double> y;
  for (int64_t i = 0; i < Ho; ++i)
    for (int64_t j = 0; j < Wo; ++j) {
      double mx = -INFINITY, sum = 0;
      int64_t n = 0;
      for (int64_t u = 0; u < win; ++u)
        for (int64_t v = 0; v < win; ++v) {
          int64_t const r = i * s - p + u, q = j * s - p + v;
          if (r < 0 || r >= H || q < 0 || q >= W) continue;
          double const e = x[static_cast<size_t>(r * W + q)];
          mx = std::max(mx, e);
          sum += e;
          ++n;
        }
      y.push_back(type == 0 ? mx : sum / static_cast<double>(exclude ? n : win * win));
    }
  return y;
}

std::vector<double> softmaxRows(std::vector<double> const& x, size_t rows, size_t cols) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (size_t c = 0; c < cols; ++c) mx = std::max(mx, x[r * cols + c]);
    for (size_t c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - mx);
    for (size_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(x[r * cols + c] - mx) / sum;
  }
  return y;
}

std::vector<double> mapv(std::vector<double> const& x, std::function<double(double)> const& f) {
  std::vector<double> y(x.size());
  std::transform(x.begin(), x.end(), y.begin(), f);
  return y;
}

// ---------------------------------------------------------------------------------------------------------------
// The cases.

constexpr DataType kF = DataType::kFLOAT;
constexpr DataType kI32 = DataType::kINT32;
constexpr DataType kI64 = DataType::kINT64;
constexpr DataType kB = DataType::kBOOL;

// A one-input, one-output case: y = make(x).
LayerCase unaryCase(std::string name, TensorSpec x, TensorSpec y, std::function<ILayer*(Net&, ITensor&)> make,
                    double tol = 1e-5) {
  LayerCase c;
  c.name = std::move(name);
  std::string const xn = x.name;
  DataType const xt = x.type;
  std::vector<int64_t> const xd = x.dims;
  std::string const yn = y.name;
  c.define = [=](Net& n) {
    ITensor* in = n.input(xn.c_str(), xt, xd);
    return in != nullptr && n.out(make(n, *in), yn.c_str());
  };
  c.inputs = {std::move(x)};
  c.outputs = {std::move(y)};
  c.tol = tol;
  return c;
}

void addActivationCases(std::vector<LayerCase>& cases) {
  std::vector<double> const x = {-2, -1, -0.5, 0, 0.25, 0.5, 1, 3};
  struct A {
    char const* name;
    ActivationType type;
    double alpha, beta;
    std::function<double(double, double, double)> f;
  };
  std::vector<A> const acts = {
      {"Relu", ActivationType::kRELU, 0, 0, [](double v, double, double) { return std::max(v, 0.0); }},
      {"Sigmoid", ActivationType::kSIGMOID, 0, 0, [](double v, double, double) { return 1 / (1 + std::exp(-v)); }},
      {"Tanh", ActivationType::kTANH, 0, 0, [](double v, double, double) { return std::tanh(v); }},
      {"LeakyRelu", ActivationType::kLEAKY_RELU, 0.1, 0, [](double v, double a, double) { return v >= 0 ? v : a * v; }},
      {"Elu", ActivationType::kELU, 0.7, 0,
       [](double v, double a, double) { return v >= 0 ? v : a * (std::exp(v) - 1); }},
      {"Selu", ActivationType::kSELU, 1.6732632, 1.0507010,
       [](double v, double a, double b) { return v > 0 ? b * v : b * a * (std::exp(v) - 1); }},
      {"Softsign", ActivationType::kSOFTSIGN, 0, 0, [](double v, double, double) { return v / (1 + std::fabs(v)); }},
      {"Softplus", ActivationType::kSOFTPLUS, 1.5, 0.5,
       [](double v, double a, double b) { return a * std::log(std::exp(b * v) + 1); }},
      {"Clip", ActivationType::kCLIP, -0.6, 0.9,
       [](double v, double a, double b) { return std::max(a, std::min(b, v)); }},
      {"HardSigmoid", ActivationType::kHARD_SIGMOID, 0.2, 0.5,
       [](double v, double a, double b) { return std::max(0.0, std::min(1.0, a * v + b)); }},
      {"ScaledTanh", ActivationType::kSCALED_TANH, 1.7, 0.6,
       [](double v, double a, double b) { return a * std::tanh(b * v); }},
      {"ThresholdedRelu", ActivationType::kTHRESHOLDED_RELU, 0.3, 0,
       [](double v, double a, double) { return v > a ? v : 0; }},
      {"GeluErf", ActivationType::kGELU_ERF, 0, 0,
       [](double v, double, double) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {"GeluTanh", ActivationType::kGELU_TANH, 0, 0,
       [](double v, double, double) {
         return 0.5 * v * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
       }},
  };
  for (auto const& a : acts) {
    // alpha/beta go through float in the API.
    double const al = static_cast<float>(a.alpha), be = static_cast<float>(a.beta);
    auto f = a.f;
    cases.push_back(unaryCase(std::string("Activation") + a.name, {"x", kF, {2, 4}, x},
                              {"y", kF, {2, 4}, mapv(x, [&](double v) { return f(v, al, be); })},
                              [a](Net& n, ITensor& in) -> ILayer* {
                                IActivationLayer* l = n.net->addActivation(in, a.type);
                                if (l != nullptr) {
                                  l->setAlpha(static_cast<float>(a.alpha));
                                  l->setBeta(static_cast<float>(a.beta));
                                }
                                return l;
                              }));
  }
  // float16 in, float16 out.
  cases.push_back(unaryCase("ActivationReluHalf", {"x", DataType::kHALF, {8}, x},
                            {"y", DataType::kHALF, {8}, mapv(x, [](double v) { return std::max(v, 0.0); })},
                            [](Net& n, ITensor& in) { return n.net->addActivation(in, ActivationType::kRELU); }));
  // Dynamic shape: [-1, 3] with a profile, run at [4, 3].
  {
    LayerCase c;
    c.name = "ActivationSigmoidDynamicShape";
    c.define = [](Net& n) {
      ITensor* in = n.input("x", kF, {-1, 3});
      n.profile("x", {1, 3}, {2, 3}, {8, 3});
      return n.out(n.net->addActivation(*in, ActivationType::kSIGMOID), "y");
    };
    std::vector<double> const xv = pseudo(12, 7);
    c.inputs = {{"x", kF, {4, 3}, xv}};
    c.outputs = {{"y", kF, {4, 3}, mapv(xv, [](double v) { return 1 / (1 + std::exp(-v)); })}};
    cases.push_back(c);
  }
}

void addConvolutionCases(std::vector<LayerCase>& cases) {
  {
    std::vector<double> const x = pseudo(2 * 5 * 5, 1), w = pseudo(3 * 2 * 3 * 3, 2), b = {0.5, -0.25, 1};
    int64_t Ho = 0, Wo = 0;
    std::vector<double> const y = conv2d(x, 2, 5, 5, w, 3, 3, 3, b, 2, 1, Ho, Wo);
    LayerCase c;
    c.name = "ConvolutionStride2Pad1";
    c.define = [=](Net& n) {
      ITensor* in = n.input("x", kF, {1, 2, 5, 5});
      IConvolutionLayer* l = n.net->addConvolutionNd(*in, 3, Dims2{3, 3}, n.weights(kF, w), n.weights(kF, b));
      if (l == nullptr) return false;
      l->setStrideNd(Dims2{2, 2});
      l->setPaddingNd(Dims2{1, 1});
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {1, 2, 5, 5}, x}};
    c.outputs = {{"y", kF, {1, 3, Ho, Wo}, y}};
    cases.push_back(c);
  }
  {
    // Deconvolution, stride 1: y[i+u][j+v] += x[i][j] * w[u][v].
    std::vector<double> const x = {1, 2, 3, 4}, w = {1, 2, 3, 4};
    std::vector<double> y(9, 0.25);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (int u = 0; u < 2; ++u)
          for (int v = 0; v < 2; ++v) y[static_cast<size_t>((i + u) * 3 + j + v)] += x[i * 2 + j] * w[u * 2 + v];
    LayerCase c;
    c.name = "Deconvolution";
    c.define = [=](Net& n) {
      ITensor* in = n.input("x", kF, {1, 1, 2, 2});
      return n.out(n.net->addDeconvolutionNd(*in, 1, Dims2{2, 2}, n.weights(kF, w), n.weights(kF, {0.25})), "y");
    };
    c.inputs = {{"x", kF, {1, 1, 2, 2}, x}};
    c.outputs = {{"y", kF, {1, 1, 3, 3}, y}};
    cases.push_back(c);
  }
  {
    // Deconvolution stride 2, kernel 2 of ones: each input repeated into a 2x2 block.
    std::vector<double> const x = {1, 2, 3, 4};
    std::vector<double> y(16);
    for (int r = 0; r < 4; ++r)
      for (int q = 0; q < 4; ++q) y[static_cast<size_t>(r * 4 + q)] = x[(r / 2) * 2 + q / 2];
    LayerCase c;
    c.name = "DeconvolutionStride2";
    c.define = [=](Net& n) {
      ITensor* in = n.input("x", kF, {1, 1, 2, 2});
      IDeconvolutionLayer* l =
          n.net->addDeconvolutionNd(*in, 1, Dims2{2, 2}, n.weights(kF, {1, 1, 1, 1}), Weights{kF, nullptr, 0});
      if (l == nullptr) return false;
      l->setStrideNd(Dims2{2, 2});
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {1, 1, 2, 2}, x}};
    c.outputs = {{"y", kF, {1, 1, 4, 4}, y}};
    cases.push_back(c);
  }
}

void addPoolingCases(std::vector<LayerCase>& cases) {
  std::vector<double> const x = pseudo(25, 3);
  int64_t Ho = 0, Wo = 0;
  std::vector<double> const mx = pool2d(x, 5, 5, 2, 2, 0, 0, true, Ho, Wo);
  std::vector<double> const avg = pool2d(x, 5, 5, 2, 2, 0, 1, true, Ho, Wo);
  std::vector<double> blend(mx.size());
  for (size_t i = 0; i < mx.size(); ++i) blend[i] = 0.75 * mx[i] + 0.25 * avg[i];
  struct P {
    char const* name;
    PoolingType type;
    std::vector<double> y;
  };
  for (auto const& p : std::vector<P>{{"Max", PoolingType::kMAX, mx},
                                      {"Average", PoolingType::kAVERAGE, avg},
                                      {"MaxAverageBlend", PoolingType::kMAX_AVERAGE_BLEND, blend}}) {
    PoolingType const type = p.type;
    cases.push_back(unaryCase(std::string("Pooling") + p.name, {"x", kF, {1, 1, 5, 5}, x},
                              {"y", kF, {1, 1, Ho, Wo}, p.y}, [type](Net& n, ITensor& in) -> ILayer* {
                                IPoolingLayer* l = n.net->addPoolingNd(in, type, Dims2{2, 2});
                                if (l != nullptr) {
                                  l->setStrideNd(Dims2{2, 2});
                                  l->setBlendFactor(0.25F);
                                }
                                return l;
                              }));
  }
  int64_t H2 = 0, W2 = 0;
  std::vector<double> const ex = pool2d(x, 5, 5, 3, 1, 1, 1, true, H2, W2);
  std::vector<double> const in = pool2d(x, 5, 5, 3, 1, 1, 1, false, H2, W2);
  for (bool exclude : {true, false}) {
    cases.push_back(unaryCase(exclude ? "PoolingAveragePadExclude" : "PoolingAveragePadInclude",
                              {"x", kF, {1, 1, 5, 5}, x}, {"y", kF, {1, 1, H2, W2}, exclude ? ex : in},
                              [exclude](Net& n, ITensor& t) -> ILayer* {
                                IPoolingLayer* l = n.net->addPoolingNd(t, PoolingType::kAVERAGE, Dims2{3, 3});
                                if (l != nullptr) {
                                  l->setPaddingNd(Dims2{1, 1});
                                  l->setAverageCountExcludesPadding(exclude);
                                }
                                return l;
                              }));
  }
}

void addNormalizingCases(std::vector<LayerCase>& cases) {
  {
    // LRN over channels, window 3: y = x / (k + alpha / window * sum x^2) ^ beta.
    std::vector<double> const x = pseudo(4 * 2, 4);
    double const alpha = static_cast<float>(0.3), beta = static_cast<float>(0.75), k = static_cast<float>(1.5);
    std::vector<double> y(x.size());
    for (int c = 0; c < 4; ++c)
      for (int s = 0; s < 2; ++s) {
        double sq = 0;
        for (int d = std::max(0, c - 1); d <= std::min(3, c + 1); ++d) sq += x[d * 2 + s] * x[d * 2 + s];
        y[c * 2 + s] = x[c * 2 + s] / std::pow(k + alpha / 3 * sq, beta);
      }
    cases.push_back(unaryCase("LRN", {"x", kF, {1, 4, 1, 2}, x}, {"y", kF, {1, 4, 1, 2}, y},
                              [](Net& n, ITensor& in) { return n.net->addLRN(in, 3, 0.3F, 0.75F, 1.5F); }));
  }
  {
    // Softmax over axis 1 of [2, 5].
    std::vector<double> const x = pseudo(10, 5);
    cases.push_back(unaryCase("SoftMax", {"x", kF, {2, 5}, x}, {"y", kF, {2, 5}, softmaxRows(x, 2, 5)},
                              [](Net& n, ITensor& in) -> ILayer* {
                                ISoftMaxLayer* l = n.net->addSoftMax(in);
                                if (l != nullptr) l->setAxes(1U << 1);
                                return l;
                              }));
    // Axis 0 of [5, 2] (column softmax), via a transpose in the check.
    std::vector<double> t(10), yt(10);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 2; ++j) t[j * 5 + i] = x[i * 2 + j];
    std::vector<double> const st = softmaxRows(t, 2, 5);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 2; ++j) yt[i * 2 + j] = st[j * 5 + i];
    cases.push_back(
        unaryCase("SoftMaxAxis0", {"x", kF, {5, 2}, x}, {"y", kF, {5, 2}, yt}, [](Net& n, ITensor& in) -> ILayer* {
          ISoftMaxLayer* l = n.net->addSoftMax(in);
          if (l != nullptr) l->setAxes(1U << 0);
          return l;
        }));
  }
  {
    // RaggedSoftMax: x [1, 2, 4], bounds {2, 4}: softmax over the first bound elements, 0 after.
    std::vector<double> const x = pseudo(8, 6);
    std::vector<double> y(8, 0);
    std::vector<double> const r0 = softmaxRows({x[0], x[1]}, 1, 2), r1 = softmaxRows({x[4], x[5], x[6], x[7]}, 1, 4);
    y[0] = r0[0];
    y[1] = r0[1];
    for (int i = 0; i < 4; ++i) y[4 + i] = r1[i];
    LayerCase c;
    c.name = "RaggedSoftMax";
    c.define = [](Net& n) {
      ITensor* in = n.input("x", kF, {1, 2, 4});
      ITensor* bounds = n.input("bounds", kI32, {1, 2, 1});
      return n.out(n.net->addRaggedSoftMax(*in, *bounds), "y");
    };
    c.inputs = {{"x", kF, {1, 2, 4}, x}, {"bounds", kI32, {1, 2, 1}, {2, 4}}};
    c.outputs = {{"y", kF, {1, 2, 4}, y}};
    cases.push_back(c);
  }
  {
    // Layer normalization over the last axis of [2, 3]; scale/bias [1, 3].
    std::vector<double> const x = pseudo(6, 8), g = {1, 2, 0.5}, b = {0, 0.1, -1};
    std::vector<double> y(6);
    for (int r = 0; r < 2; ++r) {
      double m = 0, v = 0;
      for (int j = 0; j < 3; ++j) m += x[r * 3 + j] / 3;
      for (int j = 0; j < 3; ++j) v += (x[r * 3 + j] - m) * (x[r * 3 + j] - m) / 3;
      for (int j = 0; j < 3; ++j) y[r * 3 + j] = (x[r * 3 + j] - m) / std::sqrt(v + 1e-5) * g[j] + b[j];
    }
    LayerCase c;
    c.name = "NormalizationLayer";
    c.define = [=](Net& n) {
      ITensor* in = n.input("x", kF, {2, 3});
      INormalizationLayer* l = n.net->addNormalization(*in, *n.cf({1, 3}, g), *n.cf({1, 3}, b), 1U << 1);
      if (l == nullptr) return false;
      l->setEpsilon(1e-5F);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {2, 3}, x}};
    c.outputs = {{"y", kF, {2, 3}, y}};
    c.tol = 1e-4;
    cases.push_back(c);
  }
  {
    // A residual add read only by a layer normalization of [4, 8] (level 3 fuses it into the normalization's
    // residual input, which the plan then carries).
    std::vector<double> const x = pseudo(32, 21), r = pseudo(32, 22), g = pseudo(8, 23), b = pseudo(8, 24);
    std::vector<double> y(32);
    for (int row = 0; row < 4; ++row) {
      double m = 0, v = 0;
      for (int j = 0; j < 8; ++j) m += (x[row * 8 + j] + r[row * 8 + j]) / 8;
      for (int j = 0; j < 8; ++j) {
        double d = x[row * 8 + j] + r[row * 8 + j] - m;
        v += d * d / 8;
      }
      for (int j = 0; j < 8; ++j)
        y[row * 8 + j] = (x[row * 8 + j] + r[row * 8 + j] - m) / std::sqrt(v + 1e-5) * g[j] + b[j];
    }
    LayerCase c;
    c.name = "NormalizationAfterResidualAdd";
    c.define = [=](Net& n) {
      ITensor* in = n.input("x", kF, {4, 8});
      ITensor* res = n.input("r", kF, {4, 8});
      IElementWiseLayer* add = n.net->addElementWise(*in, *res, ElementWiseOperation::kSUM);
      if (add == nullptr) return false;
      INormalizationLayer* l = n.net->addNormalization(*add->getOutput(0), *n.cf({1, 8}, g), *n.cf({1, 8}, b), 1U << 1);
      if (l == nullptr) return false;
      l->setEpsilon(1e-5F);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {4, 8}, x}, {"r", kF, {4, 8}, r}};
    c.outputs = {{"y", kF, {4, 8}, y}};
    c.tol = 1e-4;
    c.level3Layers = 1;  // the add went into the normalization
    cases.push_back(c);
  }
  {
    // Instance normalization of [1, 2, 2, 2] over H, W; scale/bias per channel [1, 2, 1, 1].
    std::vector<double> const x = pseudo(8, 9), g = {2, -1}, b = {0.5, 0};
    std::vector<double> y(8);
    for (int ch = 0; ch < 2; ++ch) {
      double m = 0, v = 0;
      for (int i = 0; i < 4; ++i) m += x[ch * 4 + i] / 4;
      for (int i = 0; i < 4; ++i) v += (x[ch * 4 + i] - m) * (x[ch * 4 + i] - m) / 4;
      for (int i = 0; i < 4; ++i) y[ch * 4 + i] = (x[ch * 4 + i] - m) / std::sqrt(v + 1e-5) * g[ch] + b[ch];
    }
    LayerCase c;
    c.name = "NormalizationInstance";
    c.define = [=](Net& n) {
      ITensor* in = n.input("x", kF, {1, 2, 2, 2});
      INormalizationLayer* l =
          n.net->addNormalization(*in, *n.cf({1, 2, 1, 1}, g), *n.cf({1, 2, 1, 1}, b), (1U << 2) | (1U << 3));
      if (l == nullptr) return false;
      l->setEpsilon(1e-5F);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {1, 2, 2, 2}, x}};
    c.outputs = {{"y", kF, {1, 2, 2, 2}, y}};
    c.tol = 1e-4;
    cases.push_back(c);
  }
  {
    // Group normalization (V2: scale/bias per channel) of [1, 4, 1, 2] in 2 groups.
    std::vector<double> const x = pseudo(8, 10), g = {1, 2, 3, 4}, b = {0, 1, 0, -1};
    std::vector<double> y(8);
    for (int grp = 0; grp < 2; ++grp) {
      double m = 0, v = 0;
      for (int i = 0; i < 4; ++i) m += x[grp * 4 + i] / 4;
      for (int i = 0; i < 4; ++i) v += (x[grp * 4 + i] - m) * (x[grp * 4 + i] - m) / 4;
      for (int i = 0; i < 4; ++i) {
        int const ch = (grp * 4 + i) / 2;
        y[grp * 4 + i] = (x[grp * 4 + i] - m) / std::sqrt(v + 1e-5) * g[ch] + b[ch];
      }
    }
    LayerCase c;
    c.name = "NormalizationGroup";
    c.define = [=](Net& n) {
      ITensor* in = n.input("x", kF, {1, 4, 1, 2});
      INormalizationLayer* l =
          n.net->addNormalizationV2(*in, *n.cf({1, 4, 1, 1}, g), *n.cf({1, 4, 1, 1}, b), (1U << 2) | (1U << 3));
      if (l == nullptr) return false;
      l->setEpsilon(1e-5F);
      l->setNbGroups(2);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {1, 4, 1, 2}, x}};
    c.outputs = {{"y", kF, {1, 4, 1, 2}, y}};
    c.tol = 1e-4;
    cases.push_back(c);
  }
}

void addScaleCases(std::vector<LayerCase>& cases) {
  {
    // kCHANNEL on [1, 2, 2, 1]: y = (x * scale[c] + shift[c]) ^ power[c].
    std::vector<double> const x = {0.5, 1, 1.5, 2}, sh = {1, 2}, sc = {2, 3}, pw = {1, 2};
    std::vector<double> y(4);
    for (int i = 0; i < 4; ++i) y[i] = std::pow(x[i] * sc[i / 2] + sh[i / 2], pw[i / 2]);
    cases.push_back(
        unaryCase("ScaleChannel", {"x", kF, {1, 2, 2, 1}, x}, {"y", kF, {1, 2, 2, 1}, y}, [=](Net& n, ITensor& in) {
          return n.net->addScale(in, ScaleMode::kCHANNEL, n.weights(kF, sh), n.weights(kF, sc), n.weights(kF, pw));
        }));
  }
  {
    std::vector<double> const x = {-1, 0, 1, 2, 3, 4};
    cases.push_back(unaryCase("ScaleUniform", {"x", kF, {1, 3, 2}, x},
                              {"y", kF, {1, 3, 2}, mapv(x, [](double v) { return v * 0.5 - 2; })},
                              [](Net& n, ITensor& in) {
                                return n.net->addScale(in, ScaleMode::kUNIFORM, n.weights(kF, {-2}),
                                                       n.weights(kF, {0.5}), Weights{kF, nullptr, 0});
                              }));
  }
  {
    // kELEMENTWISE with channel axis 0 on [2, 2]: one shift per element.
    std::vector<double> const x = {1, 2, 3, 4}, sh = {10, 20, 30, 40};
    cases.push_back(unaryCase("ScaleElementwiseNd", {"x", kF, {2, 2}, x}, {"y", kF, {2, 2}, {11, 22, 33, 44}},
                              [=](Net& n, ITensor& in) {
                                return n.net->addScaleNd(in, ScaleMode::kELEMENTWISE, n.weights(kF, sh),
                                                         Weights{kF, nullptr, 0}, Weights{kF, nullptr, 0}, 0);
                              }));
  }
}

void addElementWiseCases(std::vector<LayerCase>& cases) {
  std::vector<double> const a = {-3, -1.5, 0.5, 2, 4, 7};  // [2, 3]
  std::vector<double> const b = {2, -0.5, 4};              // [1, 3], broadcast over rows
  struct E {
    char const* name;
    ElementWiseOperation op;
    std::function<double(double, double)> f;
    bool boolOut;
  };
  std::vector<E> const ops = {
      {"Sum", ElementWiseOperation::kSUM, [](double p, double q) { return p + q; }, false},
      {"Prod", ElementWiseOperation::kPROD, [](double p, double q) { return p * q; }, false},
      {"Max", ElementWiseOperation::kMAX, [](double p, double q) { return std::max(p, q); }, false},
      {"Min", ElementWiseOperation::kMIN, [](double p, double q) { return std::min(p, q); }, false},
      {"Sub", ElementWiseOperation::kSUB, [](double p, double q) { return p - q; }, false},
      {"Div", ElementWiseOperation::kDIV, [](double p, double q) { return p / q; }, false},
      {"FloorDiv", ElementWiseOperation::kFLOOR_DIV, [](double p, double q) { return std::floor(p / q); }, false},
      {"Equal", ElementWiseOperation::kEQUAL, [](double p, double q) { return p == q ? 1.0 : 0.0; }, true},
      {"Greater", ElementWiseOperation::kGREATER, [](double p, double q) { return p > q ? 1.0 : 0.0; }, true},
      {"Less", ElementWiseOperation::kLESS, [](double p, double q) { return p < q ? 1.0 : 0.0; }, true},
  };
  for (auto const& e : ops) {
    std::vector<double> y(6);
    for (int i = 0; i < 6; ++i) y[i] = e.f(a[i], b[i % 3]);
    ElementWiseOperation const op = e.op;
    LayerCase c;
    c.name = std::string("ElementWise") + e.name;
    c.define = [op](Net& n) {
      ITensor* x0 = n.input("a", kF, {2, 3});
      ITensor* x1 = n.input("b", kF, {1, 3});
      return n.out(n.net->addElementWise(*x0, *x1, op), "y");
    };
    // Equal needs a hit: b[2] = 4 meets a[4] = 4.
    c.inputs = {{"a", kF, {2, 3}, a}, {"b", kF, {1, 3}, b}};
    c.outputs = {{"y", e.boolOut ? kB : kF, {2, 3}, y}};
    cases.push_back(c);
  }
  {
    // kPOW on positive bases.
    std::vector<double> const p = {0.5, 2, 3, 1.5}, q = {2, -1, 0.5, 3};
    std::vector<double> y(4);
    for (int i = 0; i < 4; ++i) y[i] = std::pow(p[i], q[i]);
    LayerCase c;
    c.name = "ElementWisePow";
    c.define = [](Net& n) {
      return n.out(n.net->addElementWise(*n.input("a", kF, {4}), *n.input("b", kF, {4}), ElementWiseOperation::kPOW),
                   "y");
    };
    c.inputs = {{"a", kF, {4}, p}, {"b", kF, {4}, q}};
    c.outputs = {{"y", kF, {4}, y}};
    cases.push_back(c);
  }
  {
    // Logic on kBOOL.
    std::vector<double> const p = {0, 0, 1, 1}, q = {0, 1, 0, 1};
    struct L {
      char const* name;
      ElementWiseOperation op;
      std::vector<double> y;
    };
    for (auto const& l : std::vector<L>{{"And", ElementWiseOperation::kAND, {0, 0, 0, 1}},
                                        {"Or", ElementWiseOperation::kOR, {0, 1, 1, 1}},
                                        {"Xor", ElementWiseOperation::kXOR, {0, 1, 1, 0}}}) {
      ElementWiseOperation const op = l.op;
      LayerCase c;
      c.name = std::string("ElementWise") + l.name;
      c.define = [op](Net& n) {
        return n.out(n.net->addElementWise(*n.input("a", kB, {4}), *n.input("b", kB, {4}), op), "y");
      };
      c.inputs = {{"a", kB, {4}, p}, {"b", kB, {4}, q}};
      c.outputs = {{"y", kB, {4}, l.y}};
      cases.push_back(c);
    }
  }
  {
    // int32: kDIV truncates toward zero, kFLOOR_DIV floors, kSUM with a broadcast constant.
    std::vector<double> const p = {-7, 7, -6, 5}, q = {2, -2, 3, 5};
    struct I {
      char const* name;
      ElementWiseOperation op;
      std::vector<double> y;
    };
    for (auto const& t : std::vector<I>{{"DivInt32", ElementWiseOperation::kDIV, {-3, -3, -2, 1}},
                                        {"FloorDivInt32", ElementWiseOperation::kFLOOR_DIV, {-4, -4, -2, 1}},
                                        {"ProdInt32", ElementWiseOperation::kPROD, {-14, -14, -18, 25}}}) {
      ElementWiseOperation const op = t.op;
      LayerCase c;
      c.name = std::string("ElementWise") + t.name;
      c.define = [op](Net& n) {
        return n.out(n.net->addElementWise(*n.input("a", kI32, {4}), *n.input("b", kI32, {4}), op), "y");
      };
      c.inputs = {{"a", kI32, {4}, p}, {"b", kI32, {4}, q}};
      c.outputs = {{"y", kI32, {4}, t.y}};
      cases.push_back(c);
    }
  }
  {
    // Dynamic shape: [-1, 2] + constant [1, 2].
    LayerCase c;
    c.name = "ElementWiseSumDynamicShape";
    c.define = [](Net& n) {
      ITensor* x = n.input("x", kF, {-1, 2});
      n.profile("x", {1, 2}, {3, 2}, {6, 2});
      return n.out(n.net->addElementWise(*x, *n.cf({1, 2}, {10, 20}), ElementWiseOperation::kSUM), "y");
    };
    c.inputs = {{"x", kF, {5, 2}, iota(10)}};
    std::vector<double> y = iota(10);
    for (size_t i = 0; i < 10; ++i) y[i] += i % 2 ? 20 : 10;
    c.outputs = {{"y", kF, {5, 2}, y}};
    cases.push_back(c);
  }
}

void addUnaryCases(std::vector<LayerCase>& cases) {
  std::vector<double> const gen = {-1.5, -0.5, 0.3, 2.5};
  std::vector<double> const pos = {0.5, 1, 2, 9};
  std::vector<double> const unit = {-0.5, 0, 0.3, 0.9};
  struct U {
    char const* name;
    UnaryOperation op;
    std::vector<double> x;
    std::function<double(double)> f;
  };
  std::vector<U> const ops = {
      {"Exp", UnaryOperation::kEXP, gen, [](double v) { return std::exp(v); }},
      {"Log", UnaryOperation::kLOG, pos, [](double v) { return std::log(v); }},
      {"Sqrt", UnaryOperation::kSQRT, pos, [](double v) { return std::sqrt(v); }},
      {"Recip", UnaryOperation::kRECIP, gen, [](double v) { return 1 / v; }},
      {"Abs", UnaryOperation::kABS, gen, [](double v) { return std::fabs(v); }},
      {"Neg", UnaryOperation::kNEG, gen, [](double v) { return -v; }},
      {"Sin", UnaryOperation::kSIN, gen, [](double v) { return std::sin(v); }},
      {"Cos", UnaryOperation::kCOS, gen, [](double v) { return std::cos(v); }},
      {"Tan", UnaryOperation::kTAN, unit, [](double v) { return std::tan(v); }},
      {"Sinh", UnaryOperation::kSINH, gen, [](double v) { return std::sinh(v); }},
      {"Cosh", UnaryOperation::kCOSH, gen, [](double v) { return std::cosh(v); }},
      {"Asin", UnaryOperation::kASIN, unit, [](double v) { return std::asin(v); }},
      {"Acos", UnaryOperation::kACOS, unit, [](double v) { return std::acos(v); }},
      {"Atan", UnaryOperation::kATAN, gen, [](double v) { return std::atan(v); }},
      {"Asinh", UnaryOperation::kASINH, gen, [](double v) { return std::asinh(v); }},
      {"Acosh", UnaryOperation::kACOSH, {1, 1.5, 2, 10}, [](double v) { return std::acosh(v); }},
      {"Atanh", UnaryOperation::kATANH, unit, [](double v) { return std::atanh(v); }},
      {"Ceil", UnaryOperation::kCEIL, gen, [](double v) { return std::ceil(v); }},
      {"Floor", UnaryOperation::kFLOOR, gen, [](double v) { return std::floor(v); }},
      {"Erf", UnaryOperation::kERF, gen, [](double v) { return std::erf(v); }},
      {"Sign", UnaryOperation::kSIGN, {-2, 0, 0.5, 3}, [](double v) { return v > 0   ? 1.0
                                                                             : v < 0 ? -1.0
                                                                                     : 0.0; }},
      {"Round", UnaryOperation::kROUND, {-2.5, -0.5, 0.5, 1.5}, [](double v) { return std::nearbyint(v); }},
  };
  for (auto const& u : ops) {
    UnaryOperation const op = u.op;
    cases.push_back(unaryCase(std::string("Unary") + u.name, {"x", kF, {2, 2}, u.x}, {"y", kF, {2, 2}, mapv(u.x, u.f)},
                              [op](Net& n, ITensor& in) { return n.net->addUnary(in, op); }));
  }
  double const inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  cases.push_back(unaryCase("UnaryIsInf", {"x", kF, {4}, {inf, -inf, nan, 1}}, {"y", kB, {4}, {1, 1, 0, 0}},
                            [](Net& n, ITensor& in) { return n.net->addUnary(in, UnaryOperation::kISINF); }));
  cases.push_back(unaryCase("UnaryIsNan", {"x", kF, {4}, {inf, -inf, nan, 1}}, {"y", kB, {4}, {0, 0, 1, 0}},
                            [](Net& n, ITensor& in) { return n.net->addUnary(in, UnaryOperation::kISNAN); }));
  cases.push_back(unaryCase("UnaryNot", {"x", kB, {3}, {0, 1, 0}}, {"y", kB, {3}, {1, 0, 1}},
                            [](Net& n, ITensor& in) { return n.net->addUnary(in, UnaryOperation::kNOT); }));
  cases.push_back(unaryCase("UnaryAbsInt32", {"x", kI32, {3}, {-5, 0, 7}}, {"y", kI32, {3}, {5, 0, 7}},
                            [](Net& n, ITensor& in) { return n.net->addUnary(in, UnaryOperation::kABS); }));
  cases.push_back(unaryCase(
      "UnaryExpFloat64", {"x", DataType::kFLOAT64, {3}, {-1, 0, 1}},
      {"y", DataType::kFLOAT64, {3}, {std::exp(-1.0), 1, std::exp(1.0)}},
      [](Net& n, ITensor& in) { return n.net->addUnary(in, UnaryOperation::kEXP); }, 1e-12));
  // float64 inside the network: float -> cast to float64 -> exp -> float64 output (exact to double precision).
  cases.push_back(unaryCase(
      "UnaryExpFloat64ViaCast", {"x", kF, {3}, {-1, 0, 0.5}},
      {"y", DataType::kFLOAT64, {3}, {std::exp(-1.0), 1, std::exp(0.5)}},
      [](Net& n, ITensor& in) -> ILayer* {
        ICastLayer* c = n.net->addCast(in, DataType::kFLOAT64);
        return c == nullptr ? nullptr : n.net->addUnary(*c->getOutput(0), UnaryOperation::kEXP);
      },
      1e-14));
}

void addShapeOpCases(std::vector<LayerCase>& cases) {
  {
    // Concatenation along axis 0 ([1, 2] + [2, 2]) and along axis 1, with int32 too.
    LayerCase c;
    c.name = "Concatenation";
    c.define = [](Net& n) {
      ITensor* in[] = {n.input("a", kF, {1, 2}), n.input("b", kF, {2, 2})};
      IConcatenationLayer* l = n.net->addConcatenation(in, 2);
      if (l == nullptr) return false;
      l->setAxis(0);
      return n.out(l, "y");
    };
    c.inputs = {{"a", kF, {1, 2}, {1, 2}}, {"b", kF, {2, 2}, {3, 4, 5, 6}}};
    c.outputs = {{"y", kF, {3, 2}, {1, 2, 3, 4, 5, 6}}};
    cases.push_back(c);
    LayerCase d;
    d.name = "ConcatenationInt32Axis1";
    d.define = [](Net& n) {
      ITensor* in[] = {n.input("a", kI32, {2, 1}), n.input("b", kI32, {2, 2}), n.ci32({2, 1}, {-1, -2})};
      IConcatenationLayer* l = n.net->addConcatenation(in, 3);
      if (l == nullptr) return false;
      l->setAxis(-1 + 2);
      return n.out(l, "y");
    };
    d.inputs = {{"a", kI32, {2, 1}, {1, 2}}, {"b", kI32, {2, 2}, {3, 4, 5, 6}}};
    d.outputs = {{"y", kI32, {2, 4}, {1, 3, 4, -1, 2, 5, 6, -2}}};
    cases.push_back(d);
  }
  {
    // Padding: pre {1, 0}, post {0, 2} on the two innermost axes; negative post padding crops.
    std::vector<double> const x = {1, 2, 3, 4};
    cases.push_back(unaryCase("Padding", {"x", kF, {1, 1, 2, 2}, x},
                              {"y", kF, {1, 1, 3, 4}, {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}}, [](Net& n, ITensor& in) {
                                return n.net->addPaddingNd(in, Dims2{1, 0}, Dims2{0, 2});
                              }));
    cases.push_back(unaryCase("PaddingNegativeCrops", {"x", kF, {1, 1, 2, 3}, iota(6)},
                              {"y", kF, {1, 1, 2, 2}, {1, 2, 4, 5}}, [](Net& n, ITensor& in) {
                                return n.net->addPaddingNd(in, Dims2{0, -1}, Dims2{0, 0});
                              }));
  }
  {
    // Shuffle: first transpose {2, 0, 1} of [2, 3, 4], reshape {4, 6}, second transpose {1, 0}.
    std::vector<double> const x = iota(24);
    std::vector<double> t(24), y(24);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) t[(k * 2 + i) * 3 + j] = x[(i * 3 + j) * 4 + k];  // t: [4, 2, 3]
    for (int r = 0; r < 4; ++r)
      for (int q = 0; q < 6; ++q) y[q * 4 + r] = t[r * 6 + q];
    cases.push_back(
        unaryCase("Shuffle", {"x", kF, {2, 3, 4}, x}, {"y", kF, {6, 4}, y}, [](Net& n, ITensor& in) -> ILayer* {
          IShuffleLayer* l = n.net->addShuffle(in);
          if (l != nullptr) {
            l->setFirstTranspose(Permutation{{2, 0, 1}});
            l->setReshapeDimensions(Dims2{4, 6});
            l->setSecondTranspose(Permutation{{1, 0}});
          }
          return l;
        }));
    cases.push_back(unaryCase("ShuffleZeroPlaceholderInt64", {"x", kI64, {2, 3, 2}, iota(12)},
                              {"y", kI64, {2, 6}, iota(12)}, [](Net& n, ITensor& in) -> ILayer* {
                                IShuffleLayer* l = n.net->addShuffle(in);
                                if (l != nullptr) l->setReshapeDimensions(Dims2{0, -1});
                                return l;
                              }));
    // Dynamic reshape: the new shape comes from Shape(x) of a dynamic input, [N, 4] -> [N * 2, 2].
    LayerCase c;
    c.name = "ShuffleDynamicReshape";
    c.define = [](Net& n) {
      ITensor* xd = n.input("x", kF, {-1, 4});
      n.profile("x", {1, 4}, {2, 4}, {4, 4});
      ITensor* shape = n.net->addShape(*xd)->getOutput(0);
      ITensor* twice = n.net->addElementWise(*shape, *n.ci64({2}, {2, 1}), ElementWiseOperation::kPROD)->getOutput(0);
      ITensor* newShape =
          n.net->addElementWise(*twice, *n.ci64({2}, {1, 2}), ElementWiseOperation::kFLOOR_DIV)->getOutput(0);
      IShuffleLayer* l = n.net->addShuffle(*xd);
      l->setInput(1, *newShape);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {3, 4}, iota(12)}};
    c.outputs = {{"y", kF, {6, 2}, iota(12)}};
    cases.push_back(c);
  }
  {
    // Squeeze {0, -1} of [1, 3, 1]; unsqueeze {0, 2} of [3] (positions in the output).
    cases.push_back(
        unaryCase("Squeeze", {"x", kF, {1, 3, 1}, {1, 2, 3}}, {"y", kF, {3}, {1, 2, 3}}, [](Net& n, ITensor& in) {
          return n.net->addSqueeze(in, *n.ci64({2}, {0, -1}));
        }));
    cases.push_back(
        unaryCase("Unsqueeze", {"x", kI32, {3}, {1, 2, 3}}, {"y", kI32, {1, 3, 1}, {1, 2, 3}}, [](Net& n, ITensor& in) {
          return n.net->addUnsqueeze(in, *n.ci32({2}, {0, 2}));
        }));
  }
  {
    // Identity (float64) and Constant.
    cases.push_back(unaryCase(
        "IdentityFloat64", {"x", DataType::kFLOAT64, {3}, {1e-300, -2.5, 1e300}},
        {"y", DataType::kFLOAT64, {3}, {1e-300, -2.5, 1e300}},
        [](Net& n, ITensor& in) { return n.net->addIdentity(in); }, 0));
      LayerCase c;
    c.name = "Constant";
    c.define = [](Net& n) {
      ITensor* x = n.input("x", kF, {2, 2});
      return n.out(n.cf({2, 2}, {1, -2, 3, -4}), "k") &&
             n.out(n.net->addElementWise(*x, *n.cf({1, 1}, {0.5}), ElementWiseOperation::kSUM), "y");
    };
    c.inputs = {{"x", kF, {2, 2}, {0, 1, 2, 3}}};
    c.outputs = {{"k", kF, {2, 2}, {1, -2, 3, -4}}, {"y", kF, {2, 2}, {0.5, 1.5, 2.5, 3.5}}};
    cases.push_back(c);
  }
  {
    // Shape of a dynamic input, run at [5, 3].
    LayerCase c;
    c.name = "ShapeDynamic";
    c.define = [](Net& n) {
      ITensor* x = n.input("x", kF, {-1, 3});
      n.profile("x", {1, 3}, {2, 3}, {8, 3});
      return n.out(n.net->addShape(*x), "s") && n.out(n.net->addIdentity(*x), "y");
    };
    c.inputs = {{"x", kF, {5, 3}, iota(15)}};
    c.outputs = {{"s", kI64, {2}, {5, 3}}, {"y", kF, {5, 3}, iota(15)}};
    cases.push_back(c);
  }
  {
    // Cast: float -> int32 truncates toward zero; float -> half; float -> bool; int64 -> float.
    std::vector<double> const x = {-1.7, 2.7, 0, 3};
    cases.push_back(unaryCase("CastFloatToInt32", {"x", kF, {4}, x}, {"y", kI32, {4}, {-1, 2, 0, 3}},
                              [](Net& n, ITensor& in) { return n.net->addCast(in, kI32); }));
    cases.push_back(unaryCase(
        "CastFloatToHalf", {"x", kF, {4}, {1.0 / 3, 65504, -2, 0.1}},
        {"y", DataType::kHALF, {4}, {halfToFloat(floatToHalf(1.0F / 3)), 65504, -2, halfToFloat(floatToHalf(0.1F))}},
        [](Net& n, ITensor& in) { return n.net->addCast(in, DataType::kHALF); }, 0));
    cases.push_back(unaryCase("CastFloatToBool", {"x", kF, {4}, {0, 0.5, -2, 0}}, {"y", kB, {4}, {0, 1, 1, 0}},
                              [](Net& n, ITensor& in) { return n.net->addCast(in, kB); }));
    cases.push_back(unaryCase(
        "CastInt64ToFloat", {"x", kI64, {3}, {-5, 1LL << 40, 7}},
        {"y", kF, {3}, {-5, static_cast<double>(1LL << 40), 7}},
        [](Net& n, ITensor& in) { return n.net->addCast(in, kF); }, 0));
  }
}

void addSliceCases(std::vector<LayerCase>& cases) {
  {
    // Static: rows 0 and 2, columns 1..2 of a [3, 4].
    cases.push_back(unaryCase("SliceStatic", {"x", kF, {3, 4}, iota(12)}, {"y", kF, {2, 2}, {1, 2, 9, 10}},
                              [](Net& n, ITensor& in) {
                                return n.net->addSlice(in, Dims2{0, 1}, Dims2{2, 2}, Dims2{2, 1});
                              }));
    // Negative stride: the row reversed.
    cases.push_back(unaryCase("SliceNegativeStride", {"x", kI32, {1, 4}, {1, 2, 3, 4}},
                              {"y", kI32, {1, 4}, {4, 3, 2, 1}}, [](Net& n, ITensor& in) {
                                return n.net->addSlice(in, Dims2{0, 3}, Dims2{1, 4}, Dims2{1, -1});
                              }));
  }
  {
    // Modes: start -2, size 8 over a row of 4 values {10, 11, 12, 13}.
    std::vector<double> const x = {10, 11, 12, 13};
    struct M {
      char const* name;
      SampleMode mode;
      std::vector<double> y;
    };
    for (auto const& m : std::vector<M>{{"Wrap", SampleMode::kWRAP, {12, 13, 10, 11, 12, 13, 10, 11}},
                                        {"Clamp", SampleMode::kCLAMP, {10, 10, 10, 11, 12, 13, 13, 13}},
                                        {"Fill", SampleMode::kFILL, {0, 0, 10, 11, 12, 13, 0, 0}},
                                        {"Reflect", SampleMode::kREFLECT, {12, 11, 10, 11, 12, 13, 12, 11}}}) {
      SampleMode const mode = m.mode;
      cases.push_back(unaryCase(std::string("SliceMode") + m.name, {"x", kF, {1, 4}, x}, {"y", kF, {1, 8}, m.y},
                                [mode](Net& n, ITensor& in) -> ILayer* {
                                  ISliceLayer* l = n.net->addSlice(in, Dims2{0, -2}, Dims2{1, 8}, Dims2{1, 1});
                                  if (l != nullptr) l->setMode(mode);
                                  return l;
                                }));
    }
    // kFILL with a fill value given as input 4.
    cases.push_back(unaryCase("SliceModeFillValue", {"x", kF, {1, 4}, x}, {"y", kF, {1, 6}, {12, 13, -1, -1, -1, -1}},
                              [](Net& n, ITensor& in) -> ILayer* {
                                ISliceLayer* l = n.net->addSlice(in, Dims2{0, 2}, Dims2{1, 6}, Dims2{1, 1});
                                if (l != nullptr) {
                                  l->setMode(SampleMode::kFILL);
                                  l->setInput(4, *n.cf({}, {-1}));
                                }
                                return l;
                              }));
  }
  {
    // Dynamic: x [-1, 4]; size = Shape(x) + {0, -2} (a shape tensor), start {0, 1} => columns 1..2 of every row.
    LayerCase c;
    c.name = "SliceDynamicShapeTensor";
    c.define = [](Net& n) {
      ITensor* x = n.input("x", kF, {-1, 4});
      n.profile("x", {1, 4}, {2, 4}, {6, 4});
      ITensor* shape = n.net->addShape(*x)->getOutput(0);
      ITensor* size = n.net->addElementWise(*shape, *n.ci64({2}, {0, -2}), ElementWiseOperation::kSUM)->getOutput(0);
      ISliceLayer* l = n.net->addSlice(*x, Dims2{0, 1}, Dims2{1, 1}, Dims2{1, 1});
      if (l == nullptr) return false;
      l->setInput(2, *size);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {3, 4}, iota(12)}};
    c.outputs = {{"y", kF, {3, 2}, {1, 2, 5, 6, 9, 10}}};
    cases.push_back(c);
  }
  {
    // Axes: slice only axis 1 (start 1, size 2) of [2, 3]; start/size/stride then have one entry per axis.
    cases.push_back(unaryCase("SliceAxes", {"x", kF, {2, 3}, iota(6)}, {"y", kF, {2, 2}, {1, 2, 4, 5}},
                              [](Net& n, ITensor& in) -> ILayer* {
                                ISliceLayer* l = n.net->addSlice(in, Dims2{0, 0}, Dims2{2, 3}, Dims2{1, 1});
                                if (l != nullptr) {
                                  l->setAxes(dimsOf({1}));
                                  l->setStart(dimsOf({1}));
                                  l->setSize(dimsOf({2}));
                                  l->setStride(dimsOf({1}));
                                }
                                return l;
                              }));
  }
}

void addReduceCases(std::vector<LayerCase>& cases) {
  std::vector<double> const x = pseudo(24, 11);  // [2, 3, 4], reduce axes 1 and 2
  struct R {
    char const* name;
    ReduceOperation op;
  };
  for (auto const& r : std::vector<R>{{"Sum", ReduceOperation::kSUM},
                                      {"Prod", ReduceOperation::kPROD},
                                      {"Max", ReduceOperation::kMAX},
                                      {"Min", ReduceOperation::kMIN},
                                      {"Avg", ReduceOperation::kAVG}}) {
    std::vector<double> y;
    for (int b = 0; b < 2; ++b) {
      double s = 0, p = 1, mx = -INFINITY, mn = INFINITY;
      for (int i = 0; i < 12; ++i) {
        double const v = x[b * 12 + i];
        s += v;
        p *= v;
        mx = std::max(mx, v);
        mn = std::min(mn, v);
      }
      switch (r.op) {
        case ReduceOperation::kSUM:
          y.push_back(s);
          break;
        case ReduceOperation::kPROD:
          y.push_back(p);
          break;
        case ReduceOperation::kMAX:
          y.push_back(mx);
          break;
        case ReduceOperation::kMIN:
          y.push_back(mn);
          break;
        case ReduceOperation::kAVG:
          y.push_back(s / 12);
          break;
      }
    }
    ReduceOperation const op = r.op;
    cases.push_back(unaryCase(std::string("Reduce") + r.name, {"x", kF, {2, 3, 4}, x}, {"y", kF, {2, 1, 1}, y},
                              [op](Net& n, ITensor& in) { return n.net->addReduce(in, op, 0b110U, true); }));
  }
  cases.push_back(
      unaryCase("ReduceSumInt32NoKeepDims", {"x", kI32, {2, 3}, {1, -2, 3, 4, 5, -6}}, {"y", kI32, {3}, {5, 3, -3}},
                [](Net& n, ITensor& in) { return n.net->addReduce(in, ReduceOperation::kSUM, 1U, false); }));
  {
    LayerCase c;
    c.name = "ReduceMaxDynamicShape";
    c.define = [](Net& n) {
      ITensor* xd = n.input("x", kF, {-1, 3});
      n.profile("x", {1, 3}, {2, 3}, {5, 3});
      return n.out(n.net->addReduce(*xd, ReduceOperation::kMAX, 1U, false), "y");
    };
    c.inputs = {{"x", kF, {4, 3}, {1, 9, -3, 4, 5, 6, -7, 8, 2, 0, 0, 10}}};
    c.outputs = {{"y", kF, {3}, {4, 9, 10}}};
    cases.push_back(c);
  }
}

void addIndexCases(std::vector<LayerCase>& cases) {
  {
    // TopK kMAX k=2 on the last axis of [2, 5] (int32 indices) and kMIN with int64 indices.
    std::vector<double> const x = {3, 1, 4, 1.5, 9, 2, 6, 5, 3.5, 5.5};
    LayerCase c;
    c.name = "TopKMax";
    c.define = [](Net& n) {
      ITopKLayer* l = n.net->addTopK(*n.input("x", kF, {2, 5}), TopKOperation::kMAX, 2, 1U << 1);
      return n.out(l, "v", 0) && n.out(l, "i", 1);
    };
    c.inputs = {{"x", kF, {2, 5}, x}};
    c.outputs = {{"v", kF, {2, 2}, {9, 4, 6, 5.5}}, {"i", kI32, {2, 2}, {4, 2, 1, 4}}};
    cases.push_back(c);
    LayerCase d;
    d.name = "TopKMinInt64Indices";
    d.define = [](Net& n) {
      ITopKLayer* l = n.net->addTopK(*n.input("x", kF, {2, 5}), TopKOperation::kMIN, 3, 1U << 1, kI64);
      return n.out(l, "v", 0) && n.out(l, "i", 1);
    };
    d.inputs = {{"x", kF, {2, 5}, x}};
    d.outputs = {{"v", kF, {2, 3}, {1, 1.5, 3, 2, 3.5, 5}}, {"i", kI64, {2, 3}, {1, 3, 0, 0, 3, 2}}};
    cases.push_back(d);
  }
  {
    // Gather kDEFAULT: rows {2, 0, -1} of [3, 2] along axis 0; along axis 1 with 0-D index.
    LayerCase c;
    c.name = "GatherDefault";
    c.define = [](Net& n) {
      ITensor* data = n.input("x", kF, {3, 2});
      return n.out(n.net->addGather(*data, *n.input("idx", kI32, {3}), 0), "y") &&
             n.out(n.net->addGather(*data, *n.ci64({}, {1}), 1), "col");
    };
    c.inputs = {{"x", kF, {3, 2}, {1, 2, 3, 4, 5, 6}}, {"idx", kI32, {3}, {2, 0, -1}}};
    c.outputs = {{"y", kF, {3, 2}, {5, 6, 1, 2, 5, 6}}, {"col", kF, {3}, {2, 4, 6}}};
    cases.push_back(c);
  }
  {
    // Gather kELEMENT on axis 1: y[i][j] = x[i][idx[i][j]].
    LayerCase c;
    c.name = "GatherElement";
    c.define = [](Net& n) {
      IGatherLayer* l =
          n.net->addGatherV2(*n.input("x", kF, {2, 3}), *n.input("idx", kI32, {2, 2}), GatherMode::kELEMENT);
      if (l == nullptr) return false;
      l->setGatherAxis(1);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {2, 3}, {1, 2, 3, 4, 5, 6}}, {"idx", kI32, {2, 2}, {2, 0, 1, 1}}};
    c.outputs = {{"y", kF, {2, 2}, {3, 1, 5, 5}}};
    cases.push_back(c);
  }
  {
    // Gather kND: indices [2, 2] address rows of x [2, 2, 2]; with 1 element-wise (batch) dim too.
    LayerCase c;
    c.name = "GatherND";
    c.define = [](Net& n) {
      ITensor* x = n.input("x", kF, {2, 2, 2});
      IGatherLayer* l = n.net->addGatherV2(*x, *n.input("idx", kI32, {2, 2}), GatherMode::kND);
      IGatherLayer* b = n.net->addGatherV2(*x, *n.ci32({2, 1}, {1, 0}), GatherMode::kND);
      if (l == nullptr || b == nullptr) return false;
      b->setNbElementWiseDims(1);
      return n.out(l, "y") && n.out(b, "yb");
    };
    c.inputs = {{"x", kF, {2, 2, 2}, iota(8)}, {"idx", kI32, {2, 2}, {1, 0, 0, 1}}};
    // y: x[1][0] = {4, 5}, x[0][1] = {2, 3}; yb: batch 0 -> x[0][1] = {2, 3}, batch 1 -> x[1][0] = {4, 5}.
    c.outputs = {{"y", kF, {2, 2}, {4, 5, 2, 3}}, {"yb", kF, {2, 2}, {2, 3, 4, 5}}};
    cases.push_back(c);
  }
  {
    // Scatter kELEMENT on axis 1, then with kADD reduction and duplicate indices; kND.
    LayerCase c;
    c.name = "ScatterElement";
    c.define = [](Net& n) {
      IScatterLayer* l = n.net->addScatter(*n.input("x", kF, {2, 3}), *n.ci32({1, 2}, {2, 0}), *n.cf({1, 2}, {5, 6}),
                                           ScatterMode::kELEMENT);
      if (l == nullptr) return false;
      l->setAxis(1);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {2, 3}, iota(6)}};
    c.outputs = {{"y", kF, {2, 3}, {6, 1, 5, 3, 4, 5}}};
    cases.push_back(c);
    LayerCase d;
    d.name = "ScatterElementAddReduction";
    d.define = [](Net& n) {
      IScatterLayer* l = n.net->addScatter(*n.input("x", kF, {2, 3}), *n.ci64({2, 2}, {0, 0, 2, 2}),
                                           *n.cf({2, 2}, {1, 2, 10, 20}), ScatterMode::kELEMENT);
      if (l == nullptr) return false;
      l->setAxis(1);
      l->setReduction(ScatterReduction::kADD);
      return n.out(l, "y");
    };
    d.inputs = {{"x", kF, {2, 3}, iota(6)}};
    d.outputs = {{"y", kF, {2, 3}, {3, 1, 2, 3, 4, 35}}};
    cases.push_back(d);
    LayerCase e;
    e.name = "ScatterNDInt32";
    e.define = [](Net& n) {
      return n.out(n.net->addScatter(*n.input("x", kI32, {4}), *n.ci32({2, 1}, {3, 1}), *n.input("u", kI32, {2}),
                                     ScatterMode::kND),
                   "y");
    };
    e.inputs = {{"x", kI32, {4}, {1, 2, 3, 4}}, {"u", kI32, {2}, {-9, -8}}};
    e.outputs = {{"y", kI32, {4}, {1, -8, 3, -9}}};
    cases.push_back(e);
  }
  {
    // OneHot: depth 3, axis -1, index -1 means depth - 1; values {off, on} = {-1, 5}.
    LayerCase c;
    c.name = "OneHot";
    c.define = [](Net& n) {
      return n.out(n.net->addOneHot(*n.input("i", kI32, {3}), *n.cf({2}, {-1, 5}), *n.ci32({}, {3}), -1), "y");
    };
    c.inputs = {{"i", kI32, {3}, {0, 2, -1}}};
    c.outputs = {{"y", kF, {3, 3}, {5, -1, -1, -1, -1, 5, -1, -1, 5}}};
    cases.push_back(c);
  }
  {
    // NonZero (int32 indices) through an IOutputAllocator.
    LayerCase c;
    c.name = "NonZero";
    c.define = [](Net& n) { return n.out(n.net->addNonZero(*n.input("x", kI32, {2, 3}), kI32), "idx"); };
    c.inputs = {{"x", kI32, {2, 3}, {0, -1, 0, 0, 0, 7}}};
    c.outputs = {{"idx", kI32, {2, 2}, {0, 1, 1, 2}}};
    c.allocated = {"idx"};
    cases.push_back(c);
  }
  {
    // Cumulative sum along axis 1 of [2, 3]; exclusive + reverse.
    std::vector<double> const x = {1, 2, 3, 4, 5, 6};
    LayerCase c;
    c.name = "CumulativeSum";
    c.define = [](Net& n) {
      ITensor* x0 = n.input("x", kF, {2, 3});
      return n.out(n.net->addCumulative(*x0, *n.ci32({}, {1}), CumulativeOperation::kSUM, false, false), "y") &&
             n.out(n.net->addCumulative(*x0, *n.ci64({}, {-1}), CumulativeOperation::kSUM, true, true), "yer");
    };
    c.inputs = {{"x", kF, {2, 3}, x}};
    c.outputs = {{"y", kF, {2, 3}, {1, 3, 6, 4, 9, 15}}, {"yer", kF, {2, 3}, {5, 3, 0, 11, 6, 0}}};
    cases.push_back(c);
  }
  {
    // ReverseSequence: x[t][b] with sequence axis 0, batch axis 1; lengths {3, 2}.
    LayerCase c;
    c.name = "ReverseSequence";
    c.define = [](Net& n) {
      return n.out(n.net->addReverseSequence(*n.input("x", kF, {3, 2}), *n.ci32({2}, {3, 2})), "y");
    };
    c.inputs = {{"x", kF, {3, 2}, iota(6)}};
    c.outputs = {{"y", kF, {3, 2}, {4, 3, 2, 1, 0, 5}}};
    cases.push_back(c);
  }
  {
    // Select with a broadcast else branch.
    LayerCase c;
    c.name = "Select";
    c.define = [](Net& n) {
      return n.out(n.net->addSelect(*n.input("c", kB, {2, 2}), *n.input("t", kF, {2, 2}), *n.cf({1, 2}, {-1, -2})),
                   "y");
    };
    c.inputs = {{"c", kB, {2, 2}, {1, 0, 0, 1}}, {"t", kF, {2, 2}, {10, 20, 30, 40}}};
    c.outputs = {{"y", kF, {2, 2}, {10, -2, -1, 40}}};
    cases.push_back(c);
  }
}

void addMathCases(std::vector<LayerCase>& cases) {
  std::vector<double> const a = pseudo(6, 12), b = pseudo(6, 13);  // [2, 3], [3, 2]
  std::vector<double> ab(4, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) ab[i * 2 + j] += a[i * 3 + k] * b[k * 2 + j];
  {
    LayerCase c;
    c.name = "MatrixMultiply";
    c.define = [](Net& n) {
      return n.out(n.net->addMatrixMultiply(*n.input("a", kF, {2, 3}), MatrixOperation::kNONE,
                                            *n.input("b", kF, {3, 2}), MatrixOperation::kNONE),
                   "y");
    };
    c.inputs = {{"a", kF, {2, 3}, a}, {"b", kF, {3, 2}, b}};
    c.outputs = {{"y", kF, {2, 2}, ab}};
    cases.push_back(c);
  }
  {
    // Transposed operands: a^T given as [3, 2], b^T given as [2, 3]; batch broadcast [2, 3, 2] x [1, 2, 3].
    std::vector<double> at(6), bt(6);
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 3; ++k) at[k * 2 + i] = a[i * 3 + k];
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 2; ++j) bt[j * 3 + k] = b[k * 2 + j];
    std::vector<double> at2 = at;
    at2.insert(at2.end(), at.begin(), at.end());
    for (size_t i = 6; i < 12; ++i) at2[i] *= 2;
    std::vector<double> y = ab;
    for (double v : ab) y.push_back(2 * v);
    LayerCase c;
    c.name = "MatrixMultiplyTransposeBatched";
    c.define = [](Net& n) {
      return n.out(n.net->addMatrixMultiply(*n.input("a", kF, {2, 3, 2}), MatrixOperation::kTRANSPOSE,
                                            *n.input("b", kF, {1, 2, 3}), MatrixOperation::kTRANSPOSE),
                   "y");
    };
    c.inputs = {{"a", kF, {2, 3, 2}, at2}, {"b", kF, {1, 2, 3}, bt}};
    c.outputs = {{"y", kF, {2, 2, 2}, y}};
    cases.push_back(c);
  }
  {
    // Matrix x vector: [2, 3] x [3] -> [2].
    std::vector<double> const v = {1, -1, 2};
    std::vector<double> y = {a[0] - a[1] + 2 * a[2], a[3] - a[4] + 2 * a[5]};
    LayerCase c;
    c.name = "MatrixMultiplyVector";
    c.define = [](Net& n) {
      return n.out(n.net->addMatrixMultiply(*n.input("a", kF, {2, 3}), MatrixOperation::kNONE, *n.input("v", kF, {3}),
                                            MatrixOperation::kVECTOR),
                   "y");
    };
    c.inputs = {{"a", kF, {2, 3}, a}, {"v", kF, {3}, v}};
    c.outputs = {{"y", kF, {2}, y}};
    cases.push_back(c);
  }
  {
    // Einsum: a matrix product and a transpose-sum.
    LayerCase c;
    c.name = "Einsum";
    c.define = [](Net& n) {
      ITensor* in[] = {n.input("a", kF, {2, 3}), n.input("b", kF, {3, 2})};
      ITensor* one[] = {in[0]};
      return n.out(n.net->addEinsum(in, 2, "ij,jk->ik"), "y") && n.out(n.net->addEinsum(one, 1, "ij->j"), "colsum");
    };
    c.inputs = {{"a", kF, {2, 3}, a}, {"b", kF, {3, 2}, b}};
    c.outputs = {{"y", kF, {2, 2}, ab}, {"colsum", kF, {3}, {a[0] + a[3], a[1] + a[4], a[2] + a[5]}}};
    cases.push_back(c);
  }
  {
    // ParametricReLU with a per-channel slope [1, 2, 1].
    std::vector<double> const x = {-2, 3, -4, 5};
    LayerCase c;
    c.name = "ParametricReLU";
    c.define = [](Net& n) {
      return n.out(n.net->addParametricReLU(*n.input("x", kF, {1, 2, 2}), *n.cf({1, 2, 1}, {0.1, 0.5})), "y");
    };
    c.inputs = {{"x", kF, {1, 2, 2}, x}};
    c.outputs = {{"y", kF, {1, 2, 2}, {-0.2, 3, -2, 5}}};
    cases.push_back(c);
  }
  {
    // Fill kLINSPACE: alpha (0-D) + 10 * i + 1 * j; float (static attributes, scalar beta on every axis) and int32.
    LayerCase c;
    c.name = "FillLinspace";
    c.define = [](Net& n) {
      IFillLayer* f = n.net->addFill(Dims2{2, 3}, FillOperation::kLINSPACE, kF);
      IFillLayer* g = n.net->addFill(Dims2{2, 3}, FillOperation::kLINSPACE, kI32);
      if (f == nullptr || g == nullptr) return false;
      f->setInput(1, *n.cf({}, {0.5}));
      f->setInput(2, *n.cf({2}, {10, 1}));
      g->setAlpha(-3);
      g->setBeta(2);
      return n.out(f, "y") && n.out(g, "yi") && n.out(n.net->addIdentity(*n.input("x", kF, {1})), "x_copy");
    };
    c.inputs = {{"x", kF, {1}, {1}}};
    c.outputs = {{"y", kF, {2, 3}, {0.5, 1.5, 2.5, 10.5, 11.5, 12.5}},
                 {"yi", kI32, {2, 3}, {-3, -1, 1, -1, 1, 3}},
                 {"x_copy", kF, {1}, {1}}};
    cases.push_back(c);
  }
  {
    // Resize: nearest x2 (asymmetric, floor) and linear with aligned corners [1, 2] -> [1, 4].
    LayerCase c;
    c.name = "ResizeNearest";
    c.define = [](Net& n) {
      IResizeLayer* l = n.net->addResize(*n.input("x", kF, {1, 1, 2, 2}));
      if (l == nullptr) return false;
      float const scales[] = {1, 1, 2, 2};
      l->setScales(scales, 4);
      l->setResizeMode(InterpolationMode::kNEAREST);
      l->setCoordinateTransformation(ResizeCoordinateTransformation::kASYMMETRIC);
      l->setNearestRounding(ResizeRoundMode::kFLOOR);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {1, 1, 2, 2}, {1, 2, 3, 4}}};
    c.outputs = {{"y", kF, {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}}};
    cases.push_back(c);
    LayerCase d;
    d.name = "ResizeLinearAlignCorners";
    d.define = [](Net& n) {
      IResizeLayer* l = n.net->addResize(*n.input("x", kF, {1, 2}));
      if (l == nullptr) return false;
      l->setOutputDimensions(Dims2{1, 4});
      l->setResizeMode(InterpolationMode::kLINEAR);
      l->setCoordinateTransformation(ResizeCoordinateTransformation::kALIGN_CORNERS);
      return n.out(l, "y");
    };
    d.inputs = {{"x", kF, {1, 2}, {0, 3}}};
    d.outputs = {{"y", kF, {1, 4}, {0, 1, 2, 3}}};
    cases.push_back(d);
  }
  {
    // GridSample bilinear, aligned corners: corners and the center of a 2x2 image.
    LayerCase c;
    c.name = "GridSample";
    c.define = [](Net& n) {
      IGridSampleLayer* l = n.net->addGridSample(*n.input("x", kF, {1, 1, 2, 2}), *n.input("g", kF, {1, 1, 3, 2}));
      if (l == nullptr) return false;
      l->setAlignCorners(true);
      return n.out(l, "y");
    };
    c.inputs = {{"x", kF, {1, 1, 2, 2}, {1, 2, 3, 4}}, {"g", kF, {1, 1, 3, 2}, {-1, -1, 0, 0, 1, -1}}};
    c.outputs = {{"y", kF, {1, 1, 1, 3}, {1, 2.5, 2}}};
    cases.push_back(c);
  }
}

void addQuantizationCases(std::vector<LayerCase>& cases) {
  {
    // Quantize to int8 with a scale of 0.5: round half to even, saturate.
    LayerCase c;
    c.name = "QuantizeInt8";
    c.define = [](Net& n) {
      return n.out(n.net->addQuantize(*n.input("x", kF, {5}), *n.cf({}, {0.5}), DataType::kINT8), "q");
    };
    c.inputs = {{"x", kF, {5}, {-1.25, 0.26, 0.75, 100, -100}}};
    c.outputs = {{"q", DataType::kINT8, {5}, {-2, 1, 2, 127, -128}}};
    cases.push_back(c);
  }
  {
    // Dequantize int8 per axis 0 with scales {0.5, 2}.
    LayerCase c;
    c.name = "DequantizePerAxis";
    c.define = [](Net& n) {
      IDequantizeLayer* l = n.net->addDequantize(*n.input("q", DataType::kINT8, {2, 2}), *n.cf({2}, {0.5, 2}), kF);
      if (l == nullptr) return false;
      l->setAxis(0);
      return n.out(l, "y");
    };
    c.inputs = {{"q", DataType::kINT8, {2, 2}, {-128, 3, -1, 127}}};
    c.outputs = {{"y", kF, {2, 2}, {-64, 1.5, -2, 254}}};
    cases.push_back(c);
  }
  {
    // Quantize -> Dequantize (a fake-quantization pair the optimizer may fuse).
    std::vector<double> const x = {-1.3, 0.2, 0.74, 3};
    LayerCase c;
    c.name = "QuantizeDequantizePair";
    c.define = [](Net& n) {
      IQuantizeLayer* q = n.net->addQuantize(*n.input("x", kF, {4}), *n.cf({}, {0.25}), DataType::kINT8);
      if (q == nullptr) return false;
      return n.out(n.net->addDequantize(*q->getOutput(0), *n.cf({}, {0.25}), kF), "y");
    };
    c.inputs = {{"x", kF, {4}, x}};
    c.outputs = {{"y", kF, {4}, mapv(x, [](double v) { return std::nearbyint(v / 0.25) * 0.25; })}};
    cases.push_back(c);
  }
  {
    // DynamicQuantize to int8, one block per row of [2, 4], float scales: scale = amax / 127.
    std::vector<double> const x = {1, -3, 0.5, 4, 0.1, -0.2, 0.3, 0};
    std::vector<double> y(8), s(2);
    for (int r = 0; r < 2; ++r) {
      double amax = 0;
      for (int j = 0; j < 4; ++j) amax = std::max(amax, std::fabs(x[r * 4 + j]));
      s[r] = static_cast<float>(amax / 127);
      for (int j = 0; j < 4; ++j) y[r * 4 + j] = std::max(-128.0, std::min(127.0, std::nearbyint(x[r * 4 + j] / s[r])));
    }
    LayerCase c;
    c.name = "DynamicQuantizeInt8";
    c.define = [](Net& n) {
      IDynamicQuantizeLayer* l =
          n.net->addDynamicQuantizeV2(*n.input("x", kF, {2, 4}), Dims2{1, 4}, DataType::kINT8, kF);
      return n.out(l, "q", 0) && n.out(l, "s", 1);
    };
    c.inputs = {{"x", kF, {2, 4}, x}};
    c.outputs = {{"q", DataType::kINT8, {2, 4}, y}, {"s", kF, {2, 1}, s}};
    cases.push_back(c);
  }
}

void addMiscCases(std::vector<LayerCase>& cases) {
  {
    // Assertion that holds at run time (condition computed from the input).
    LayerCase c;
    c.name = "AssertionHolds";
    c.define = [](Net& n) {
      ITensor* x = n.input("x", kF, {3});
      ITensor* cond = n.net->addElementWise(*x, *n.cf({1}, {0}), ElementWiseOperation::kGREATER)->getOutput(0);
      return n.net->addAssertion(*cond, "x must be positive") != nullptr && n.out(n.net->addIdentity(*x), "y");
    };
    c.inputs = {{"x", kF, {3}, {1, 2, 3}}};
    c.outputs = {{"y", kF, {3}, {1, 2, 3}}};
    cases.push_back(c);
    LayerCase d = c;
    d.name = "AssertionFails";
    d.inputs = {{"x", kF, {3}, {1, -2, 3}}};
    d.expectRunFailure = true;
    d.runFailureText = "x must be positive";
    cases.push_back(d);
  }
  {
    // NMS: box 1 overlaps box 0 (IoU 0.9 / 1.1 > 0.5) and is suppressed; box 2 is kept.
    LayerCase c;
    c.name = "NMS";
    c.define = [](Net& n) {
      INMSLayer* l =
          n.net->addNMS(*n.input("boxes", kF, {1, 3, 4}), *n.input("scores", kF, {1, 3, 1}), *n.ci32({}, {10}));
      if (l == nullptr) return false;
      l->setInput(3, *n.cf({}, {0.5}));
      return n.out(l, "sel", 0) && n.out(l, "num", 1);
    };
    c.inputs = {{"boxes", kF, {1, 3, 4}, {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 2, 1, 3}},
                {"scores", kF, {1, 3, 1}, {0.9, 0.8, 0.7}}};
    c.outputs = {{"sel", kI32, {2, 3}, {0, 0, 0, 0, 0, 2}}, {"num", kI32, {}, {2}}};
    c.allocated = {"sel"};
    cases.push_back(c);
  }
  {
    // If: y = c ? x * 2 : x - 1, built once per branch taken.
    for (bool cond : {true, false}) {
      LayerCase c;
      c.name = cond ? "IfConditionalTrue" : "IfConditionalFalse";
      c.define = [](Net& n) {
        ITensor* x = n.input("x", kF, {3});
        ITensor* cnd = n.input("c", kB, {});
        IIfConditional* ic = n.net->addIfConditional();
        if (ic == nullptr) return false;
        ic->setCondition(*cnd);
        ITensor* xin = ic->addInput(*x)->getOutput(0);
        ITensor* t = n.net->addElementWise(*xin, *n.cf({1}, {2}), ElementWiseOperation::kPROD)->getOutput(0);
        ITensor* e = n.net->addElementWise(*xin, *n.cf({1}, {1}), ElementWiseOperation::kSUB)->getOutput(0);
        return n.out(ic->addOutput(*t, *e), "y");
      };
      c.inputs = {{"x", kF, {3}, {1, -2, 5}}, {"c", kB, {}, {cond ? 1.0 : 0.0}}};
      c.outputs = {{"y", kF, {3}, cond ? std::vector<double>{2, -4, 10} : std::vector<double>{0, -3, 4}}};
      cases.push_back(c);
    }
  }
  {
    // Loop: running sum over the rows of x [3, 2] (iterator on axis 0, recurrence, count trip limit); the
    // last value and all values concatenated along a new axis 0.
    LayerCase c;
    c.name = "LoopRunningSum";
    c.define = [](Net& n) {
      ITensor* x = n.input("x", kF, {3, 2});
      ILoop* loop = n.net->addLoop();
      if (loop == nullptr) return false;
      ITensor* trips = n.ci32({}, {3});
      loop->addTripLimit(*trips, TripLimit::kCOUNT);
      IRecurrenceLayer* rec = loop->addRecurrence(*n.cf({2}, {0, 0}));
      ITensor* row = loop->addIterator(*x, 0, false)->getOutput(0);
      ITensor* sum = n.net->addElementWise(*rec->getOutput(0), *row, ElementWiseOperation::kSUM)->getOutput(0);
      rec->setInput(1, *sum);
      ILoopOutputLayer* last = loop->addLoopOutput(*sum, LoopOutput::kLAST_VALUE);
      ILoopOutputLayer* all = loop->addLoopOutput(*sum, LoopOutput::kCONCATENATE, 0);
      all->setInput(1, *trips);
      return n.out(last, "last") && n.out(all, "all");
    };
    c.inputs = {{"x", kF, {3, 2}, {1, 2, 3, 4, 5, 6}}};
    c.outputs = {{"last", kF, {2}, {9, 12}}, {"all", kF, {3, 2}, {1, 2, 4, 6, 9, 12}}};
    cases.push_back(c);
  }
  {
    // Loop with a reversed iterator and kREVERSE output: y[t] = x[2 - t] * 10 stacked last iteration first.
    LayerCase c;
    c.name = "LoopReverseIterator";
    c.define = [](Net& n) {
      ITensor* x = n.input("x", kF, {3});
      ILoop* loop = n.net->addLoop();
      if (loop == nullptr) return false;
      ITensor* trips = n.ci64({}, {3});
      loop->addTripLimit(*trips, TripLimit::kCOUNT);
      ITensor* e = loop->addIterator(*x, 0, true)->getOutput(0);
      ITensor* t = n.net->addElementWise(*e, *n.cf({}, {10}), ElementWiseOperation::kPROD)->getOutput(0);
      ILoopOutputLayer* out = loop->addLoopOutput(*t, LoopOutput::kREVERSE, 0);
      out->setInput(1, *trips);
      return n.out(out, "y");
    };
    // Iterations see x[2], x[1], x[0]; kREVERSE stacks the last iteration first: x[0], x[1], x[2].
    c.inputs = {{"x", kF, {3}, {1, 2, 3}}};
    c.outputs = {{"y", kF, {3}, {10, 20, 30}}};
    cases.push_back(c);
  }
}

std::vector<LayerCase> allCases() {
  std::vector<LayerCase> cases;
  addConvolutionCases(cases);
  addActivationCases(cases);
  addPoolingCases(cases);
  addNormalizingCases(cases);
  addScaleCases(cases);
  addElementWiseCases(cases);
  addUnaryCases(cases);
  addShapeOpCases(cases);
  addSliceCases(cases);
  addReduceCases(cases);
  addIndexCases(cases);
  addMathCases(cases);
  addQuantizationCases(cases);
  addMiscCases(cases);
  return cases;
}

class LayersE2E : public ::testing::TestWithParam<LayerCase> {};

TEST_P(LayersE2E, BuildSerializeRunAtLevels0And3) {
  LayerCase const& c = GetParam();
  if (!c.knownIssue.empty()) {
    GTEST_SKIP() << "known issue: " << c.knownIssue;
  }
  for (int32_t level : {0, 3}) {
    runCase(c, level);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Layers, LayersE2E, ::testing::ValuesIn(allCases()),
                         [](::testing::TestParamInfo<LayerCase> const& param) { return param.param.name; });

}  // namespace
}  // namespace kiln
