// Internals of the ONNX parser shared by the graph importer and the op importers: a small Status/Result,
// constants the parser owns, the ImportContext an importer works through, attribute readers and the op
// registry (domain, op_type) -> import function.
#pragma once

#include <kiln/kiln.h>
#include <kiln/onnx_parser.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::onnx {

/// Outcome of an import step: kSUCCESS, or an error code with a message.
struct Status {
  ErrorCode code = ErrorCode::kSUCCESS;
  std::string message;
  bool ok() const { return code == ErrorCode::kSUCCESS; }
  static Status success() { return {}; }
};

/// A value or an error.
template <typename T>
struct Result {
  Result(T v) : value(std::move(v)) {}  // NOLINT: implicit on purpose, like absl::StatusOr.
  Result(Status s) : status(std::move(s)) {}  // NOLINT
  bool ok() const { return status.ok(); }
  Status status;
  T value{};
};

/// Concatenates streamable arguments.
template <typename... Args>
std::string cat(Args const&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

/// An error Status.
template <typename... Args>
Status fail(ErrorCode code, Args const&... args) {
  return Status{code, cat(args...)};
}

#define KILN_ONNX_CONCAT_INNER(a, b) a##b
#define KILN_ONNX_CONCAT(a, b) KILN_ONNX_CONCAT_INNER(a, b)
#define KO_RETURN_IF_ERROR(expr)           \
  do {                                     \
    ::kiln::onnx::Status ko_s_ = (expr);   \
    if (!ko_s_.ok()) {                     \
      return ko_s_;                        \
    }                                      \
  } while (false)
#define KO_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) {                               \
    return tmp.status;                           \
  }                                              \
  lhs = std::move(tmp.value)
#define KO_ASSIGN_OR_RETURN(lhs, expr) KO_ASSIGN_OR_RETURN_IMPL(KILN_ONNX_CONCAT(ko_r_, __LINE__), lhs, expr)

/// Host constant owned by the parser (initializer, Constant node, or weights an importer computed). Its bytes
/// stay put for the parser's lifetime, so Weights may point at them.
struct Constant {
  DataType type = DataType::kFLOAT;
  Dims dims{0, {}};
  std::vector<uint8_t> bytes;  ///< Row-major elements, element size of `type` (kBOOL: one byte each).
  int64_t count() const;
  Weights weights() const { return Weights{type, count() == 0 ? nullptr : bytes.data(), count()}; }
  /// Element i converted to double / int64 (for float, int and bool types).
  double asDouble(int64_t i) const;
  int64_t asInt(int64_t i) const;
};

/// Size in bytes of one element of `type`; 0 for packed sub-byte types.
int64_t elementSize(DataType type);

/// TensorProto::DataType values newer than the ONNX headers Kiln builds against.
constexpr int32_t kOnnxFloat8E4M3FN = 17;
constexpr int32_t kOnnxUint4 = 21;
constexpr int32_t kOnnxInt4 = 22;

/// Kiln type of an ONNX TensorProto::DataType (FLOAT8E4M3FN is kFP8); error for unsupported ones.
Result<DataType> fromOnnxType(int32_t onnxType);

/// "[d0,d1,...]".
std::string dimsString(Dims const& dims);

/// A graph value: a network tensor, a parser-owned constant, or both (the constant materialized as a layer).
struct Value {
  ITensor* tensor = nullptr;
  Constant const* constant = nullptr;
};

/// Oldest and newest default-domain opsets the importers know. Models down to opset 1 are read too, as long as
/// each op they use has there the definition it has at kMinOpset (importNode checks).
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 21;

/// Maximum number of elements of one constant the parser will allocate (2^31: 8 GiB of fp32), so absurd
/// dims fail before any allocation.
constexpr int64_t kMaxConstantElements = int64_t{1} << 31;

/// Reads the bytes of a tensor stored as external data (set by the parser when it knows the model's folder).
using ExternalLoader = std::function<Status(::onnx::TensorProto const&, std::vector<uint8_t>&, int64_t expected)>;

/// Deepest nesting of subgraphs (If/Loop/Scan bodies) the parser imports; the network lowers at most 16 nested
/// loops/conditionals too.
constexpr int32_t kMaxSubgraphDepth = 16;

/// What an importer sees: the network, the opsets, the values by name, constants and error helpers.
class ImportContext {
 public:
  ImportContext(INetworkDefinition& network, std::map<std::string, int64_t> opsets)
      : network_(network), opsets_(std::move(opsets)) {}

  INetworkDefinition& network() { return network_; }

  /// Opset version imported for `domain` ("" and "ai.onnx" are the same); 0 if not imported.
  int64_t opset(std::string const& domain = "") const;

  /// True if input `i` of `node` exists and is not the empty (omitted optional) name.
  static bool hasInput(::onnx::NodeProto const& node, int i) {
    return i < node.input_size() && !node.input(i).empty();
  }

  /// The value named `name` (error if unknown).
  Result<Value> value(std::string const& name);

  /// Input `i` as a tensor; constants become IConstantLayers (once each).
  Result<ITensor*> tensor(::onnx::NodeProto const& node, int i);

