// PluginInstance: the calls Kiln makes into a plugin object; the IExprBuilder that evaluates its shape
// expressions over concrete dims; Kiln's encoding of plugin fields.
#include "ir/plugin.h"

#include <cstring>
#include <deque>
#include <limits>
#include <unordered_set>

#include "core/dims.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "ir/plugin_shapes.h"
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

// An expression's value: known, or -1-style unknown (a dimension known only later). `sizeDep`: it depends on a
// size tensor (IExprBuilder::declareSizeTensor).
class Expr final : public IDimensionExpr {
 public:
  Expr(bool known, int64_t value, bool size, bool sizeDep)
      : known_(known), value_(value), size_(size), sizeDep_(sizeDep) {}
  bool isConstant() const noexcept override { return known_; }
  int64_t getConstantValue() const noexcept override {
    return known_ ? value_ : std::numeric_limits<int64_t>::min();
  }
  bool isSizeTensor() const noexcept override { return size_; }
  bool known() const { return known_; }
  int64_t value() const { return value_; }
  bool sizeDependent() const { return sizeDep_; }

 private:
  bool known_;
  int64_t value_;
  bool size_;
  bool sizeDep_;
};

// A size tensor declared in one getOutputShapes call.
struct SizeDecl {
  int32_t output;
  Expr const* opt;
  Expr const* upper;
};

// Evaluates the expressions of one getOutputDimensions / getOutputShapes call: every expression Kiln hands out
// lives here until the builder dies; operations on unknown operands are unknown (0 * unknown is 0). A size tensor
// is unknown (its value exists only once the plugin ran); V2 plugins may not declare one (as in TensorRT).
class ExprBuilder final : public IExprBuilder {
 public:
  explicit ExprBuilder(bool allowSizeTensors) : allowSizeTensors_(allowSizeTensors) {}
  IDimensionExpr const* constant(int64_t value) noexcept override { return make(true, value); }
  Expr const* unknown(bool sizeDep = false) { return make(false, -1, false, sizeDep); }
  IDimensionExpr const* operation(DimensionOperation op, IDimensionExpr const& first,
                                  IDimensionExpr const& second) noexcept override {
    if (static_cast<int32_t>(op) < 0 || static_cast<int32_t>(op) >= EnumMax<DimensionOperation>()) return nullptr;
    Expr const* a = mine(&first);
    Expr const* b = mine(&second);
    if (!a || !b) {
      fail("passed IExprBuilder::operation an expression Kiln did not create");
      return unknown();
    }
    bool sizeDep = a->sizeDependent() || b->sizeDependent();
    if (op == DimensionOperation::kPROD && ((a->known() && a->value() == 0) || (b->known() && b->value() == 0)))
      return make(true, 0);
    if (!a->known() || !b->known()) return unknown(sizeDep);
    Result<int64_t> r = applyDimensionOperation(op, a->value(), b->value());
    if (!r) {
      fail(r.status().message());
      return unknown();
    }
    return make(true, *r);
  }
  IDimensionExpr const* declareSizeTensor(int32_t outputIndex, IDimensionExpr const& opt,
                                          IDimensionExpr const& upper) override {
    if (!allowSizeTensors_) {
      fail(strCat("declares output ", outputIndex,
                  " a size tensor (IExprBuilder::declareSizeTensor): only IPluginV3 plugins may (TensorRT allows size "
                  "tensors in IPluginV3OneBuild::getOutputShapes, not in IPluginV2DynamicExt::getOutputDimensions)"));
      return unknown(true);
    }
    Expr const* o = mine(&opt);
    Expr const* u = mine(&upper);
    if (!o || !u) {
      fail("passed IExprBuilder::declareSizeTensor an expression Kiln did not create");
      return unknown(true);
    }
    sizes_.push_back({outputIndex, o, u});
    return make(false, -1, true, true);
  }

  Expr const* mine(IDimensionExpr const* e) const {
    return e && ours_.count(e) ? static_cast<Expr const*>(e) : nullptr;
  }
  std::vector<SizeDecl> const& sizes() const { return sizes_; }
  std::string const& error() const { return error_; }
  void fail(std::string m) {
    if (error_.empty()) error_ = std::move(m);
  }

 private:
  Expr const* make(bool known, int64_t v, bool size = false, bool sizeDep = false) {
    exprs_.emplace_back(known, v, size, sizeDep);
    ours_.insert(&exprs_.back());
    return &exprs_.back();
  }
  bool allowSizeTensors_;
  std::deque<Expr> exprs_;
  std::unordered_set<IDimensionExpr const*> ours_;
  std::vector<SizeDecl> sizes_;
  std::string error_;
};

