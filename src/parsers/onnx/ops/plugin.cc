// ONNX importer for plugins: an op no built-in importer knows is looked up in the plugin registry (op type as
// plugin name, the domain as namespace, the domain's opset version or "1" as version); its attributes become
// PluginFields (ints, floats, strings, tensors) for the creator's createPlugin. TRT_PluginV2 nodes (attributes
// name, version, namespace, data) are rebuilt with the creator's deserializePlugin.
#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;
using AP = ::onnx::AttributeProto;

// Fields built from a node's attributes, owning their bytes.
struct Fields {
  std::deque<std::string> names;
  std::deque<std::vector<uint8_t>> data;
  std::vector<PluginField> fields;
  PluginFieldCollection fc{};

  void add(std::string const& name, PluginFieldType type, int32_t length, void const* bytes, size_t size) {
    names.push_back(name);
    data.emplace_back(size);
    if (size) std::memcpy(data.back().data(), bytes, size);
    fields.emplace_back(names.back().c_str(), size ? data.back().data() : nullptr, type, length);
  }
  PluginFieldCollection const* collection() {
    fc.nbFields = static_cast<int32_t>(fields.size());
    fc.fields = fields.data();
    return &fc;
  }
};

Result<PluginFieldType> fieldType(Node const& node, std::string const& attr, DataType t) {
  switch (t) {
    case DataType::kFLOAT: return PluginFieldType::kFLOAT32;
    case DataType::kHALF: return PluginFieldType::kFLOAT16;
    case DataType::kBF16: return PluginFieldType::kBF16;
    case DataType::kINT8:
    case DataType::kUINT8:
    case DataType::kBOOL: return PluginFieldType::kINT8;
    case DataType::kINT32: return PluginFieldType::kINT32;
    case DataType::kINT64: return PluginFieldType::kINT64;
    case DataType::kFP8: return PluginFieldType::kFP8;
    case DataType::kFLOAT64: return PluginFieldType::kFLOAT64;
    case DataType::kINT16: return PluginFieldType::kINT16;
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0:
    case DataType::kUINT16:
    case DataType::kUINT32:
    case DataType::kUINT64: break;
  }
  return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "tensor attribute '", attr,
                                  "' has a type no PluginFieldType holds");
}

int32_t narrow(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
}

// Attributes -> fields: INT(S) kINT32 (kINT64 where a value does not fit), FLOAT(S) kFLOAT32, STRING kCHAR,
// TENSOR its element type. `skip` names attributes that are not fields.
Status attributesToFields(ImportContext& ctx, Node const& node, Fields& f, std::vector<char const*> const& skip) {
  for (AP const& a : node.attribute()) {
    bool skipped = false;
    for (char const* s : skip) skipped = skipped || a.name() == s;
    if (skipped) continue;
    switch (a.type()) {
      case AP::INT:
      case AP::INTS: {
        std::vector<int64_t> v;
        if (a.type() == AP::INT) v.push_back(a.i());
        else v.assign(a.ints().begin(), a.ints().end());
        bool fits = true;
        for (int64_t x : v) fits = fits && x == narrow(x);
        if (fits) {
          std::vector<int32_t> w(v.begin(), v.end());
          f.add(a.name(), PluginFieldType::kINT32, static_cast<int32_t>(w.size()), w.data(), w.size() * 4);
        } else {
          f.add(a.name(), PluginFieldType::kINT64, static_cast<int32_t>(v.size()), v.data(), v.size() * 8);
        }
        break;
      }
      case AP::FLOAT:
      case AP::FLOATS: {
        std::vector<float> v;
        if (a.type() == AP::FLOAT) v.push_back(a.f());
        else v.assign(a.floats().begin(), a.floats().end());
        f.add(a.name(), PluginFieldType::kFLOAT32, static_cast<int32_t>(v.size()), v.data(), v.size() * 4);
        break;
      }
      case AP::STRING:
        f.add(a.name(), PluginFieldType::kCHAR, static_cast<int32_t>(a.s().size()), a.s().data(), a.s().size());
        break;
      case AP::TENSOR: {
        KO_ASSIGN_OR_RETURN(Constant c, constantFromTensorProto(a.t(), ctx.externalLoader()));
        KO_ASSIGN_OR_RETURN(PluginFieldType t, fieldType(node, a.name(), c.type));
        f.add(a.name(), t, narrow(c.count()), c.bytes.data(), c.bytes.size());
        break;
      }
      default:
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "attribute '", a.name(),
                                        "' is of a kind plugin fields cannot carry (ints, floats, strings and "
                                        "tensors can)");
    }
  }
  return Status::success();
}

