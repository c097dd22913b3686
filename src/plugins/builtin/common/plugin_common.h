// Shared pieces of the built-in plugins (libkiln_plugins.so): the library's logger, typed reading of
// PluginFields, byte serialization, fp16 conversion, and the BuiltinPlugin / BuiltinCreator bases every plugin
// derives from. Public Kiln headers only: the plugins library links libkiln for getPluginRegistry() alone.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln::plugin {

//
// Logging
//

/// Sets the logger the built-in plugins write to (nullptr: the loader's finder, then stderr).
void setLibraryLogger(ILogger* logger) noexcept;
/// Sets the logger finder handed over by IPluginRegistry::loadLibrary.
void setLibraryLoggerFinder(ILoggerFinder* finder) noexcept;
/// Writes an error (prefixed with the plugin name) to the library's logger.
void logError(char const* plugin, std::string const& message) noexcept;
/// Writes a warning (prefixed with the plugin name) to the library's logger.
void logWarning(char const* plugin, std::string const& message) noexcept;

//
// fp16 and tensors
//

/// IEEE half (bits) to float.
float halfToFloat(uint16_t h) noexcept;
/// Float to IEEE half (bits), rounding to nearest even.
uint16_t floatToHalf(float f) noexcept;
/// Product of the dims (0 for a negative dim).
int64_t volume(Dims const& d) noexcept;
/// True for the float types the host path converts (kFLOAT, kHALF).
inline bool isHostFloat(DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF; }
/// Reads `n` elements of float type `type` at `data` as floats.
std::vector<float> loadFloats(DataType type, void const* data, int64_t n);
/// Writes `n` floats to `data` as `type` (kFLOAT or kHALF).
void storeFloats(DataType type, float const* values, int64_t n, void* data);
/// Shape as "[a,b,c]" for messages.
std::string dimsString(Dims const& d);

//
// Fields
//

/// Typed access to a PluginFieldCollection. Getters leave `out` unchanged when the field is absent and
/// record an error (see error()) when it is present with an unusable type or length.
class FieldReader {
 public:
  FieldReader(PluginFieldCollection const* fc, char const* plugin);
  /// A scalar number (any integer or float type; length 1).
  bool getFloat(char const* name, float& out);
  /// A scalar integer (kINT8/16/32/64; length 1). A float field holding an integral value is accepted too.
  bool getInt(char const* name, int32_t& out);
  /// A number array (any float or integer type; length may be 0).
  bool getFloats(char const* name, std::vector<float>& out);
  /// An integer array.
  bool getInts(char const* name, std::vector<int32_t>& out);
  /// Records an error unless `cond`.
  void require(bool cond, std::string const& message);
  /// The first error recorded, "" when none.
  std::string const& error() const { return error_; }
  bool ok() const { return error_.empty(); }

 private:
  PluginField const* find(char const* name) const;
  void fail(std::string const& message);
  PluginFieldCollection const* fc_;
  std::string plugin_;
  std::string error_;
};

/// Appends plain values to a byte string.
class ByteWriter {
 public:
  template <typename T>
  void put(T const& v) {
    char const* p = reinterpret_cast<char const*>(&v);
    bytes_.append(p, sizeof(T));
  }
  void putFloats(std::vector<float> const& v) {
    put(static_cast<int64_t>(v.size()));
    bytes_.append(reinterpret_cast<char const*>(v.data()), v.size() * sizeof(float));
  }
  void putInts(std::vector<int32_t> const& v) {
    put(static_cast<int64_t>(v.size()));
    bytes_.append(reinterpret_cast<char const*>(v.data()), v.size() * sizeof(int32_t));
  }
  std::string const& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

/// Reads what ByteWriter wrote, refusing (ok() false) reads past the end.
class ByteReader {
 public:
  ByteReader(void const* data, size_t size) : p_(static_cast<char const*>(data)), left_(data ? size : 0) {}
  template <typename T>
  bool get(T& v) {
    if (!ok_ || left_ < sizeof(T)) return ok_ = false;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    left_ -= sizeof(T);
    return true;
  }
  bool getFloats(std::vector<float>& v) { return getArray(v); }
  bool getInts(std::vector<int32_t>& v) { return getArray(v); }
  /// True when every read succeeded and every byte was consumed.
  bool finished() const { return ok_ && left_ == 0; }

