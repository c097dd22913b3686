// kiln-plugin-check's checks on one IPluginCreatorV3One creator (see check.h): the plugin created from fields
// (kBUILD), its output shapes symbolic vs actual (size tensors: data-dependent dims, run into upper-bound buffers and
// checked at the sizes written), every accepted format combination, each of its tactics on a context copy
// (attachToContext, setTactic, onShapeChange), the fields round trip (getFieldsToSerialize -> createPlugin(kRUNTIME))
// and clone computing the same outputs, and with the cuda backend GPU vs host and CUDA graphs.
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "check_internal.h"
#include "device.h"

namespace kiln::plugincheck {
namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): the helpers shared with check.cc
using plugin::ShapeExpr;
using plugin::ShapeExprBuilder;

struct V3Deleter {
  void operator()(IPluginV3* p) const { delete p; }
};
using V3Ptr = std::unique_ptr<IPluginV3, V3Deleter>;

template <typename T>
T* capability(IPluginV3* p, PluginCapabilityType type, char const* kind) {
  IPluginCapability* c = p ? p->getCapabilityInterface(type) : nullptr;
  char const* k = c ? c->getInterfaceInfo().kind : nullptr;
  return k && std::strcmp(k, kind) == 0 ? static_cast<T*>(c) : nullptr;
}
IPluginV3OneCore* coreOf(IPluginV3* p) {
  return capability<IPluginV3OneCore>(p, PluginCapabilityType::kCORE, "PLUGIN_V3ONE_CORE");
}
IPluginV3OneBuild* buildOf(IPluginV3* p) {
  return capability<IPluginV3OneBuild>(p, PluginCapabilityType::kBUILD, "PLUGIN_V3ONE_BUILD");
}
IPluginV3OneRuntime* runtimeOf(IPluginV3* p) {
  return capability<IPluginV3OneRuntime>(p, PluginCapabilityType::kRUNTIME, "PLUGIN_V3ONE_RUNTIME");
}

// Resources for attachToContext (no allocator or recorder: the plugin must cope, as on Kiln's CPU path).
class Resources final : public IPluginResourceContext {
 public:
  IGpuAllocator* getGpuAllocator() const noexcept override { return nullptr; }
  IErrorRecorder* getErrorRecorder() const noexcept override { return nullptr; }
};

// Bytes of `length` elements of a field type (0 for a negative length or an unknown type).
size_t fieldBytes(PluginFieldType type, int32_t length) {
  if (length < 0) return 0;
  auto n = static_cast<size_t>(length);
  switch (type) {
    case PluginFieldType::kFLOAT16:
    case PluginFieldType::kINT16:
    case PluginFieldType::kBF16:
      return n * 2;
    case PluginFieldType::kFLOAT32:
    case PluginFieldType::kINT32:
      return n * 4;
    case PluginFieldType::kFLOAT64:
    case PluginFieldType::kINT64:
      return n * 8;
    case PluginFieldType::kINT8:
    case PluginFieldType::kCHAR:
    case PluginFieldType::kUNKNOWN:
    case PluginFieldType::kFP8:
      return n;
    case PluginFieldType::kINT4:
      return (n + 1) / 2;
    case PluginFieldType::kDIMS:
      return n * sizeof(Dims);
  }
  return 0;
}