// Resources offered to a V3 plugin's attachToContext.
class ResourceContext final : public IPluginResourceContext {
 public:
  ResourceContext(IGpuAllocator* a, IErrorRecorder* r) : allocator_(a), recorder_(r) {}
  IGpuAllocator* getGpuAllocator() const noexcept override { return allocator_; }
  IErrorRecorder* getErrorRecorder() const noexcept override { return recorder_; }

 private:
  IGpuAllocator* allocator_;
  IErrorRecorder* recorder_;
};

std::string cstr(char const* s) { return s ? std::string(s) : std::string(); }

bool interfaceIs(IVersionedInterface const* c, char const* kind) {
  return c && c->getInterfaceInfo().kind && std::strcmp(c->getInterfaceInfo().kind, kind) == 0;
}

DimsExprs toExprs(ExprBuilder& eb, Dims const& d) {
  DimsExprs e{};
  e.nbDims = d.nbDims;
  for (int32_t i = 0; i < d.nbDims && i < Dims::MAX_DIMS; ++i)
    e.d[i] = d.d[i] >= 0 ? eb.constant(d.d[i]) : eb.unknown();
  return e;
}

Status toDims(ExprBuilder const& eb, DimsExprs const& e, Dims& out, std::string const& what) {
  if (e.nbDims < 0 || e.nbDims > Dims::MAX_DIMS) return invalidGraph(what, " has rank ", e.nbDims);
  out = Dims{};
  out.nbDims = e.nbDims;
  for (int32_t i = 0; i < e.nbDims; ++i) {
    Expr const* x = eb.mine(e.d[i]);
    if (!x) return invalidGraph(what, " dimension ", i, " is not an expression from the IExprBuilder");
    if (x->known() && x->value() < 0) return invalidGraph(what, " dimension ", i, " is negative (", x->value(), ")");
    out.d[i] = x->known() ? x->value() : -1;
  }
  return Status::ok();
}

