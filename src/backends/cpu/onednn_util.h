// Shared pieces of the oneDNN CPU tactics: the process-wide engine, Kiln's fused activations as oneDNN eltwise
// post-ops, the OpenMP thread count of a launch, and the per-thread scratchpad.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <dnnl.hpp>

#include "backends/backend.h"
#include "kiln/kiln.h"

/// Marks a hot loop of the backend's own to be built for AVX-512, AVX2 and the baseline, the best one picked when
/// the library loads (Kiln itself is built for baseline x86-64). Nothing elsewhere.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KILN_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KILN_CPU_CLONES
#endif

namespace kiln::backends::cpu {

/// The one CPU engine of the process (oneDNN's engine kind cpu, index 0).
dnnl::engine& engine();

/// Appends `activation` (an ActivationType value, -1 none) with TensorRT's alpha/beta meanings to `ops` as
/// oneDNN eltwise post-ops computing the same formula (see reference/activation_math.h); false when oneDNN 2.6
/// has no exact equivalent (softsign, thresholded ReLU, clip with alpha > beta), `ops` then unspecified.
bool appendActivation(dnnl::post_ops& ops, int64_t activation, float alpha, float beta);

/// True when the node's activation attributes map onto oneDNN post-ops.
bool activationSupported(ir::Node const& node);

/// The OpenMP threads of a launch: the runtime's thread pool size (IRuntime::setMaxThreads reaches the kernels as
/// LaunchContext::pool, null for one thread). While it lives, the calling thread's OpenMP thread count is that
/// number (oneDNN sizes its parallel regions from it when a primitive is built and run); the previous count is
/// restored when it goes, so a caller's own OpenMP setting is left as it was.
class OmpThreads {
 public:
  explicit OmpThreads(LaunchContext const& ctx);
  /// The same for a launch touching `elements` values: below kSmallWork it runs on the calling thread alone
  /// (waking the workers would cost more than the work).
  OmpThreads(LaunchContext const& ctx, int64_t elements);
  static constexpr int64_t kSmallWork = int64_t{1} << 15;
  ~OmpThreads();
  OmpThreads(OmpThreads const&) = delete;
  OmpThreads& operator=(OmpThreads const&) = delete;
  int count() const { return count_; }

 private:
  int previous_;
  int count_;
};

/// The calling thread's OpenMP thread count now (what a primitive built outside a launch is sized for).
int currentThreads();

/// At a kernel's creation, when the node's x (input 0) and y (output 0) shapes are known and not empty: builds the
/// kernel's primitive for them (`kernel.primitive(x, y, threads)`), so its weights are reordered or packed once,
/// here, rather than on the first run.
template <typename K>
Status buildPrimitiveForKnownShapes(K& kernel, ir::Node const& node) {
  ir::Value const* x = node.input(0);
  ir::Value const* y = node.output(0);
  if (!x || !y || !dimsKnown(x->shape) || !dimsKnown(y->shape) || volume(x->shape) <= 0 || volume(y->shape) <= 0)
    return Status::ok();
  return kernel.primitive(x->shape, y->shape, currentThreads()).status();
}

/// The Constant feeding input `i` of `node`, or null when that input is not a Constant's output.
HostTensor const* constantInput(ir::Node const& node, size_t i);

/// Constant weights in every format the primitives of one kernel asked for, each reordered once from the
/// plain layout. Not synchronized: the owning kernel calls it under its own mutex.
class PackedWeights {
 public:
  /// The weights in format `want`, reordering `plain` (which views the constant) the first time.
  dnnl::memory get(dnnl::memory::desc const& want, dnnl::memory::desc const& plain, void const* data);

 private:
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> packed_;
};

/// One kernel's primitives by shape key (activation dims, thread count, ...): kernels are shared by many threads,
/// so lookups and builds happen under the cache's lock. `build` runs under it too, so state only builds touch
/// (e.g. a kernel's PackedWeights) needs no lock of its own.
template <typename P>
class PrimitiveCache {
 public:
  template <typename Build>
  Result<std::shared_ptr<P const>> get(std::vector<int64_t> key, Build&& build) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<P const> p, build());
    cache_.emplace(std::move(key), p);
    return p;
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<P const>> cache_;
};