// A copy of a field collection (getFieldsToSerialize's points into the plugin), and its bytes for comparison.
class CopiedFields {
 public:
  explicit CopiedFields(PluginFieldCollection const& fc) {
    for (int32_t i = 0; i < fc.nbFields && fc.fields; ++i) {
      PluginField const& f = fc.fields[i];
      names_.emplace_back(f.name ? f.name : "");
      auto const* p = static_cast<char const*>(f.data);
      size_t n = p ? fieldBytes(f.type, f.length) : 0;
      data_.emplace_back(p, p + n);
      types_.push_back(f.type);
      lengths_.push_back(f.length);
    }
    for (size_t i = 0; i < names_.size(); ++i)
      fields_.emplace_back(names_[i].c_str(), data_[i].empty() ? nullptr : data_[i].data(), types_[i], lengths_[i]);
    fc_.nbFields = static_cast<int32_t>(fields_.size());
    fc_.fields = fields_.data();
  }
  PluginFieldCollection const* get() const { return &fc_; }
  /// Name, type, length and data of every field, for comparing two collections.
  std::string bytes() const {
    std::string s;
    for (size_t i = 0; i < names_.size(); ++i) {
      s += names_[i] + '\0' + std::to_string(static_cast<int32_t>(types_[i])) + ':' + std::to_string(lengths_[i]) + ':';
      s.append(data_[i].begin(), data_[i].end());
    }
    return s;
  }

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<char>> data_;
  std::vector<PluginFieldType> types_;
  std::vector<int32_t> lengths_;
  std::vector<PluginField> fields_;
  PluginFieldCollection fc_{};
};

DynamicPluginTensorDesc dynamic(PluginTensorDesc const& d) {
  DynamicPluginTensorDesc x{};
  x.desc = d;
  x.min = x.opt = x.max = d.dims;
  return x;
}

int64_t volumeOf(Dims const& d) {
  int64_t n = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) n *= d.d[i] > 0 ? d.d[i] : 0;
  return n;
}

// getOutputShapes asked through constant (or symbolic) input dims, evaluated at the sample's input dims. Outputs
// whose dims use a size tensor (IExprBuilder::declareSizeTensor) are data-dependent: `upper` has every output at the
// size tensors' declared upper bounds (the allocation the plugin writes into, as Kiln's run time gives it),
// `dependent` marks the dims that are known only once the plugin has run.
struct Shapes {
  std::unique_ptr<ShapeExprBuilder> eb = std::make_unique<ShapeExprBuilder>();
  std::vector<DimsExprs> exprs;
  std::vector<Dims> upper;
  std::vector<std::vector<bool>> dependent;
  int32_t rc = 0;

  bool dataDependent(size_t o) const {
    for (bool d : dependent[o])
      if (d) return true;
    return false;
  }
  bool hasSizeTensors() const { return !eb->sizeTensors().empty(); }
  // Output `o` with size tensors valued as `sizes` says.
  Dims at(size_t o, std::vector<Dims> const& inputs, plugin::SizeValues const& sizes) const {
    return ShapeExprBuilder::evaluate(exprs[o], inputs, sizes);
  }
};

Shapes outputShapes(IPluginV3OneBuild& b, std::vector<Dims> const& inputs, bool symbolic) {
  Shapes s;
  std::vector<DimsExprs> in;
  for (size_t i = 0; i < inputs.size(); ++i)
    in.push_back(symbolic ? s.eb->symbols(static_cast<int32_t>(i), inputs[i].nbDims) : s.eb->constants(inputs[i]));
  int32_t n = b.getNbOutputs();
  s.exprs.assign(static_cast<size_t>(n > 0 ? n : 0), DimsExprs{});
  s.rc = b.getOutputShapes(in.data(), static_cast<int32_t>(in.size()), nullptr, 0, s.exprs.data(), n, *s.eb);
  if (s.rc != 0) return s;
  plugin::SizeValues upper;
  upper.mode = plugin::SizeValues::Mode::kUpper;
  for (auto const& e : s.exprs) {
    s.upper.push_back(ShapeExprBuilder::evaluate(e, inputs, upper));
    std::vector<bool> dep;
    for (int32_t k = 0; k >= 0 && k < e.nbDims && k < Dims::MAX_DIMS; ++k)
      dep.push_back(ShapeExprBuilder::sizeDependent(e.d[k]));
    s.dependent.push_back(std::move(dep));
  }
  return s;
}

