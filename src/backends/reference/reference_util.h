// Shared pieces of the reference kernels: tactic construction, dtype support checks, broadcasting index math.
// Reference kernels are plain loops that compute in double (int64 for integers) and round once on store:
// obviously correct, bit-exact whatever the thread count, the oracle every other backend is tested against.
#pragma once

#include <array>
#include <initializer_list>
#include <memory>
#include <vector>

#include "backends/backend.h"
#include "core/dims.h"
#include "core/dtype.h"
#include "kiln/kiln.h"

namespace kiln::backends::reference {

/// A reference Tactic for `op` named `name`; `supports` may be empty (supports everything).
Tactic makeTactic(std::string name, ir::OpType op,
                  std::function<Result<std::unique_ptr<Kernel>>(ir::Node const&)> create,
                  std::function<bool(ir::Node const&, std::vector<TensorInfo> const&, std::vector<TensorInfo> const&)>
                      supports = {});

/// True when `t` is one of `types`.
bool typeIn(DataType t, std::initializer_list<DataType> types);
/// The float types every float op supports: float32, float16, bfloat16, and Kiln's float64.
inline bool isComputeFloat(DataType t) {
  return typeIn(t, {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFLOAT64});
}

/// Kernel from a lambda: `Status(LaunchContext const&)`.
template <typename F>
class LambdaKernel final : public Kernel {
 public:
  explicit LambdaKernel(F f) : f_(std::move(f)) {}
  Status enqueue(LaunchContext const& ctx) const override { return f_(ctx); }

 private:
  F f_;
};
template <typename F>
std::unique_ptr<Kernel> makeKernel(F f) {
  return std::make_unique<LambdaKernel<F>>(std::move(f));
}

/// Strides (in elements) for reading a tensor of shape `in` broadcast to `out` (0 along broadcast axes);
/// `in` is right-aligned against `out`.
std::vector<int64_t> broadcastStrides(Dims const& in, Dims const& out);

/// Walks every index of `shape` in row-major order calling fn(linearOut, offsets...) where offsets[k] is
/// the element offset into operand k given per-operand strides. Simple and fast enough for references.
template <size_t K, typename F>
void forEachIndex(Dims const& shape, std::array<std::vector<int64_t>, K> const& strides, F&& fn) {
  int32_t rank = shape.nbDims;
  int64_t total = volume(shape);
  if (total <= 0) return;
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  std::array<int64_t, K> off{};
  for (int64_t lin = 0; lin < total; ++lin) {
    fn(lin, off);
    for (int32_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape.d[d]) {
        for (size_t k = 0; k < K; ++k) off[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < K; ++k) off[k] -= strides[k][d] * (shape.d[d] - 1);
      idx[d] = 0;
    }
  }
}

/// Loads element i of a view as double / stores a double with the storage type's rounding.
double loadAsDouble(TensorView const& v, int64_t i);
void storeFromDouble(TensorView const& v, int64_t i, double x);
/// Loads element i of an integer or bool view as int64 (exact).
int64_t loadAsInt(TensorView const& v, int64_t i);
void storeFromInt(TensorView const& v, int64_t i, int64_t x);

}  // namespace kiln::backends::reference
