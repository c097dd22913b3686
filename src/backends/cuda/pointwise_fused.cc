// CUDA tactic of PointwiseFused: the program's CUDA C (pointwise_codegen.cc) compiled by NVRTC to a CUBIN for the
// device's architecture when the kernel is created (at build and at load, never in enqueue), loaded with
// cudaLibraryLoadData and launched with cudaLaunchKernel. Modules are cached process-wide by device and source, so
// identical chains (every layer of a BERT) compile once.
#include <nvrtc.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/cuda_util.h"
#include "backends/cuda/pointwise_codegen.h"
#include "backends/cuda/pointwise_fused.h"

namespace kiln::cuda {
namespace {

using backends::LaunchContext;
using backends::TensorView;

struct Module {
  cudaLibrary_t library = nullptr;
  cudaKernel_t vec = nullptr;
  cudaKernel_t bcast32 = nullptr;
  cudaKernel_t bcast64 = nullptr;
};

// Process-wide: modules stay loaded for the process's life (a cache, like the per-thread cuBLASLt handles).
std::mutex& cacheMutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::shared_ptr<Module const>>& cache() {
  static auto* c = new std::map<std::string, std::shared_ptr<Module const>>();
  return *c;
}
int64_t& compileCount() {
  static int64_t n = 0;
  return n;
}

Result<std::shared_ptr<Module const>> loadModule(std::string const& source, std::string const& what) {
  int device = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device), what + ": cudaGetDevice");
  int major = 0, minor = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), what);
  KILN_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), what);
  std::string const arch = strCat("sm_", major, minor);
  std::string const key = strCat("device ", device, " ", arch, "\n", source);
  std::lock_guard<std::mutex> lock(cacheMutex());
  auto it = cache().find(key);
  if (it != cache().end()) return it->second;
  KILN_ASSIGN_OR_RETURN(std::string cubin, compilePointwiseSource(source, arch, what));
  auto m = std::make_shared<Module>();
  KILN_CUDA_RETURN_IF_ERROR(cudaLibraryLoadData(&m->library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
                            what + ": loading the generated pointwise module");
  char const* names[3] = {pwgen::kVectorKernel, pwgen::kBroadcast32Kernel, pwgen::kBroadcast64Kernel};
  cudaKernel_t* kernels[3] = {&m->vec, &m->bcast32, &m->bcast64};
  for (int i = 0; i < 3; ++i) {
    KILN_CUDA_RETURN_IF_ERROR(cudaLibraryGetKernel(kernels[i], m->library, names[i]),
                              strCat(what, ": kernel ", names[i], " of the generated module"));
    // Loads the kernel into this device's context now: a lazy load at the first launch could fall inside a
    // CUDA graph capture.
    cudaFuncAttributes attrs{};
    KILN_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attrs, reinterpret_cast<void const*>(*kernels[i])),
                              strCat(what, ": kernel ", names[i], " of the generated module"));
  }
  ++compileCount();
  cache()[key] = m;
  return std::shared_ptr<Module const>(m);
}

// Whether input `k` broadcast to `out` walks it contiguously (its extents equal out's where out's exceed 1).
bool isFull(Dims const& in, Dims const& out) {
  int32_t const lead = out.nbDims - in.nbDims;
  for (int32_t d = 0; d < out.nbDims; ++d) {
    int64_t e = d >= lead ? in.d[d - lead] : 1;
    if (out.d[d] != 1 && e != out.d[d]) return false;
  }
  return true;
}