Result<std::vector<ITensor*>> pluginInputs(ImportContext& ctx, Node const& node) {
  std::vector<ITensor*> ins;
  for (int i = 0; i < node.input_size(); ++i) {
    if (!ImportContext::hasInput(node, i)) continue;
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    ins.push_back(t);
  }
  return ins;
}

Status setOutputs(ImportContext& ctx, Node const& node, ILayer* layer) {
  KO_RETURN_IF_ERROR(ctx.check(layer, node, "plugin"));
  if (layer->getNbOutputs() < node.output_size())
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the plugin has ", layer->getNbOutputs(),
                                    " outputs, the node ", node.output_size());
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty()) KO_RETURN_IF_ERROR(ctx.setOutput(node, i, layer->getOutput(i)));
  return Status::success();
}

// Adds a V2 plugin (owned here; the network keeps a clone).
Status addV2(ImportContext& ctx, Node const& node, IPluginV2* plugin, std::vector<ITensor*>& ins) {
  ILayer* l = ctx.network().addPluginV2(ins.data(), static_cast<int32_t>(ins.size()), *plugin);
  plugin->destroy();
  return setOutputs(ctx, node, l);
}

// The creator registered for the node: (op type, version, domain); the version is the domain's opset version
// when the model imports one, else "1".
IPluginCreatorInterface* creatorFor(ImportContext const& ctx, Node const& node, std::string* version) {
  IPluginRegistry* reg = getPluginRegistry();
  int64_t opset = ctx.opset(node.domain());
  std::vector<std::string> versions;
  if (opset > 0) versions.push_back(std::to_string(opset));
  versions.push_back("1");
  for (auto const& v : versions) {
    if (IPluginCreatorInterface* c = reg->getCreator(node.op_type().c_str(), v.c_str(), node.domain().c_str())) {
      *version = v;
      return c;
    }
  }
  return nullptr;
}

Status importCustom(ImportContext& ctx, Node const& node) {
  std::string version;
  IPluginCreatorInterface* c = creatorFor(ctx, node, &version);
  if (c == nullptr)
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "no importer and no registered plugin creator");
  Fields f;
  KO_RETURN_IF_ERROR(attributesToFields(ctx, node, f, {}));
  KO_ASSIGN_OR_RETURN(std::vector<ITensor*> ins, pluginInputs(ctx, node));
  std::string const name = node.name().empty() ? node.op_type() : node.name();
  char const* kind = c->getInterfaceInfo().kind;
  ctx.log(ILogger::Severity::kINFO, cat("ONNX parser: node '", name, "' (", node.op_type(), ", domain '", node.domain(),
                                        "') runs plugin '", node.op_type(), "' version '", version, "' namespace '",
                                        node.domain(), "' with ", f.fields.size(), " fields"));
  if (kind != nullptr && std::strcmp(kind, "PLUGIN CREATOR_V3ONE") == 0) {
    auto* creator = static_cast<IPluginCreatorV3One*>(c);
    IPluginV3* p = creator->createPlugin(name.c_str(), f.collection(), TensorRTPhase::kBUILD);
    if (p == nullptr)
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the creator of plugin '", node.op_type(),
                                      "' returned no plugin for the node's attributes");
    ILayer* l = ctx.network().addPluginV3(ins.data(), static_cast<int32_t>(ins.size()), nullptr, 0, *p);
    delete p;
    return setOutputs(ctx, node, l);
  }
  if (kind == nullptr || std::strcmp(kind, "PLUGIN CREATOR_V1") != 0)
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "the registered creator is of an unknown kind");
  auto* creator = static_cast<IPluginCreator*>(c);
  IPluginV2* p = creator->createPlugin(name.c_str(), f.collection());
  if (p == nullptr)
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the creator of plugin '", node.op_type(),
                                    "' returned no plugin for the node's attributes");
  return addV2(ctx, node, p, ins);
}