// Constant and symbolic shapes agree: the same size tensors with the same opt and upper bound, the same
// data-dependent dims, the same upper-bound shapes (so every other dim). "" or what differs.
std::string compareShapes(Shapes const& a, Shapes const& s, std::vector<Dims> const& inputs) {
  auto const& da = a.eb->sizeTensors();
  auto const& ds = s.eb->sizeTensors();
  if (da.size() != ds.size())
    return std::to_string(da.size()) + " size tensor(s) declared for constant dims but " + std::to_string(ds.size()) +
           " for symbolic dims";
  for (size_t k = 0; k < da.size(); ++k) {
    auto value = [&](ShapeExpr const* e) { return ShapeExprBuilder::evaluate(e, inputs); };
    if (da[k].output != ds[k].output || value(da[k].opt) != value(ds[k].opt) ||
        value(da[k].upper) != value(ds[k].upper))
      return "size tensor " + std::to_string(k) + " (output " + std::to_string(da[k].output) +
             ") is declared with another output, opt or upper bound for symbolic dims";
  }
  for (size_t o = 0; o < a.upper.size(); ++o) {
    std::string out = "output " + std::to_string(o);
    if (a.dependent[o] != s.dependent[o])
      return out + " has other data-dependent dims (size tensors) for constant dims than for symbolic dims";
    if (!sameDims(a.upper[o], s.upper[o]))
      return out + " is " + dimsText(a.upper[o]) + " from constant dims but " + dimsText(s.upper[o]) +
             " from symbolic dims" + (a.dataDependent(o) ? " (at the size tensors' upper bounds)" : "");
  }
  return "";
}

struct RunnerV3 {
  IPluginCreatorV3One& creator;
  Report& report;
  Options const& options;
  IPluginV3OneBuild& sizer;  // the kBUILD plugin: getWorkspaceSize, as Kiln sizes a layer's workspace
  Resources resources;
  // The trial's shapes (size tensors, data-dependent outputs), its input dims, and the outputs' bounds as
  // configurePlugin got them (data-dependent outputs: -1 dims, min with sizes 0, opt, max at the upper bound).
  Shapes const* shapes = nullptr;
  std::vector<Dims> inputDims;
  std::vector<DynamicPluginTensorDesc> outBounds;

  void fail(std::string const& m) {
    if (report.failures.size() < 20) report.failures.push_back(m);
  }

  // A context copy of `p` (attachToContext) with `tactic` set (0: none); null after a failure.
  V3Ptr attach(IPluginV3& p, int32_t tactic, std::string const& what) {
    IPluginV3OneRuntime* rt = runtimeOf(&p);
    if (!rt) {
      fail(what + ": the plugin has no IPluginV3OneRuntime capability");
      return nullptr;
    }
    V3Ptr copy(rt->attachToContext(&resources));
    if (!copy || !runtimeOf(copy.get())) {
      fail(what + ": attachToContext returned " + (copy ? "a plugin without a runtime capability" : "null"));
      return nullptr;
    }
    if (tactic != 0) {
      if (int32_t rc = runtimeOf(copy.get())->setTactic(tactic); rc != 0) {
        fail(what + ": setTactic(" + std::to_string(tactic) + ") returned " + std::to_string(rc));
        return nullptr;
      }
    }
    return copy;
  }

  size_t workspace(std::vector<HostTensor> const& in, std::vector<HostTensor> const& out) {
    std::vector<DynamicPluginTensorDesc> i, o;
    for (auto const& t : in) i.push_back(dynamic(t.desc));
    for (size_t k = 0; k < out.size(); ++k)
      o.push_back(k < outBounds.size() && shapes && shapes->dataDependent(k) ? outBounds[k] : dynamic(out[k].desc));
    return sizer.getWorkspaceSize(i.data(), static_cast<int32_t>(i.size()), o.data(), static_cast<int32_t>(o.size()));
  }

