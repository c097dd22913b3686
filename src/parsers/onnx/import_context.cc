// ImportContext, constants, attribute readers, TensorProto decoding, shape helpers and the op registry of
// the ONNX parser.
#include "parsers/onnx/import_context.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

namespace kiln::onnx {

int64_t elementSize(DataType type) {
  switch (type) {
    case DataType::kFLOAT:
    case DataType::kINT32:
    case DataType::kUINT32:
      return 4;
    case DataType::kHALF:
    case DataType::kBF16:
    case DataType::kINT16:
    case DataType::kUINT16:
      return 2;
    case DataType::kINT8:
    case DataType::kUINT8:
    case DataType::kBOOL:
    case DataType::kFP8:
    case DataType::kE8M0:
      return 1;
    case DataType::kINT64:
    case DataType::kFLOAT64:
    case DataType::kUINT64:
      return 8;
    case DataType::kINT4:
    case DataType::kFP4:
      return 0;
  }
  return 0;
}

Result<DataType> fromOnnxType(int32_t onnxType) {
  using TP = ::onnx::TensorProto;
  switch (onnxType) {
    case TP::FLOAT: return DataType::kFLOAT;
    case TP::FLOAT16: return DataType::kHALF;
    case TP::BFLOAT16: return DataType::kBF16;
    case TP::DOUBLE: return DataType::kFLOAT64;
    case TP::INT8: return DataType::kINT8;
    case TP::UINT8: return DataType::kUINT8;
    case TP::INT16: return DataType::kINT16;
    case TP::UINT16: return DataType::kUINT16;
    case TP::INT32: return DataType::kINT32;
    case TP::UINT32: return DataType::kUINT32;
    case TP::INT64: return DataType::kINT64;
    case TP::UINT64: return DataType::kUINT64;
    case TP::BOOL: return DataType::kBOOL;
    // TensorProto values newer than the ONNX headers Kiln builds against (ONNX 1.14+ / 1.16+).
    case kOnnxFloat8E4M3FN: return DataType::kFP8;
    case 18:
    case 19:
    case 20:
      return fail(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, "ONNX element type ", onnxType, " (",
                  onnxType == 18 ? "FLOAT8E4M3FNUZ" : onnxType == 19 ? "FLOAT8E5M2" : "FLOAT8E5M2FNUZ",
                  ") is not supported: Kiln has only FLOAT8E4M3FN (kFP8)");
    case kOnnxUint4:
    case kOnnxInt4:
      return fail(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, "ONNX element type ", onnxType, " (",
                  onnxType == kOnnxInt4 ? "INT4" : "UINT4",
                  ") is not supported as a tensor type (only as the target or source of Cast)");
    case TP::STRING:
      return fail(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, "STRING tensors are not supported (ONNX element type ",
                  onnxType, ")");
    default:
      return fail(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, "ONNX element type ", onnxType, " is not supported");
  }
}

std::string dimsString(Dims const& dims) {
  std::string s = "[";
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    s += (i ? "," : "") + std::to_string(dims.d[i]);
  }
  return s + "]";
}

int64_t Constant::count() const {
  int64_t n = 1;
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    n *= dims.d[i];
  }
  return n;
}

