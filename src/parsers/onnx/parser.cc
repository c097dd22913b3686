// The ONNX parser object (kiln::onnx::IParser): model loading and validation, external data, graph inputs,
// initializers, node import in topological order and graph outputs; errors recorded as IParserError.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

namespace fs = std::filesystem;

/// Largest serialized model accepted (protobuf's own hard limit is 2 GiB; larger models use external data).
constexpr int64_t kMaxModelBytes = (int64_t{1} << 31) - 1;
/// The domain of ONNX's training-preview ops (Adagrad, Adam, Momentum...).
constexpr char const* kPreviewTrainingDomain = "ai.onnx.preview.training";
/// Newest IR version known (ONNX 1.16: IR 10).
constexpr int64_t kMaxIrVersion = 10;

class ParserError final : public IParserError {
 public:
  ParserError(ErrorCode code, std::string desc, char const* file, int32_t line, char const* func, int32_t node,
              std::string nodeName, std::string nodeOp)
      : code_(code), desc_(std::move(desc)), file_(file), line_(line), func_(func), node_(node),
        nodeName_(std::move(nodeName)), nodeOp_(std::move(nodeOp)) {}
  ErrorCode code() const noexcept override { return code_; }
  char const* desc() const noexcept override { return desc_.c_str(); }
  char const* file() const noexcept override { return file_; }
  int32_t line() const noexcept override { return line_; }
  char const* func() const noexcept override { return func_; }
  int32_t node() const noexcept override { return node_; }
  char const* nodeName() const noexcept override { return nodeName_.c_str(); }
  char const* nodeOperator() const noexcept override { return nodeOp_.c_str(); }
  char const* const* localFunctionStack() const noexcept override { return nullptr; }
  int32_t localFunctionStackSize() const noexcept override { return 0; }

 private:
  ErrorCode code_;
  std::string desc_;
  char const* file_;
  int32_t line_;
  char const* func_;
  int32_t node_;
  std::string nodeName_;
  std::string nodeOp_;
};

/// Reads the external data of `t` from a file under `modelDir`, refusing anything that leaves that folder.
Status loadExternalData(fs::path const& modelDir, ::onnx::TensorProto const& t, std::vector<uint8_t>& out,
                        int64_t expected) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (auto const& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(kv.value().c_str(), &end, 10);
      if (kv.value().empty() || *end != '\0' || errno != 0 || v < 0) {
        return fail(ErrorCode::kINVALID_VALUE, "external data ", kv.key(), " '", kv.value(), "' is invalid");
      }
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty()) {
    return fail(ErrorCode::kINVALID_VALUE, "external data has no location");
  }
  fs::path rel(location);
  if (rel.is_absolute() || location[0] == '/' || location[0] == '\\') {
    return fail(ErrorCode::kINVALID_VALUE, "external data location '", location, "' is absolute (refused)");
  }
  std::error_code ec;
  fs::path base = fs::canonical(modelDir.empty() ? fs::path(".") : modelDir, ec);
  if (ec) {
    return fail(ErrorCode::kINVALID_VALUE, "model folder '", modelDir.string(), "' cannot be resolved");
  }
  fs::path full = fs::canonical(base / rel, ec);
  if (ec) {
    return fail(ErrorCode::kINVALID_VALUE, "external data file '", location, "' not found next to the model");
  }
  auto [bEnd, fIt] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (bEnd != base.end() || fIt == full.end()) {
    return fail(ErrorCode::kINVALID_VALUE, "external data location '", location,
                "' resolves outside the model's folder (refused)");
  }
  if (!fs::is_regular_file(full, ec)) {
    return fail(ErrorCode::kINVALID_VALUE, "external data location '", location, "' is not a regular file");
  }
  auto const size = static_cast<int64_t>(fs::file_size(full, ec));
  if (ec) {
    return fail(ErrorCode::kINVALID_VALUE, "cannot read the size of '", location, "'");
  }
  if (length < 0) {
    length = size >= offset ? size - offset : -1;
  }
  if (offset > size || length < 0 || length > size - offset) {
    return fail(ErrorCode::kINVALID_VALUE, "external data offset ", offset, " + length ", length,
                " lies past the end of '", location, "' (", size, " bytes)");
  }
  if (length != expected) {
    return fail(ErrorCode::kINVALID_VALUE, "external data length ", length, " does not match the ", expected,
                " bytes its dims need");
  }
  std::ifstream in(full, std::ios::binary);
  out.resize(static_cast<size_t>(length));
  in.seekg(offset);
  if (length > 0) {
    in.read(reinterpret_cast<char*>(out.data()), length);
  }
  if (!in) {
    return fail(ErrorCode::kINVALID_VALUE, "reading external data from '", location, "' failed");
  }
  return Status::success();
}