 private:
  template <typename T>
  bool getArray(std::vector<T>& v) {
    int64_t n = 0;
    if (!get(n) || n < 0 || static_cast<uint64_t>(n) > left_ / sizeof(T)) return ok_ = false;
    v.resize(static_cast<size_t>(n));
    if (n > 0) std::memcpy(v.data(), p_, static_cast<size_t>(n) * sizeof(T));
    p_ += n * sizeof(T);
    left_ -= n * sizeof(T);
    return true;
  }
  char const* p_;
  size_t left_;
  bool ok_ = true;
};

//
// Plugin and creator bases
//

/// Base of every built-in plugin: an IPluginV2DynamicExt that also runs on the host (IPluginHostExecution).
/// Subclasses provide shapes, formats, the parameters' serialization and enqueueHost; those with a CUDA
/// implementation override enqueueCuda (built only with KILN_PLUGINS_HAVE_CUDA).
class BuiltinPlugin : public IPluginV2DynamicExt, public IPluginHostExecution {
 public:
  BuiltinPlugin(char const* type, char const* version) : type_(type), version_(version) {}

  AsciiChar const* getPluginType() const noexcept override { return type_; }
  AsciiChar const* getPluginVersion() const noexcept override { return version_; }
  int32_t initialize() noexcept override { return 0; }
  void terminate() noexcept override {}
  void destroy() noexcept override { delete this; }
  void setPluginNamespace(AsciiChar const* ns) noexcept override { namespace_ = ns ? ns : ""; }
  AsciiChar const* getPluginNamespace() const noexcept override { return namespace_.c_str(); }
  size_t getSerializationSize() const noexcept override;
  void serialize(void* buffer) const noexcept override;
  void configurePlugin(DynamicPluginTensorDesc const* in, int32_t nbInputs, DynamicPluginTensorDesc const* out,
                       int32_t nbOutputs) noexcept override {}
  size_t getWorkspaceSize(PluginTensorDesc const* inputs, int32_t nbInputs, PluginTensorDesc const* outputs,
                          int32_t nbOutputs) const noexcept override {
    return 0;
  }
  /// Output types: the first input's type unless a plugin says otherwise.
  DataType getOutputDataType(int32_t index, DataType const* inputTypes, int32_t nbInputs) const noexcept override {
    return nbInputs > 0 ? inputTypes[0] : DataType::kFLOAT;
  }
  /// Runs enqueueCuda where the plugin has one; otherwise logs that it runs on the host only and fails.
  int32_t enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc, void const* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) noexcept override;
  /// Runs hostCompute, turning exceptions (allocation failures) into a logged error.
  int32_t enqueueHost(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc, void const* const* inputs,
                      void* const* outputs, void* workspace) noexcept override;

  /// True when this plugin has a CUDA implementation in this build.
  virtual bool hasCuda() const noexcept { return false; }

 protected:
  /// Writes the parameters deserialize reads back.
  virtual void writeParams(ByteWriter& w) const = 0;
  /// The host implementation; returns "" on success or the reason for failing.
  virtual std::string hostCompute(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
                                  void const* const* inputs, void* const* outputs, void* workspace) = 0;
  /// The CUDA implementation (device pointers, asynchronous on `stream`); "" on success.
  virtual std::string cudaCompute(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
                                  void const* const* inputs, void* const* outputs, void* workspace,
                                  cudaStream_t stream) {
    return "has no CUDA implementation in this build; it runs on the host only (IPluginHostExecution)";
  }
  /// Copies the namespace onto a clone.
  template <typename P>
  P* finishClone(P* p) const {
    if (p) p->setPluginNamespace(namespace_.c_str());
    return p;
  }