namespace {
template <typename T>
T loadAs(Constant const& c, int64_t i) {
  uint8_t const* p = c.bytes.data() + i * elementSize(c.type);
  auto read = [p](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (c.type) {
    case DataType::kFLOAT: return static_cast<T>(read(float{}));
    case DataType::kFLOAT64: return static_cast<T>(read(double{}));
    case DataType::kINT32: return static_cast<T>(read(int32_t{}));
    case DataType::kINT64: return static_cast<T>(read(int64_t{}));
    case DataType::kINT8: return static_cast<T>(read(int8_t{}));
    case DataType::kUINT8:
    case DataType::kBOOL: return static_cast<T>(read(uint8_t{}));
    case DataType::kINT16: return static_cast<T>(read(int16_t{}));
    case DataType::kUINT16: return static_cast<T>(read(uint16_t{}));
    case DataType::kUINT32: return static_cast<T>(read(uint32_t{}));
    case DataType::kUINT64: return static_cast<T>(read(uint64_t{}));
    case DataType::kHALF: {
      uint16_t h = read(uint16_t{});
      uint32_t sign = (h & 0x8000U) << 16U;
      uint32_t exp = (h >> 10U) & 0x1FU;
      uint32_t man = h & 0x3FFU;
      float f;
      if (exp == 0) {
        f = std::ldexp(static_cast<float>(man), -24);
        return static_cast<T>(sign ? -f : f);
      }
      uint32_t bits = sign | ((exp == 31 ? 255U : exp + 112U) << 23U) | (man << 13U);
      std::memcpy(&f, &bits, 4);
      return static_cast<T>(f);
    }
    case DataType::kBF16: {
      uint32_t bits = static_cast<uint32_t>(read(uint16_t{})) << 16U;
      float f;
      std::memcpy(&f, &bits, 4);
      return static_cast<T>(f);
    }
    case DataType::kFP8:
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0:
      return T{};
  }
  return T{};
}
}  // namespace

double Constant::asDouble(int64_t i) const { return loadAs<double>(*this, i); }
int64_t Constant::asInt(int64_t i) const {
  if (type == DataType::kFLOAT || type == DataType::kFLOAT64 || type == DataType::kHALF || type == DataType::kBF16) {
    double d = asDouble(i);
    if (!(d > -9.2e18 && d < 9.2e18)) {
      return d > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    }
    return static_cast<int64_t>(d);
  }
  return loadAs<int64_t>(*this, i);
}

//
// ImportContext
//

int64_t ImportContext::opset(std::string const& domain) const {
  std::string d = domain == "ai.onnx" ? "" : domain;
  auto it = opsets_.find(d);
  return it == opsets_.end() ? 0 : it->second;
}

Result<Value> ImportContext::value(std::string const& name) {
  auto it = values_.find(name);
  if (it == values_.end()) {
    return fail(ErrorCode::kINVALID_GRAPH, "value '", name, "' is not defined");
  }
  return it->second;
}

Result<ITensor*> ImportContext::tensor(::onnx::NodeProto const& node, int i) {
  if (!hasInput(node, i)) {
    return nodeError(ErrorCode::kINVALID_NODE, node, "input ", i, " is missing");
  }
  auto it = values_.find(node.input(i));
  if (it == values_.end()) {
    return nodeError(ErrorCode::kINVALID_GRAPH, node, "input '", node.input(i), "' is not defined");
  }
  Value& v = it->second;
  if (v.tensor == nullptr) {
    KO_ASSIGN_OR_RETURN(v.tensor, constantTensor(v.constant, node.input(i)));
  }
  return v.tensor;
}

Constant const* ImportContext::constant(::onnx::NodeProto const& node, int i) {
  if (!hasInput(node, i)) {
    return nullptr;
  }
  auto it = values_.find(node.input(i));
  return it == values_.end() ? nullptr : it->second.constant;
}

Status ImportContext::insertValue(std::string const& name, Value v, char const* what) {
  if (scopes_.empty()) {
    if (values_.count(name) != 0) {
      return fail(ErrorCode::kINVALID_GRAPH, what, " '", name, "' is already defined");
    }
    values_[name] = v;
    return Status::success();
  }
  auto& scope = scopes_.back();
  if (scope.count(name) != 0) {
    return fail(ErrorCode::kINVALID_GRAPH, what, " '", name, "' is already defined in this subgraph");
  }
  auto it = values_.find(name);
  scope[name] = it == values_.end() ? std::nullopt : std::optional<Value>(it->second);
  values_[name] = v;
  return Status::success();
}

void ImportContext::popScope() {
  if (scopes_.empty()) {
    return;
  }
  for (auto& [name, shadowed] : scopes_.back()) {
    if (shadowed) {
      values_[name] = *shadowed;
    } else {
      values_.erase(name);
    }
  }
  scopes_.pop_back();
  prefixes_.pop_back();
}

Status ImportContext::setOutput(::onnx::NodeProto const& node, int i, ITensor* t) {
  if (i >= node.output_size() || node.output(i).empty()) {
    return Status::success();  // an omitted optional output
  }
  if (t == nullptr) {
    return nodeError(ErrorCode::kINTERNAL_ERROR, node, "output ", i, " was not created");
  }
  std::string const& name = node.output(i);
  if (values_.count(name) != 0 && (scopes_.empty() || scopes_.back().count(name) != 0)) {
    return nodeError(ErrorCode::kINVALID_GRAPH, node, "output '", name, "' is already defined");
  }
  std::string const tensorName = prefixes_.empty() ? name : prefixes_.back() + name;
  if (!t->isNetworkInput()) {
    t->setName(tensorName.c_str());
  } else {
    // An Identity of a graph input: give the output its own tensor so the name stays unique.
    IIdentityLayer* id = network_.addIdentity(*t);
    KO_RETURN_IF_ERROR(check(id, node, "identity"));
    t = id->getOutput(0);
    t->setName(tensorName.c_str());
  }
  Status s = insertValue(name, Value{t, nullptr}, "output");
  return s.ok() ? s : nodeError(s.code, node, s.message);
}

Status ImportContext::setOutputConstant(::onnx::NodeProto const& node, int i, Constant const* c) {
  if (i >= node.output_size() || node.output(i).empty()) {
    return Status::success();
  }
  Status s = insertValue(node.output(i), Value{nullptr, c}, "output");
  return s.ok() ? s : nodeError(s.code, node, s.message);
}

Status ImportContext::define(std::string const& name, Value v) {
  if (scopes_.empty() && values_.count(name) != 0) {
    return fail(ErrorCode::kINVALID_GRAPH, "value '", name, "' is defined twice");
  }
  return insertValue(name, v, "value");
}

Result<Constant*> ImportContext::newConstant(DataType type, Dims const& dims) {
  int64_t n = 1;
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    if (dims.d[i] < 0 || (dims.d[i] > 0 && n > kMaxConstantElements / dims.d[i])) {
      return fail(ErrorCode::kMEM_ALLOC_FAILED, "constant of shape ", dimsString(dims), " is too large");
    }
    n *= dims.d[i];
  }
  KO_RETURN_IF_ERROR(checkConstantBytes(n * elementSize(type), cat("constant of shape ", dimsString(dims))));
  Constant c;
  c.type = type;
  c.dims = dims;
  c.bytes.assign(static_cast<size_t>(n * elementSize(type)), 0);
  return keep(std::move(c));
}

