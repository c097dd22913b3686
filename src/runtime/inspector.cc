// IEngineInspector: per-layer information as one line of text or JSON (TensorRT's key names where they exist,
// plus Kiln's "FusedLayers" and "Precision").
#include <cmath>
#include <new>
#include <sstream>

#include "ir/op.h"
#include "runtime/engine_core.h"

namespace kiln::runtime {
namespace {

std::string jsonEscape(std::string const& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          r += buf;
        } else {
          r += c;
        }
    }
  }
  return r;
}

std::string jsonDims(Dims const& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "," : "") + std::to_string(d.d[i]);
  return s + "]";
}

// JSON has no NaN or infinity: those are written as the strings "nan", "inf", "-inf" (attributes such as
// clip bounds hold infinities); finite values keep all 17 significant digits.
std::string jsonNumber(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string attrJson(ir::AttrValue const& v) {
  std::ostringstream os;
  if (auto const* i = std::get_if<int64_t>(&v)) os << *i;
  else if (auto const* f = std::get_if<double>(&v)) os << jsonNumber(*f);
  else if (auto const* s = std::get_if<std::string>(&v)) os << '"' << jsonEscape(*s) << '"';
  else if (auto const* l = std::get_if<std::vector<int64_t>>(&v)) {
    os << '[';
    for (size_t k = 0; k < l->size(); ++k) os << (k ? "," : "") << (*l)[k];
    os << ']';
  } else if (auto const* fl = std::get_if<std::vector<double>>(&v)) {
    os << '[';
    for (size_t k = 0; k < fl->size(); ++k) os << (k ? "," : "") << jsonNumber((*fl)[k]);
    os << ']';
  }
  return os.str();
}

class InspectorImpl final : public IEngineInspector {
 public:
  InspectorImpl(std::shared_ptr<EngineCore> core, Reporter const& reporter) : core_(std::move(core)), reporter_(reporter) {}

  bool setExecutionContext(IExecutionContext const* context) noexcept override {
    context_ = context;
    return true;
  }
  IExecutionContext const* getExecutionContext() const noexcept override { return context_; }

  char const* getLayerInformation(int32_t layerIndex, LayerInformationFormat format) const noexcept override {
    if (layerIndex < 0 || layerIndex >= static_cast<int32_t>(core_->layerNodes.size())) {
      reporter_.fail(invalidArgument("getLayerInformation: layer index ", layerIndex, " out of range (the engine has ",
                                     core_->layerNodes.size(), " layers)"));
      return nullptr;
    }
    out_ = layerInfo(layerIndex, format);
    return out_.c_str();
  }

  char const* getEngineInformation(LayerInformationFormat format) const noexcept override {
    std::string s;
    if (format == LayerInformationFormat::kJSON) {
      s = "{\"Layers\": [";
      for (size_t i = 0; i < core_->layerNodes.size(); ++i) s += (i ? ",\n" : "\n") + layerInfo(static_cast<int32_t>(i), format);
      s += "],\n\"Bindings\": [";
      for (size_t i = 0; i < core_->io.size(); ++i) s += (i ? ", \"" : "\"") + jsonEscape(core_->io[i].name) + "\"";
      s += "]}";
    } else {
      for (size_t i = 0; i < core_->layerNodes.size(); ++i) s += layerInfo(static_cast<int32_t>(i), format) + "\n";
    }
    out_ = std::move(s);
    return out_.c_str();
  }

  void setErrorRecorder(IErrorRecorder* recorder) noexcept override { reporter_.setRecorder(recorder); }
  IErrorRecorder* getErrorRecorder() const noexcept override { return reporter_.recorder(); }

 private:
  Dims shapeOf(ir::Value const* v) const {
    // With a context whose shapes are all set, report its actual shapes; else the engine's declared ones.
    if (context_ && v->isInput) return context_->getTensorShape(v->name.c_str());
    if (context_ && v->isOutput) return context_->getTensorShape(v->name.c_str());
    return v->shape;
  }

  std::string tensorJson(ir::Value const* v) const {
    // A binding in another layout (ITensor::setAllowedFormats) is described as the engine's queries describe it.
    auto f = core_->plan.ioFormats.find(v->id);
    std::string format = f == core_->plan.ioFormats.end() ? strCat("Row major linear ", dataTypeName(v->dtype))
                                                          : formatDescription(f->second, v->dtype);
    return strCat("{\"Name\": \"", jsonEscape(v->name), "\", \"Location\": \"Device\", \"Dimensions\": ", jsonDims(shapeOf(v)),
                  ", \"Format/Datatype\": \"", jsonEscape(format), "\"}");
  }

  std::string layerInfo(int32_t index, LayerInformationFormat format) const {
    ir::Node const& n = *core_->plan.graph->nodes()[core_->layerNodes[index]];
    auto verbosity = static_cast<ProfilingVerbosity>(core_->plan.profilingVerbosity);
    bool json = format == LayerInformationFormat::kJSON;
    if (verbosity == ProfilingVerbosity::kNONE) return json ? strCat("\"", index, "\"") : std::to_string(index);
    if (verbosity == ProfilingVerbosity::kLAYER_NAMES_ONLY) return json ? "\"" + jsonEscape(n.name) + "\"" : n.name;
    DataType precision = n.outputs.empty() ? DataType::kFLOAT : n.outputs[0]->dtype;
    if (!json) {
      std::string s = strCat(n.name, " [", ir::opName(n.op), "] tactic=", n.tactic, " precision=", dataTypeName(precision));
      for (auto const* v : n.inputs)
        if (v) s += strCat(" in:", v->name, dimsToString(shapeOf(v)));
      for (auto const* v : n.outputs) s += strCat(" out:", v->name, dimsToString(shapeOf(v)));
      if (!n.fusedFrom.empty()) {
        s += " fused=";
        for (size_t i = 0; i < n.fusedFrom.size(); ++i) s += (i ? "+" : "") + n.fusedFrom[i];
      }
      return s;
    }
    std::string s = strCat("{\"Name\": \"", jsonEscape(n.name), "\", \"LayerType\": \"", ir::opName(n.op), "\", \"Inputs\": [");
    bool first = true;
    for (auto const* v : n.inputs) {
      if (!v) continue;
      s += (first ? "" : ", ") + tensorJson(v);
      first = false;
    }
    s += "], \"Outputs\": [";
    for (size_t i = 0; i < n.outputs.size(); ++i) s += (i ? ", " : "") + tensorJson(n.outputs[i]);
    s += "], \"ParameterType\": \"" + std::string(ir::opName(n.op)) + "\", \"Parameters\": {";
    first = true;
    for (auto const& [k, v] : n.attrs.all()) {
      s += strCat(first ? "" : ", ", "\"", jsonEscape(k), "\": ", attrJson(v));
      first = false;
    }
    s += "}, \"TacticName\": \"" + jsonEscape(n.tactic) + "\", \"Precision\": \"" + dataTypeName(precision) +
         "\", \"FusedLayers\": [";
    for (size_t i = 0; i < n.fusedFrom.size(); ++i) s += (i ? ", \"" : "\"") + jsonEscape(n.fusedFrom[i]) + "\"";
    s += "]}";
    return s;
  }

  std::shared_ptr<EngineCore> core_;
  Reporter reporter_;
  IExecutionContext const* context_ = nullptr;
  mutable std::string out_;
};

}  // namespace

IEngineInspector* createInspector(std::shared_ptr<EngineCore> core, Reporter const& reporter) {
  return new (std::nothrow) InspectorImpl(std::move(core), reporter);
}

}  // namespace kiln::runtime
