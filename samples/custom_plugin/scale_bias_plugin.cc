// A complete custom plugin as TensorRT tutorials teach it, for Kiln: "ScaleBias" (version "1", namespace
// "kiln.samples") computes y[n, c, ...] = x[n, c, ...] * weight[c] + bias[c]. The creator reads the fields in_channel,
// weight and bias; the plugin copies its weights to the device in initialize() (when there is one; CPU engines read the
// host copy), serializes them, and stages the per-channel coefficients in the workspace the builder provides. Built as
// a shared library that kilnexec loads with --dynamicPlugins (it exports getCreators, getPluginCreators and
// setLoggerFinder) and that links nothing of Kiln. docs/plugins.md walks through it.
#include <kiln/kiln_plugin.h>

#include <cstring>
#include <string>
#include <vector>

#ifdef KILN_SAMPLE_CUDA
#include <cuda_runtime_api.h>
// scale_bias_kernel.cu
void launchScaleBias(float const* x, float* y, float const* coeffs, int64_t n, int64_t c, int64_t inner,
                     cudaStream_t stream);
#endif

namespace {

constexpr char const* kName = "ScaleBias";
constexpr char const* kVersion = "1";
constexpr char const* kNamespace = "kiln.samples";

kiln::ILoggerFinder* gLoggerFinder = nullptr;

void logError(std::string const& msg) {
  kiln::ILogger* logger = gLoggerFinder ? gLoggerFinder->findLogger() : nullptr;
  if (logger) logger->log(kiln::ILogger::Severity::kERROR, ("ScaleBias: " + msg).c_str());
}

// Serialization helpers: the tutorial way, a byte cursor.
template <typename T>
void write(char*& p, T const& v) {
  std::memcpy(p, &v, sizeof(T));
  p += sizeof(T);
}
template <typename T>
bool read(char const*& p, char const* end, T& v) {
  if (static_cast<size_t>(end - p) < sizeof(T)) return false;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return true;
}

class ScaleBiasPlugin final : public kiln::IPluginV2DynamicExt, public kiln::IPluginHostExecution {
 public:
  ScaleBiasPlugin(int32_t channels, std::vector<float> weight, std::vector<float> bias)
      : channels_(channels), weight_(std::move(weight)), bias_(std::move(bias)) {}

  // Deserialization: in_channel, then the weights, then the biases.
  static ScaleBiasPlugin* fromBytes(void const* data, size_t length) {
    char const* p = static_cast<char const*>(data);
    char const* end = p + length;
    int32_t c = 0;
    if (!read(p, end, c) || c <= 0 || static_cast<size_t>(end - p) != 2 * sizeof(float) * static_cast<size_t>(c))
      return nullptr;
    std::vector<float> w(static_cast<size_t>(c)), b(static_cast<size_t>(c));
    for (auto& v : w) read(p, end, v);
    for (auto& v : b) read(p, end, v);
    return new ScaleBiasPlugin(c, std::move(w), std::move(b));
  }

  // Identity.
  char const* getPluginType() const noexcept override { return kName; }
  char const* getPluginVersion() const noexcept override { return kVersion; }
  void setPluginNamespace(char const* ns) noexcept override { namespace_ = ns ? ns : ""; }
  char const* getPluginNamespace() const noexcept override { return namespace_.c_str(); }

  // Shapes and types: one output shaped and typed like the input.
  int32_t getNbOutputs() const noexcept override { return 1; }
  kiln::DimsExprs getOutputDimensions(int32_t, kiln::DimsExprs const* inputs, int32_t,
                                      kiln::IExprBuilder&) noexcept override {
    return inputs[0];
  }
  kiln::DataType getOutputDataType(int32_t, kiln::DataType const*, int32_t) const noexcept override {
    return kiln::DataType::kFLOAT;
  }
  // float32, linear, for the input and the output.
  bool supportsFormatCombination(int32_t pos, kiln::PluginTensorDesc const* inOut, int32_t, int32_t) noexcept override {
    return inOut[pos].type == kiln::DataType::kFLOAT && inOut[pos].format == kiln::TensorFormat::kLINEAR;
  }
  void configurePlugin(kiln::DynamicPluginTensorDesc const* in, int32_t, kiln::DynamicPluginTensorDesc const*,
                       int32_t) noexcept override {
    if (in[0].desc.dims.nbDims >= 2 && in[0].desc.dims.d[1] >= 0 && in[0].desc.dims.d[1] != channels_)
      logError("the input has " + std::to_string(in[0].desc.dims.d[1]) + " channels, the plugin " +
               std::to_string(channels_));
  }
  // Scratch space: the interleaved (weight, bias) pairs, staged per launch.
  size_t getWorkspaceSize(kiln::PluginTensorDesc const*, int32_t, kiln::PluginTensorDesc const*,
                          int32_t) const noexcept override {
    return 2 * sizeof(float) * static_cast<size_t>(channels_);
  }

