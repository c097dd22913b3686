// Loading of the GPU backend library, and the host-fallback tactics that run reference kernels for a device.
#include "backends/device.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <optional>

namespace kiln::backends {
namespace {

constexpr char const* kFallbackPrefix = "hostfallback_";

// Runs a reference kernel on copies of device tensors: inputs come to the host, the kernel runs, outputs go
// back. Synchronous on the stream; data-dependent outputs get device memory through the device context.
class HostFallbackKernel final : public Kernel {
 public:
  HostFallbackKernel(std::unique_ptr<Kernel> ref, std::string what) : ref_(std::move(ref)), what_(std::move(what)) {}

  Status enqueue(LaunchContext const& ctx) const override {
    auto* ds = dynamic_cast<DeviceStream*>(ctx.stream);
    if (!ds) return internalError(what_, ": the host-fallback kernel runs on a device stream only");
    DeviceBackend* dev = ds->backend();
    void* stream = ds->native();
    if (dev->isCapturing(stream))
      return unsupported(what_, " runs on the host (no GPU kernel for it with these types), which a CUDA graph "
                                "cannot capture");
    LaunchContext host;
    host.pool = ctx.pool;
    host.state = ctx.state;  // made by the reference kernel (createContextState below)
    CpuStream cpu;
    host.stream = &cpu;
    std::vector<HostBuffer> bufs;
    std::vector<TensorInfo> inInfo, outInfo;
    bufs.reserve(ctx.inputs.size() + ctx.outputs.size() + 1);
    for (auto const& t : ctx.inputs) {
      inInfo.push_back({t.dtype, t.shape});
      if (!t.data) {
        host.inputs.push_back(t);
        continue;
      }
      KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(t.count(), dataTypeSize(t.dtype)));
      KILN_ASSIGN_OR_RETURN(HostBuffer b, HostBuffer::allocate(bytes, "host-fallback input"));
      KILN_RETURN_IF_ERROR(dev->copy(b.data(), t.data, bytes, CopyKind::kDeviceToHost, stream));
      host.inputs.push_back({b.data(), t.dtype, t.shape});
      bufs.push_back(std::move(b));
    }
    KILN_RETURN_IF_ERROR(dev->synchronize(stream).withContext(what_ + ": copying inputs to the host"));
    std::vector<std::optional<HostBuffer>> outBufs(ctx.outputs.size());
    std::vector<TensorView> deviceOut = ctx.outputs;
    for (size_t i = 0; i < ctx.outputs.size(); ++i) {
      auto const& t = ctx.outputs[i];
      outInfo.push_back({t.dtype, t.shape});
      if (!dimsKnown(t.shape)) {
        host.outputs.push_back({nullptr, t.dtype, t.shape});
        continue;
      }
      KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(t.count(), dataTypeSize(t.dtype)));
      KILN_ASSIGN_OR_RETURN(outBufs[i], HostBuffer::allocate(bytes, "host-fallback output"));
      host.outputs.push_back({outBufs[i]->data(), t.dtype, t.shape});
    }
    if (ctx.allocateOutput) {
      host.allocateOutput = [&](size_t i, Dims const& shape) -> Result<void*> {
        if (i >= outBufs.size()) return internalError(what_, ": no output ", i);
        KILN_ASSIGN_OR_RETURN(void* d, ctx.allocateOutput(i, shape));
        KILN_ASSIGN_OR_RETURN(int64_t n, checkedVolume(shape));
        KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(n, dataTypeSize(ctx.outputs[i].dtype)));
        KILN_ASSIGN_OR_RETURN(outBufs[i], HostBuffer::allocate(bytes, "host-fallback output"));
        deviceOut[i].data = d;
        deviceOut[i].shape = shape;
        host.outputs[i].data = outBufs[i]->data();
        host.outputs[i].shape = shape;
        return outBufs[i]->data();
      };
    }
    size_t ws = ref_->workspaceSize(inInfo, outInfo);
    HostBuffer wsBuf;
    if (ws) {
      KILN_ASSIGN_OR_RETURN(wsBuf, HostBuffer::allocate(ws, "host-fallback workspace"));
      host.workspace = wsBuf.data();
      host.workspaceSize = ws;
    }
    KILN_RETURN_IF_ERROR(ref_->enqueue(host));
    for (size_t i = 0; i < deviceOut.size(); ++i) {
      if (!outBufs[i] || !deviceOut[i].data) continue;
      KILN_RETURN_IF_ERROR(dev->copy(deviceOut[i].data, outBufs[i]->data(), outBufs[i]->size(), CopyKind::kHostToDevice,
                                     stream));
    }
    // The host buffers die here: the copies must be done.
    return dev->synchronize(stream).withContext(what_ + ": copying outputs to the device");
  }
  Result<std::unique_ptr<KernelContextState>> createContextState(ContextResources const& resources) const override {
    return ref_->createContextState(resources);
  }

 private:
  std::unique_ptr<Kernel> ref_;
  std::string what_;
};