Status importTrtPluginV2(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(std::string name, attrString(node, "name", ""));
  KO_ASSIGN_OR_RETURN(std::string version, attrString(node, "version", "1"));
  KO_ASSIGN_OR_RETURN(std::string ns, attrString(node, "namespace", ""));
  KO_ASSIGN_OR_RETURN(std::string data, attrString(node, "data", ""));
  if (name.empty())
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "TRT_PluginV2 needs the attribute 'name'");
  IPluginCreatorInterface* c = getPluginRegistry()->getCreator(name.c_str(), version.c_str(), ns.c_str());
  if (c == nullptr)
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "no plugin creator is registered for plugin '",
                                    name, "' version '", version, "' namespace '", ns,
                                    "' (load its library with IPluginRegistry::loadLibrary)");
  char const* kind = c->getInterfaceInfo().kind;
  if (kind == nullptr || std::strcmp(kind, "PLUGIN CREATOR_V1") != 0)
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "plugin '", name,
                                    "' is not a V2 plugin (TRT_PluginV2 holds IPluginV2 serializations)");
  std::string const layer = node.name().empty() ? name : node.name();
  IPluginV2* p = static_cast<IPluginCreator*>(c)->deserializePlugin(layer.c_str(), data.data(), data.size());
  if (p == nullptr)
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the creator of plugin '", name,
                                    "' could not deserialize the node's ", data.size(), " data bytes");
  ctx.log(ILogger::Severity::kINFO, cat("ONNX parser: node '", layer, "' (TRT_PluginV2) rebuilds plugin '", name,
                                        "' version '", version, "' namespace '", ns, "' from ", data.size(), " bytes"));
  p->setPluginNamespace(ns.c_str());
  KO_ASSIGN_OR_RETURN(std::vector<ITensor*> ins, pluginInputs(ctx, node));
  return addV2(ctx, node, p, ins);
}

// Ops without an importer: the plugin importer when the registry has a creator named after the op in the node's
// domain (any version; the importer picks one).
ImportFn pluginLookup(char const* domain, char const* opType) {
  int32_t n = 0;
  IPluginCreatorInterface* const* all = getPluginRegistry()->getAllCreatorsRecursive(&n);
  for (int32_t i = 0; all != nullptr && i < n; ++i) {
    IPluginCreatorInterface* c = all[i];
    char const* kind = c->getInterfaceInfo().kind;
    char const* name = nullptr;
    char const* ns = nullptr;
    if (kind != nullptr && std::strcmp(kind, "PLUGIN CREATOR_V3ONE") == 0) {
      name = static_cast<IPluginCreatorV3One*>(c)->getPluginName();
      ns = static_cast<IPluginCreatorV3One*>(c)->getPluginNamespace();
    } else if (kind != nullptr && std::strcmp(kind, "PLUGIN CREATOR_V1") == 0) {
      name = static_cast<IPluginCreator*>(c)->getPluginName();
      ns = static_cast<IPluginCreator*>(c)->getPluginNamespace();
    }
    if (name != nullptr && std::strcmp(name, opType) == 0 && std::strcmp(ns != nullptr ? ns : "", domain) == 0)
      return importCustom;
  }
  return nullptr;
}

[[maybe_unused]] bool const kHookInstalled = (setImporterLookupHook(pluginLookup), true);

KILN_ONNX_REGISTER("", "TRT_PluginV2", importTrtPluginV2);
KILN_ONNX_REGISTER("trt.plugins", "TRT_PluginV2", importTrtPluginV2);

}  // namespace
}  // namespace kiln::onnx
