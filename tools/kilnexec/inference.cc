// Running engines for kilnexec: inputs, I/O binding, the benchmark loop and the layer profiler.
#include "inference.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "device.h"

namespace kilnexec {
namespace {

using Clock = std::chrono::steady_clock;
using kiln::DataType;

std::vector<int64_t> fromDims(kiln::Dims const& d) { return std::vector<int64_t>(d.d, d.d + std::max(d.nbDims, 0)); }

kiln::Dims toDims(std::vector<int64_t> const& v) {
  kiln::Dims d{};
  d.nbDims = static_cast<int32_t>(v.size());
  for (size_t i = 0; i < v.size() && i < 8; ++i) d.d[i] = v[i];
  return d;
}

bool known(std::vector<int64_t> const& dims) {
  for (int64_t d : dims)
    if (d < 0) return false;
  return true;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t const sign = (x >> 16) & 0x8000;
  int32_t const exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    uint32_t const shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t const rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into the exponent: still right
  return static_cast<uint16_t>(sign | half);
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t const rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

template <typename T>
void storeInt(uint8_t* p, double v) {
  double const lo = static_cast<double>(std::numeric_limits<T>::lowest());
  double const hi = static_cast<double>(std::numeric_limits<T>::max());
  T const x = std::isnan(v) ? T(0)
              : v <= lo     ? std::numeric_limits<T>::lowest()
              : v >= hi     ? std::numeric_limits<T>::max()
                            : static_cast<T>(v);
  std::memcpy(p, &x, sizeof(T));
}

// splitmix64: the same inputs on every platform, so that runs and the --check reference agree.
uint64_t nextRandom(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ULL;
  uint64_t z = state;
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

bool isFloat(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFLOAT64 ||
         t == DataType::kFP8;
}

// Host memory for one tensor, 64-byte aligned whatever its type.
struct Buffer {
  std::vector<uint64_t> storage;
  size_t bytes = 0;
  void resize(size_t n) {
    bytes = n;
    storage.assign(std::max<size_t>(1, (n + 63) / 64 * 8), 0);
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(storage.data()); }
  uint8_t const* data() const { return reinterpret_cast<uint8_t const*>(storage.data()); }
};

class OutputAllocator : public kiln::IOutputAllocator {
 public:
  void* reallocateOutputAsync(char const*, void* current, uint64_t size, uint64_t, cudaStream_t) override {
    if (size > buffer.bytes || !current) buffer.resize(static_cast<size_t>(size));
    return buffer.data();
  }
  void notifyShape(char const*, kiln::Dims const& dims) noexcept override { shape = fromDims(dims); }
  Buffer buffer;
  std::vector<int64_t> shape;
};

// Device memory for a data-dependent output on the GPU: grows (cudaMalloc) when Kiln asks for more.
class DeviceOutputAllocator : public kiln::IOutputAllocator {
 public:
  void* reallocateOutputAsync(char const*, void*, uint64_t size, uint64_t, cudaStream_t) override {
    std::string error;
    if (!buffer.reserve(static_cast<size_t>(size), error)) return nullptr;
    return buffer.data();
  }
  void notifyShape(char const*, kiln::Dims const& dims) noexcept override {
    shape = fromDims(dims);
    shapeKnown = true;
  }
  device::Buffer buffer;
  std::vector<int64_t> shape;
  bool shapeKnown = false;
};

}  // namespace

void setElementFromDouble(Tensor& t, size_t i, double v) {
  uint8_t* p = t.bytes.data() + i * elementSize(t.type);
  switch (t.type) {
    case DataType::kFLOAT: {
      float const f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case DataType::kFLOAT64:
      std::memcpy(p, &v, 8);
      return;
    case DataType::kHALF: {
      uint16_t const h = floatToHalf(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case DataType::kBF16: {
      uint16_t const h = floatToBf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case DataType::kFP8: {
      // Nearest E4M3 value by search: inputs are generated rarely and fp8 tensors are small.
      uint8_t best = 0;
      double bestErr = INFINITY;
      Tensor one{"", DataType::kFP8, {1}, {0}};
      for (int c = 0; c < 256; ++c) {
        one.bytes[0] = static_cast<uint8_t>(c);
        double const e = std::fabs(elementAsDouble(one, 0) - v);
        if (e < bestErr) bestErr = e, best = static_cast<uint8_t>(c);
      }
      *p = best;
      return;
    }
    case DataType::kBOOL:
      *p = v != 0 ? 1 : 0;
      return;
    case DataType::kINT8:
      storeInt<int8_t>(p, v);
      return;
    case DataType::kUINT8:
      storeInt<uint8_t>(p, v);
      return;
    case DataType::kE8M0:
      storeInt<uint8_t>(p, v);
      return;
    case DataType::kINT16:
      storeInt<int16_t>(p, v);
      return;
    case DataType::kUINT16:
      storeInt<uint16_t>(p, v);
      return;
    case DataType::kINT32:
      storeInt<int32_t>(p, v);
      return;
    case DataType::kUINT32:
      storeInt<uint32_t>(p, v);
      return;
    case DataType::kINT64:
      storeInt<int64_t>(p, v);
      return;
    case DataType::kUINT64:
      storeInt<uint64_t>(p, v);
      return;
    case DataType::kINT4:
      return;
    case DataType::kFP4:
      return;
  }
}

bool prepareInputs(kiln::ICudaEngine const& engine, Options const& options, std::vector<Tensor>& inputs,
                   std::string& error) {
  inputs.clear();
  // Loaded files, by input name ("" = a .npz giving every input by array name).
  std::map<std::string, std::string> files;
  for (auto const& [name, file] : options.loadInputs) files[name] = file;
  std::vector<std::string> inputNames;
  for (int32_t i = 0; i < engine.getNbIOTensors(); ++i) {
    char const* name = engine.getIOTensorName(i);
    if (engine.getTensorIOMode(name) == kiln::TensorIOMode::kINPUT) inputNames.push_back(name);
  }
  for (auto const& [name, file] : files)
    if (!name.empty() && std::find(inputNames.begin(), inputNames.end(), name) == inputNames.end()) {
      error = "--loadInputs names '" + name + "', which is not an input of the engine";
      return false;
    }
  for (auto const& s : options.shapes)
    if (std::find(inputNames.begin(), inputNames.end(), s.name) == inputNames.end()) {
      error = "--shapes names '" + s.name + "', which is not an input of the engine";
      return false;
    }

  uint64_t seed = 0x6b696c6e;  // "kiln"
  for (std::string const& name : inputNames) {
    DataType const type = engine.getTensorDataType(name.c_str());
    if (elementSize(type) == 0) {
      error = "input '" + name + "' has type " + typeName(type) + ", which kilnexec cannot fill";
      return false;
    }
    std::vector<int64_t> dims = fromDims(engine.getTensorShape(name.c_str()));
    for (auto const& s : options.shapes)
      if (s.name == name) dims = s.dims;
    if (!known(dims) && engine.getNbOptimizationProfiles() > 0) {
      std::vector<int64_t> const opt =
          fromDims(engine.getProfileShape(name.c_str(), 0, kiln::OptProfileSelector::kOPT));
      if (opt.size() == dims.size() && known(opt)) dims = opt;
    }
    Tensor t;
    auto file = files.find(name);
    if (file == files.end()) file = files.find("");
    if (file != files.end()) {
      if (!loadTensorFile(file->second, name, type, dims, t, error)) return false;
      bool const shapeGiven =
          std::any_of(options.shapes.begin(), options.shapes.end(), [&](ShapeSpec const& s) { return s.name == name; });
      if (shapeGiven && t.dims != dims) {
        error = "--loadInputs: '" + name + "' is " + formatDims(t.dims) + " in " + file->second +
                " but --shapes gives " + formatDims(dims);
        return false;
      }
    } else {
      if (!known(dims)) {
        error = "input '" + name + "' has dynamic shape " + formatDims(dims) + "; give it with --shapes";
        return false;
      }
      t.name = name;
      t.type = type;
      t.dims = dims;
      int64_t const n = dims.empty() ? 1 : volume(dims);
      t.bytes.assign(static_cast<size_t>(n) * elementSize(type), 0);
      for (int64_t i = 0; i < n; ++i) {
        uint64_t const r = nextRandom(seed);
        double const v = isFloat(type)             ? -1.0 + 2.0 * static_cast<double>(r >> 11) / 9007199254740992.0
                         : type == DataType::kBOOL ? static_cast<double>(r & 1)
                                                   : static_cast<double>(r % 4);
        setElementFromDouble(t, static_cast<size_t>(i), v);
      }
    }
    inputs.push_back(std::move(t));
  }
  return true;
}

struct Runner::Impl {
  struct IO {
    std::string name;
    bool input = false;
    DataType type = DataType::kFLOAT;
    std::vector<int64_t> dims;
    Buffer buffer;  // host: the tensor itself (CPU) or its host copy (GPU)
    std::unique_ptr<OutputAllocator> allocator;
    device::Buffer deviceBuffer;                             // GPU
    std::unique_ptr<DeviceOutputAllocator> deviceAllocator;  // GPU, data-dependent outputs
    // Bytes of the output as last computed (the shape the allocator was told, or the static one).
    size_t outputBytes() const {
      std::vector<int64_t> const& d = deviceAllocator ? deviceAllocator->shape : dims;
      if (deviceAllocator && (!deviceAllocator->shapeKnown || !deviceAllocator->buffer.data())) return 0;
      return static_cast<size_t>(d.empty() ? 1 : volume(d)) * elementSize(type);
    }
  };
  std::vector<IO> io;
  RunMode mode;
  // GPU.
  device::Stream stream;
  device::Event origin, start, h2dEnd, computeEnd, end;
  device::Graph graph;
  bool graphReady = false;
  // The enqueue's host times of the inference in flight (ms since the benchmark's origin).
  double enqStart = 0, enqEnd = 0;
  std::chrono::steady_clock::time_point hostOrigin{};

  bool copyInputs(std::string& error) {
    for (auto& x : io)
      if (x.input && !device::copyToDevice(x.deviceBuffer.data(), x.buffer.data(), x.buffer.bytes, stream.get(), error))
        return false;
    return true;
  }
  bool copyOutputs(std::string& error) {
    for (auto& x : io) {
      if (x.input) continue;
      void const* src = x.deviceAllocator ? x.deviceAllocator->buffer.data() : x.deviceBuffer.data();
      size_t const n = x.outputBytes();
      if (!src || n == 0) continue;
      if (x.buffer.bytes < n) x.buffer.resize(n);
      if (!device::copyToHost(x.buffer.data(), src, n, stream.get(), error)) return false;
    }
    return true;
  }
};

Runner::Runner() : impl_(std::make_unique<Impl>()) {}
Runner::~Runner() {
  // The context goes first: it may still reference the buffers and the stream.
  context_.reset();
}

bool Runner::gpu() const { return impl_->mode.gpu; }

bool Runner::setup(kiln::ICudaEngine& engine, std::vector<Tensor> const& inputs, std::string& error, RunMode mode) {
  impl_->mode = mode;
  if (mode.gpu) {
    Impl& m = *impl_;
    if (!m.stream.create(error) || !m.origin.create(error) || !m.start.create(error) || !m.h2dEnd.create(error) ||
        !m.computeEnd.create(error) || !m.end.create(error))
      return false;
    // The warm-up's times are measured from here (an event never recorded has no time: recordOrigin() moves it
    // to the start of the timed runs).
    if (!m.origin.record(m.stream.get(), error)) return false;
  }
  context_.reset(engine.createExecutionContext());
  if (!context_) {
    error = "createExecutionContext failed";
    return false;
  }
  impl_->io.clear();
  for (int32_t i = 0; i < engine.getNbIOTensors(); ++i) {
    Impl::IO io;
    io.name = engine.getIOTensorName(i);
    io.input = engine.getTensorIOMode(io.name.c_str()) == kiln::TensorIOMode::kINPUT;
    io.type = engine.getTensorDataType(io.name.c_str());
    // Its inputs, --loadInputs files, --exportOutput and --check all read and write row-major data; a binding in
    // a vectorized or channels-last layout (ITensor::setAllowedFormats) would need a conversion it does not have.
    if (engine.getTensorFormat(io.name.c_str()) != kiln::TensorFormat::kLINEAR) {
      char const* desc = engine.getTensorFormatDesc(io.name.c_str());
      error = "I/O tensor '" + io.name + "' is bound in " + (desc ? desc : "a non-linear format") +
              ": kilnexec runs engines whose inputs and outputs are kLINEAR only";
      return false;
    }
    impl_->io.push_back(std::move(io));
  }
  for (auto& io : impl_->io) {
    if (!io.input) continue;
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](Tensor const& t) { return t.name == io.name; });
    if (it == inputs.end()) {
      error = "no data for input '" + io.name + "'";
      return false;
    }
    io.dims = it->dims;
    if (!context_->setInputShape(io.name.c_str(), toDims(io.dims))) {
      error = "input '" + io.name + "' cannot take shape " + formatDims(io.dims) + " (outside the profile?)";
      return false;
    }
    io.buffer.resize(it->bytes.size());
    if (!it->bytes.empty()) std::memcpy(io.buffer.data(), it->bytes.data(), it->bytes.size());
    void* address = io.buffer.data();
    if (mode.gpu) {
      if (!io.deviceBuffer.reserve(io.buffer.bytes, error) ||
          !device::copyToDevice(io.deviceBuffer.data(), io.buffer.data(), io.buffer.bytes, impl_->stream.get(),
                                error)) {
        error = "input '" + io.name + "': " + error;
        return false;
      }
      address = io.deviceBuffer.data();
    }
    if (!context_->setTensorAddress(io.name.c_str(), address)) {
      error = "setTensorAddress failed for input '" + io.name + "'";
      return false;
    }
  }
  for (auto& io : impl_->io) {
    if (io.input) continue;
    io.dims = fromDims(context_->getTensorShape(io.name.c_str()));
    if (!known(io.dims)) {
      // Size known only while running (data-dependent shapes): Kiln asks the allocator.
      kiln::IOutputAllocator* allocator = nullptr;
      if (mode.gpu) {
        io.deviceAllocator = std::make_unique<DeviceOutputAllocator>();
        allocator = io.deviceAllocator.get();
      } else {
        io.allocator = std::make_unique<OutputAllocator>();
        allocator = io.allocator.get();
      }
      if (!context_->setOutputAllocator(io.name.c_str(), allocator)) {
        error = "setOutputAllocator failed for output '" + io.name + "'";
        return false;
      }
      continue;
    }
    io.buffer.resize(static_cast<size_t>(io.dims.empty() ? 1 : volume(io.dims)) * elementSize(io.type));
    void* address = io.buffer.data();
    if (mode.gpu) {
      if (!io.deviceBuffer.reserve(io.buffer.bytes, error)) {
        error = "output '" + io.name + "': " + error;
        return false;
      }
      address = io.deviceBuffer.data();
    }
    if (!context_->setTensorAddress(io.name.c_str(), address)) {
      error = "setTensorAddress failed for output '" + io.name + "'";
      return false;
    }
  }
  if (mode.gpu && !impl_->stream.synchronize(error)) return false;  // the inputs are on the device
  return true;
}

bool Runner::infer(std::string& error) {
  if (!impl_->mode.gpu) {
    if (!context_->enqueueV3(nullptr)) {
      error = "inference failed";
      return false;
    }
    return true;
  }
  Impl& m = *impl_;
  if (m.mode.transfers && !m.copyInputs(error)) return false;
  if (!context_->enqueueV3(m.stream.get())) {
    error = "inference failed";
    return false;
  }
  if (m.mode.transfers && !m.copyOutputs(error)) return false;
  return m.stream.synchronize(error);
}

bool Runner::recordOrigin(std::string& error) {
  impl_->hostOrigin = Clock::now();
  if (!impl_->mode.gpu) return true;
  return impl_->origin.record(impl_->stream.get(), error) && impl_->stream.synchronize(error);
}

bool Runner::launch(Clock::time_point origin, std::string& error) {
  Impl& m = *impl_;
  auto const sinceOrigin = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - origin).count(); };
  if (!m.mode.gpu) {
    m.enqStart = sinceOrigin();
    if (!infer(error)) return false;
    m.enqEnd = sinceOrigin();
    return true;
  }
  cudaStream_t const s = m.stream.get();
  if (!m.start.record(s, error)) return false;
  if (m.mode.transfers && !m.copyInputs(error)) return false;
  if (!m.h2dEnd.record(s, error)) return false;
  m.enqStart = sinceOrigin();
  if (m.graphReady) {
    if (!m.graph.launch(s, error)) return false;
  } else if (!context_->enqueueV3(s)) {
    error = "inference failed";
    return false;
  }
  m.enqEnd = sinceOrigin();
  if (!m.computeEnd.record(s, error)) return false;
  if (m.mode.transfers && !m.copyOutputs(error)) return false;
  return m.end.record(s, error);
}

bool Runner::finish(InferenceTime& t, std::string& error) {
  Impl& m = *impl_;
  t.enqStart = m.enqStart;
  t.enqEnd = m.enqEnd;
  if (!m.mode.gpu) {
    // The CPU backends compute inside the enqueue call and use host memory in place.
    t.h2dStart = t.h2dEnd = t.computeStart = t.enqStart;
    t.computeEnd = t.d2hStart = t.d2hEnd = t.enqEnd;
    return true;
  }
  if (!m.stream.synchronize(error) || !device::elapsedMs(m.origin, m.start, t.h2dStart, error) ||
      !device::elapsedMs(m.origin, m.h2dEnd, t.h2dEnd, error) ||
      !device::elapsedMs(m.origin, m.computeEnd, t.computeEnd, error) ||
      !device::elapsedMs(m.origin, m.end, t.d2hEnd, error))
    return false;
  // The parts follow each other on the stream: compute starts when H2D ends, D2H when compute ends.
  t.computeStart = t.h2dEnd;
  t.d2hStart = t.computeEnd;
  return true;
}

bool Runner::captureGraph(std::string& error) {
  Impl& m = *impl_;
  if (!m.mode.gpu) {
    error = "CUDA graphs need the GPU";
    return false;
  }
  kiln::IExecutionContext& ctx = *context_;
  cudaStream_t const s = m.stream.get();
  m.graphReady = m.graph.capture(
      s, [&] { return ctx.enqueueV3(s); }, error);
  return m.graphReady;
}

void Runner::dropGraph() { impl_->graphReady = false; }

std::vector<Tensor> Runner::outputs() {
  if (impl_->mode.gpu) {
    std::string error;
    // A failed copy leaves the host buffers as they were; the caller's check or dump shows stale data then,
    // which the stream's error (reported by the last finish()) already explained.
    if (impl_->copyOutputs(error)) impl_->stream.synchronize(error);
  }
  std::vector<Tensor> out;
  for (auto const& io : impl_->io) {
    if (io.input) continue;
    Tensor t;
    t.name = io.name;
    t.type = io.type;
    t.dims = io.allocator ? io.allocator->shape : io.deviceAllocator ? io.deviceAllocator->shape : io.dims;
    Buffer const& b = io.allocator ? io.allocator->buffer : io.buffer;
    size_t const n = static_cast<size_t>(t.dims.empty() ? 1 : volume(t.dims)) * elementSize(t.type);
    t.bytes.assign(b.data(), b.data() + std::min(n, b.bytes));
    out.push_back(std::move(t));
  }
  return out;
}

void LayerProfiler::reportLayerTime(char const* layerName, float ms) noexcept {
  std::string const name = layerName ? layerName : "";
  auto it = index_.find(name);
  if (it == index_.end()) {
    it = index_.emplace(name, layers_.size()).first;
    layers_.push_back({name, {}});
  }
  layers_[it->second].times.push_back(ms);
}

size_t LayerProfiler::runs() const {
  size_t n = 0;
  for (auto const& l : layers_) n = std::max(n, l.times.size());
  return n;
}

bool benchmark(std::vector<Runner*> const& runners, Options const& o, bool profile, BenchmarkResult& result,
               std::string& error, std::function<void(std::string const&)> const& trace) {
  auto const ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  if (runners.empty()) {
    error = "no execution context to run";
    return false;
  }
  Runner& first = *runners.front();
  bool const gpu = first.gpu();
  result.streams = static_cast<int32_t>(runners.size());
  result.gpu = gpu;
  // One round: an inference on every runner (each on its own stream on the GPU), then wait for all.
  std::vector<InferenceTime> round(runners.size());
  auto runRound = [&](Clock::time_point origin) {
    for (Runner* r : runners)
      if (!r->launch(origin, error)) return false;
    for (size_t i = 0; i < runners.size(); ++i)
      if (!runners[i]->finish(round[i], error)) return false;
    return true;
  };

  // Warm-up: at least one round, then until --warmUp ms have passed.
  auto const warmStart = Clock::now();
  do {
    if (!runRound(warmStart)) return false;
    result.warmUpRuns += static_cast<int32_t>(runners.size());
  } while (ms(warmStart, Clock::now()) < o.warmUpMs);
  result.warmUpMs = ms(warmStart, Clock::now());

  // CUDA graphs are captured after the warm-up, as trtexec does (the first runs set up per-shape state).
  if (gpu && o.useCudaGraph) {
    bool captured = true;
    for (Runner* r : runners) {
      std::string why;
      if (!r->captureGraph(why)) {
        captured = false;
        result.warnings.push_back("--useCudaGraph: the CUDA graph capture failed (" + why +
                                  "); running with enqueueV3 instead");
        break;
      }
    }
    if (!captured)
      for (Runner* r : runners) r->dropGraph();
    result.cudaGraph = captured;
  }

  // Layer times are read from the first context; a replayed graph reports none, so it profiles separately.
  bool const separateProfile = profile && (o.separateProfileRun || result.cudaGraph);
  bool const profileInline = profile && !separateProfile;
  kiln::IExecutionContext& ctx = first.context();
  if (profileInline) ctx.setProfiler(&result.profiler);
  for (Runner* r : runners)
    if (!r->recordOrigin(error)) return false;
  auto const start = Clock::now();
  double const durationMs = o.durationS * 1000.0;
  double windowLatency = 0, windowCompute = 0;
  int32_t window = 0;
  double elapsedMs = 0;
  while (static_cast<int32_t>(result.times.size()) < o.iterations ||
         (elapsedMs = ms(start, Clock::now())) < durationMs) {
    if (!runRound(start)) {
      ctx.setProfiler(nullptr);
      return false;
    }
    for (InferenceTime const& t : round) {
      result.times.push_back(t);
      windowLatency += t.latencyMs();
      windowCompute += t.computeMs();
      if (++window == o.avgRuns) {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "Average on %d runs - latency: %.5g ms - %s compute: %.5g ms", window,
                      windowLatency / window, gpu ? "GPU" : "host", windowCompute / window);
        trace(buf);
        window = 0;
        windowLatency = windowCompute = 0;
      }
    }
  }
  // The timed phase's walltime: from its start until the loop saw both limits reached (or the last inference
  // ended, by the GPU's clock).
  double lastEnd = 0;
  for (auto const& t : result.times) lastEnd = std::max(lastEnd, t.d2hEnd);
  result.walltimeMs = std::max(elapsedMs, lastEnd);
  ctx.setProfiler(nullptr);

  if (separateProfile) {
    // Profiled runs of their own (plain enqueueV3 on the first context), so that profiling costs do not weigh
    // on the timed runs.
    ctx.setProfiler(&result.profiler);
    for (int32_t i = 0; i < std::max<int32_t>(1, o.iterations); ++i)
      if (!first.infer(error)) {
        ctx.setProfiler(nullptr);
        return false;
      }
    ctx.setProfiler(nullptr);
  }
  result.profiled = profile;
  return true;
}

bool benchmark(Runner& runner, Options const& o, bool profile, BenchmarkResult& result, std::string& error,
               std::function<void(std::string const&)> const& trace) {
  return benchmark(std::vector<Runner*>{&runner}, o, profile, result, error, trace);
}

}  // namespace kilnexec