  /// Input `i` as a constant, or nullptr if it is computed at run time (or absent).
  Constant const* constant(::onnx::NodeProto const& node, int i);

  /// Registers `tensor` as output `i` of `node` (the tensor takes the ONNX name).
  Status setOutput(::onnx::NodeProto const& node, int i, ITensor* tensor);

  /// Registers a constant as output `i` of `node` (no layer until a tensor is needed).
  Status setOutputConstant(::onnx::NodeProto const& node, int i, Constant const* constant);

  /// Defines a graph-level value (graph input or initializer), or a value of the current subgraph scope (which
  /// may shadow an outer value of the same name).
  Status define(std::string const& name, Value value);
  bool defined(std::string const& name) const { return values_.count(name) != 0; }

  /// Opens a subgraph scope: values defined until popScope() are dropped then (shadowed outer ones come back).
  /// Tensors named in it get `prefix` before their ONNX name, so that equal names in sibling subgraphs stay
  /// distinct network tensors.
  void pushScope(std::string const& prefix) {
    scopes_.emplace_back();
    prefixes_.push_back((prefixes_.empty() ? std::string() : prefixes_.back()) + prefix);
  }
  /// Closes the innermost scope.
  void popScope();
  /// Number of open subgraph scopes (0 while importing the main graph).
  int32_t scopeDepth() const { return static_cast<int32_t>(scopes_.size()); }

  /// A number not returned before (for unique layer and tensor names).
  int32_t newId() { return constantCounter_++; }

  /// The parser's logger and verbosity (importers that log, e.g. plugin lookups); null logger: none.
  void setLogger(ILogger* logger, int32_t verbosity) {
    logger_ = logger;
    verbosity_ = verbosity;
  }
  /// Logs `msg` when `severity` passes the parser's verbosity.
  void log(ILogger::Severity severity, std::string const& msg) const {
    if (logger_ != nullptr && static_cast<int32_t>(severity) <= verbosity_) logger_->log(severity, msg.c_str());
  }

  /// Loader for external data (empty when the parser has no model path).
  ExternalLoader const& externalLoader() const { return externalLoader_; }
  void setExternalLoader(ExternalLoader loader) { externalLoader_ = std::move(loader); }

  /// A new parser-owned constant with `count` zeroed elements (error if too large).
  Result<Constant*> newConstant(DataType type, Dims const& dims);

  /// Tensor of an owned constant, as an IConstantLayer named after the node.
  Result<ITensor*> constantTensor(Constant const* constant, std::string const& name);

  /// 1-D INT64 constant tensor holding `values`.
  Result<ITensor*> int64Tensor(std::vector<int64_t> const& values, std::string const& name);

  /// Error naming `node`: "node 'name' (Op, domain 'd'): message".
  template <typename... Args>
  static Status nodeError(ErrorCode code, ::onnx::NodeProto const& node, Args const&... args) {
    return fail(code, "node '", node.name(), "' (", node.op_type(), domainSuffix(node), "): ", args...);
  }
  static std::string domainSuffix(::onnx::NodeProto const& node) {
    return node.domain().empty() ? std::string() : cat(", domain '", node.domain(), "'");
  }

  /// Checks that the layer was created (the network logged why not) and names it after the node.
  Status check(ILayer* layer, ::onnx::NodeProto const& node, char const* what);

  /// Keeps weight bytes alive while the parser lives; returns the stored copy. Its bytes count against the
  /// memory limit (setMemoryLimit).
  Constant* keep(Constant c);

  /// Caps the bytes of all constants this import holds (initializers, external data, constants importers
  /// compute): the builder's IBuilder::setMemoryLimit, 0 for no cap beyond kMaxConstantElements per constant.
  void setMemoryLimit(int64_t bytes) { memoryLimit_ = bytes; }
  /// Bytes a new constant may still take under the memory limit (INT64_MAX when there is none).
  int64_t constantBytesLeft() const;
  /// Error (kMEM_ALLOC_FAILED, naming `what`) if `bytes` more would pass the memory limit. Call before allocating.
  Status checkConstantBytes(int64_t bytes, std::string const& what) const;

  /// Storage the parser owns (moved out by the parser after a parse).
  std::deque<Constant>& storage() { return storage_; }

  /// The values table (for outputs and getLayerOutputTensor).
  std::unordered_map<std::string, Value>& values() { return values_; }

 private:
  INetworkDefinition& network_;
  std::map<std::string, int64_t> opsets_;
  /// Inserts `name` (error if the current scope, or the main graph outside scopes, already has it).
  Status insertValue(std::string const& name, Value v, char const* what);

  std::unordered_map<std::string, Value> values_;
  /// Per open scope: the names it defined and the outer value each one shadows.
  std::vector<std::unordered_map<std::string, std::optional<Value>>> scopes_;
  std::vector<std::string> prefixes_;
  std::deque<Constant> storage_;
  int64_t memoryLimit_ = 0;
  int64_t constantBytes_ = 0;
  ExternalLoader externalLoader_;
  int32_t constantCounter_ = 0;
  ILogger* logger_ = nullptr;
  int32_t verbosity_ = 0;
};