Constant* ImportContext::keep(Constant c) {
  constantBytes_ += static_cast<int64_t>(c.bytes.size());
  storage_.push_back(std::move(c));
  return &storage_.back();
}

int64_t ImportContext::constantBytesLeft() const {
  if (memoryLimit_ <= 0) return std::numeric_limits<int64_t>::max();
  return constantBytes_ >= memoryLimit_ ? 0 : memoryLimit_ - constantBytes_;
}

Status ImportContext::checkConstantBytes(int64_t bytes, std::string const& what) const {
  if (bytes > constantBytesLeft()) {
    return fail(ErrorCode::kMEM_ALLOC_FAILED, what, " needs ", bytes, " bytes, which would pass the memory limit of ",
                memoryLimit_, " bytes (IBuilder::setMemoryLimit; ", constantBytes_, " bytes of constants held)");
  }
  return Status::success();
}

Result<ITensor*> ImportContext::constantTensor(Constant const* c, std::string const& name) {
  if (c == nullptr) {
    return fail(ErrorCode::kINTERNAL_ERROR, "null constant for '", name, "'");
  }
  IConstantLayer* layer = network_.addConstant(c->dims, c->weights());
  if (layer == nullptr) {
    return fail(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, "constant '", name, "' of shape ", dimsString(c->dims),
                " was refused by the network (see the log)");
  }
  layer->setName(cat("constant_", name, "_", constantCounter_++).c_str());
  layer->getOutput(0)->setName(cat(name, "_const_", constantCounter_).c_str());
  return layer->getOutput(0);
}