  // Life cycle: the weights go to the device once.
  int32_t initialize() noexcept override {
#ifdef KILN_SAMPLE_CUDA
    if (deviceWeights_) return 0;
    // A CPU engine may run where there is no GPU at all: then there is nothing to copy (enqueueHost reads the
    // host weights) and enqueue reports the missing device copy.
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      (void)cudaGetLastError();
      return 0;
    }
    std::vector<float> packed = interleaved();
    if (cudaMalloc(reinterpret_cast<void**>(&deviceWeights_), packed.size() * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMemcpy(deviceWeights_, packed.data(), packed.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
      return 1;
#endif
    return 0;
  }
  void terminate() noexcept override {
#ifdef KILN_SAMPLE_CUDA
    if (deviceWeights_) cudaFree(deviceWeights_);
    deviceWeights_ = nullptr;
#endif
  }
  void destroy() noexcept override {
    terminate();
    delete this;
  }
  kiln::IPluginV2DynamicExt* clone() const noexcept override {
    auto* p = new ScaleBiasPlugin(channels_, weight_, bias_);
    p->setPluginNamespace(namespace_.c_str());
    return p;
  }

  // Serialization.
  size_t getSerializationSize() const noexcept override {
    return sizeof(int32_t) + 2 * sizeof(float) * static_cast<size_t>(channels_);
  }
  void serialize(void* buffer) const noexcept override {
    char* p = static_cast<char*>(buffer);
    write(p, channels_);
    for (float v : weight_) write(p, v);
    for (float v : bias_) write(p, v);
  }

  // Execution on the GPU (stream-ordered, device pointers).
  int32_t enqueue(kiln::PluginTensorDesc const* inputDesc, kiln::PluginTensorDesc const*, void const* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) noexcept override {
#ifdef KILN_SAMPLE_CUDA
    int64_t n, c, inner;
    if (!extents(inputDesc[0].dims, n, c, inner)) return 1;
    if (!deviceWeights_) {
      logError("no device copy of the weights (initialize found no CUDA device)");
      return 1;
    }
    float* coeffs = static_cast<float*>(workspace);
    if (cudaMemcpyAsync(coeffs, deviceWeights_, 2 * sizeof(float) * static_cast<size_t>(c), cudaMemcpyDeviceToDevice,
                        stream) != cudaSuccess)
      return 1;
    launchScaleBias(static_cast<float const*>(inputs[0]), static_cast<float*>(outputs[0]), coeffs, n, c, inner, stream);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
#else
    logError("this build of the sample has no CUDA code (configure with KILN_BUILD_CUDA)");
    return 1;
#endif
  }

  // Execution on the CPU (Kiln's host-execution extension).
  int32_t enqueueHost(kiln::PluginTensorDesc const* inputDesc, kiln::PluginTensorDesc const*, void const* const* inputs,
                      void* const* outputs, void* workspace) noexcept override {
    int64_t n, c, inner;
    if (!extents(inputDesc[0].dims, n, c, inner)) return 1;
    float* coeffs = static_cast<float*>(workspace);
    std::vector<float> packed = interleaved();
    std::memcpy(coeffs, packed.data(), packed.size() * sizeof(float));
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t k = 0; k < inner; ++k) {
          int64_t at = (i * c + ch) * inner + k;
          y[at] = x[at] * coeffs[2 * ch] + coeffs[2 * ch + 1];
        }
    return 0;
  }

 private:
  std::vector<float> interleaved() const {
    std::vector<float> p;
    for (int32_t i = 0; i < channels_; ++i) {
      p.push_back(weight_[static_cast<size_t>(i)]);
      p.push_back(bias_[static_cast<size_t>(i)]);
    }
    return p;
  }
  bool extents(kiln::Dims const& d, int64_t& n, int64_t& c, int64_t& inner) const {
    if (d.nbDims < 2 || d.d[1] != channels_) return false;
    n = d.d[0];
    c = d.d[1];
    inner = 1;
    for (int32_t i = 2; i < d.nbDims; ++i) inner *= d.d[i];
    return true;
  }

  int32_t channels_;
  std::vector<float> weight_, bias_;
  std::string namespace_ = kNamespace;
#ifdef KILN_SAMPLE_CUDA
  float* deviceWeights_ = nullptr;
#endif
};

class ScaleBiasCreator final : public kiln::IPluginCreator {
 public:
  ScaleBiasCreator() {
    fields_.emplace_back("in_channel", nullptr, kiln::PluginFieldType::kINT32, 1);
    fields_.emplace_back("weight", nullptr, kiln::PluginFieldType::kFLOAT32, 0);
    fields_.emplace_back("bias", nullptr, kiln::PluginFieldType::kFLOAT32, 0);
    collection_.nbFields = static_cast<int32_t>(fields_.size());
    collection_.fields = fields_.data();
  }
  char const* getPluginName() const noexcept override { return kName; }
  char const* getPluginVersion() const noexcept override { return kVersion; }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &collection_; }

