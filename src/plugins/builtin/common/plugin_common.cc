// Shared pieces of the built-in plugins: logger, fp16 conversion, field reading, BuiltinPlugin's serialization
// and the host/CUDA enqueue dispatch.
#include "plugins/builtin/common/plugin_common.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>

#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

std::atomic<ILogger*> gLogger{nullptr};
std::atomic<ILoggerFinder*> gFinder{nullptr};

void logAt(ILogger::Severity severity, char const* plugin, std::string const& message) noexcept {
  try {
    std::string text = std::string(plugin ? plugin : "kiln_plugins") + ": " + message;
    ILogger* logger = gLogger.load();
    if (!logger) {
      if (ILoggerFinder* finder = gFinder.load()) logger = finder->findLogger();
    }
    if (logger) {
      logger->log(severity, text.c_str());
    } else {
      std::fprintf(stderr, "kiln_plugins: %s\n", text.c_str());
    }
  } catch (...) {
  }
}

}  // namespace

void setLibraryLogger(ILogger* logger) noexcept { gLogger.store(logger); }
void setLibraryLoggerFinder(ILoggerFinder* finder) noexcept { gFinder.store(finder); }
void logError(char const* plugin, std::string const& message) noexcept {
  logAt(ILogger::Severity::kERROR, plugin, message);
}
void logWarning(char const* plugin, std::string const& message) noexcept {
  logAt(ILogger::Severity::kWARNING, plugin, message);
}

float halfToFloat(uint16_t h) noexcept {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000U) << 16U;
  uint32_t exp = (h >> 10U) & 0x1FU;
  uint32_t mant = h & 0x3FFU;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = std::ldexp(static_cast<float>(mant), -24);
      return sign ? -f : f;
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000U | (mant << 13U);
  } else {
    bits = sign | ((exp + 112U) << 23U) | (mant << 13U);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t floatToHalf(float f) noexcept {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16U) & 0x8000U;
  uint32_t absx = x & 0x7FFFFFFFU;
  if (absx >= 0x7F800000U) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7C00U | (absx > 0x7F800000U ? 0x200U : 0U));
  }
  if (absx >= 0x477FF000U) return static_cast<uint16_t>(sign | 0x7C00U);  // rounds to inf
  if (absx < 0x38800000U) {  // subnormal or zero in half
    // value / 2^-24 rounded to nearest even
    float a;
    std::memcpy(&a, &absx, sizeof a);
    float scaled = a * 16777216.0f;  // exact
    float r = std::nearbyint(scaled);  // default rounding mode: nearest even
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
  }
  uint32_t exp = (absx >> 23U) - 112U;
  uint32_t mant = absx & 0x7FFFFFU;
  uint32_t h = (exp << 10U) | (mant >> 13U);
  uint32_t rest = mant & 0x1FFFU;
  if (rest > 0x1000U || (rest == 0x1000U && (h & 1U))) ++h;
  return static_cast<uint16_t>(sign | h);
}

int64_t volume(Dims const& d) noexcept {
  int64_t v = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (d.d[i] < 0) return 0;
    v *= d.d[i];
  }
  return v;
}

std::vector<float> loadFloats(DataType type, void const* data, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  if (type == DataType::kHALF) {
    auto const* h = static_cast<uint16_t const*>(data);
    for (int64_t i = 0; i < n; ++i) out[i] = halfToFloat(h[i]);
  } else if (n > 0) {
    std::memcpy(out.data(), data, static_cast<size_t>(n) * sizeof(float));
  }
  return out;
}

void storeFloats(DataType type, float const* values, int64_t n, void* data) {
  if (type == DataType::kHALF) {
    auto* h = static_cast<uint16_t*>(data);
    for (int64_t i = 0; i < n; ++i) h[i] = floatToHalf(values[i]);
  } else if (n > 0) {
    std::memcpy(data, values, static_cast<size_t>(n) * sizeof(float));
  }
}

std::string dimsString(Dims const& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "," : "") + std::to_string(d.d[i]);
  return s + "]";
}

//
// FieldReader
//