class Parser final : public IParser {
 public:
  Parser(INetworkDefinition& network, ILogger& logger) : network_(network), logger_(logger) {}

  bool parse(void const* data, size_t size, char const* modelPath) noexcept override {
    return run(data, size, modelPath, network_);
  }

  bool parseFromFile(char const* file, int32_t verbosity) noexcept override {
    verbosity_ = verbosity;
    if (file == nullptr) {
      record(ErrorCode::kINVALID_VALUE, "parseFromFile: null file name", __LINE__, -1, nullptr);
      return false;
    }
    std::error_code ec;
    auto size = fs::file_size(file, ec);
    if (ec || static_cast<int64_t>(size) > kMaxModelBytes) {
      record(ErrorCode::kINVALID_VALUE,
             ec ? cat("cannot open ONNX file '", file, "'") : cat("ONNX file '", file, "' exceeds 2 GiB"), __LINE__,
             -1, nullptr);
      return false;
    }
    std::ifstream in(file, std::ios::binary);
    std::vector<char> bytes(size);
    if (size > 0) {
      in.read(bytes.data(), static_cast<std::streamsize>(size));
    }
    if (!in) {
      record(ErrorCode::kINVALID_VALUE, cat("cannot read ONNX file '", file, "'"), __LINE__, -1, nullptr);
      return false;
    }
    log(ILogger::Severity::kINFO, cat("parsing ONNX file '", file, "' (", size, " bytes)"));
    return parse(bytes.data(), bytes.size(), file);
  }

  bool supportsModel(void const* data, size_t size, SubGraphCollection_t& collection,
                     char const* modelPath) noexcept override {
    bool ok = supportsModelV2(data, size, modelPath);
    collection.clear();
    for (auto const& g : subgraphs_) {
      std::vector<size_t> nodes(g.first.begin(), g.first.end());
      collection.emplace_back(std::move(nodes), g.second);
    }
    return ok;
  }

  bool supportsOperator(char const* opName) const noexcept override {
    return opName != nullptr && findImporter("", opName) != nullptr;
  }

  int32_t getNbErrors() const noexcept override { return static_cast<int32_t>(errors_.size()); }
  IParserError const* getError(int32_t index) const noexcept override {
    return index >= 0 && index < getNbErrors() ? &errors_[static_cast<size_t>(index)] : nullptr;
  }
  void clearErrors() noexcept override { errors_.clear(); }

  void setFlags(OnnxParserFlags flags) noexcept override { flags_ = flags; }
  OnnxParserFlags getFlags() const noexcept override { return flags_; }
  void clearFlag(OnnxParserFlag f) noexcept override { flags_ &= ~(1U << static_cast<uint32_t>(f)); }
  void setFlag(OnnxParserFlag f) noexcept override { flags_ |= 1U << static_cast<uint32_t>(f); }
  bool getFlag(OnnxParserFlag f) const noexcept override { return (flags_ & (1U << static_cast<uint32_t>(f))) != 0; }

  ITensor const* getLayerOutputTensor(char const* name, int64_t i) noexcept override {
    if (name == nullptr || i < 0) {
      return nullptr;
    }
    for (auto const& [nodeName, outs] : nodeOutputs_) {
      if (nodeName == name) {
        return i < static_cast<int64_t>(outs.size()) ? outs[static_cast<size_t>(i)] : nullptr;
      }
    }
    return nullptr;
  }

  bool supportsModelV2(void const* data, size_t size, char const* modelPath) noexcept override {
    subgraphs_.clear();
    std::unique_ptr<INetworkDefinition> scratch(network_.getBuilder().createNetworkV2(network_.getFlags()));
    if (!scratch) {
      record(ErrorCode::kINTERNAL_ERROR, "could not create a scratch network", __LINE__, -1, nullptr);
      return false;
    }
    checking_ = true;
    size_t const errorsBefore = errors_.size();
    bool ok = run(data, size, modelPath, *scratch);
    checking_ = false;
    // Contiguous runs of nodes (in topological order) that imported, split at the first failing node.
    int32_t failed = -1;
    for (size_t e = errorsBefore; e < errors_.size(); ++e) {
      if (errors_[e].node() >= 0) {
        failed = errors_[e].node();
        break;
      }
    }
    std::vector<int64_t> good;
    for (int32_t n : order_) {
      if (n == failed) {
        if (!good.empty()) {
          subgraphs_.emplace_back(good, true);
        }
        subgraphs_.emplace_back(std::vector<int64_t>{n}, false);
        good.clear();
        continue;
      }
      good.push_back(n);
    }
    if (!good.empty()) {
      subgraphs_.emplace_back(good, ok || failed >= 0);
    }
    // The scratch network dies here; its constants need not outlive it.
    scratchStorage_.clear();
    return ok;
  }