Result<ITensor*> ImportContext::int64Tensor(std::vector<int64_t> const& vals, std::string const& name) {
  Dims d{1, {static_cast<int64_t>(vals.size())}};
  KO_ASSIGN_OR_RETURN(Constant * c, newConstant(DataType::kINT64, d));
  if (!vals.empty()) {
    std::memcpy(c->bytes.data(), vals.data(), vals.size() * sizeof(int64_t));
  }
  return constantTensor(c, name);
}

Status ImportContext::check(ILayer* layer, ::onnx::NodeProto const& node, char const* what) {
  if (layer == nullptr) {
    return nodeError(ErrorCode::kINVALID_NODE, node, "the network refused the ", what, " layer (see the log)");
  }
  std::string name = node.name().empty() ? node.op_type() : node.name();
  layer->setName(cat(name, "/", what, "_", constantCounter_++).c_str());
  layer->setMetadata(node.name().c_str());
  return Status::success();
}

//
// Attributes
//

::onnx::AttributeProto const* findAttr(::onnx::NodeProto const& node, char const* name) {
  for (auto const& a : node.attribute()) {
    if (a.name() == name) {
      return &a;
    }
  }
  return nullptr;
}

namespace {
Status wrongType(::onnx::NodeProto const& node, char const* name, char const* expected) {
  return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute '", name, "' must be of type ",
                                  expected);
}
}  // namespace

Result<int64_t> attrInt(::onnx::NodeProto const& node, char const* name, int64_t def) {
  auto const* a = findAttr(node, name);
  if (a == nullptr) {
    return def;
  }
  if (a->type() != ::onnx::AttributeProto::INT) {
    return wrongType(node, name, "INT");
  }
  return a->i();
}

Result<float> attrFloat(::onnx::NodeProto const& node, char const* name, float def) {
  auto const* a = findAttr(node, name);
  if (a == nullptr) {
    return def;
  }
  if (a->type() != ::onnx::AttributeProto::FLOAT) {
    return wrongType(node, name, "FLOAT");
  }
  return a->f();
}

Result<std::string> attrString(::onnx::NodeProto const& node, char const* name, std::string const& def) {
  auto const* a = findAttr(node, name);
  if (a == nullptr) {
    return def;
  }
  if (a->type() != ::onnx::AttributeProto::STRING) {
    return wrongType(node, name, "STRING");
  }
  return a->s();
}

