// HostTensor implementation.
#include "core/tensor.h"

#include <cstring>

namespace kiln {

HostTensor HostTensor::borrow(DataType dtype, Dims const& shape, void const* data) {
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.ptr_ = data;
  return t;
}

HostTensor HostTensor::view(std::shared_ptr<HostBuffer> owner, void const* data, DataType dtype, Dims const& shape) {
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.ptr_ = data;
  t.owner_ = std::move(owner);
  return t;
}

Result<HostTensor> HostTensor::allocate(DataType dtype, Dims const& shape, char const* what, MemoryBudget* budget) {
  KILN_ASSIGN_OR_RETURN(int64_t n, checkedVolume(shape));
  if (dataTypeSize(dtype) == 0) return unsupported("cannot store ", dataTypeName(dtype), " tensors");
  KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(n, dataTypeSize(dtype)));
  KILN_ASSIGN_OR_RETURN(HostBuffer buf, HostBuffer::allocate(bytes, what, budget));
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.owner_ = std::make_shared<HostBuffer>(std::move(buf));
  t.ptr_ = t.owner_->data();
  return t;
}

Result<HostTensor> HostTensor::clone(char const* what, MemoryBudget* budget) const {
  KILN_ASSIGN_OR_RETURN(HostTensor t, allocate(dtype_, shape_, what, budget));
  if (bytes()) std::memcpy(t.mutableData(), ptr_, bytes());
  return t;
}

int64_t HostTensor::intAt(int64_t i) const {
  int64_t r = 0;
  (void)dispatchType(dtype_, [&](auto tag) {
    using S = decltype(tag);
    // A bool is read as its byte (any non-zero is true) so that a stray byte is not undefined behaviour.
    if constexpr (std::is_same_v<S, bool>) r = as<uint8_t>()[i] != 0;
    else if constexpr (std::is_integral_v<S>) r = static_cast<int64_t>(as<S>()[i]);  // exact (uint64 wraps)
    else r = static_cast<int64_t>(toDouble(as<S>()[i]));
    return Status::ok();
  });
  return r;
}

double HostTensor::doubleAt(int64_t i) const {
  double r = 0;
  (void)dispatchType(dtype_, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (std::is_same_v<S, bool>) r = as<uint8_t>()[i] != 0 ? 1.0 : 0.0;
    else r = toDouble(as<S>()[i]);
    return Status::ok();
  });
  return r;
}

std::vector<int64_t> HostTensor::toInt64Vector() const {
  std::vector<int64_t> v(static_cast<size_t>(std::max<int64_t>(count(), 0)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = intAt(static_cast<int64_t>(i));
  return v;
}

bool HostTensor::sameContents(HostTensor const& o) const {
  if (dtype_ != o.dtype_ || !dimsEqual(shape_, o.shape_)) return false;
  return bytes() == 0 || std::memcmp(ptr_, o.ptr_, bytes()) == 0;
}

}  // namespace kiln