  int64_t getNbSubgraphs() noexcept override { return static_cast<int64_t>(subgraphs_.size()); }
  bool isSubgraphSupported(int64_t const index) noexcept override {
    return index >= 0 && index < getNbSubgraphs() && subgraphs_[static_cast<size_t>(index)].second;
  }
  int64_t* getSubgraphNodes(int64_t const index, int64_t& length) noexcept override {
    if (index < 0 || index >= getNbSubgraphs()) {
      length = 0;
      return nullptr;
    }
    auto& g = subgraphs_[static_cast<size_t>(index)].first;
    length = static_cast<int64_t>(g.size());
    return g.data();
  }

 private:
  void log(ILogger::Severity s, std::string const& msg) {
    if (static_cast<int32_t>(s) <= verbosity_ || s <= ILogger::Severity::kERROR) {
      logger_.log(s, msg.c_str());
    }
  }

  void record(ErrorCode code, std::string const& desc, int32_t line, int32_t nodeIndex,
              ::onnx::NodeProto const* node) {
    if (!checking_) {
      log(ILogger::Severity::kERROR, "ONNX parser: " + desc);
    }
    errors_.emplace_back(code, desc, __FILE__, line, "Parser::run", nodeIndex, node ? node->name() : "",
                         node ? node->op_type() : "");
  }

  bool run(void const* data, size_t size, char const* modelPath, INetworkDefinition& network) noexcept {
    try {
      return runImpl(data, size, modelPath, network);
    } catch (std::bad_alloc const&) {
      record(ErrorCode::kMEM_ALLOC_FAILED, "out of memory while parsing", __LINE__, -1, nullptr);
    } catch (std::exception const& e) {
      record(ErrorCode::kINTERNAL_ERROR, cat("unexpected failure: ", e.what()), __LINE__, -1, nullptr);
    }
    return false;
  }

  bool runImpl(void const* data, size_t size, char const* modelPath, INetworkDefinition& network) {
    order_.clear();
    nodeOutputs_.clear();
    if (data == nullptr || size == 0) {
      record(ErrorCode::kMODEL_DESERIALIZE_FAILED, "the serialized model is empty", __LINE__, -1, nullptr);
      return false;
    }
    if (size > static_cast<size_t>(kMaxModelBytes)) {
      record(ErrorCode::kMODEL_DESERIALIZE_FAILED, "the serialized model exceeds 2 GiB (use external data)",
             __LINE__, -1, nullptr);
      return false;
    }
    ::onnx::ModelProto model;
    {
      google::protobuf::io::ArrayInputStream raw(data, static_cast<int>(size));
      google::protobuf::io::CodedInputStream coded(&raw);
      coded.SetTotalBytesLimit(static_cast<int>(kMaxModelBytes));
      coded.SetRecursionLimit(64);
      if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
        record(ErrorCode::kMODEL_DESERIALIZE_FAILED,
               "the bytes are not a valid ONNX model (truncated or not a ModelProto)", __LINE__, -1, nullptr);
        return false;
      }
    }
    if (!model.has_graph()) {
      record(ErrorCode::kMODEL_DESERIALIZE_FAILED, "the model has no graph (not an ONNX model?)", __LINE__, -1,
             nullptr);
      return false;
    }
    if (model.ir_version() < 3) {
      record(ErrorCode::kUNSUPPORTED_GRAPH, cat("IR version ", model.ir_version(), " is not supported (need >= 3)"),
             __LINE__, -1, nullptr);
      return false;
    }
    if (model.ir_version() > kMaxIrVersion) {
      log(ILogger::Severity::kWARNING, cat("ONNX parser: IR version ", model.ir_version(), " is newer than ",
                                           kMaxIrVersion, "; parsing anyway"));
    }
    std::map<std::string, int64_t> opsets;
    for (auto const& o : model.opset_import()) {
      std::string d = o.domain() == "ai.onnx" ? "" : o.domain();
      opsets[d] = o.version();
    }
    auto def = opsets.find("");
    if (def == opsets.end() && opsets.count(kPreviewTrainingDomain) == 0) {
      record(ErrorCode::kUNSUPPORTED_GRAPH, "the model imports no default-domain opset", __LINE__, -1, nullptr);
      return false;
    }
    // A model of only ai.onnx.preview.training ops (an optimizer step) needs no default-domain opset; a
    // default-domain node in it is refused when imported.
    if (def != opsets.end() && def->second < 1) {
      record(ErrorCode::kUNSUPPORTED_GRAPH,
             cat("opset ", def->second, " is not a valid default-domain opset (Kiln supports ", kMinOpset, " to ",
                 kMaxOpset, ", and older models whose ops did not change before ", kMinOpset, ")"),
             __LINE__, -1, nullptr);
      return false;
    }
    if (def != opsets.end() && def->second > kMaxOpset) {
      log(ILogger::Severity::kWARNING,
          cat("ONNX parser: opset ", def->second, " is newer than ", kMaxOpset, "; parsing with its semantics"));
    }