Result<std::vector<int64_t>> attrInts(::onnx::NodeProto const& node, char const* name,
                                      std::vector<int64_t> const& def) {
  auto const* a = findAttr(node, name);
  if (a == nullptr) {
    return def;
  }
  if (a->type() != ::onnx::AttributeProto::INTS) {
    return wrongType(node, name, "INTS");
  }
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Result<std::vector<float>> attrFloats(::onnx::NodeProto const& node, char const* name) {
  auto const* a = findAttr(node, name);
  if (a == nullptr) {
    return std::vector<float>{};
  }
  if (a->type() != ::onnx::AttributeProto::FLOATS) {
    return wrongType(node, name, "FLOATS");
  }
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

//
// TensorProto
//

namespace {
template <typename Src, typename Dst>
void copyField(google::protobuf::RepeatedField<Src> const& field, std::vector<uint8_t>& out) {
  out.resize(static_cast<size_t>(field.size()) * sizeof(Dst));
  for (int i = 0; i < field.size(); ++i) {
    Dst v = static_cast<Dst>(field.Get(i));
    std::memcpy(out.data() + static_cast<size_t>(i) * sizeof(Dst), &v, sizeof(Dst));
  }
}
}  // namespace

Result<Constant> constantFromTensorProto(::onnx::TensorProto const& t, ExternalLoader const& externalLoader,
                                         int64_t maxBytes) {
  using TP = ::onnx::TensorProto;
  std::string const& name = t.name();
  Constant c;
  auto type = fromOnnxType(t.data_type());
  if (!type.ok()) {
    return fail(type.status.code, "tensor '", name, "': ", type.status.message);
  }
  c.type = type.value;
  if (t.dims_size() > Dims::MAX_DIMS) {
    return fail(ErrorCode::kUNSUPPORTED_NODE_SHAPE, "tensor '", name, "' has rank ", t.dims_size(), " (max ",
                Dims::MAX_DIMS, ")");
  }
  c.dims.nbDims = t.dims_size();
  int64_t count = 1;
  for (int i = 0; i < t.dims_size(); ++i) {
    int64_t d = t.dims(i);
    if (d < 0 || (d > 0 && count > kMaxConstantElements / d)) {
      return fail(ErrorCode::kINVALID_VALUE, "tensor '", name, "' has invalid or too large dims (dim ", i, " = ", d,
                  ", limit ", kMaxConstantElements, " elements)");
    }
    count *= d;
    c.dims.d[i] = d;
  }
  int64_t const esize = elementSize(c.type);
  int64_t const expected = count * esize;
  if (expected > maxBytes) {
    return fail(ErrorCode::kMEM_ALLOC_FAILED, "tensor '", name, "' of shape ", dimsString(c.dims), " needs ", expected,
                " bytes, which would pass the memory limit (IBuilder::setMemoryLimit; ", maxBytes, " bytes left)");
  }
  if (t.data_location() == TP::EXTERNAL) {
    if (!externalLoader) {
      return fail(ErrorCode::kINVALID_VALUE, "tensor '", name,
                  "' uses external data but no model path was given to find it");
    }
    Status s = externalLoader(t, c.bytes, expected);
    if (!s.ok()) {
      return fail(s.code, "tensor '", name, "': ", s.message);
    }
  } else if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != expected) {
      return fail(ErrorCode::kINVALID_VALUE, "tensor '", name, "' of shape ", dimsString(c.dims), " needs ",
                  expected, " bytes but raw_data has ", t.raw_data().size());
    }
    c.bytes.assign(t.raw_data().begin(), t.raw_data().end());
  } else {
    int64_t have = 0;
    switch (t.data_type()) {
      case TP::FLOAT: copyField<float, float>(t.float_data(), c.bytes); have = t.float_data_size(); break;
      case TP::DOUBLE: copyField<double, double>(t.double_data(), c.bytes); have = t.double_data_size(); break;
      case TP::INT64: copyField<int64_t, int64_t>(t.int64_data(), c.bytes); have = t.int64_data_size(); break;
      case TP::UINT32:
      case TP::UINT64: copyField<uint64_t, uint64_t>(t.uint64_data(), c.bytes); have = t.uint64_data_size(); break;
      case TP::INT32: copyField<int32_t, int32_t>(t.int32_data(), c.bytes); have = t.int32_data_size(); break;
      case TP::INT8: copyField<int32_t, int8_t>(t.int32_data(), c.bytes); have = t.int32_data_size(); break;
      case kOnnxFloat8E4M3FN:  // bit patterns in int32_data
        copyField<int32_t, uint8_t>(t.int32_data(), c.bytes);
        have = t.int32_data_size();
        break;
      case TP::UINT8:
      case TP::BOOL: copyField<int32_t, uint8_t>(t.int32_data(), c.bytes); have = t.int32_data_size(); break;
      case TP::INT16: copyField<int32_t, int16_t>(t.int32_data(), c.bytes); have = t.int32_data_size(); break;
      case TP::UINT16:
      case TP::FLOAT16:
      case TP::BFLOAT16: copyField<int32_t, uint16_t>(t.int32_data(), c.bytes); have = t.int32_data_size(); break;
      default:
        return fail(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, "tensor '", name, "' has unsupported type");
    }
    if (t.data_type() == TP::UINT32) {
      copyField<uint64_t, uint32_t>(t.uint64_data(), c.bytes);
    }
    if (have != count) {
      return fail(ErrorCode::kINVALID_VALUE, "tensor '", name, "' of shape ", dimsString(c.dims), " needs ", count,
                  " elements but has ", have);
    }
  }
  return c;
}