namespace {

char const* typeName(PluginFieldType t) {
  switch (t) {
    case PluginFieldType::kFLOAT16: return "kFLOAT16";
    case PluginFieldType::kFLOAT32: return "kFLOAT32";
    case PluginFieldType::kFLOAT64: return "kFLOAT64";
    case PluginFieldType::kINT8: return "kINT8";
    case PluginFieldType::kINT16: return "kINT16";
    case PluginFieldType::kINT32: return "kINT32";
    case PluginFieldType::kCHAR: return "kCHAR";
    case PluginFieldType::kDIMS: return "kDIMS";
    case PluginFieldType::kUNKNOWN: return "kUNKNOWN";
    case PluginFieldType::kBF16: return "kBF16";
    case PluginFieldType::kINT64: return "kINT64";
    case PluginFieldType::kFP8: return "kFP8";
    case PluginFieldType::kINT4: return "kINT4";
  }
  return "an unknown type";
}

// Element i of a numeric field as double; false for non-numeric types.
bool numberAt(PluginField const& f, int32_t i, double& out) {
  switch (f.type) {
    case PluginFieldType::kFLOAT16: out = halfToFloat(static_cast<uint16_t const*>(f.data)[i]); return true;
    case PluginFieldType::kFLOAT32: out = static_cast<float const*>(f.data)[i]; return true;
    case PluginFieldType::kFLOAT64: out = static_cast<double const*>(f.data)[i]; return true;
    case PluginFieldType::kINT8: out = static_cast<int8_t const*>(f.data)[i]; return true;
    case PluginFieldType::kINT16: out = static_cast<int16_t const*>(f.data)[i]; return true;
    case PluginFieldType::kINT32: out = static_cast<int32_t const*>(f.data)[i]; return true;
    case PluginFieldType::kINT64: out = static_cast<double>(static_cast<int64_t const*>(f.data)[i]); return true;
    case PluginFieldType::kBF16: {
      uint32_t bits = static_cast<uint32_t>(static_cast<uint16_t const*>(f.data)[i]) << 16U;
      float v;
      std::memcpy(&v, &bits, sizeof v);
      out = v;
      return true;
    }
    case PluginFieldType::kCHAR:
    case PluginFieldType::kDIMS:
    case PluginFieldType::kUNKNOWN:
    case PluginFieldType::kFP8:
    case PluginFieldType::kINT4:
      return false;
  }
  return false;
}

}  // namespace

FieldReader::FieldReader(PluginFieldCollection const* fc, char const* plugin) : fc_(fc), plugin_(plugin) {
  if (fc_->nbFields < 0 || (fc_->nbFields > 0 && !fc_->fields)) {
    fail("the field collection is malformed (nbFields " + std::to_string(fc_->nbFields) + ")");
  }
}

PluginField const* FieldReader::find(char const* name) const {
  if (!error_.empty()) return nullptr;
  for (int32_t i = 0; i < fc_->nbFields; ++i) {
    PluginField const& f = fc_->fields[i];
    if (f.name && std::strcmp(f.name, name) == 0) return &f;
  }
  return nullptr;
}

void FieldReader::fail(std::string const& message) {
  if (error_.empty()) error_ = message;
}

void FieldReader::require(bool cond, std::string const& message) {
  if (!cond) fail(message);
}

bool FieldReader::getFloat(char const* name, float& out) {
  PluginField const* f = find(name);
  if (!f) return false;
  double v = 0;
  if (f->length != 1 || !f->data || !numberAt(*f, 0, v)) {
    fail(std::string("field '") + name + "' must be one number, got " + std::to_string(f->length) + " of " +
         typeName(f->type));
    return false;
  }
  out = static_cast<float>(v);
  return true;
}

bool FieldReader::getInt(char const* name, int32_t& out) {
  PluginField const* f = find(name);
  if (!f) return false;
  double v = 0;
  if (f->length != 1 || !f->data || !numberAt(*f, 0, v) || v != std::floor(v) || v < -2147483648.0 ||
      v > 2147483647.0) {
    fail(std::string("field '") + name + "' must be one 32-bit integer, got " + std::to_string(f->length) +
         " of " + typeName(f->type));
    return false;
  }
  out = static_cast<int32_t>(v);
  return true;
}

bool FieldReader::getFloats(char const* name, std::vector<float>& out) {
  PluginField const* f = find(name);
  if (!f) return false;
  double v = 0;
  if (f->length < 0 || (f->length > 0 && (!f->data || !numberAt(*f, 0, v)))) {
    fail(std::string("field '") + name + "' must be numbers, got " + std::to_string(f->length) + " of " +
         typeName(f->type));
    return false;
  }
  out.resize(static_cast<size_t>(f->length));
  for (int32_t i = 0; i < f->length; ++i) {
    numberAt(*f, i, v);
    out[i] = static_cast<float>(v);
  }
  return true;
}