void storeLE(std::vector<uint8_t>& b, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

std::string describePlugin(std::string const& type, std::string const& version, std::string const& ns) {
  return strCat("plugin '", type, "' version '", version, "' namespace '", ns, "'");
}

//
// Fields
//

void OwnedFields::add(std::string name, PluginFieldType type, int32_t length, void const* data, size_t bytes) {
  names_.push_back(std::move(name));
  data_.emplace_back(bytes);
  if (bytes && data) std::memcpy(data_.back().data(), data, bytes);
  types_.push_back(type);
  lengths_.push_back(length);
}

PluginFieldCollection const* OwnedFields::collection() {
  fields_.clear();
  for (size_t i = 0; i < names_.size(); ++i)
    fields_.emplace_back(names_[i].c_str(), data_[i].empty() ? nullptr : data_[i].data(), types_[i], lengths_[i]);
  fc_.nbFields = static_cast<int32_t>(fields_.size());
  fc_.fields = fields_.data();
  return &fc_;
}

Result<size_t> pluginFieldBytes(PluginFieldType type, int32_t length) {
  if (length < 0) return invalidArgument("negative field length ", length);
  size_t n = static_cast<size_t>(length);
  switch (type) {
    case PluginFieldType::kFLOAT16:
    case PluginFieldType::kINT16:
    case PluginFieldType::kBF16: return n * 2;
    case PluginFieldType::kFLOAT32:
    case PluginFieldType::kINT32: return n * 4;
    case PluginFieldType::kFLOAT64:
    case PluginFieldType::kINT64: return n * 8;
    case PluginFieldType::kINT8:
    case PluginFieldType::kCHAR:
    case PluginFieldType::kUNKNOWN:
    case PluginFieldType::kFP8: return n;
    case PluginFieldType::kINT4: return (n + 1) / 2;
    case PluginFieldType::kDIMS: return n * sizeof(Dims);
  }
  return invalidArgument("unknown PluginFieldType ", static_cast<int32_t>(type));
}

namespace {
constexpr char kFieldsMagic[4] = {'K', 'P', 'F', '1'};
// Dims are stored portably: nbDims then MAX_DIMS int64 extents.
constexpr size_t kDimsBytes = 4 + 8 * Dims::MAX_DIMS;
}  // namespace

Result<std::vector<uint8_t>> encodePluginFields(PluginFieldCollection const& fc) {
  if (fc.nbFields < 0) return invalidArgument("the field collection has ", fc.nbFields, " fields");
  if (fc.nbFields > 0 && !fc.fields) return invalidArgument("the field collection has no field array");
  std::vector<uint8_t> b(kFieldsMagic, kFieldsMagic + 4);
  storeLE(b, static_cast<uint32_t>(fc.nbFields), 4);
  for (int32_t i = 0; i < fc.nbFields; ++i) {
    PluginField const& f = fc.fields[i];
    if (!f.name) return invalidArgument("field ", i, " has no name");
    std::string name = f.name;
    KILN_ASSIGN_OR_RETURN(size_t bytes, withContext(pluginFieldBytes(f.type, f.length), strCat("field '", name, "'")));
    if (bytes && !f.data) return invalidArgument("field '", name, "' has ", f.length, " elements but no data");
    storeLE(b, name.size(), 4);
    b.insert(b.end(), name.begin(), name.end());
    storeLE(b, static_cast<uint32_t>(f.type), 4);
    storeLE(b, static_cast<uint32_t>(f.length), 4);
    auto const* p = static_cast<uint8_t const*>(f.data);
    if (f.type == PluginFieldType::kDIMS) {
      storeLE(b, static_cast<uint64_t>(f.length) * kDimsBytes, 8);
      for (int32_t k = 0; k < f.length; ++k) {
        Dims d;
        std::memcpy(&d, p + k * sizeof(Dims), sizeof(Dims));
        storeLE(b, static_cast<uint32_t>(d.nbDims), 4);
        for (int32_t j = 0; j < Dims::MAX_DIMS; ++j) storeLE(b, static_cast<uint64_t>(d.d[j]), 8);
      }
      continue;
    }
    storeLE(b, bytes, 8);
    if (bytes) b.insert(b.end(), p, p + bytes);
  }
  return b;
}

Result<OwnedFields> decodePluginFields(uint8_t const* data, size_t size) {
  size_t pos = 0;
  auto need = [&](size_t n, char const* what) -> Status {
    if (size - pos < n) return invalidPlan("plugin fields are truncated (", what, " at byte ", pos, ")");
    return Status::ok();
  };
  auto load = [&](int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(data[pos + i]) << (8 * i);
    pos += bytes;
    return v;
  };
  if (!data && size) return invalidPlan("plugin fields: no data");
  KILN_RETURN_IF_ERROR(need(8, "header"));
  if (std::memcmp(data, kFieldsMagic, 4) != 0) return invalidPlan("plugin fields do not start with KPF1");
  pos = 4;
  uint64_t count = load(4);
  if (count > size) return invalidPlan("plugin fields claim ", count, " fields in ", size, " bytes");
  OwnedFields out;
  for (uint64_t i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(need(4, "a field name length"));
    uint64_t nameLen = load(4);
    KILN_RETURN_IF_ERROR(need(nameLen, "a field name"));
    std::string name(reinterpret_cast<char const*>(data + pos), nameLen);
    pos += nameLen;
    KILN_RETURN_IF_ERROR(need(16, "a field header"));
    auto type = static_cast<PluginFieldType>(static_cast<int32_t>(load(4)));
    auto length = static_cast<int32_t>(load(4));
    uint64_t bytes = load(8);
    KILN_ASSIGN_OR_RETURN(size_t expect, withContext(pluginFieldBytes(type, length), strCat("plugin field '", name, "'")));
    if (type == PluginFieldType::kDIMS) expect = static_cast<size_t>(length) * kDimsBytes;
    if (bytes != expect)
      return invalidPlan("plugin field '", name, "' has ", bytes, " bytes for ", length, " elements (", expect, " expected)");
    KILN_RETURN_IF_ERROR(need(bytes, "field data"));
    if (type == PluginFieldType::kDIMS) {
      std::vector<Dims> dims(static_cast<size_t>(length));
      for (auto& d : dims) {
        d.nbDims = static_cast<int32_t>(load(4));
        if (d.nbDims < 0 || d.nbDims > Dims::MAX_DIMS)
          return invalidPlan("plugin field '", name, "' holds Dims of rank ", d.nbDims);
        for (int32_t j = 0; j < Dims::MAX_DIMS; ++j) d.d[j] = static_cast<int64_t>(load(8));
      }
      out.add(name, type, length, dims.data(), dims.size() * sizeof(Dims));
      continue;
    }
    out.add(name, type, length, data + pos, bytes);
    pos += bytes;
  }
  if (pos != size) return invalidPlan("plugin fields have ", size - pos, " bytes left over");
  return out;
}

//
// PluginInstance
//

Result<std::shared_ptr<PluginInstance>> PluginInstance::adoptV2(IPluginV2DynamicExt* plugin, std::string layer) {
  if (!plugin) return invalidArgument("no plugin");
  std::shared_ptr<PluginInstance> p(new PluginInstance);
  p->kind_ = PluginKind::kV2;
  p->v2_ = plugin;
  p->layer_ = std::move(layer);
  p->type_ = cstr(plugin->getPluginType());
  p->version_ = cstr(plugin->getPluginVersion());
  p->ns_ = cstr(plugin->getPluginNamespace());
  if (p->type_.empty()) return invalidArgument("the plugin of layer '", p->layer_, "' has no type (getPluginType)");
  if (plugin->getNbOutputs() <= 0)
    return invalidArgument(p->describe(), " of layer '", p->layer_, "' has ", plugin->getNbOutputs(), " outputs");
  return p;
}

Result<std::shared_ptr<PluginInstance>> PluginInstance::adoptV3(IPluginV3* plugin, std::string layer,
                                                                TensorRTPhase phase) {
  if (!plugin) return invalidArgument("no plugin");
  std::shared_ptr<PluginInstance> p(new PluginInstance);
  p->kind_ = PluginKind::kV3;
  p->v3_ = plugin;
  p->layer_ = std::move(layer);
  auto* core = plugin->getCapabilityInterface(PluginCapabilityType::kCORE);
  if (!interfaceIs(core, "PLUGIN_V3ONE_CORE"))
    return invalidArgument("the V3 plugin of layer '", p->layer_, "' has no IPluginV3OneCore capability");
  auto* c = static_cast<IPluginV3OneCore*>(core);
  p->type_ = cstr(c->getPluginName());
  p->version_ = cstr(c->getPluginVersion());
  p->ns_ = cstr(c->getPluginNamespace());
  if (p->type_.empty()) return invalidArgument("the V3 plugin of layer '", p->layer_, "' has no name (getPluginName)");
  if (phase == TensorRTPhase::kBUILD && !p->build())
    return invalidArgument(p->describe(), " of layer '", p->layer_, "' has no IPluginV3OneBuild capability");
  if (!p->runtime())
    return invalidArgument(p->describe(), " of layer '", p->layer_, "' has no IPluginV3OneRuntime capability");
  if (phase == TensorRTPhase::kBUILD && p->build()->getNbOutputs() <= 0)
    return invalidArgument(p->describe(), " of layer '", p->layer_, "' has ", p->build()->getNbOutputs(), " outputs");
  return p;
}

std::shared_ptr<PluginInstance> PluginInstance::fromRecord(PluginRecord record, std::string layer) {
  std::shared_ptr<PluginInstance> p(new PluginInstance);
  p->kind_ = record.kind;
  p->type_ = record.type;
  p->version_ = record.version;
  p->ns_ = record.ns;
  p->layer_ = std::move(layer);
  p->record_ = std::make_unique<PluginRecord>(std::move(record));
  return p;
}

PluginInstance::~PluginInstance() {
  if (v2_) {
    if (attached_) v2_->detachFromContext();
    if (initialized_) v2_->terminate();
    v2_->destroy();
  }
  delete v3_;
}

IPluginV3OneBuild* PluginInstance::build() const {
  if (!v3_) return nullptr;
  auto* c = v3_->getCapabilityInterface(PluginCapabilityType::kBUILD);
  return interfaceIs(c, "PLUGIN_V3ONE_BUILD") ? static_cast<IPluginV3OneBuild*>(c) : nullptr;
}

IPluginV3OneRuntime* PluginInstance::runtime() const {
  if (!v3_) return nullptr;
  auto* c = v3_->getCapabilityInterface(PluginCapabilityType::kRUNTIME);
  return interfaceIs(c, "PLUGIN_V3ONE_RUNTIME") ? static_cast<IPluginV3OneRuntime*>(c) : nullptr;
}

Status PluginInstance::fromPlugin(char const* what, int32_t rc) const {
  if (rc == 0) return Status::ok();
  return errorStatus(StatusCode::kInvalidArgument, describe(), " of layer '", layer_, "': ", what, " returned ", rc);
}

int32_t PluginInstance::nbOutputs() const {
  if (v2_) return v2_->getNbOutputs();
  if (shapes_) return static_cast<int32_t>(shapes_->outputs.size());
  if (auto* b = build()) return b->getNbOutputs();
  return -1;
}

IPluginHostExecution* PluginInstance::hostExecution() const {
  if (v2_) return dynamic_cast<IPluginHostExecution*>(v2_);
  return dynamic_cast<IPluginHostExecution*>(runtime());
}

Result<std::vector<DataType>> PluginInstance::outputTypes(std::vector<DataType> const& inTypes) {
  std::lock_guard<std::mutex> lock(mu_);
  int32_t n = nbOutputs();
  if (n <= 0) return invalidGraph(describe(), " of layer '", layer_, "' reports ", n, " outputs");
  std::vector<DataType> out(static_cast<size_t>(n), DataType::kFLOAT);
  if (v2_) {
    for (int32_t i = 0; i < n; ++i)
      out[i] = v2_->getOutputDataType(i, inTypes.data(), static_cast<int32_t>(inTypes.size()));
  } else {
    IPluginV3OneBuild* b = build();
    if (!b) return invalidGraph(describe(), " of layer '", layer_, "' has no build capability (created for run time)");
    KILN_RETURN_IF_ERROR(fromPlugin("getOutputDataTypes",
                                    b->getOutputDataTypes(out.data(), n, inTypes.data(), static_cast<int32_t>(inTypes.size()))));
  }
  for (int32_t i = 0; i < n; ++i)
    if (dataTypeSize(out[i]) == 0 || !isSupportedType(out[i]))
      return invalidGraph(describe(), " of layer '", layer_, "' gives output ", i, " unsupported type ",
                          static_cast<int32_t>(out[i]));
  return out;
}

namespace {

// The values of a V3 node's shape inputs (the last ones), where known: 0-D or 1-D int32/int64 of at most
// Dims::MAX_DIMS elements.
Result<std::vector<std::optional<std::vector<int64_t>>>> shapeInputValues(InferContext const& ctx, size_t nIn) {
  std::vector<std::optional<std::vector<int64_t>>> r;
  for (size_t i = nIn; i < ctx.in.size(); ++i) {
    Dims const& s = ctx.in[i].shape;
    int64_t count = dimsKnown(s) ? volume(s) : -1;
    if (s.nbDims > 1 || count < 0 || count > Dims::MAX_DIMS)
      return invalidGraph("shape input ", i - nIn, " must be a 0-D or 1-D tensor of at most ", Dims::MAX_DIMS,
                          " elements, got ", dimsToString(s));
    if (ctx.in[i].dtype != DataType::kINT32 && ctx.in[i].dtype != DataType::kINT64)
      return invalidGraph("shape input ", i - nIn, " must be int32 or int64");
    HostTensor const* v = ctx.inValues[i];
    if (!v) {
      r.emplace_back(std::nullopt);
      continue;
    }
    std::vector<int64_t> vals;
    for (int64_t k = 0; k < count; ++k)
      vals.push_back(v->dtype() == DataType::kINT32 ? static_cast<int32_t const*>(v->data())[k]
                                                    : static_cast<int64_t const*>(v->data())[k]);
    r.emplace_back(std::move(vals));
  }
  return r;
}

}  // namespace

Status PluginInstance::infer(InferContext& ctx, int32_t nbShapeInputs, std::vector<int64_t> const& outTypes) {
  if (!resolved()) return ctx.error(describe(), " has not been created from the plan's record yet");
  size_t total = ctx.in.size();
  if (nbShapeInputs < 0 || static_cast<size_t>(nbShapeInputs) > total)
    return ctx.error("has ", nbShapeInputs, " shape inputs of ", total, " inputs");
  size_t nIn = total - static_cast<size_t>(nbShapeInputs);
  std::vector<DataType> inTypes;
  for (size_t i = 0; i < total; ++i) {
    if (!ctx.present(i)) return ctx.error("plugin input ", i, " is missing");
    if (ctx.in[i].shape.nbDims < 0) return ctx.error("plugin input ", i, " has an unknown rank");
    if (i < nIn) inTypes.push_back(ctx.in[i].dtype);
  }
  int32_t n = nbOutputs();
  if (n <= 0 || static_cast<size_t>(n) != ctx.out.size())
    return ctx.error(describe(), " reports ", n, " outputs; the layer has ", ctx.out.size());
  std::vector<DataType> types;
  if (!outTypes.empty()) {
    if (outTypes.size() != ctx.out.size()) return ctx.error("out_types has ", outTypes.size(), " entries");
    for (int64_t t : outTypes) types.push_back(static_cast<DataType>(t));
  } else {
    KILN_ASSIGN_OR_RETURN(types, outputTypes(inTypes));
  }
  std::vector<std::optional<std::vector<int64_t>>> shapeValues;
  if (!v2_) {
    KILN_ASSIGN_OR_RETURN(shapeValues, withContext(shapeInputValues(ctx, nIn), ctx.node.describe()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (shapes_) {
    // The expressions the build captured: no call into the plugin (a run-time V3 plugin has no build capability).
    EvalInputs ev;
    for (size_t i = 0; i < nIn; ++i) ev.inputs.push_back(ctx.in[i].shape);
    ev.shapeValues = std::move(shapeValues);
    Result<std::vector<Dims>> dims = shapes_->evaluate(ev);
    if (!dims) return ctx.error(describe(), ": ", dims.status().message());
    for (int32_t o = 0; o < n; ++o) {
      ctx.out[o].shape = (*dims)[o];
      ctx.out[o].dtype = types[o];
    }
    return Status::ok();
  }
  ExprBuilder eb(/*allowSizeTensors=*/v2_ == nullptr);
  std::vector<DimsExprs> ins;
  for (size_t i = 0; i < nIn; ++i) ins.push_back(toExprs(eb, ctx.in[i].shape));
  std::vector<DimsExprs> outs(ctx.out.size());
  if (v2_) {
    for (int32_t o = 0; o < n; ++o) outs[o] = v2_->getOutputDimensions(o, ins.data(), static_cast<int32_t>(nIn), eb);
  } else {
    // Shape inputs: their values, one expression per element (unknown where the contents are).
    std::vector<DimsExprs> shapeIns;
    for (size_t i = nIn; i < total; ++i) {
      DimsExprs e{};
      e.nbDims = static_cast<int32_t>(volume(ctx.in[i].shape));
      auto const& vals = shapeValues[i - nIn];
      for (int32_t k = 0; k < e.nbDims; ++k) e.d[k] = vals ? eb.constant((*vals)[k]) : eb.unknown();
      shapeIns.push_back(e);
    }
    IPluginV3OneBuild* b = build();
    if (!b)
      return ctx.error(describe(), " has no build capability (created for TensorRTPhase::kRUNTIME) and the plan "
                       "holds no shape expressions for it (a plan written before format 1.3)");
    int32_t rc = b->getOutputShapes(ins.data(), static_cast<int32_t>(nIn), shapeIns.data(),
                                    static_cast<int32_t>(shapeIns.size()), outs.data(), n, eb);
    if (rc != 0) return ctx.error(describe(), ": getOutputShapes returned ", rc);
  }
  if (!eb.error().empty()) return ctx.error(describe(), " ", eb.error());
  std::vector<bool> declared(static_cast<size_t>(n), false);
  for (SizeDecl const& d : eb.sizes()) {
    if (d.output < 0 || d.output >= n)
      return ctx.error(describe(), " declares output ", d.output, " a size tensor; it has ", n, " outputs");
    if (declared[d.output]) return ctx.error(describe(), " declares output ", d.output, " a size tensor twice");
    declared[d.output] = true;
    if (d.opt->sizeDependent() || d.upper->sizeDependent())
      return ctx.error(describe(), ": the opt or upper bound of size tensor output ", d.output,
                       " depends on a size tensor (IExprBuilder::declareSizeTensor)");
    if (outs[d.output].nbDims != 0)
      return ctx.error(describe(), ": size tensor output ", d.output, " must be 0-D (it has rank ",
                       outs[d.output].nbDims, ")");
    if (types[d.output] != DataType::kINT32 && types[d.output] != DataType::kINT64)
      return ctx.error(describe(), ": size tensor output ", d.output, " must be int32 or int64, not ",
                       dataTypeName(types[d.output]));
  }
  for (int32_t o = 0; o < n; ++o) {
    KILN_RETURN_IF_ERROR(
        toDims(eb, outs[o], ctx.out[o].shape, strCat(describe(), " output ", o)).withContext(ctx.node.describe()));
    ctx.out[o].dtype = types[o];
  }
  return Status::ok();
}

Result<PluginShapeProgram> PluginInstance::captureShapes(
    std::vector<Dims> const& inputDims, std::vector<std::optional<std::vector<int64_t>>> const& shapeValues,
    std::vector<int64_t> const& shapeCounts) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = strCat(describe(), " of layer '", layer_, "'");
  IPluginV3OneBuild* b = build();
  if (!b) return invalidGraph(what, " has no build capability");
  int32_t n = b->getNbOutputs();
  if (n <= 0) return invalidGraph(what, " reports ", n, " outputs");
  auto nIn = static_cast<int32_t>(inputDims.size());
  auto nShape = static_cast<int32_t>(shapeCounts.size());
  SymbolicExprBuilder eb(nIn, nShape);
  std::vector<DimsExprs> ins, shapeIns;
  for (int32_t i = 0; i < nIn; ++i) {
    Dims const& d = inputDims[i];
    if (d.nbDims < 0 || d.nbDims > Dims::MAX_DIMS) return invalidGraph(what, ": input ", i, " has an unknown rank");
    DimsExprs e{};
    e.nbDims = d.nbDims;
    for (int32_t k = 0; k < d.nbDims; ++k) e.d[k] = eb.inputDim(i, k, d.d[k]);
    ins.push_back(e);
  }
  for (int32_t i = 0; i < nShape; ++i) {
    int64_t count = shapeCounts[i];
    if (count < 0 || count > Dims::MAX_DIMS)
      return invalidGraph(what, ": shape input ", i, " has ", count, " elements (at most ", Dims::MAX_DIMS, ")");
    auto const* vals = static_cast<size_t>(i) < shapeValues.size() && shapeValues[i] ? &*shapeValues[i] : nullptr;
    DimsExprs e{};
    e.nbDims = static_cast<int32_t>(count);
    for (int32_t k = 0; k < e.nbDims; ++k)
      e.d[k] = eb.shapeValue(i, k, vals && static_cast<size_t>(k) < vals->size() ? std::optional<int64_t>((*vals)[k])
                                                                                 : std::nullopt);
    shapeIns.push_back(e);
  }
  std::vector<DimsExprs> outs(static_cast<size_t>(n));
  int32_t rc = b->getOutputShapes(ins.data(), nIn, shapeIns.data(), nShape, outs.data(), n, eb);
  if (rc != 0) return invalidGraph(what, ": getOutputShapes returned ", rc, " (symbolic capture)");
  return withContext(eb.finish(outs.data(), n), strCat(what, ": getOutputShapes (symbolic capture)"));
}

bool PluginInstance::supportsFormatCombination(int32_t pos, std::vector<DynamicPluginTensorDesc> const& inOut,
                                               int32_t nbInputs) {
  std::lock_guard<std::mutex> lock(mu_);
  int32_t nbOutputs = static_cast<int32_t>(inOut.size()) - nbInputs;
  if (v2_) {
    std::vector<PluginTensorDesc> d;
    for (auto const& x : inOut) d.push_back(x.desc);
    return v2_->supportsFormatCombination(pos, d.data(), nbInputs, nbOutputs);
  }
  IPluginV3OneBuild* b = build();
  return b && b->supportsFormatCombination(pos, inOut.data(), nbInputs, nbOutputs);
}

Status PluginInstance::configure(std::vector<DynamicPluginTensorDesc> const& in,
                                 std::vector<DynamicPluginTensorDesc> const& out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (v2_) {
    v2_->configurePlugin(in.data(), static_cast<int32_t>(in.size()), out.data(), static_cast<int32_t>(out.size()));
    return Status::ok();
  }
  IPluginV3OneBuild* b = build();
  if (!b) return internalError(describe(), " has no build capability");
  return fromPlugin("configurePlugin", b->configurePlugin(in.data(), static_cast<int32_t>(in.size()), out.data(),
                                                          static_cast<int32_t>(out.size())));
}

size_t PluginInstance::workspaceSize(std::vector<DynamicPluginTensorDesc> const& in,
                                     std::vector<DynamicPluginTensorDesc> const& out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (v2_) {
    std::vector<PluginTensorDesc> i, o;
    for (auto const& x : in) i.push_back(x.desc);
    for (auto const& x : out) o.push_back(x.desc);
    return v2_->getWorkspaceSize(i.data(), static_cast<int32_t>(i.size()), o.data(), static_cast<int32_t>(o.size()));
  }
  IPluginV3OneBuild* b = build();
  return b ? b->getWorkspaceSize(in.data(), static_cast<int32_t>(in.size()), out.data(), static_cast<int32_t>(out.size()))
           : 0;
}

Result<std::shared_ptr<PluginInstance>> PluginInstance::clone() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!resolved()) return invalidArgument(describe(), " of layer '", layer_, "' has no plugin object");
  std::shared_ptr<PluginInstance> p;
  if (v2_) {
    IPluginV2DynamicExt* c = v2_->clone();
    if (!c) return invalidArgument(describe(), " of layer '", layer_, "': clone() returned null");
    if (!ns_.empty() && cstr(c->getPluginNamespace()) != ns_) c->setPluginNamespace(ns_.c_str());
    KILN_ASSIGN_OR_RETURN(p, adoptV2(c, layer_));
  } else {
    IPluginV3* c = v3_->clone();
    if (!c) return invalidArgument(describe(), " of layer '", layer_, "': clone() returned null");
    KILN_ASSIGN_OR_RETURN(p, adoptV3(c, layer_, build() ? TensorRTPhase::kBUILD : TensorRTPhase::kRUNTIME));
  }
  if (record_) p->record_ = std::make_unique<PluginRecord>(*record_);
  p->shapes_ = shapes_;
  return p;
}

Result<PluginRecord> PluginInstance::record() {
  if (record_) return *record_;
  std::lock_guard<std::mutex> lock(mu_);
  PluginRecord r;
  r.kind = kind_;
  r.type = type_;
  r.version = version_;
  r.ns = ns_;
  if (v2_) {
    size_t n = v2_->getSerializationSize();
    if (n > (size_t{1} << 30))
      return invalidArgument(describe(), " of layer '", layer_, "' asks for ", n, " serialization bytes");
    r.data.assign(n, 0);
    if (n) v2_->serialize(r.data.data());
  } else {
    IPluginV3OneRuntime* rt = runtime();
    if (!rt) return internalError(describe(), " has no runtime capability");
    PluginFieldCollection const* fc = rt->getFieldsToSerialize();
    if (!fc) return invalidArgument(describe(), " of layer '", layer_, "': getFieldsToSerialize() returned null");
    KILN_ASSIGN_OR_RETURN(r.data, withContext(encodePluginFields(*fc), strCat(describe(), " of layer '", layer_, "': getFieldsToSerialize()")));
  }
  return r;
}

Status PluginInstance::initialize() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!v2_ || initialized_) return Status::ok();
  KILN_RETURN_IF_ERROR(fromPlugin("initialize", v2_->initialize()));
  initialized_ = true;
  return Status::ok();
}