  // in_channel (int32), weight and bias (in_channel float32 values each; from ONNX, float lists or tensors).
  kiln::IPluginV2* createPlugin(char const*, kiln::PluginFieldCollection const* fc) noexcept override {
    int32_t channels = -1;
    std::vector<float> weight, bias;
    for (int32_t i = 0; fc && i < fc->nbFields; ++i) {
      kiln::PluginField const& f = fc->fields[i];
      if (!std::strcmp(f.name, "in_channel") && f.type == kiln::PluginFieldType::kINT32 && f.length == 1) {
        channels = *static_cast<int32_t const*>(f.data);
      } else if ((!std::strcmp(f.name, "weight") || !std::strcmp(f.name, "bias")) &&
                 f.type == kiln::PluginFieldType::kFLOAT32) {
        auto const* v = static_cast<float const*>(f.data);
        (f.name[0] == 'w' ? weight : bias).assign(v, v + f.length);
      }
    }
    if (channels <= 0 || weight.size() != static_cast<size_t>(channels) || bias.size() != static_cast<size_t>(channels)) {
      logError("needs in_channel > 0 and that many weight and bias values");
      return nullptr;
    }
    auto* p = new ScaleBiasPlugin(channels, std::move(weight), std::move(bias));
    p->setPluginNamespace(namespace_.c_str());
    return p;
  }
  kiln::IPluginV2* deserializePlugin(char const*, void const* data, size_t length) noexcept override {
    ScaleBiasPlugin* p = ScaleBiasPlugin::fromBytes(data, length);
    if (!p) {
      logError("cannot deserialize " + std::to_string(length) + " bytes");
      return nullptr;
    }
    p->setPluginNamespace(namespace_.c_str());
    return p;
  }
  void setPluginNamespace(char const* ns) noexcept override { namespace_ = ns ? ns : ""; }
  char const* getPluginNamespace() const noexcept override { return namespace_.c_str(); }

 private:
  std::vector<kiln::PluginField> fields_;
  kiln::PluginFieldCollection collection_{};
  std::string namespace_ = kNamespace;
};

ScaleBiasCreator gCreator;
kiln::IPluginCreatorInterface* gCreators[] = {&gCreator};
kiln::IPluginCreator* gV2Creators[] = {&gCreator};

}  // namespace

// The entry points IPluginRegistry::loadLibrary (kilnexec --dynamicPlugins) looks for.
extern "C" {
KILN_API void setLoggerFinder(kiln::ILoggerFinder* finder) { gLoggerFinder = finder; }
KILN_API kiln::IPluginCreatorInterface* const* getCreators(int32_t& nbCreators) {
  nbCreators = 1;
  return gCreators;
}
KILN_API kiln::IPluginCreator* const* getPluginCreators(int32_t& nbCreators) {
  nbCreators = 1;
  return gV2Creators;
}
}