 private:
  char const* type_;
  char const* version_;
  std::string namespace_;
};

/// A creator for plugin class P, which provides
///   static char const* kName, kVersion;
///   static std::vector<PluginField> fieldList();
///   static P* create(FieldReader&)            (nullptr with an error in the reader on bad fields)
///   static P* deserialize(ByteReader&)         (nullptr when the bytes do not hold its parameters)
template <typename P>
class BuiltinCreator final : public IPluginCreator {
 public:
  BuiltinCreator() : fields_(P::fieldList()) {
    fc_.nbFields = static_cast<int32_t>(fields_.size());
    fc_.fields = fields_.data();
  }
  AsciiChar const* getPluginName() const noexcept override { return P::kName; }
  AsciiChar const* getPluginVersion() const noexcept override { return P::kVersion; }
  PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  IPluginV2* createPlugin(AsciiChar const* name, PluginFieldCollection const* fc) noexcept override {
    try {
      PluginFieldCollection empty{};
      FieldReader reader(fc ? fc : &empty, P::kName);
      P* p = P::create(reader);
      if (!reader.ok() || !p) {
        delete p;
        logError(P::kName, "createPlugin refused the fields: " +
                               (reader.ok() ? std::string("invalid parameters") : reader.error()));
        return nullptr;
      }
      p->setPluginNamespace(ns_.c_str());
      return p;
    } catch (std::exception const& e) {
      logError(P::kName, std::string("createPlugin failed: ") + e.what());
      return nullptr;
    }
  }
  IPluginV2* deserializePlugin(AsciiChar const* name, void const* data, size_t length) noexcept override {
    try {
      ByteReader reader(data, length);
      P* p = P::deserialize(reader);
      if (!p || !reader.finished()) {
        delete p;
        logError(P::kName, "deserializePlugin: the " + std::to_string(length) +
                               " bytes given are not this plugin's serialized parameters");
        return nullptr;
      }
      p->setPluginNamespace(ns_.c_str());
      return p;
    } catch (std::exception const& e) {
      logError(P::kName, std::string("deserializePlugin failed: ") + e.what());
      return nullptr;
    }
  }
  void setPluginNamespace(AsciiChar const* ns) noexcept override { ns_ = ns ? ns : ""; }
  AsciiChar const* getPluginNamespace() const noexcept override { return ns_.c_str(); }

 private:
  std::vector<PluginField> fields_;
  PluginFieldCollection fc_{};
  std::string ns_;
};

/// Weights copied to the device on first use (CUDA builds); copies of the holder start without device memory,
/// so clones upload their own.
class DeviceWeights {
 public:
  DeviceWeights() = default;
  DeviceWeights(DeviceWeights const&) {}
  DeviceWeights& operator=(DeviceWeights const&) = delete;
  ~DeviceWeights();
  /// The device copy of `host` (uploaded by the first call); nullptr with `error` set when that fails.
  void const* get(void const* host, size_t bytes, std::string& error);
  /// Frees the device copy (the next get() uploads again).
  void reset();

 private:
  void* device_ = nullptr;
};

/// Host normalization over `segments` contiguous segments of `length` values of x (in place): see
/// cuda::SegmentNormArgs for the meaning of the fields; gamma/beta have `channels` entries.
void segmentNormHost(float* x, int64_t segments, int64_t length, int64_t inner, int64_t channels,
                     float const* gamma, float const* beta, float eps, bool relu, float alpha);

/// Shorthand for a field-list entry (name, type, length; no data).
inline PluginField fieldSpec(char const* name, PluginFieldType type, int32_t length = 1) {
  return PluginField(name, nullptr, type, length);
}

/// True when d is kLINEAR with one of the float types the plugin offers (fp32, and fp16 when `half`).
inline bool linearFloat(PluginTensorDesc const& d, bool half) {
  return d.format == TensorFormat::kLINEAR && (d.type == DataType::kFLOAT || (half && d.type == DataType::kHALF));
}

}  // namespace kiln::plugin
