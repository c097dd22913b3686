// Shared reference-kernel helpers.
#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {

Tactic makeTactic(std::string name, ir::OpType op, std::function<Result<std::unique_ptr<Kernel>>(ir::Node const&)> create,
                  std::function<bool(ir::Node const&, std::vector<TensorInfo> const&, std::vector<TensorInfo> const&)>
                      supports) {
  Tactic t;
  t.name = std::move(name);
  t.op = op;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kREFERENCE;
  t.priority = 0;
  t.create = std::move(create);
  t.supports = std::move(supports);
  return t;
}

bool typeIn(DataType t, std::initializer_list<DataType> types) {
  for (DataType x : types)
    if (x == t) return true;
  return false;
}

std::vector<int64_t> broadcastStrides(Dims const& in, Dims const& out) {
  std::vector<int64_t> s(static_cast<size_t>(out.nbDims), 0);
  std::vector<int64_t> inStrides = rowMajorStrides(in);
  for (int32_t i = 0; i < in.nbDims; ++i) {
    int32_t o = i + (out.nbDims - in.nbDims);
    if (o >= 0 && in.d[i] != 1) s[o] = inStrides[i];
  }
  return s;
}

double loadAsDouble(TensorView const& v, int64_t i) {
  double r = 0;
  (void)dispatchType(v.dtype, [&](auto tag) {
    using S = decltype(tag);
    r = toDouble(static_cast<S const*>(v.data)[i]);
    return Status::ok();
  });
  return r;
}

void storeFromDouble(TensorView const& v, int64_t i, double x) {
  (void)dispatchType(v.dtype, [&](auto tag) {
    using S = decltype(tag);
    static_cast<S*>(v.data)[i] = fromDouble<S>(x);
    return Status::ok();
  });
}

int64_t loadAsInt(TensorView const& v, int64_t i) {
  int64_t r = 0;
  (void)dispatchType(v.dtype, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (std::is_integral_v<S>) r = static_cast<int64_t>(static_cast<S const*>(v.data)[i]);
    else r = static_cast<int64_t>(toDouble(static_cast<S const*>(v.data)[i]));
    return Status::ok();
  });
  return r;
}

void storeFromInt(TensorView const& v, int64_t i, int64_t x) {
  (void)dispatchType(v.dtype, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (std::is_same_v<S, bool>) static_cast<S*>(v.data)[i] = x != 0;
    else if constexpr (std::is_integral_v<S>) static_cast<S*>(v.data)[i] = static_cast<S>(x);  // wraps like a C cast
    else static_cast<S*>(v.data)[i] = fromDouble<S>(static_cast<double>(x));
    return Status::ok();
  });
}

}  // namespace kiln::backends::reference
