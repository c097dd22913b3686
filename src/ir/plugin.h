// Plugin nodes (ops PluginV2 / PluginV3): PluginInstance owns the user's plugin object and wraps every call Kiln
// makes into it (shapes through an IExprBuilder over concrete dims, types, format checks, configuration,
// workspace, per-context copies, execution); PluginRecord is what a plan stores of it; plugin fields encode.
// Part of the IR because libkiln_cuda carries private copies of the IR: the CUDA tactic uses this too.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/plugin_shapes.h"
#include "kiln/kiln_plugin.h"

namespace kiln::ir {

struct InferContext;

/// `r`, or its error with `context` prepended.
template <typename T>
Result<T> withContext(Result<T> r, std::string const& context) {
  if (r.isOk()) return r;
  return r.status().withContext(context);
}

/// Which plugin interface a node holds.
enum class PluginKind : int32_t {
  kV2 = 2,  ///< IPluginV2DynamicExt.
  kV3 = 3,  ///< IPluginV3 (core, build and runtime capabilities).
};

/// What a plan stores of a plugin node: identity and the bytes that rebuild it (V2: serialize(); V3: the
/// fields of getFieldsToSerialize(), encoded by encodePluginFields).
struct PluginRecord {
  PluginKind kind = PluginKind::kV2;
  std::string type;     // plugin type (V2) / name (V3); the creator's getPluginName()
  std::string version;  // the creator's getPluginVersion()
  std::string ns;       // namespace
  std::vector<uint8_t> data;
};

/// "plugin 'Type' version '1' namespace 'ns'" for messages.
std::string describePlugin(std::string const& type, std::string const& version, std::string const& ns);

/// A PluginFieldCollection owning its names and data.
class OwnedFields {
 public:
  OwnedFields() = default;
  OwnedFields(OwnedFields&&) = default;
  OwnedFields& operator=(OwnedFields&&) = default;
  OwnedFields(OwnedFields const&) = delete;
  OwnedFields& operator=(OwnedFields const&) = delete;
  /// Appends a field (the bytes are copied; `bytes` is its data size).
  void add(std::string name, PluginFieldType type, int32_t length, void const* data, size_t bytes);
  /// The collection; valid until the next add() or until this object dies.
  PluginFieldCollection const* collection();
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<uint8_t>> data_;
  std::vector<PluginFieldType> types_;
  std::vector<int32_t> lengths_;
  std::vector<PluginField> fields_;
  PluginFieldCollection fc_{};
};

/// Bytes of `length` elements of `type` (kINT4: two per byte; kDIMS: sizeof(Dims)); an error for an unknown
/// type or a negative length.
Result<size_t> pluginFieldBytes(PluginFieldType type, int32_t length);
/// Kiln's encoding of a field collection (every PluginFieldType): "KPF1", count, then per field its name,
/// type, length and data, little-endian. Errors name the field (null name, bad type, data missing).
Result<std::vector<uint8_t>> encodePluginFields(PluginFieldCollection const& fc);
/// Decodes encodePluginFields' bytes; errors say what is malformed (never reads past `size`).
Result<OwnedFields> decodePluginFields(uint8_t const* data, size_t size);

/// Owns one plugin object of a node (destroy() for V2, delete for V3) and calls into it. Methods that the
/// builder or a context's shape inference call (shapes, types) serialize on an internal mutex, so the engine's
/// instance may be asked from several contexts at once; execution happens on per-context copies
/// (attachToContext), each used by one thread at a time.
class PluginInstance {
 public:
  /// Takes ownership of a V2 plugin (destroyed here on failure). `layer` names the node in messages.
  static Result<std::shared_ptr<PluginInstance>> adoptV2(IPluginV2DynamicExt* plugin, std::string layer);
  /// Takes ownership of a V3 plugin (deleted here on failure); it needs the core capability, and the build
  /// capability in TensorRTPhase::kBUILD, the runtime capability in both phases.
  static Result<std::shared_ptr<PluginInstance>> adoptV3(IPluginV3* plugin, std::string layer, TensorRTPhase phase);
  /// An instance holding only a plan's record (no plugin object yet): the runtime resolves it through the
  /// registry (resolved() is false until then; every other call fails or answers "nothing").
  static std::shared_ptr<PluginInstance> fromRecord(PluginRecord record, std::string layer);
  ~PluginInstance();
  PluginInstance(PluginInstance const&) = delete;
  PluginInstance& operator=(PluginInstance const&) = delete;

  bool resolved() const { return v2_ || v3_; }
  PluginKind kind() const { return kind_; }
  IPluginV2DynamicExt* v2() const { return v2_; }
  IPluginV3* v3() const { return v3_; }
  /// The interface as added to the network (for IPluginV2Layer/IPluginV3Layer::getPlugin).
  std::string const& type() const { return type_; }
  std::string const& version() const { return version_; }
  std::string const& pluginNamespace() const { return ns_; }
  std::string const& layer() const { return layer_; }
  void setLayer(std::string layer) { layer_ = std::move(layer); }
  /// "plugin 'T' version 'V' namespace 'N'".
  std::string describe() const { return describePlugin(type_, version_, ns_); }
  int32_t nbOutputs() const;
  /// The host execution extension (V2: the plugin; V3: its runtime capability), or null.
  IPluginHostExecution* hostExecution() const;

