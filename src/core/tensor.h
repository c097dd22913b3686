// HostTensor: a typed, shaped view of host memory that either borrows the caller's bytes (Weights) or shares
// ownership of a HostBuffer. Copies share the bytes.
#pragma once

#include <memory>
#include <vector>

#include "core/dims.h"
#include "core/dtype.h"
#include "core/memory.h"

namespace kiln {

class HostTensor {
 public:
  HostTensor() = default;
  /// Borrows `data` (not copied; must outlive every use).
  static HostTensor borrow(DataType dtype, Dims const& shape, void const* data);
  /// Allocates a zeroed tensor through the memory hook.
  static Result<HostTensor> allocate(DataType dtype, Dims const& shape, char const* what,
                                     MemoryBudget* budget = nullptr);
  /// An owned copy of this tensor's bytes.
  Result<HostTensor> clone(char const* what, MemoryBudget* budget = nullptr) const;
  /// A view of bytes inside `owner` (kept alive by the tensor): weights inside a loaded plan.
  static HostTensor view(std::shared_ptr<HostBuffer> owner, void const* data, DataType dtype, Dims const& shape);
  /// Owned tensor of the given shape from values, converted to dtype; fails when allocation fails.
  template <typename T>
  static Result<HostTensor> make(DataType dtype, Dims const& shape, std::vector<T> const& v);
  /// make() for tests: an empty tensor when allocation fails.
  template <typename T>
  static HostTensor fromVector(DataType dtype, Dims const& shape, std::vector<T> const& v) {
    auto r = make(dtype, shape, v);
    return r.isOk() ? std::move(r).value() : HostTensor();
  }

  DataType dtype() const { return dtype_; }
  Dims const& shape() const { return shape_; }
  int64_t count() const { return volume(shape_); }
  size_t bytes() const { return static_cast<size_t>(count()) * dataTypeSize(dtype_); }
  void const* data() const { return ptr_; }
  /// Writable bytes; only for tensors this object allocated (nullptr for borrowed ones).
  void* mutableData() const { return owner_ ? const_cast<void*>(ptr_) : nullptr; }
  bool isOwned() const { return owner_ != nullptr; }
  bool empty() const { return ptr_ == nullptr && count() <= 0; }
  template <typename T>
  T const* as() const { return static_cast<T const*>(ptr_); }
  /// Element i converted to int64 (integer and bool types) -- for shape tensors.
  int64_t intAt(int64_t i) const;
  /// Element i converted to double.
  double doubleAt(int64_t i) const;
  /// All elements as int64 (for shape tensors).
  std::vector<int64_t> toInt64Vector() const;
  /// Same dtype, shape and bytes.
  bool sameContents(HostTensor const& o) const;

 private:
  DataType dtype_ = DataType::kFLOAT;
  Dims shape_{};
  void const* ptr_ = nullptr;
  std::shared_ptr<HostBuffer> owner_;
};

template <typename T>
Result<HostTensor> HostTensor::make(DataType dtype, Dims const& shape, std::vector<T> const& v) {
  KILN_ASSIGN_OR_RETURN(HostTensor t, allocate(dtype, shape, "host tensor"));
  if (static_cast<int64_t>(v.size()) != t.count())
    return invalidArgument("HostTensor::make: ", v.size(), " values for shape ", dimsToString(shape));
  KILN_RETURN_IF_ERROR(dispatchType(dtype, [&](auto tag) {
    using S = decltype(tag);
    S* out = static_cast<S*>(t.mutableData());
    for (size_t i = 0; i < v.size(); ++i) out[i] = fromDouble<S>(static_cast<double>(v[i]));
    return Status::ok();
  }));
  return t;
}

}  // namespace kiln