    fs::path modelDir;
    bool const havePath = modelPath != nullptr && modelPath[0] != '\0';
    if (havePath) {
      modelDir = fs::path(modelPath).parent_path();
    }
    ExternalLoader loader;
    if (havePath) {
      loader = [modelDir](::onnx::TensorProto const& t, std::vector<uint8_t>& out, int64_t expected) {
        return loadExternalData(modelDir, t, out, expected);
      };
    }

    ImportContext ctx(network, opsets);
    ctx.setExternalLoader(loader);
    ctx.setLogger(&logger_, verbosity_);
    ctx.setMemoryLimit(network.getBuilder().getMemoryLimit());
    bool ok = importGraph(ctx, model.graph(), loader);
    // The weights the network points at stay with the parser (see IParser's lifetime note).
    auto& dest = checking_ ? scratchStorage_ : storage_;
    for (auto& c : ctx.storage()) {
      dest.push_back(std::make_unique<Constant>(std::move(c)));
    }
    return ok;
  }

  bool importGraph(ImportContext& ctx, ::onnx::GraphProto const& graph, ExternalLoader const& loader) {
    // Initializers first (IR < 4 may also list them as graph inputs).
    std::set<std::string> initNames;
    for (auto const& init : graph.initializer()) {
      auto c = constantFromTensorProto(init, loader, ctx.constantBytesLeft());
      if (!c.ok()) {
        record(c.status.code, c.status.message, __LINE__, -1, nullptr);
        return false;
      }
      Constant* kept = ctx.keep(std::move(c.value));
      Status s = ctx.define(init.name(), Value{nullptr, kept});
      if (!s.ok()) {
        record(s.code, cat("initializer: ", s.message), __LINE__, -1, nullptr);
        return false;
      }
      initNames.insert(init.name());
    }
    for (auto const& in : graph.input()) {
      if (initNames.count(in.name()) != 0) {
        continue;
      }
      Status s = addInput(ctx, in);
      if (!s.ok()) {
        record(s.code, s.message, __LINE__, -1, nullptr);
        return false;
      }
    }
    // Topological order (Kahn); undefined inputs, duplicate outputs and cycles are errors naming the node.
    int bad = -1;
    Status sorted = sortNodes(ctx, graph, order_, bad);
    if (!sorted.ok()) {
      record(sorted.code, sorted.message, __LINE__, bad, bad >= 0 ? &graph.node(bad) : nullptr);
      return false;
    }
    for (int i : order_) {
      auto const& node = graph.node(i);
      Status s = importNode(ctx, node);
      if (!s.ok()) {
        record(s.code, s.message, __LINE__, i, &node);
        return false;
      }
      std::vector<ITensor*> outs;
      for (auto const& o : node.output()) {
        auto it = ctx.values().find(o);
        outs.push_back(it == ctx.values().end() ? nullptr : it->second.tensor);
      }
      nodeOutputs_.emplace_back(node.name(), std::move(outs));
    }
    // Graph outputs keep their ONNX names.
    std::set<std::string> outNames;
    for (auto const& out : graph.output()) {
      if (!outNames.insert(out.name()).second) {
        record(ErrorCode::kINVALID_GRAPH, cat("graph output '", out.name(), "' is listed twice"), __LINE__, -1,
               nullptr);
        return false;
      }
      auto it = ctx.values().find(out.name());
      if (it == ctx.values().end()) {
        record(ErrorCode::kINVALID_GRAPH, cat("graph output '", out.name(), "' is not produced by the graph"),
               __LINE__, -1, nullptr);
        return false;
      }
      Value& v = it->second;
      ITensor* t = v.tensor;
      if (t == nullptr) {
        auto ct = ctx.constantTensor(v.constant, out.name());
        if (!ct.ok()) {
          record(ct.status.code, ct.status.message, __LINE__, -1, nullptr);
          return false;
        }
        t = ct.value;
        t->setName(out.name().c_str());
        v.tensor = t;
      } else if (t->isNetworkInput() || t->isNetworkOutput()) {
        IIdentityLayer* id = ctx.network().addIdentity(*t);
        if (id == nullptr) {
          record(ErrorCode::kINTERNAL_ERROR, cat("graph output '", out.name(), "': identity refused"), __LINE__, -1,
                 nullptr);
          return false;
        }
        t = id->getOutput(0);
        // As TensorRT does, an output that is also an input gets a "__" prefix.
        t->setName(cat("__", out.name()).c_str());
      }
      ctx.network().markOutput(*t);
      if (!t->isNetworkOutput()) {
        record(ErrorCode::kINVALID_GRAPH, cat("graph output '", out.name(), "' could not be marked (see the log)"),
               __LINE__, -1, nullptr);
        return false;
      }
    }
    return true;
  }

  Status addInput(ImportContext& ctx, ::onnx::ValueInfoProto const& in) {
    if (!in.type().has_tensor_type()) {
      return fail(ErrorCode::kUNSUPPORTED_GRAPH, "graph input '", in.name(), "' is not a tensor");
    }
    auto const& tt = in.type().tensor_type();
    auto type = fromOnnxType(tt.elem_type());
    if (!type.ok()) {
      return fail(type.status.code, "graph input '", in.name(), "': ", type.status.message);
    }
    if (!tt.has_shape()) {
      return fail(ErrorCode::kUNSUPPORTED_NODE_SHAPE, "graph input '", in.name(), "' has no shape (unknown rank)");
    }
    if (tt.shape().dim_size() > Dims::MAX_DIMS) {
      return fail(ErrorCode::kUNSUPPORTED_NODE_SHAPE, "graph input '", in.name(), "' has rank ",
                  tt.shape().dim_size(), " (max ", Dims::MAX_DIMS, ")");
    }
    Dims dims{tt.shape().dim_size(), {}};
    std::vector<std::pair<int32_t, std::string>> names;
    for (int i = 0; i < dims.nbDims; ++i) {
      auto const& d = tt.shape().dim(i);
      if (d.has_dim_value()) {
        if (d.dim_value() < 0 || d.dim_value() > kMaxConstantElements) {
          return fail(ErrorCode::kINVALID_VALUE, "graph input '", in.name(), "' has an invalid dim ", d.dim_value());
        }
        dims.d[i] = d.dim_value();
      } else {
        dims.d[i] = -1;
        if (d.has_dim_param() && !d.dim_param().empty()) {
          names.emplace_back(i, d.dim_param());
        }
      }
    }
    ITensor* t = ctx.network().addInput(in.name().c_str(), type.value, dims);
    if (t == nullptr) {
      return fail(ErrorCode::kINVALID_GRAPH, "graph input '", in.name(), "' of shape ", dimsString(dims),
                  " was refused by the network (see the log)");
    }
    for (auto const& [i, name] : names) {
      t->setDimensionName(i, name.c_str());
    }
    return ctx.define(in.name(), Value{t, nullptr});
  }

  INetworkDefinition& network_;
  ILogger& logger_;
  int32_t verbosity_ = static_cast<int32_t>(ILogger::Severity::kWARNING);
  OnnxParserFlags flags_ = 1U << static_cast<uint32_t>(OnnxParserFlag::kNATIVE_INSTANCENORM);
  bool checking_ = false;
  std::vector<ParserError> errors_;
  std::vector<std::unique_ptr<Constant>> storage_;
  std::vector<std::unique_ptr<Constant>> scratchStorage_;
  std::vector<int32_t> order_;
  std::vector<std::pair<std::string, std::vector<ITensor*>>> nodeOutputs_;
  std::vector<std::pair<std::vector<int64_t>, bool>> subgraphs_;
};

}  // namespace
}  // namespace kiln::onnx

extern "C" KILN_API void* createKilnOnnxParser_INTERNAL(void* network, void* logger, int32_t version) noexcept {
  if (network == nullptr || logger == nullptr) {
    return nullptr;
  }
  auto* log = static_cast<kiln::ILogger*>(logger);
  if (version / 10000 != KILN_ONNX_PARSER_MAJOR) {
    log->log(kiln::ILogger::Severity::kERROR, "createParser: the ONNX parser header and library versions differ");
    return nullptr;
  }
  try {
    return static_cast<kiln::onnx::IParser*>(
        new kiln::onnx::Parser(*static_cast<kiln::INetworkDefinition*>(network), *log));
  } catch (...) {
    return nullptr;
  }
}