//
// Attributes
//

/// Finds attribute `name`, or nullptr.
::onnx::AttributeProto const* findAttr(::onnx::NodeProto const& node, char const* name);

/// Integer attribute (default if absent; error if of another type).
Result<int64_t> attrInt(::onnx::NodeProto const& node, char const* name, int64_t def);
/// Float attribute.
Result<float> attrFloat(::onnx::NodeProto const& node, char const* name, float def);
/// String attribute.
Result<std::string> attrString(::onnx::NodeProto const& node, char const* name, std::string const& def);
/// Integer-list attribute (empty/`def` if absent).
Result<std::vector<int64_t>> attrInts(::onnx::NodeProto const& node, char const* name,
                                      std::vector<int64_t> const& def = {});
/// Float-list attribute.
Result<std::vector<float>> attrFloats(::onnx::NodeProto const& node, char const* name);

/// Converts a TensorProto into an owned constant (data fields, raw_data; external data resolved by
/// `externalLoader` when set). Checks dims and that the bytes cover them, and refuses (kMEM_ALLOC_FAILED) a
/// tensor whose dims need more than `maxBytes` before reading or copying any of it.
Result<Constant> constantFromTensorProto(::onnx::TensorProto const& tensor, ExternalLoader const& externalLoader,
                                         int64_t maxBytes = std::numeric_limits<int64_t>::max());

//
// Shape helpers
//

/// Normalizes `axis` for `rank` (error naming the node when out of range).
Result<int32_t> normalizeAxis(::onnx::NodeProto const& node, int64_t axis, int32_t rank);

/// Rank of a tensor (error if unknown).
Result<int32_t> rankOf(::onnx::NodeProto const& node, ITensor* t);

/// Adds leading 1-dims so that `t` has rank `rank` (numpy broadcasting).
Result<ITensor*> broadcastToRank(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, int32_t rank);

/// Reads input `i` as a list of int64 constants (error naming the node if not constant).
Result<std::vector<int64_t>> constantInts(ImportContext& ctx, ::onnx::NodeProto const& node, int i);

/// Reshape of `t` to static `dims` (0 copies, -1 inferred).
Result<ITensor*> reshape(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, Dims const& dims,
                         bool zeroIsPlaceholder = true);

//
// Subgraphs (src/parsers/onnx/subgraph.cc)
//

/// Names a graph reads from enclosing scopes: node inputs (also of nested subgraphs) that the graph itself does
/// not define as input, initializer or node output.
std::set<std::string> outerReferences(::onnx::GraphProto const& graph);

/// Outer names read by the subgraphs (graph attributes) of `node`.
std::set<std::string> subgraphReferences(::onnx::NodeProto const& node);

/// Orders the nodes of `graph` so that each comes after the producers of its inputs (including names its
/// subgraphs read); names already defined in `ctx` count as available. On error `badNode` is the node at fault.
Status sortNodes(ImportContext const& ctx, ::onnx::GraphProto const& graph, std::vector<int>& order, int& badNode);

/// Imports one node with its registered importer and checks that its outputs got valid shapes.
Status importNode(ImportContext& ctx, ::onnx::NodeProto const& node);

/// Imports the body `graph` of node `owner` into the network in a new scope: its inputs are bound to `inputs`
/// (one per graph input, in order; nullptr leaves an input unbound, an error if it is read), its initializers
/// become constants, its nodes are imported in order, and `outputs` receives its outputs (constants become
/// tensors). Outer values stay readable by name. Refuses nesting deeper than kMaxSubgraphDepth.
Status importSubgraph(ImportContext& ctx, ::onnx::NodeProto const& owner, ::onnx::GraphProto const& graph,
                      std::vector<ITensor*> const& inputs, std::vector<ITensor*>& outputs);

/// The GRAPH attribute `name` of `node` (error naming the node if absent or of another type).
Result<::onnx::GraphProto const*> attrGraph(::onnx::NodeProto const& node, char const* name);

//
// Registry
//

/// Imports one node into the network.
using ImportFn = Status (*)(ImportContext& ctx, ::onnx::NodeProto const& node);

/// Registers `fn` for (domain, opType); "" is the default ONNX domain. Returns true (for static registration).
bool registerImporter(char const* domain, char const* opType, ImportFn fn);

/// The importer for (domain, opType): the built-in one, else the fallback hook's; nullptr if none.
ImportFn findImporter(std::string const& domain, std::string const& opType);

/// Hook consulted for ops without a built-in importer (the plugin registry installs one later). nullptr clears.
using ImporterLookupHook = ImportFn (*)(char const* domain, char const* opType);
void setImporterLookupHook(ImporterLookupHook hook);

/// Registers importer `fn` for (domain, op) at static-initialization time.
#define KILN_ONNX_REGISTER(domain, op, fn)                          \
  [[maybe_unused]] static bool const KILN_ONNX_CONCAT(kRegistered_, \
                                                      __LINE__) = ::kiln::onnx::registerImporter(domain, op, fn)

}  // namespace kiln::onnx