bool FieldReader::getInts(char const* name, std::vector<int32_t>& out) {
  std::vector<float> tmp;
  PluginField const* f = find(name);
  if (!f) return false;
  double v = 0;
  if (f->length < 0 || (f->length > 0 && (!f->data || !numberAt(*f, 0, v)))) {
    fail(std::string("field '") + name + "' must be integers, got " + std::to_string(f->length) + " of " +
         typeName(f->type));
    return false;
  }
  out.resize(static_cast<size_t>(f->length));
  for (int32_t i = 0; i < f->length; ++i) {
    numberAt(*f, i, v);
    if (v != std::floor(v)) {
      fail(std::string("field '") + name + "' must be integers; element " + std::to_string(i) + " is not");
      return false;
    }
    out[i] = static_cast<int32_t>(v);
  }
  return true;
}

//
// DeviceWeights, host normalization
//

DeviceWeights::~DeviceWeights() { reset(); }

void DeviceWeights::reset() {
#if KILN_PLUGINS_HAVE_CUDA
  cuda::freeDevice(device_);
#endif
  device_ = nullptr;
}

void const* DeviceWeights::get(void const* host, size_t bytes, std::string& error) {
#if KILN_PLUGINS_HAVE_CUDA
  if (!device_) device_ = cuda::uploadToDevice(host, bytes == 0 ? 1 : bytes, &error);
  return device_;
#else
  error = "this build has no CUDA";
  return nullptr;
#endif
}

void segmentNormHost(float* x, int64_t segments, int64_t length, int64_t inner, int64_t channels,
                     float const* gamma, float const* beta, float eps, bool relu, float alpha) {
  for (int64_t s = 0; s < segments; ++s) {
    float* seg = x + s * length;
    double sum = 0;
    for (int64_t i = 0; i < length; ++i) sum += seg[i];
    double mean = length ? sum / static_cast<double>(length) : 0.0;
    double sq = 0;
    for (int64_t i = 0; i < length; ++i) sq += (seg[i] - mean) * (seg[i] - mean);
    double var = length ? sq / static_cast<double>(length) : 0.0;
    double inv = 1.0 / std::sqrt(var + static_cast<double>(eps));
    for (int64_t i = 0; i < length; ++i) {
      int64_t c = ((s * length + i) / inner) % channels;
      float y = static_cast<float>((seg[i] - mean) * inv) * gamma[c] + beta[c];
      if (relu && y < 0.f) y *= alpha;
      seg[i] = y;
    }
  }
}

//
// BuiltinPlugin
//

size_t BuiltinPlugin::getSerializationSize() const noexcept {
  try {
    ByteWriter w;
    writeParams(w);
    return w.bytes().size();
  } catch (...) {
    return 0;
  }
}

void BuiltinPlugin::serialize(void* buffer) const noexcept {
  try {
    ByteWriter w;
    writeParams(w);
    if (!w.bytes().empty()) std::memcpy(buffer, w.bytes().data(), w.bytes().size());  // buffer may be null for 0 bytes
  } catch (...) {
    logError(type_, "serialize failed (out of memory)");
  }
}

int32_t BuiltinPlugin::enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
                               void const* const* inputs, void* const* outputs, void* workspace,
                               cudaStream_t stream) noexcept {
  try {
    std::string err = cudaCompute(inputDesc, outputDesc, inputs, outputs, workspace, stream);
    if (err.empty()) return 0;
    logError(type_, "enqueue: " + err);
  } catch (std::exception const& e) {
    logError(type_, std::string("enqueue failed: ") + e.what());
  }
  return 1;
}

int32_t BuiltinPlugin::enqueueHost(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
                                   void const* const* inputs, void* const* outputs, void* workspace) noexcept {
  try {
    std::string err = hostCompute(inputDesc, outputDesc, inputs, outputs, workspace);
    if (err.empty()) return 0;
    logError(type_, "enqueueHost: " + err);
  } catch (std::exception const& e) {
    logError(type_, std::string("enqueueHost failed: ") + e.what());
  }
  return 1;
}

}  // namespace kiln::plugin
