// Model-building and run helpers shared by the ONNX parser tests: a ModelProto builder, attribute setters, a
// parse-build-run driver for the CPU reference backend and a parse-only driver for error tests.
#pragma once

#include <gtest/gtest.h>
#include <kiln/kiln.h>
#include <kiln/onnx_parser.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kiln::onnx::test {

using kiln::DataType;
using kiln::Dims;

class TestLogger : public kiln::ILogger {
 public:
  void log(Severity severity, kiln::AsciiChar const* msg) noexcept override {
    if (severity <= Severity::kERROR) {
      last = msg;
    }
  }
  std::string last;
};

/// Builds a ModelProto step by step.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }
  ::onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  ::onnx::ModelProto& model() { return model_; }

  /// Graph input; negative dims become dim_param "d<i>".
  ModelBuilder& input(std::string const& name, std::vector<int64_t> const& dims,
                      int32_t type = ::onnx::TensorProto::FLOAT) {
    setValueInfo(graph().add_input(), name, dims, type);
    return *this;
  }
  ModelBuilder& output(std::string const& name, std::vector<int64_t> const& dims = {},
                       int32_t type = ::onnx::TensorProto::FLOAT) {
    setValueInfo(graph().add_output(), name, dims, type);
    return *this;
  }
  ModelBuilder& initF(std::string const& name, std::vector<int64_t> const& dims, std::vector<float> const& v) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (auto d : dims) {
      t->add_dims(d);
    }
    for (float f : v) {
      t->add_float_data(f);
    }
    return *this;
  }
  ModelBuilder& initI(std::string const& name, std::vector<int64_t> const& dims, std::vector<int64_t> const& v) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    for (auto d : dims) {
      t->add_dims(d);
    }
    t->set_raw_data(std::string(reinterpret_cast<char const*>(v.data()), v.size() * 8));
    return *this;
  }
  ::onnx::NodeProto& node(std::string const& op, std::vector<std::string> const& ins,
                          std::vector<std::string> const& outs, std::string const& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph().node_size()) : name);
    for (auto const& i : ins) {
      n->add_input(i);
    }
    for (auto const& o : outs) {
      n->add_output(o);
    }
    return *n;
  }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  static void setValueInfo(::onnx::ValueInfoProto* vi, std::string const& name, std::vector<int64_t> const& dims,
                           int32_t type) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] < 0) {
        d->set_dim_param("d" + std::to_string(i));
      } else {
        d->set_dim_value(dims[i]);
      }
    }
  }
  ::onnx::ModelProto model_;
};