Result<std::unique_ptr<PluginInstance>> PluginInstance::attachToContext(IGpuAllocator* allocator,
                                                                        IErrorRecorder* recorder, cudnnContext* cudnn,
                                                                        cublasContext* cublas) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!resolved()) return invalidArgument(describe(), " of layer '", layer_, "' has no plugin object");
  std::unique_ptr<PluginInstance> p(new PluginInstance);
  p->kind_ = kind_;
  p->type_ = type_;
  p->version_ = version_;
  p->ns_ = ns_;
  p->layer_ = layer_;
  if (v2_) {
    IPluginV2DynamicExt* c = v2_->clone();
    if (!c) return invalidArgument(describe(), " of layer '", layer_, "': clone() returned null");
    p->v2_ = c;
    KILN_RETURN_IF_ERROR(p->fromPlugin("initialize", c->initialize()));
    p->initialized_ = true;
    c->attachToContext(cudnn, cublas, allocator);
    p->attached_ = true;
    return p;
  }
  IPluginV3OneRuntime* rt = runtime();
  if (!rt) return internalError(describe(), " has no runtime capability");
  p->resources_ = std::make_unique<ResourceContext>(allocator, recorder);
  IPluginV3* c = rt->attachToContext(p->resources_.get());
  if (!c) return invalidArgument(describe(), " of layer '", layer_, "': attachToContext() returned null");
  p->v3_ = c;
  if (!p->runtime()) return invalidArgument(describe(), ": the plugin attachToContext() returned has no runtime capability");
  return p;
}