  /// Shape and type inference of the node: the first inputs are the plugin's, the last `nbShapeInputs` its
  /// shape inputs (V3). Output types: `outTypes` when non-empty (negotiated), else the plugin's. With a shape
  /// program its expressions are evaluated (size tensors unknown); else the plugin is asked over concrete dims
  /// (V3: getOutputShapes, whose size-tensor declarations are checked: once per output, 0-D, int32/int64).
  Status infer(InferContext& ctx, int32_t nbShapeInputs, std::vector<int64_t> const& outTypes);
  /// V3: runs getOutputShapes through a SymbolicExprBuilder: input dimension k of input i is a leaf unless
  /// `inputDims` knows it (the build's dims, -1 where profiles vary), element k of shape input i likewise with
  /// `shapeValues` (shape input i has `shapeCounts[i]` elements). Errors name the plugin and layer.
  Result<PluginShapeProgram> captureShapes(std::vector<Dims> const& inputDims,
                                           std::vector<std::optional<std::vector<int64_t>>> const& shapeValues,
                                           std::vector<int64_t> const& shapeCounts);
  /// The captured output-shape expressions (set by the builder, or by the plan reader from attribute
  /// plugin_shapes); while set, infer() evaluates them instead of calling the plugin. Null: none.
  std::shared_ptr<PluginShapeProgram const> shapeProgram() const { return shapes_; }
  void setShapeProgram(std::shared_ptr<PluginShapeProgram const> p) { shapes_ = std::move(p); }
  /// The plugin's output types for these input types.
  Result<std::vector<DataType>> outputTypes(std::vector<DataType> const& inTypes);
  /// supportsFormatCombination for position `pos` of `inOut` (inputs then outputs).
  bool supportsFormatCombination(int32_t pos, std::vector<DynamicPluginTensorDesc> const& inOut, int32_t nbInputs);
  /// configurePlugin (build: profile bounds).
  Status configure(std::vector<DynamicPluginTensorDesc> const& in, std::vector<DynamicPluginTensorDesc> const& out);
  /// getWorkspaceSize for these descriptions.
  size_t workspaceSize(std::vector<DynamicPluginTensorDesc> const& in,
                       std::vector<DynamicPluginTensorDesc> const& out);
  /// A new instance holding plugin clone() (the clone is independent: its own configuration, owner).
  Result<std::shared_ptr<PluginInstance>> clone();
  /// The plan's record: the cached one (loaded plans), else built from serialize() / getFieldsToSerialize().
  Result<PluginRecord> record();
  void setRecord(PluginRecord r) { record_ = std::make_unique<PluginRecord>(std::move(r)); }

  /// Prepares a run-time instance: V2 initialize() (terminate() when destroyed). Idempotent.
  Status initialize();
  /// The copy one execution context runs: V2 clone() + initialize() + attachToContext(cudnn, cublas,
  /// allocator); V3 the runtime capability's attachToContext() with a resource context over `allocator` and
  /// `recorder`. V3 tactic `tactic` is selected (setTactic) on it.
  Result<std::unique_ptr<PluginInstance>> attachToContext(IGpuAllocator* allocator, IErrorRecorder* recorder,
                                                          cudnnContext* cudnn, cublasContext* cublas);
  /// Runs the plugin: when the shapes differ from the last run, V2 configurePlugin() with them (min = opt = max)
  /// or V3 onShapeChange(); then enqueueHost() (`host`) or enqueue() on `stream`. Errors name the plugin.
  Status execute(std::vector<PluginTensorDesc> const& in, std::vector<PluginTensorDesc> const& out,
                 void const* const* inputs, void* const* outputs, void* workspace, bool host, void* stream);

 private:
  PluginInstance() = default;
  IPluginV3OneBuild* build() const;
  IPluginV3OneRuntime* runtime() const;
  Status fromPlugin(char const* what, int32_t rc) const;

  PluginKind kind_ = PluginKind::kV2;
  IPluginV2DynamicExt* v2_ = nullptr;
  IPluginV3* v3_ = nullptr;
  std::string type_, version_, ns_, layer_;
  std::unique_ptr<PluginRecord> record_;
  std::shared_ptr<PluginShapeProgram const> shapes_;
  std::mutex mu_;
  bool initialized_ = false;
  bool attached_ = false;
  std::unique_ptr<IPluginResourceContext> resources_;
  std::vector<Dims> lastIn_, lastOut_;
  std::vector<DataType> lastTypes_;
};

}  // namespace kiln::ir