  // After a run into upper-bound outputs: reads each size tensor, checks it lies in [0, upper], and cuts every
  // data-dependent output to its actual shape (which must fit the declared upper-bound shape), so that runs compare
  // on the size and the first `size` elements only. False after a failure.
  bool settle(std::vector<HostTensor>& out, std::string const& what) {
    if (!shapes || !shapes->hasSizeTensors()) return true;
    plugin::SizeValues sizes;
    sizes.mode = plugin::SizeValues::Mode::kValue;
    sizes.values.assign(out.size(), -1);
    for (auto const& d : shapes->eb->sizeTensors()) {
      HostTensor const& t = out[static_cast<size_t>(d.output)];
      int64_t v = 0;
      if (t.desc.type == DataType::kINT32 && t.bytes.size() == 4)
        v = *t.as<int32_t>();
      else if (t.desc.type == DataType::kINT64 && t.bytes.size() == 8)
        v = *t.as<int64_t>();
      else {
        fail(what + ": size tensor output " + std::to_string(d.output) + " is not one int32 or int64 value");
        return false;
      }
      std::optional<int64_t> upper = ShapeExprBuilder::evaluate(d.upper, inputDims);
      if (!upper || v < 0 || v > *upper) {
        fail(what + ": size tensor output " + std::to_string(d.output) + " holds " + std::to_string(v) +
             ", outside [0, " + (upper ? std::to_string(*upper) : std::string("unknown")) +
             "] (the upper bound given to IExprBuilder::declareSizeTensor)");
        return false;
      }
      sizes.values[static_cast<size_t>(d.output)] = v;
    }
    for (size_t o = 0; o < out.size(); ++o) {
      if (!shapes->dataDependent(o)) continue;
      Dims actual = shapes->at(o, inputDims, sizes);
      bool valid = actual.nbDims >= 0;
      for (int32_t k = 0; valid && k < actual.nbDims; ++k) valid = actual.d[k] >= 0;
      if (!valid) {
        fail(what + ": output " + std::to_string(o) + " has no valid shape (" + dimsText(actual) +
             ") once its size tensors were read");
        return false;
      }
      if (volumeOf(actual) > volumeOf(shapes->upper[o])) {
        fail(what + ": output " + std::to_string(o) + " of actual shape " + dimsText(actual) +
             " does not fit its declared upper bound " + dimsText(shapes->upper[o]));
        return false;
      }
      HostTensor cut(actual, out[o].desc.type);
      if (!cut.bytes.empty()) std::memcpy(cut.bytes.data(), out[o].bytes.data(), cut.bytes.size());
      out[o] = std::move(cut);
    }
    return true;
  }

  // onShapeChange, then enqueueHost on the copy into outputs shaped like `like`, pre-filled with `pattern`.
  bool host(IPluginV3& copy, std::vector<HostTensor> const& in, std::vector<HostTensor> const& like,
            std::vector<HostTensor>& out, char pattern, std::string const& what) {
    IPluginV3OneRuntime* rt = runtimeOf(&copy);
    auto* h = dynamic_cast<IPluginHostExecution*>(rt);
    if (!h) {
      fail(what + ": the runtime capability has no host execution (IPluginHostExecution)");
      return false;
    }
    out = like;
    for (auto& t : out)  // an empty tensor's data() may be null, which memset must not get
      if (!t.bytes.empty()) std::memset(t.bytes.data(), pattern, t.bytes.size());
    std::vector<PluginTensorDesc> id, od;
    std::vector<void const*> ip;
    std::vector<void*> op;
    for (auto const& t : in) {
      id.push_back(t.desc);
      ip.push_back(t.bytes.data());
    }
    for (auto& t : out) {
      od.push_back(t.desc);
      op.push_back(t.bytes.data());
    }
    if (int32_t rc =
            rt->onShapeChange(id.data(), static_cast<int32_t>(id.size()), od.data(), static_cast<int32_t>(od.size()));
        rc != 0) {
      fail(what + ": onShapeChange returned " + std::to_string(rc));
      return false;
    }
    std::vector<char> ws(workspace(in, out));
    int32_t s = h->enqueueHost(id.data(), od.data(), ip.data(), op.data(), ws.empty() ? nullptr : ws.data());
    if (s != 0) fail(what + ": enqueueHost returned " + std::to_string(s));
    return s == 0 && settle(out, what);
  }