//
// Shape helpers
//

Result<int32_t> normalizeAxis(::onnx::NodeProto const& node, int64_t axis, int32_t rank) {
  if (axis < -rank || axis >= rank) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", axis, " is out of range for rank ",
                                    rank);
  }
  return static_cast<int32_t>(axis < 0 ? axis + rank : axis);
}

Result<int32_t> rankOf(::onnx::NodeProto const& node, ITensor* t) {
  int32_t r = t->getDimensions().nbDims;
  if (r < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "input '", t->getName(),
                                    "' has an unknown rank");
  }
  return r;
}

Result<ITensor*> broadcastToRank(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, int32_t rank) {
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, t));
  if (r >= rank) {
    return t;
  }
  std::vector<int64_t> axes;
  for (int32_t i = 0; i < rank - r; ++i) {
    axes.push_back(i);
  }
  KO_ASSIGN_OR_RETURN(ITensor * axesT, ctx.int64Tensor(axes, node.name() + "_bcast_axes"));
  IUnsqueezeLayer* u = ctx.network().addUnsqueeze(*t, *axesT);
  KO_RETURN_IF_ERROR(ctx.check(u, node, "broadcast_unsqueeze"));
  return u->getOutput(0);
}

Result<std::vector<int64_t>> constantInts(ImportContext& ctx, ::onnx::NodeProto const& node, int i) {
  Constant const* c = ctx.constant(node, i);
  if (c == nullptr) {
    if (!ImportContext::hasInput(node, i)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input ", i, " is missing");
    }
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "input ", i, " ('", node.input(i),
                                    "') must be a constant (initializer or Constant)");
  }
  std::vector<int64_t> v(static_cast<size_t>(c->count()));
  for (int64_t k = 0; k < c->count(); ++k) {
    v[static_cast<size_t>(k)] = c->asInt(k);
  }
  return v;
}

Result<ITensor*> reshape(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, Dims const& dims,
                         bool zeroIsPlaceholder) {
  IShuffleLayer* s = ctx.network().addShuffle(*t);
  KO_RETURN_IF_ERROR(ctx.check(s, node, "reshape"));
  s->setZeroIsPlaceholder(zeroIsPlaceholder);
  s->setReshapeDimensions(dims);
  return s->getOutput(0);
}

//
// Registry
//

namespace {
struct Registry {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, ImportFn> fns;
  ImporterLookupHook hook = nullptr;
};
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

bool registerImporter(char const* domain, char const* opType, ImportFn fn) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.fns[{domain, opType}] = fn;
  return true;
}

ImportFn findImporter(std::string const& domain, std::string const& opType) {
  Registry& r = registry();
  std::string d = domain == "ai.onnx" ? "" : domain;
  ImporterLookupHook hook = nullptr;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.fns.find({d, opType});
    if (it != r.fns.end()) {
      return it->second;
    }
    hook = r.hook;
  }
  return hook == nullptr ? nullptr : hook(domain.c_str(), opType.c_str());
}

void setImporterLookupHook(ImporterLookupHook hook) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.hook = hook;
}

}  // namespace kiln::onnx