/// A 64-byte aligned scratch buffer of at least `bytes`, private to the calling thread (kept between calls, so
/// steady-state runs do not allocate). oneDNN's primitives run with a user scratchpad so one primitive may run
/// from many threads at once. `slot` (0..3) picks one of several independent buffers (0: the scratchpad; others:
/// activations reordered into the format a primitive wants).
void* threadScratch(size_t bytes, int slot = 0);

/// Memory formats of 4-D activations between oneDNN layers, as the builder records them in a node's
/// `cpu_formats_in` / `cpu_formats_out` attributes (one value per input / output; absent means plain).
enum class ActFormat : int64_t {
  kPLAIN = 0,     ///< NCHW row-major, Kiln's layout
  kNHWC = 1,      ///< channels last
  kNCHW8C = 8,    ///< nChw8c: channels in blocks of 8 (C % 8 == 0)
  kNCHW16C = 16,  ///< nChw16c: channels in blocks of 16 (C % 16 == 0)
};

/// True when `v` is one of ActFormat's values.
bool validActFormat(int64_t v);

/// The format attribute `key` ("cpu_formats_in" / "cpu_formats_out") of `node` gives entry `i`: plain when absent.
ActFormat nodeFormat(ir::Node const& node, char const* key, size_t i);

/// The oneDNN memory descriptor of an activation of shape `d` and element type `dt` (float32 unless given) in
/// format `f` (rank 4 for the non-plain formats; a blocked format needs C divisible by its block).
Result<dnnl::memory::desc> activationDesc(Dims const& d, ActFormat f,
                                          dnnl::memory::data_type dt = dnnl::memory::data_type::f32);

/// The activation format oneDNN's fp32 convolutions prefer on this CPU (asked once from a sample 3x3
/// convolution; oneDNN 2.6 answers channels-last on AVX-512 machines); kPLAIN when the answer is none of
/// ActFormat's. The environment variable KILN_CPU_ACTIVATION_FORMAT (an ActFormat value) overrides it.
ActFormat preferredConvFormat();

/// A reorder primitive from `from` to `to` (null when the two are the same: nothing to do).
std::shared_ptr<dnnl::reorder const> makeReorder(dnnl::memory::desc const& from, dnnl::memory::desc const& to);

/// Runs `r` (from makeReorder) from `src` to `dst` on `stream`; a plain copy when `r` is null and the pointers differ.
void runReorder(dnnl::reorder const* r, dnnl::memory::desc const& from, void const* src, dnnl::memory::desc const& to,
                void* dst, dnnl::stream& stream);

/// oneDNN's right padding of a window along one dim, which must satisfy out == (in + padL + padR - dk) / stride
/// + 1: TensorRT's padEnd, or more when the output size was rounded up (the extra reads zeros, as in the
/// reference); -1 when that would need negative padding.
int64_t rightPadding(int64_t in, int64_t out, int64_t dk, int64_t stride, int64_t padBegin, int64_t padEnd);

/// Whether oneDNN's effective ISA includes AVX-512 (avx512_core): what its bf16 and Winograd convolutions need.
/// Read once (ONEDNN_MAX_CPU_ISA can lower it, as the tests do to check the refusals).
bool onednnAvx512();

/// Whether oneDNN runs bf16 primitives on this CPU (onednnAvx512()). oneDNN 2.x has them from AVX-512 (avx512_core,
/// emulated below avx512_core_bf16) up; on a CPU without AVX-512 every bf16 primitive descriptor fails to be created,
/// so the oneDNN tactics take no bf16 there (the builder keeps float32, or runs the reference kernels) instead of
/// failing the build.
bool bf16Supported();

/// oneDNN's element type for a Kiln float type: f32 or bf16 (the types the oneDNN tactics run, bf16 only where
/// bf16Supported()); nullopt otherwise.
std::optional<dnnl::memory::data_type> dnnlFloatType(DataType t);

/// oneDNN dims of a Kiln shape.
dnnl::memory::dims toDnnl(Dims const& d);

}  // namespace kiln::backends::cpu
