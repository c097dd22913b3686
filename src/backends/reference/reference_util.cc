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
  switch (v.dtype) {
    case DataType::kINT64: return static_cast<int64_t const*>(v.data)[i];
    case DataType::kINT32: return static_cast<int32_t const*>(v.data)[i];
    case DataType::kINT8: return static_cast<int8_t const*>(v.data)[i];
    case DataType::kUINT8: return static_cast<uint8_t const*>(v.data)[i];
    case DataType::kBOOL: return static_cast<bool const*>(v.data)[i] ? 1 : 0;
    default: return static_cast<int64_t>(loadAsDouble(v, i));
  }
}

void storeFromInt(TensorView const& v, int64_t i, int64_t x) {
  switch (v.dtype) {
    case DataType::kINT64: static_cast<int64_t*>(v.data)[i] = x; return;
    case DataType::kINT32: static_cast<int32_t*>(v.data)[i] = static_cast<int32_t>(x); return;
    case DataType::kINT8: static_cast<int8_t*>(v.data)[i] = static_cast<int8_t>(x); return;
    case DataType::kUINT8: static_cast<uint8_t*>(v.data)[i] = static_cast<uint8_t>(x); return;
    case DataType::kBOOL: static_cast<bool*>(v.data)[i] = x != 0; return;
    default: storeFromDouble(v, i, static_cast<double>(x)); return;
  }
}

}  // namespace kiln::backends::reference