  // The copy's enqueue on the GPU (plain, or captured into a CUDA graph and replayed).
  bool cuda(IPluginV3& copy, std::vector<HostTensor> const& in, std::vector<HostTensor> const& like,
            std::vector<HostTensor>& out, bool graph, std::string const& what) {
    IPluginV3OneRuntime* rt = runtimeOf(&copy);
    auto enqueue = [rt](PluginTensorDesc const* i, PluginTensorDesc const* o, void const* const* ip, void* const* op,
                        void* w, cudaStream_t s) { return rt->enqueue(i, o, ip, op, w, s); };
    std::string err = runOnDevice(enqueue, workspace(in, like), in, like, out, graph);
    if (!err.empty()) fail(what + err);
    return err.empty() && settle(out, what);
  }

  // `copy` (attached, tactic set) computes `want` (exactly: the same plugin's host path), run into outputs shaped
  // like `like`.
  void sameAs(IPluginV3& copy, std::vector<HostTensor> const& in, std::vector<HostTensor> const& like,
              std::vector<HostTensor> const& want, std::string const& which, std::string const& what) {
    std::vector<HostTensor> e;
    if (!host(copy, in, like, e, 0x33, what + " (" + which + ")")) return;
    for (size_t i = 0; i < e.size(); ++i)
      if (e[i].bytes != want[i].bytes) fail(what + ": the " + which + " computes other output " + std::to_string(i));
  }
};

}  // namespace