bool aligned16(void const* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

class PointwiseFusedKernel final : public backends::Kernel {
 public:
  PointwiseFusedKernel(std::shared_ptr<Module const> m, std::vector<DataType> inTypes, DataType outType, int smCount,
                       std::string what)
      : module_(std::move(m)),
        inTypes_(std::move(inTypes)),
        outType_(outType),
        smCount_(smCount),
        what_(std::move(what)) {}

  Status enqueue(LaunchContext const& ctx) const override {
    if (ctx.inputs.size() != inTypes_.size() || ctx.outputs.size() != 1)
      return invalidArgument(what_, ": ", ctx.inputs.size(), " inputs and ", ctx.outputs.size(),
                             " outputs where the kernel takes ", inTypes_.size(), " and 1");
    TensorView const& y = ctx.outputs[0];
    if (y.dtype != outType_)
      return invalidArgument(what_, ": output is ", dataTypeName(y.dtype), ", not ", dataTypeName(outType_));
    Dims const& out = y.shape;
    if (out.nbDims < 0 || out.nbDims > Dims::MAX_DIMS) return unsupported(what_, ": output rank ", out.nbDims);
    pwgen::Params p{};
    p.out = y.data;
    p.n = y.count();
    if (p.n <= 0) return Status::ok();
    bool vec = aligned16(y.data);
    // Per-input strides over out's dims (0 where broadcast).
    int64_t st[ir::kPointwiseMaxInputs][Dims::MAX_DIMS] = {};
    for (size_t k = 0; k < inTypes_.size(); ++k) {
      TensorView const& x = ctx.inputs[k];
      if (x.dtype != inTypes_[k])
        return invalidArgument(what_, ": input ", k, " is ", dataTypeName(x.dtype), ", not ",
                               dataTypeName(inTypes_[k]));
      if (x.shape.nbDims < 0 || x.shape.nbDims > out.nbDims)
        return invalidArgument(what_, ": input ", k, " ", dimsToString(x.shape), " does not broadcast to ",
                               dimsToString(out));
      int64_t stride = 1;
      int32_t const lead = out.nbDims - x.shape.nbDims;
      for (int32_t d = out.nbDims - 1; d >= 0; --d) {
        int64_t e = d >= lead ? x.shape.d[d - lead] : 1;
        if (e != 1 && e != out.d[d])
          return invalidArgument(what_, ": input ", k, " ", dimsToString(x.shape), " does not broadcast to ",
                                 dimsToString(out));
        st[k][d] = e == 1 ? 0 : stride;
        stride *= e;
      }
      p.in[k] = x.data;
      if (x.count() == 1)
        p.scalarMask |= 1u << k;
      else if (!isFull(x.shape, out) || !aligned16(x.data))
        vec = false;
    }
    cudaStream_t const stream = streamOf(ctx);
    int64_t const maxBlocks = int64_t{smCount_} * 16;
    void* args[] = {&p};
    if (vec) {
      int64_t const work = std::max<int64_t>(1, p.n / pwgen::vectorWidth(outType_));
      int64_t const blocks = std::min<int64_t>(maxBlocks, (work + pwgen::kThreads - 1) / pwgen::kThreads);
      KILN_CUDA_RETURN_IF_ERROR(
          cudaLaunchKernel(reinterpret_cast<void const*>(module_->vec), dim3(static_cast<unsigned>(blocks)),
                           dim3(pwgen::kThreads), args, 0, stream),
          what_ + ": generated kernel launch");
      return Status::ok();
    }
    // Merge dims: drop extents of 1, join neighbours every input walks as one.
    int32_t r = 0;
    for (int32_t d = 0; d < out.nbDims; ++d) {
      if (out.d[d] == 1) continue;
      bool merge = r > 0;
      for (size_t k = 0; k < inTypes_.size() && merge; ++k) merge = p.strides[k][r - 1] == st[k][d] * out.d[d];
      if (merge) {
        p.dims[r - 1] *= out.d[d];
      } else {
        if (r == pwgen::kMaxRank)
          return unsupported(what_, ": broadcast of ", dimsToString(out), " needs more than ", pwgen::kMaxRank,
                             " dims");
        p.dims[r] = out.d[d];
        ++r;
      }
      for (size_t k = 0; k < inTypes_.size(); ++k) p.strides[k][r - 1] = st[k][d];
    }
    p.rank = r;
    int64_t const blocks = std::min<int64_t>(maxBlocks, (p.n + pwgen::kThreads - 1) / pwgen::kThreads);
    // 32-bit index math where every index fits (inputs are never larger than the output).
    cudaKernel_t const k = p.n < (int64_t{1} << 31) ? module_->bcast32 : module_->bcast64;
    KILN_CUDA_RETURN_IF_ERROR(cudaLaunchKernel(reinterpret_cast<void const*>(k), dim3(static_cast<unsigned>(blocks)),
                                               dim3(pwgen::kThreads), args, 0, stream),
                              what_ + ": generated kernel launch");
    return Status::ok();
  }

 private:
  std::shared_ptr<Module const> module_;
  std::vector<DataType> inTypes_;
  DataType outType_;
  int smCount_;
  std::string what_;
};

Result<ir::PointwiseProgram> programOf(ir::Node const& node, std::vector<DataType>* types) {
  for (ir::Value const* v : node.inputs) {
    if (!v) return invalidGraph(node.describe(), ": an input is absent");
    types->push_back(v->dtype);
  }
  if (node.outputs.size() != 1 || !node.outputs[0]) return invalidGraph(node.describe(), ": needs one output");
  return ir::decodePointwiseProgram(node.attrs, *types, node.outputs[0]->dtype, node.describe());
}

backends::Tactic makePointwiseFused() {
  backends::Tactic t;
  t.name = "pointwisefused_cuda_nvrtc";
  t.op = ir::OpType::kPointwiseFused;
  t.device = DeviceType::kGPU;
  t.source = TacticSource::kKILN;
  t.priority = 10;
  // Channels-last too where every input has the output's shape or one element (the flat order is then the same
  // for all, so the kernel needs no layout), as the unfused pointwise tactics: a chain between channels-last
  // convolutions (MobileNet's and EfficientNet's swish) then needs no reformat.
  t.formatAware = true;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (!backends::elementWiseLayoutOk(node, in, out) || out.size() != 1) return false;
    if (out[0].shape.nbDims > Dims::MAX_DIMS) return false;
    std::vector<DataType> types;
    for (auto const& i : in) types.push_back(i.dtype);
    return ir::decodePointwiseProgram(node.attrs, types, out[0].dtype, node.describe()).isOk();
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    std::vector<DataType> types;
    KILN_ASSIGN_OR_RETURN(ir::PointwiseProgram p, programOf(node, &types));
    DataType const outType = node.outputs[0]->dtype;
    std::string const source = pwgen::generateSource(p, types, outType);
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Module const> m, loadModule(source, node.describe()));
    int device = 0, sms = 0;
    KILN_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device), node.describe());
    KILN_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), node.describe());
    return std::unique_ptr<backends::Kernel>(
        new PointwiseFusedKernel(std::move(m), std::move(types), outType, std::max(sms, 1), node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makePointwiseFused);

}  // namespace

