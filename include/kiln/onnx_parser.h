// Kiln ONNX parser public API: reads an ONNX model into a kiln::INetworkDefinition. Shaped after TensorRT
// 10.16's nvonnxparser (NvOnnxParser.h) in namespace kiln::onnx; shipped as libkiln_onnx.so (kiln::onnx_parser).
#ifndef KILN_ONNX_PARSER_H
#define KILN_ONNX_PARSER_H

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kiln.h"

/// Version of the parser interface (major * 10000 + minor * 100 + patch).
#define KILN_ONNX_PARSER_MAJOR 0
#define KILN_ONNX_PARSER_MINOR 1
#define KILN_ONNX_PARSER_PATCH 0
#define KILN_ONNX_PARSER_VERSION \
  ((KILN_ONNX_PARSER_MAJOR * 10000) + (KILN_ONNX_PARSER_MINOR * 100) + KILN_ONNX_PARSER_PATCH)

namespace kiln::onnx {

/// Node indices of a part of a model and whether the parser supports that part (TensorRT's SubGraph_t).
using SubGraph_t = std::pair<std::vector<size_t>, bool>;

/// All parts of a model as reported by supportsModel() (TensorRT's SubGraphCollection_t).
using SubGraphCollection_t = std::vector<SubGraph_t>;

/// Kind of a parser error; values follow nvonnxparser::ErrorCode.
enum class ErrorCode : int32_t {
  kSUCCESS = 0,                     ///< No error.
  kINTERNAL_ERROR = 1,              ///< The parser hit an inconsistency of its own.
  kMEM_ALLOC_FAILED = 2,            ///< An allocation failed or would exceed a limit.
  kMODEL_DESERIALIZE_FAILED = 3,    ///< The bytes are not a valid ONNX ModelProto.
  kINVALID_VALUE = 4,               ///< A value (argument, tensor data, path) is invalid.
  kINVALID_GRAPH = 5,               ///< The graph is malformed (cycle, undefined input, duplicate name...).
  kINVALID_NODE = 6,                ///< A node is malformed (wrong arity, bad attribute...).
  kUNSUPPORTED_GRAPH = 7,           ///< The graph uses a feature the parser does not support.
  kUNSUPPORTED_NODE = 8,            ///< No importer for the node's (domain, op_type).
  kUNSUPPORTED_NODE_ATTR = 9,       ///< An attribute value is not supported.
  kUNSUPPORTED_NODE_INPUT = 10,     ///< An input form (e.g. non-constant where a constant is needed).
  kUNSUPPORTED_NODE_DATATYPE = 11,  ///< An element type is not supported.
  kUNSUPPORTED_NODE_DYNAMIC = 12,   ///< A dynamic shape or value is not supported.
  kUNSUPPORTED_NODE_SHAPE = 13,     ///< A shape is not supported.
  kREFIT_FAILED = 14,               ///< Refitting failed.
};

/// Bit set of OnnxParserFlag values: bit (1U << flag).
using OnnxParserFlags = uint32_t;

/// Options of the parser; values follow nvonnxparser::OnnxParserFlag.
enum class OnnxParserFlag : int32_t {
  /// Import InstanceNormalization with the native normalization layer (Kiln always does; kept for source
  /// compatibility). Set by default.
  kNATIVE_INSTANCENORM = 0,
  /// Accept UINT8 and asymmetric quantization for DLA (accepted and ignored: Kiln has no DLA).
  kENABLE_UINT8_AND_ASYMMETRIC_QUANTIZATION_DLA = 1,
};

/// One error recorded by the parser. Owned by the parser; valid until clearErrors() or the next parse.
class KILN_API IParserError {
 public:
  /// Kind of error.
  virtual ErrorCode code() const noexcept = 0;
  /// Readable description naming the node (name, op type, domain) where there is one.
  virtual char const* desc() const noexcept = 0;
  /// Parser source file that detected the error.
  virtual char const* file() const noexcept = 0;
  /// Parser source line that detected the error.
  virtual int32_t line() const noexcept = 0;
  /// Parser function that detected the error.
  virtual char const* func() const noexcept = 0;
  /// Index of the graph node concerned, or -1 if the error is not about one node.
  virtual int32_t node() const noexcept = 0;
  /// Name of the node concerned ("" if none or unnamed).
  virtual char const* nodeName() const noexcept = 0;
  /// op_type of the node concerned ("" if none).
  virtual char const* nodeOperator() const noexcept = 0;
  /// Names of the local functions enclosing the node, outermost first; nullptr at top level.
  virtual char const* const* localFunctionStack() const noexcept = 0;
  /// Number of entries of localFunctionStack().
  virtual int32_t localFunctionStackSize() const noexcept = 0;