Report checkCreatorV3(IPluginCreatorV3One& creator, PluginFieldCollection const* fields, Sample const& sample,
                      Options const& options) {
  Report report;
  auto early = [&](std::string const& m) {
    report.failures.push_back(m);
    return report;
  };
  V3Ptr plugin(creator.createPlugin("kiln-plugin-check", fields, TensorRTPhase::kBUILD));
  if (!plugin) return early("createPlugin(kBUILD) returned null for the fields given");
  IPluginV3OneCore* core = coreOf(plugin.get());
  IPluginV3OneBuild* build = buildOf(plugin.get());
  IPluginV3OneRuntime* runtime = runtimeOf(plugin.get());
  if (!core || !build || !runtime)
    return early("the plugin lacks a capability (core, build and runtime are needed): " +
                 std::string(!core    ? "IPluginV3OneCore"
                             : !build ? "IPluginV3OneBuild"
                                      : "IPluginV3OneRuntime"));
  RunnerV3 r{creator, report, options, *build, {}, nullptr, {}, {}};
  if (std::strcmp(core->getPluginName(), creator.getPluginName()) != 0 ||
      std::strcmp(core->getPluginVersion(), creator.getPluginVersion()) != 0)
    r.fail(std::string("the plugin calls itself ") + core->getPluginName() + " version " + core->getPluginVersion() +
           ", its creator " + creator.getPluginName() + " version " + creator.getPluginVersion());
  if (!dynamic_cast<IPluginHostExecution*>(runtime))
    return early(
        "the runtime capability has no host execution (IPluginHostExecution): it cannot run on the cpu backend");
  int32_t nbOut = build->getNbOutputs();
  if (nbOut <= 0) return early("getNbOutputs() returned " + std::to_string(nbOut));

  // The plugin's own tactics (none: the default, no setTactic).
  std::vector<int32_t> tactics;
  int32_t nbTactics = build->getNbTactics();
  if (nbTactics < 0 || nbTactics > 1024) return early("getNbTactics() returned " + std::to_string(nbTactics));
  if (nbTactics > 0) {
    tactics.assign(static_cast<size_t>(nbTactics), 0);
    if (int32_t rc = build->getValidTactics(tactics.data(), nbTactics); rc != 0)
      return early("getValidTactics returned " + std::to_string(rc));
    for (int32_t t : tactics)
      if (t == 0) return early("getValidTactics returned tactic 0 (tactics must be non-zero)");
    report.notes.push_back(std::to_string(nbTactics) + " tactic(s), each run and compared with the first");
  } else {
    tactics.push_back(0);
  }

  std::string why;
  bool cudaUsable = options.cuda && device::available(why);
  if (options.cuda && !cudaUsable) r.fail("--backend=cuda: " + why);

  std::mt19937 rng(options.seed);
  std::set<std::string> combosSeen;
  for (int32_t trial = 0; trial < options.shapes && report.failures.empty(); ++trial) {
    std::vector<HostTensor> sampleIn = sample.inputs(rng);
    std::vector<Dims> shapes;
    std::string at = "inputs";
    for (auto const& t : sampleIn) {
      shapes.push_back(t.desc.dims);
      at += " " + dimsText(t.desc.dims);
    }

    // Symbolic vs actual output shapes (data-dependent dims at the size tensors' upper bounds).
    Shapes actualShapes = outputShapes(*build, shapes, false);
    Shapes symbolicShapes = outputShapes(*build, shapes, true);
    if (actualShapes.rc != 0 || symbolicShapes.rc != 0) {
      r.fail(at + ": getOutputShapes returned " +
             std::to_string(actualShapes.rc != 0 ? actualShapes.rc : symbolicShapes.rc) +
             (actualShapes.rc != 0 ? " for constant dims" : " for symbolic dims"));
      break;
    }
    for (Shapes const* s : {&actualShapes, &symbolicShapes})
      if (!s->eb->error().empty())
        r.fail(at + ": getOutputShapes " + s->eb->error() +
               (s == &actualShapes ? " (constant dims)" : " (symbolic dims)"));
    if (!report.failures.empty()) break;
    std::vector<Dims> const& actual = actualShapes.upper;
    for (size_t i = 0; i < actual.size(); ++i) {
      bool valid = actual[i].nbDims >= 0;
      for (int32_t k = 0; valid && k < actual[i].nbDims; ++k) valid = actual[i].d[k] >= 0;
      if (!valid)
        r.fail(at + ": output " + std::to_string(i) + " has no valid shape (" + dimsText(actual[i]) + ")" +
               (actualShapes.dataDependent(i) ? " at the size tensors' upper bounds" : ""));
    }
    if (std::string diff = compareShapes(actualShapes, symbolicShapes, shapes); !diff.empty()) r.fail(at + ": " + diff);
    for (auto const& d : actualShapes.eb->sizeTensors()) {
      std::string o = "size tensor output " + std::to_string(d.output);
      if (d.output >= nbOut) {
        r.fail(at + ": " + o + " does not exist (" + std::to_string(nbOut) + " outputs)");
        continue;
      }
      if (actual[static_cast<size_t>(d.output)].nbDims != 0)
        r.fail(at + ": " + o + " must be 0-D (getOutputShapes gives it " +
               dimsText(actual[static_cast<size_t>(d.output)]) + ")");
      std::optional<int64_t> opt = ShapeExprBuilder::evaluate(d.opt, shapes);
      std::optional<int64_t> upper = ShapeExprBuilder::evaluate(d.upper, shapes);
      if (!upper || *upper < 0 || !opt || *opt < 0)
        r.fail(at + ": " + o + " is declared with opt " + (opt ? std::to_string(*opt) : std::string("?")) +
               " and upper bound " + (upper ? std::to_string(*upper) : std::string("?")) + " (both must be >= 0)");
    }
    if (!report.failures.empty()) break;
    if (trial == 0 && actualShapes.hasSizeTensors())
      report.notes.push_back(std::to_string(actualShapes.eb->sizeTensors().size()) +
                             " size tensor(s): data-dependent outputs run into upper-bound buffers, checked and "
                             "compared at the sizes written");
    r.shapes = &actualShapes;
    r.inputDims = shapes;

    // Format combinations.
    auto nbIn = static_cast<int32_t>(sampleIn.size());
    std::vector<DynamicPluginTensorDesc> descs;
    for (auto const& t : sampleIn) descs.push_back(dynamic(t.desc));
    for (auto const& d : actual) {
      PluginTensorDesc o{};
      o.dims = d;
      o.scale = -1.f;
      descs.push_back(dynamic(o));
    }
    std::vector<std::vector<Choice>> combos =
        formatCombinations(nbIn + nbOut, [&](int32_t pos, DataType t, TensorFormat f) {
          descs[static_cast<size_t>(pos)].desc.type = t;
          descs[static_cast<size_t>(pos)].desc.format = f;
          return build->supportsFormatCombination(pos, descs.data(), nbIn, nbOut);
        });
    if (combos.empty()) {
      r.fail(at + ": supportsFormatCombination accepts no combination");
      break;
    }
    for (auto const& combo : combos) {
      std::string ct = comboText(combo, nbIn);
      bool linear = true;
      for (auto const& c : combo) linear = linear && c.format == TensorFormat::kLINEAR;
      if (!linear) {
        if (trial == 0) report.notes.push_back("accepted non-linear formats " + ct + " (not exercised)");
        continue;
      }
      std::vector<DataType> inTypes, outTypes(static_cast<size_t>(nbOut));
      for (int32_t i = 0; i < nbIn; ++i) inTypes.push_back(combo[i].type);
      if (build->getOutputDataTypes(outTypes.data(), nbOut, inTypes.data(), nbIn) != 0) {
        r.fail(at + ": getOutputDataTypes failed for " + ct);
        continue;
      }
      bool typesAgree = true;
      for (int32_t o = 0; o < nbOut; ++o) typesAgree = typesAgree && outTypes[o] == combo[nbIn + o].type;
      if (!typesAgree) {
        r.fail(at + ": combination " + ct + " is accepted but getOutputDataTypes gives other output types");
        continue;
      }
      for (auto const& d : actualShapes.eb->sizeTensors()) {
        DataType t = outTypes[static_cast<size_t>(d.output)];
        if (t != DataType::kINT32 && t != DataType::kINT64)
          r.fail(at + " [" + ct + "]: size tensor output " + std::to_string(d.output) + " is " + typeName(t) +
                 ", not int32 or int64");
      }
      if (!report.failures.empty()) break;
      std::vector<HostTensor> in(sampleIn.size());
      bool convertible = true;
      for (int32_t i = 0; i < nbIn; ++i) convertible = convertible && convert(sampleIn[i], combo[i].type, in[i]);
      if (!convertible) {
        if (trial == 0) report.notes.push_back("combination " + ct + " needs input types the checker cannot make");
        continue;
      }
      combosSeen.insert(ct);
      std::vector<HostTensor> like;
      for (int32_t o = 0; o < nbOut; ++o) like.emplace_back(actual[o], outTypes[o]);
      // configurePlugin with the exact shapes, as a build whose profile is this one shape.
      // Data-dependent outputs as Kiln's build describes them: -1 where a size tensor decides, min with every size
      // 0, opt with the declared opt, max at the upper bound.
      std::vector<DynamicPluginTensorDesc> ci, co;
      for (auto const& t : in) ci.push_back(dynamic(t.desc));
      for (size_t o = 0; o < like.size(); ++o) {
        DynamicPluginTensorDesc d = dynamic(like[o].desc);
        if (actualShapes.dataDependent(o)) {
          plugin::SizeValues zero, opt;
          zero.mode = plugin::SizeValues::Mode::kZero;
          opt.mode = plugin::SizeValues::Mode::kOpt;
          d.min = actualShapes.at(o, shapes, zero);
          d.opt = actualShapes.at(o, shapes, opt);
          for (int32_t k = 0; k < d.desc.dims.nbDims; ++k)
            if (actualShapes.dependent[o][static_cast<size_t>(k)]) d.desc.dims.d[k] = -1;
        }
        co.push_back(d);
      }
      r.outBounds = co;
      if (int32_t rc = build->configurePlugin(ci.data(), nbIn, co.data(), nbOut); rc != 0) {
        r.fail(at + " [" + ct + "]: configurePlugin returned " + std::to_string(rc));
        break;
      }

      std::vector<HostTensor> reference;  // the first tactic's outputs
      for (int32_t tactic : tactics) {
        std::string what = at + " [" + ct + "]" + (tactic ? " tactic " + std::to_string(tactic) : "");
        V3Ptr copy = r.attach(*plugin, tactic, what);
        if (!copy) break;
        std::vector<HostTensor> a, b;
        if (!r.host(*copy, in, like, a, 0x11, what) || !r.host(*copy, in, like, b, 0x77, what)) break;
        for (size_t i = 0; i < a.size(); ++i)
          if (a[i].bytes != b[i].bytes)
            r.fail(what + ": two runs differ in output " + std::to_string(i) +
                   " (a nondeterministic result or bytes left unwritten)");
        if (reference.empty()) {
          reference = a;
        } else {
          for (size_t i = 0; i < a.size(); ++i) {
            std::string diff = compare(a[i], reference[i], sample.tolerance);
            if (!diff.empty())
              r.fail(what + ": computes other output " + std::to_string(i) + " than tactic " +
                     std::to_string(tactics.front()) + ", " + diff);
          }
        }
        if (cudaUsable) {
          std::vector<HostTensor> g, gg;
          if (r.cuda(*copy, in, like, g, false, what + " cuda")) {
            for (size_t i = 0; i < g.size(); ++i) {
              std::string diff = compare(g[i], a[i], sample.tolerance);
              if (!diff.empty()) r.fail(what + ": GPU and CPU differ in output " + std::to_string(i) + ", " + diff);
            }
            if (r.cuda(*copy, in, like, gg, true, what + " cuda graph")) {
              for (size_t i = 0; i < gg.size(); ++i)
                if (gg[i].bytes != g[i].bytes)
                  r.fail(what + ": the CUDA-graph replay differs in output " + std::to_string(i));
            }
          }
        }
        if (!report.failures.empty()) break;
      }
      if (reference.empty() || !report.failures.empty()) break;

      // Round trips, on the first tactic: the fields rebuild a plugin (kRUNTIME) that computes the same outputs and
      // gives the same fields; so does the clone.
      std::string what = at + " [" + ct + "]";
      PluginFieldCollection const* fc = runtime->getFieldsToSerialize();
      if (!fc) {
        r.fail(what + ": getFieldsToSerialize returned null");
        break;
      }
      CopiedFields saved(*fc);
      V3Ptr rebuilt(creator.createPlugin("kiln-plugin-check", saved.get(), TensorRTPhase::kRUNTIME));
      V3Ptr cloned(plugin->clone());
      if (!rebuilt) r.fail(what + ": createPlugin(kRUNTIME) with the plugin's getFieldsToSerialize() returned null");
      if (!cloned) r.fail(what + ": clone() returned null");
      for (IPluginV3* q : {rebuilt.get(), cloned.get()}) {
        if (!q) continue;
        std::string which = q == rebuilt.get() ? "plugin rebuilt from its fields" : "clone";
        IPluginV3OneRuntime* qr = runtimeOf(q);
        PluginFieldCollection const* qf = qr ? qr->getFieldsToSerialize() : nullptr;
        if (!qf || CopiedFields(*qf).bytes() != saved.bytes())
          r.fail(what + ": the " + which + " serializes other fields");
        V3Ptr copy = r.attach(*q, tactics.front(), what + " (" + which + ")");
        if (copy) r.sameAs(*copy, in, like, reference, which, what);
      }
      if (!report.failures.empty()) break;
    }
  }
  report.combinations = static_cast<int32_t>(combosSeen.size());
  std::string list;
  for (auto const& c : combosSeen) list += (list.empty() ? "" : "; ") + c;
  report.notes.push_back(std::to_string(options.shapes) + " random shapes, " + std::to_string(report.combinations) +
                         " format combination(s): " + list);
  report.notes.push_back("shape inputs (IPluginV3 addPluginV3 shapeInputs) are not exercised");
  return report;
}

}  // namespace kiln::plugincheck