Result<std::string> compilePointwiseSource(std::string const& source, std::string const& arch,
                                           std::string const& what) {
  nvrtcProgram prog = nullptr;
  nvrtcResult r = nvrtcCreateProgram(&prog, source.c_str(), "kiln_pointwise_fused.cu", 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) return internalError(what, ": NVRTC could not create a program: ", nvrtcGetErrorString(r));
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(&prog, [](nvrtcProgram* q) { nvrtcDestroyProgram(q); });
  std::string const archOpt = "--gpu-architecture=" + arch;
  char const* opts[] = {archOpt.c_str(), "-std=c++17"};
  r = nvrtcCompileProgram(prog, 2, opts);
  if (r != NVRTC_SUCCESS) {
    size_t logSize = 0;
    std::string log;
    if (nvrtcGetProgramLogSize(prog, &logSize) == NVRTC_SUCCESS && logSize > 1) {
      log.resize(logSize);
      if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    return internalError(what, ": NVRTC could not compile the generated pointwise kernel for ", arch, " (",
                         nvrtcGetErrorString(r), "): ", log);
  }
  size_t size = 0;
  r = nvrtcGetCUBINSize(prog, &size);
  if (r != NVRTC_SUCCESS || size == 0)
    return internalError(what, ": NVRTC gave no CUBIN for ", arch, " (", nvrtcGetErrorString(r), ")");
  std::string cubin(size, '\0');
  r = nvrtcGetCUBIN(prog, cubin.data());
  if (r != NVRTC_SUCCESS)
    return internalError(what, ": NVRTC could not return the CUBIN (", nvrtcGetErrorString(r), ")");
  return cubin;
}

int64_t pointwiseModulesCompiled() {
  std::lock_guard<std::mutex> lock(cacheMutex());
  return compileCount();
}

}  // namespace kiln::cuda