Status PluginInstance::execute(std::vector<PluginTensorDesc> const& in, std::vector<PluginTensorDesc> const& out,
                               void const* const* inputs, void* const* outputs, void* workspace, bool host,
                               void* stream) {
  bool changed = lastIn_.size() != in.size() || lastOut_.size() != out.size();
  for (size_t i = 0; !changed && i < in.size(); ++i)
    changed = !dimsEqual(lastIn_[i], in[i].dims) || lastTypes_[i] != in[i].type;
  for (size_t i = 0; !changed && i < out.size(); ++i) changed = !dimsEqual(lastOut_[i], out[i].dims);
  if (changed) {
    if (v2_) {
      std::vector<DynamicPluginTensorDesc> di, dout;
      for (auto const& d : in) di.push_back({d, d.dims, d.dims, d.dims});
      for (auto const& d : out) dout.push_back({d, d.dims, d.dims, d.dims});
      v2_->configurePlugin(di.data(), static_cast<int32_t>(di.size()), dout.data(), static_cast<int32_t>(dout.size()));
    } else {
      KILN_RETURN_IF_ERROR(fromPlugin("onShapeChange", runtime()->onShapeChange(in.data(), static_cast<int32_t>(in.size()),
                                                                               out.data(), static_cast<int32_t>(out.size()))));
    }
    lastIn_.clear();
    lastOut_.clear();
    lastTypes_.clear();
    for (auto const& d : in) {
      lastIn_.push_back(d.dims);
      lastTypes_.push_back(d.type);
    }
    for (auto const& d : out) lastOut_.push_back(d.dims);
  }
  if (host) {
    IPluginHostExecution* h = hostExecution();
    if (!h)
      return unsupported(describe(), " of layer '", layer_,
                         "' has no host execution (kiln::IPluginHostExecution): it cannot run on the CPU");
    return fromPlugin("enqueueHost", h->enqueueHost(in.data(), out.data(), inputs, outputs, workspace));
  }
  auto* s = static_cast<cudaStream_t>(stream);
  if (v2_) return fromPlugin("enqueue", v2_->enqueue(in.data(), out.data(), inputs, outputs, workspace, s));
  return fromPlugin("enqueue", runtime()->enqueue(in.data(), out.data(), inputs, outputs, workspace, s));
}

}  // namespace kiln::ir