inline void attr(::onnx::NodeProto& n, char const* name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void attr(::onnx::NodeProto& n, char const* name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void attr(::onnx::NodeProto& n, char const* name, std::vector<int64_t> const& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (auto x : v) {
    a->add_ints(x);
  }
}
inline void attr(::onnx::NodeProto& n, char const* name, std::string const& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

/// Initializer of any ONNX type from the little-endian bytes of `v` (T matching `type`'s element).
template <typename T>
void initTyped(ModelBuilder& m, std::string const& name, int32_t type, std::vector<int64_t> const& dims,
               std::vector<T> const& v) {
  auto* t = m.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) {
    t->add_dims(d);
  }
  t->set_raw_data(std::string(reinterpret_cast<char const*>(v.data()), v.size() * sizeof(T)));
}

/// Dims from a list of extents.
inline Dims dimsOf(std::vector<int64_t> const& v) {
  Dims d{static_cast<int32_t>(v.size()), {}};
  for (size_t i = 0; i < v.size(); ++i) {
    d.d[i] = v[i];
  }
  return d;
}

/// Output memory for outputs of data-dependent shape; records the shape the runtime reports.
class OutputBuffer : public kiln::IOutputAllocator {
 public:
  void* reallocateOutputAsync(char const*, void*, uint64_t size, uint64_t, cudaStream_t) override {
    bytes.assign(static_cast<size_t>(size) + 8, 0);
    return bytes.data();
  }
  void notifyShape(char const*, Dims const& dims) noexcept override {
    shape = dims;
    notified = true;
  }
  std::vector<uint8_t> bytes;
  Dims shape{};
  bool notified = false;
};

/// Output of a run: shape and values as double.
struct Out {
  Dims dims{};
  std::vector<double> v;
};

/// Appends `n` elements of type `t` at `p` to `out` as doubles; fails the test (and returns false) for a type
/// it does not read.
inline bool appendAsDoubles(DataType t, uint8_t const* p, int64_t n, std::vector<double>& out) {
  for (int64_t i = 0; i < n; ++i) {
    if (t == DataType::kFLOAT) {
      float f;
      std::memcpy(&f, p + i * 4, 4);
      out.push_back(f);
    } else if (t == DataType::kINT64) {
      int64_t x;
      std::memcpy(&x, p + i * 8, 8);
      out.push_back(static_cast<double>(x));
    } else if (t == DataType::kINT32) {
      int32_t x;
      std::memcpy(&x, p + i * 4, 4);
      out.push_back(x);
    } else if (t == DataType::kFLOAT64) {
      double x;
      std::memcpy(&x, p + i * 8, 8);
      out.push_back(x);
    } else if (t == DataType::kUINT64) {
      uint64_t x;
      std::memcpy(&x, p + i * 8, 8);
      out.push_back(static_cast<double>(x));
    } else if (t == DataType::kUINT32) {
      uint32_t x;
      std::memcpy(&x, p + i * 4, 4);
      out.push_back(x);
    } else if (t == DataType::kUINT16) {
      uint16_t x;
      std::memcpy(&x, p + i * 2, 2);
      out.push_back(x);
    } else if (t == DataType::kBOOL || t == DataType::kUINT8) {
      out.push_back(p[i]);
    } else if (t == DataType::kINT8) {
      out.push_back(static_cast<int8_t>(p[i]));
    } else {
      ADD_FAILURE() << "unexpected output type " << static_cast<int>(t);
      return false;
    }
  }
  return true;
}

/// Parses `bytes`, builds for the CPU (reference tactics) and runs with float inputs `ins`. Fails the test
/// (returning empty) on any error.
using Inputs = std::map<std::string, std::pair<Dims, std::vector<float>>>;
using Int64Inputs = std::map<std::string, std::pair<Dims, std::vector<int64_t>>>;
inline std::map<std::string, Out> run(std::string const& bytes, Inputs ins, Int64Inputs ints = {}) {
  TestLogger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*network, logger));
  if (!parser->parse(bytes.data(), bytes.size())) {
    ADD_FAILURE() << "parse failed: " << (parser->getNbErrors() ? parser->getError(0)->desc() : "?");
    return {};
  }
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  // Inputs with runtime dims get a profile fixed at the shapes given for this run.
  kiln::IOptimizationProfile* profile = nullptr;
  for (int32_t i = 0; i < network->getNbInputs(); ++i) {
    kiln::ITensor* in = network->getInput(i);
    Dims d = in->getDimensions();
    bool dynamic = false;
    for (int32_t k = 0; k < d.nbDims; ++k) {
      dynamic |= d.d[k] < 0;
    }
    auto it = ins.find(in->getName());
    auto iti = ints.find(in->getName());
    if (dynamic && (it != ins.end() || iti != ints.end())) {
      profile = profile != nullptr ? profile : builder->createOptimizationProfile();
      using Sel = kiln::OptProfileSelector;
      for (auto sel : {Sel::kMIN, Sel::kOPT, Sel::kMAX}) {
        profile->setDimensions(in->getName(), sel, it != ins.end() ? it->second.first : iti->second.first);
      }
    }
  }
  if (profile != nullptr) {
    config->addOptimizationProfile(profile);
  }
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  config->clearFlag(kiln::BuilderFlag::kTF32);
  config->setBuilderOptimizationLevel(0);
  config->setTacticSources(1U << static_cast<uint32_t>(kiln::TacticSource::kREFERENCE));
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  if (!plan) {
    ADD_FAILURE() << "build failed: " << logger.last;
    return {};
  }
  parser.reset();  // the weights were consumed by the build
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
  for (auto& [name, in] : ins) {
    EXPECT_TRUE(context->setInputShape(name.c_str(), in.first)) << name;
    EXPECT_TRUE(context->setInputTensorAddress(name.c_str(), in.second.data())) << name;
  }
  for (auto& [name, in] : ints) {
    EXPECT_TRUE(context->setInputShape(name.c_str(), in.first)) << name;
    EXPECT_TRUE(context->setInputTensorAddress(name.c_str(), in.second.data())) << name;
  }
  std::map<std::string, std::vector<uint8_t>> buffers;
  std::map<std::string, Out> outs;
  std::map<std::string, OutputBuffer> dynamicOuts;  // outputs whose shape is known only while running
  for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
    char const* name = engine->getIOTensorName(i);
    if (engine->getTensorIOMode(name) != kiln::TensorIOMode::kOUTPUT) {
      continue;
    }
    Dims d = context->getTensorShape(name);
    int64_t n = 1;
    bool known = d.nbDims >= 0;
    for (int32_t k = 0; k < d.nbDims; ++k) {
      known = known && d.d[k] >= 0;
      n *= d.d[k];
    }
    if (!known) {
      EXPECT_TRUE(context->setOutputAllocator(name, &dynamicOuts[name]));
      continue;
    }
    buffers[name].assign(static_cast<size_t>(std::max<int64_t>(n, 1) * 8), 0);
    outs[name].dims = d;
    EXPECT_TRUE(context->setTensorAddress(name, buffers[name].data()));
  }
  if (!context->enqueueV3(nullptr)) {
    ADD_FAILURE() << "enqueue failed: " << logger.last;
    return {};
  }
  for (auto& [name, b] : dynamicOuts) {
    EXPECT_TRUE(b.notified) << name;
    outs[name].dims = b.shape;
    buffers[name] = b.bytes;
  }
  for (auto& [name, o] : outs) {
    DataType t = engine->getTensorDataType(name.c_str());
    int64_t n = 1;
    for (int32_t k = 0; k < o.dims.nbDims; ++k) {
      n *= o.dims.d[k];
    }
    if (!appendAsDoubles(t, buffers[name].data(), n, o.v)) {
      return {};
    }
  }
  return outs;
}

inline void expectNear(std::vector<double> const& got, std::vector<double> const& want, double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "at " << i;
  }
}

inline std::vector<float> iota(int64_t n, float start = 0, float step = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] = start + step * static_cast<float>(i);
  }
  return v;
}


/// Parses and expects failure; returns the first error's description (also checks node info when asked).
struct ParseResult {
  bool ok;
  std::string desc;
  kiln::onnx::ErrorCode code;
  int32_t node;
  std::string nodeName;
};
inline ParseResult parseOnly(std::string const& bytes, char const* path = nullptr, int64_t memoryLimit = 0) {
  TestLogger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  EXPECT_TRUE(builder->setMemoryLimit(memoryLimit));
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*network, logger));
  bool ok = parser->parse(bytes.data(), bytes.size(), path);
  if (ok) {
    return {true, "", kiln::onnx::ErrorCode::kSUCCESS, -1, ""};
  }
  EXPECT_GE(parser->getNbErrors(), 1);
  auto const* e = parser->getError(0);
  EXPECT_NE(e, nullptr);
  EXPECT_EQ(parser->getError(parser->getNbErrors()), nullptr);
  return {false, e->desc(), e->code(), e->node(), e->nodeName()};
}


}  // namespace kiln::onnx::test