 protected:
  virtual ~IParserError() noexcept = default;
};

/// Parses ONNX models into the network given to createParser().
///
/// Lifetime: the parser owns the weight bytes the network's layers point at (initializers, Constant nodes and
/// weights it computes, e.g. folded batch normalization). Keep the parser alive until the network has been
/// built (IBuilder::buildSerializedNetwork returned), as with TensorRT. Delete it with `delete`.
class KILN_API IParser {
 public:
  /// Parses a serialized ModelProto into the network. `modelPath` is the model file's path, used to find
  /// external data (relative to its folder); without it, external data is refused. Returns true on success;
  /// otherwise see getNbErrors()/getError().
  virtual bool parse(void const* serializedOnnxModel, size_t serializedOnnxModelSize,
                     char const* modelPath = nullptr) noexcept = 0;

  /// Reads and parses the binary ONNX file `onnxModelFile`. `verbosity` is an ILogger::Severity value:
  /// messages up to that severity go to the logger.
  virtual bool parseFromFile(char const* onnxModelFile, int32_t verbosity) noexcept = 0;

  /// Deprecated in TensorRT 10.1 (use supportsModelV2): checks whether the model can be imported, filling
  /// `subGraphCollection` with the node indices and whether they are supported. Does not change the network.
  KILN_DEPRECATED virtual bool supportsModel(void const* serializedOnnxModel, size_t serializedOnnxModelSize,
                                             SubGraphCollection_t& subGraphCollection,
                                             char const* modelPath = nullptr) noexcept = 0;

  /// True if an importer exists for `opName` (default ONNX domain). True does not promise every use works.
  virtual bool supportsOperator(char const* opName) const noexcept = 0;

  /// Number of errors recorded since the last clearErrors().
  virtual int32_t getNbErrors() const noexcept = 0;

  /// Error `index`, or nullptr if out of range.
  virtual IParserError const* getError(int32_t index) const noexcept = 0;

  /// Forgets the recorded errors.
  virtual void clearErrors() noexcept = 0;

  virtual ~IParser() noexcept = default;

  /// Replaces the flags.
  virtual void setFlags(OnnxParserFlags onnxParserFlags) noexcept = 0;

  /// The flags (default: kNATIVE_INSTANCENORM).
  virtual OnnxParserFlags getFlags() const noexcept = 0;

  /// Clears one flag.
  virtual void clearFlag(OnnxParserFlag onnxParserFlag) noexcept = 0;

  /// Sets one flag.
  virtual void setFlag(OnnxParserFlag onnxParserFlag) noexcept = 0;

  /// True if the flag is set.
  virtual bool getFlag(OnnxParserFlag onnxParserFlag) const noexcept = 0;

  /// Output `i` of the first node named `name` of the last parse, or nullptr.
  virtual ITensor const* getLayerOutputTensor(char const* name, int64_t i) noexcept = 0;

  /// Checks whether the model can be imported, without changing the network; the per-node results are then
  /// available from getNbSubgraphs()/isSubgraphSupported()/getSubgraphNodes().
  virtual bool supportsModelV2(void const* serializedOnnxModel, size_t serializedOnnxModelSize,
                               char const* modelPath = nullptr) noexcept = 0;

  /// Number of parts found by the last supportsModelV2().
  virtual int64_t getNbSubgraphs() noexcept = 0;

  /// Whether part `index` of the last supportsModelV2() is supported.
  virtual bool isSubgraphSupported(int64_t const index) noexcept = 0;

  /// Node indices of part `index` (array owned by the parser); nullptr if out of range.
  virtual int64_t* getSubgraphNodes(int64_t const index, int64_t& subgraphLength) noexcept = 0;
};

}  // namespace kiln::onnx

namespace kiln::impl {
/// Number of ErrorCode values.
template <>
struct EnumMaxImpl<onnx::ErrorCode> {
  static constexpr int32_t kVALUE = 15;
};
/// Number of OnnxParserFlag values.
template <>
struct EnumMaxImpl<onnx::OnnxParserFlag> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace kiln::impl

/// Internal entry point behind kiln::onnx::createParser(); call that instead. `network` is an
/// INetworkDefinition*, `logger` an ILogger*, `version` the caller's KILN_ONNX_PARSER_VERSION. Returns an
/// IParser*, or nullptr if the versions differ or an argument is null.
extern "C" KILN_API void* createKilnOnnxParser_INTERNAL(void* network, void* logger, int32_t version) noexcept;

namespace kiln::onnx {

/// Creates a parser that adds to `network` and logs to `logger`; both must outlive it. The caller owns the
/// result (release with delete); nullptr on failure.
inline IParser* createParser(INetworkDefinition& network, ILogger& logger) noexcept {
  return static_cast<IParser*>(createKilnOnnxParser_INTERNAL(&network, &logger, KILN_ONNX_PARSER_VERSION));
}

}  // namespace kiln::onnx

#endif  // KILN_ONNX_PARSER_H