Tactic makeFallback(Tactic const& ref) {
  Tactic t;
  t.name = kFallbackPrefix + ref.name;
  t.op = ref.op;
  t.device = DeviceType::kGPU;
  t.source = TacticSource::kREFERENCE;
  t.priority = -1000;
  t.supports = ref.supports;
  auto create = ref.create;
  t.create = [create](ir::Node const& n) -> Result<std::unique_ptr<Kernel>> {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, create(n));
    return std::unique_ptr<Kernel>(new HostFallbackKernel(std::move(k), n.describe()));
  };
  return t;
}

struct Loaded {
  std::mutex mu;
  std::unique_ptr<DeviceBackend> backend;
  std::optional<Status> error;  // why loading failed (reported on every call)
};

Loaded& loaded() {
  static Loaded* l = new Loaded;  // never destroyed: kernels of live engines may outlive static destruction
  return *l;
}

Status registerTactics(DeviceBackend& b) {
  b.setHostEvaluator(referenceEvaluator());
  auto& reg = TacticRegistry::instance();
  for (Tactic& t : b.tactics()) {
    if (t.device != DeviceType::kGPU) return internalError("device tactic '", t.name, "' is not a GPU tactic");
    reg.add(std::move(t));
  }
  for (Tactic const* t : reg.all())
    if (t->device == DeviceType::kCPU && t->source == TacticSource::kREFERENCE) reg.add(makeFallback(*t));
  return Status::ok();
}

std::string libraryDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gpuBackend), &info) && info.dli_fname) {
    std::string p = info.dli_fname;
    auto slash = p.rfind('/');
    if (slash != std::string::npos) return p.substr(0, slash + 1);
  }
  return "";
}

using CreateFn = DeviceBackend* (*)(int32_t abiVersion, char* error, size_t errorSize);

Result<std::unique_ptr<DeviceBackend>> loadLibrary() {
  std::vector<std::string> tries;
  if (char const* env = std::getenv("KILN_CUDA_LIBRARY"); env && *env) tries.push_back(env);
  std::string dir = libraryDir();
  if (!dir.empty()) tries.push_back(dir + "libkiln_cuda.so.0");
#ifdef KILN_CUDA_BUILD_TREE_DIR
  tries.push_back(std::string(KILN_CUDA_BUILD_TREE_DIR) + "/libkiln_cuda.so.0");
#endif
  tries.push_back("libkiln_cuda.so.0");
  std::string why;
  for (auto const& path : tries) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      char const* e = dlerror();
      why += strCat("\n  ", path, ": ", e ? e : "not loadable");
      continue;
    }
    auto create = reinterpret_cast<CreateFn>(dlsym(h, "kilnCreateCudaBackend"));
    if (!create) {
      why += strCat("\n  ", path, ": no kilnCreateCudaBackend symbol");
      dlclose(h);
      continue;
    }
    char err[512] = {0};
    DeviceBackend* b = create(kDeviceBackendAbiVersion, err, sizeof err);
    if (!b) {
      // The library loaded but the device is unusable (no GPU, driver too old): say so; do not try others.
      return unsupported("the CUDA backend (", path, ") cannot run here: ", err[0] ? err : "unknown reason");
    }
    return std::unique_ptr<DeviceBackend>(b);  // the library stays loaded for the life of the process
  }
  return unsupported("the CUDA backend library libkiln_cuda.so.0 could not be loaded (this Kiln may have been built "
                     "without CUDA); tried:",
                     why);
}

}  // namespace

Result<DeviceBackend*> gpuBackend() {
  Loaded& l = loaded();
  std::lock_guard<std::mutex> lock(l.mu);
  if (l.backend) return l.backend.get();
  if (l.error) return *l.error;
  auto r = loadLibrary();
  if (!r) {
    l.error = r.status();
    return r.status();
  }
  std::unique_ptr<DeviceBackend> b = std::move(r).value();
  if (b->abiVersion() != kDeviceBackendAbiVersion) {
    l.error = unsupported("the CUDA backend library has interface version ", b->abiVersion(), ", this libkiln needs ",
                          kDeviceBackendAbiVersion);
    return *l.error;
  }
  Status s = registerTactics(*b);
  if (!s.isOk()) {
    l.error = s;
    return s;
  }
  l.backend = std::move(b);
  return l.backend.get();
}

Status installGpuBackend(std::unique_ptr<DeviceBackend> backend) {
  Loaded& l = loaded();
  std::lock_guard<std::mutex> lock(l.mu);
  if (l.backend) return Status::ok();
  if (!backend) return invalidArgument("installGpuBackend: null backend");
  KILN_RETURN_IF_ERROR(registerTactics(*backend));
  l.backend = std::move(backend);
  l.error.reset();
  return Status::ok();
}

Result<DeviceBuffer> DeviceBuffer::allocate(DeviceBackend* backend, size_t bytes, char const* what, void* stream) {
  DeviceBuffer b;
  b.backend_ = backend;
  if (bytes == 0) return b;
  auto p = backend->allocate(bytes, stream);
  if (!p) return errorStatus(StatusCode::kOutOfMemory, "out of device memory for ", what, " (", bytes, " bytes): ",
                             p.status().message());
  b.data_ = *p;
  b.size_ = bytes;
  return b;
}

bool isHostFallback(Tactic const& t) { return t.name.rfind(kFallbackPrefix, 0) == 0; }

}  // namespace kiln::backends
