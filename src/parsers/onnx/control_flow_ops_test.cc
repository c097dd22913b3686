// Tests of the ONNX control-flow and recurrent importers (If, Loop, Scan, RNN, GRU, LSTM): small models built
// here, run on the CPU reference backend, compared with expectations from naive loops written in this file.
#include <cmath>
#include <cstring>
#include <functional>

#include "onnx_test_util.h"

namespace kiln::onnx::test {
namespace {

using TP = ::onnx::TensorProto;

//
// A parse-build-run driver with dynamic shape ranges and several runs of one engine
//

/// An input tensor: type, shape and bytes.
struct In {
  DataType type = DataType::kFLOAT;
  Dims dims{};
  std::vector<uint8_t> bytes;
};
template <typename T>
In makeIn(DataType type, std::vector<int64_t> const& dims, std::vector<T> const& v) {
  In in;
  in.type = type;
  in.dims.nbDims = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    in.dims.d[i] = dims[i];
  }
  in.bytes.resize(v.size() * sizeof(T));
  if (!v.empty()) {
    std::memcpy(in.bytes.data(), v.data(), in.bytes.size());
  }
  return in;
}
In f32(std::vector<int64_t> const& dims, std::vector<float> const& v) { return makeIn(DataType::kFLOAT, dims, v); }
In i64(std::vector<int64_t> const& dims, std::vector<int64_t> const& v) { return makeIn(DataType::kINT64, dims, v); }
In i32(std::vector<int64_t> const& dims, std::vector<int32_t> const& v) { return makeIn(DataType::kINT32, dims, v); }
In boolean(bool b) { return makeIn(DataType::kBOOL, {}, std::vector<uint8_t>{static_cast<uint8_t>(b ? 1 : 0)}); }

class Alloc : public kiln::IOutputAllocator {
 public:
  void* reallocateOutputAsync(char const*, void*, uint64_t size, uint64_t, cudaStream_t) override {
    bytes.resize(std::max<uint64_t>(size, 16));
    return bytes.data();
  }
  void notifyShape(char const*, Dims const& dims) noexcept override { shape = dims; }
  std::vector<uint8_t> bytes;
  Dims shape{};
};

class Engine {
 public:
  /// Parses and builds; inputs named in `ranges` get a profile from .first (min) to .second (max).
  bool build(std::string const& bytes, std::map<std::string, std::pair<Dims, Dims>> const& ranges = {}) {
    builder_.reset(kiln::createInferBuilder(logger_));
    network_.reset(builder_->createNetworkV2(0));
    std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*network_, logger_));
    if (!parser->parse(bytes.data(), bytes.size())) {
      ADD_FAILURE() << "parse failed: " << (parser->getNbErrors() ? parser->getError(0)->desc() : "?");
      return false;
    }
    std::unique_ptr<kiln::IBuilderConfig> config(builder_->createBuilderConfig());
    if (!ranges.empty()) {
      kiln::IOptimizationProfile* profile = builder_->createOptimizationProfile();
      for (auto const& [name, r] : ranges) {
        profile->setDimensions(name.c_str(), kiln::OptProfileSelector::kMIN, r.first);
        profile->setDimensions(name.c_str(), kiln::OptProfileSelector::kOPT, r.second);
        profile->setDimensions(name.c_str(), kiln::OptProfileSelector::kMAX, r.second);
      }
      config->addOptimizationProfile(profile);
    }
    config->setDefaultDeviceType(kiln::DeviceType::kCPU);
    config->setBuilderOptimizationLevel(0);
    config->setTacticSources(1U << static_cast<uint32_t>(kiln::TacticSource::kREFERENCE));
    std::unique_ptr<kiln::IHostMemory> plan(builder_->buildSerializedNetwork(*network_, *config));
    if (!plan) {
      ADD_FAILURE() << "build failed: " << logger_.last;
      return false;
    }
    runtime_.reset(kiln::createInferRuntime(logger_));
    engine_.reset(runtime_->deserializeCudaEngine(plan->data(), plan->size()));
    if (!engine_) {
      ADD_FAILURE() << "deserialize failed: " << logger_.last;
      return false;
    }
    context_.reset(engine_->createExecutionContext());
    return context_ != nullptr;
  }

  /// Runs once; outputs by name (values as double).
  std::map<std::string, Out> run(std::map<std::string, In> ins) {
    for (auto& [name, in] : ins) {
      EXPECT_TRUE(context_->setInputShape(name.c_str(), in.dims)) << name << ": " << logger_.last;
      static uint8_t empty[16];
      EXPECT_TRUE(context_->setTensorAddress(name.c_str(), in.bytes.empty() ? empty : in.bytes.data())) << name;
    }
    std::map<std::string, Alloc> allocs;
    for (int32_t i = 0; i < engine_->getNbIOTensors(); ++i) {
      char const* name = engine_->getIOTensorName(i);
      if (engine_->getTensorIOMode(name) == kiln::TensorIOMode::kOUTPUT) {
        EXPECT_TRUE(context_->setOutputAllocator(name, &allocs[name]));
      }
    }
    if (!context_->enqueueV3(nullptr)) {
      ADD_FAILURE() << "enqueue failed: " << logger_.last;
      return {};
    }
    std::map<std::string, Out> outs;
    for (auto& [name, a] : allocs) {
      Out& o = outs[name];
      o.dims = a.shape;
      int64_t n = 1;
      for (int32_t k = 0; k < o.dims.nbDims; ++k) {
        n *= o.dims.d[k];
      }
      DataType t = engine_->getTensorDataType(name.c_str());
      for (int64_t i = 0; i < n; ++i) {
        if (t == DataType::kFLOAT) {
          float f;
          std::memcpy(&f, a.bytes.data() + i * 4, 4);
          o.v.push_back(f);
        } else if (t == DataType::kINT64) {
          int64_t x;
          std::memcpy(&x, a.bytes.data() + i * 8, 8);
          o.v.push_back(static_cast<double>(x));
        } else if (t == DataType::kBOOL) {
          o.v.push_back(a.bytes[static_cast<size_t>(i)]);
        } else {
          ADD_FAILURE() << "unexpected output type";
        }
      }
    }
    return outs;
  }

 private:
  TestLogger logger_;
  std::unique_ptr<kiln::IBuilder> builder_;
  std::unique_ptr<kiln::INetworkDefinition> network_;
  std::unique_ptr<kiln::IRuntime> runtime_;
  std::unique_ptr<kiln::ICudaEngine> engine_;
  std::unique_ptr<kiln::IExecutionContext> context_;
};

std::vector<int64_t> dimsOf(Out const& o) { return std::vector<int64_t>(o.dims.d, o.dims.d + o.dims.nbDims); }

//
// Subgraph building
//

void valueInfo(::onnx::ValueInfoProto* vi, std::string const& name, std::vector<int64_t> const& dims,
               int32_t type = TP::FLOAT) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d < 0) {
      dim->set_dim_param("n");
    } else {
      dim->set_dim_value(d);
    }
  }
}

::onnx::NodeProto& addNode(::onnx::GraphProto& g, std::string const& op, std::vector<std::string> const& ins,
                           std::vector<std::string> const& outs) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(g.name() + "_" + op + std::to_string(g.node_size()));
  for (auto const& i : ins) {
    n->add_input(i);
  }
  for (auto const& o : outs) {
    n->add_output(o);
  }
  return *n;
}

void attrGraph(::onnx::NodeProto& n, char const* name, ::onnx::GraphProto const& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

void attrStrings(::onnx::NodeProto& n, char const* name, std::vector<std::string> const& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (auto const& s : v) {
    a->add_strings(s);
  }
}

void attrFloats(::onnx::NodeProto& n, char const* name, std::vector<float> const& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOATS);
  for (float f : v) {
    a->add_floats(f);
  }
}

/// A Constant node making a float tensor.
void constantNode(::onnx::GraphProto& g, std::string const& out, std::vector<int64_t> const& dims,
                  std::vector<float> const& v) {
  auto& n = addNode(g, "Constant", {}, {out});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(TP::FLOAT);
  for (int64_t d : dims) {
    t->add_dims(d);
  }
  for (float f : v) {
    t->add_float_data(f);
  }
}

::onnx::GraphProto graphNamed(std::string const& name) {
  ::onnx::GraphProto g;
  g.set_name(name);
  return g;
}

//
// If
//

std::string ifModel() {
  ModelBuilder m(13);
  m.input("cond", {}, TP::BOOL).input("x", {3}).output("z", {3});
  m.initF("k", {3}, {10, 20, 30});
  auto thenG = graphNamed("then");
  addNode(thenG, "Mul", {"x", "k"}, {"t"});  // an outer tensor and an outer constant
  valueInfo(thenG.add_output(), "t", {3});
  auto elseG = graphNamed("else");
  constantNode(elseG, "one", {3}, {1, 1, 1});
  addNode(elseG, "Sub", {"x", "one"}, {"t"});  // the same name as in the other branch: sibling scopes
  addNode(elseG, "Add", {"t", "t"}, {"e"});
  valueInfo(elseG.add_output(), "e", {3});
  auto& n = m.node("If", {"cond"}, {"y"}, "if");
  attrGraph(n, "then_branch", thenG);
  attrGraph(n, "else_branch", elseG);
  m.node("Add", {"y", "x"}, {"z"});  // the main graph goes on after the conditional
  return m.bytes();
}

TEST(OnnxControlFlow, IfTakesEitherBranchOfOneEngine) {
  Engine e;
  ASSERT_TRUE(e.build(ifModel()));
  In x = f32({3}, {1, -2, 3});
  auto t = e.run({{"cond", boolean(true)}, {"x", x}});
  expectNear(t["z"].v, {11, -42, 93});  // x * k + x
  auto f = e.run({{"cond", boolean(false)}, {"x", x}});
  expectNear(f["z"].v, {1, -8, 7});  // (x - 1) * 2 + x
}

TEST(OnnxControlFlow, IfBranchesMustAgree) {
  ModelBuilder m(13);
  m.input("cond", {}, TP::BOOL).input("x", {3}).output("y", {3});
  auto thenG = graphNamed("then");
  addNode(thenG, "Relu", {"x"}, {"a"});
  valueInfo(thenG.add_output(), "a", {3});
  auto elseG = graphNamed("else");
  addNode(elseG, "Relu", {"x"}, {"a"});
  addNode(elseG, "Neg", {"x"}, {"b"});
  valueInfo(elseG.add_output(), "a", {3});
  valueInfo(elseG.add_output(), "b", {3});
  auto& n = m.node("If", {"cond"}, {"y"}, "bad_if");
  attrGraph(n, "then_branch", thenG);
  attrGraph(n, "else_branch", elseG);
  auto r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("bad_if"), std::string::npos) << r.desc;
  EXPECT_NE(r.desc.find("outputs"), std::string::npos) << r.desc;
}

TEST(OnnxControlFlow, UnknownNameInABranchIsAnError) {
  ModelBuilder m(13);
  m.input("cond", {}, TP::BOOL).input("x", {3}).output("y", {3});
  auto thenG = graphNamed("then");
  addNode(thenG, "Relu", {"nowhere"}, {"a"});
  valueInfo(thenG.add_output(), "a", {3});
  auto elseG = graphNamed("else");
  addNode(elseG, "Relu", {"x"}, {"a"});
  valueInfo(elseG.add_output(), "a", {3});
  auto& n = m.node("If", {"cond"}, {"y"}, "if");
  attrGraph(n, "then_branch", thenG);
  attrGraph(n, "else_branch", elseG);
  auto r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("nowhere"), std::string::npos) << r.desc;
}

TEST(OnnxControlFlow, SubgraphsNestedTooDeepAreRefused) {
  // 18 nested Ifs fit protobuf's recursion limit, but not the parser's subgraph depth limit (16).
  ::onnx::GraphProto leaf = graphNamed("leaf");
  addNode(leaf, "Relu", {"x"}, {"o"});
  valueInfo(leaf.add_output(), "o", {3});
  ::onnx::GraphProto inner = leaf;
  for (int depth = 0; depth < 18; ++depth) {
    ::onnx::GraphProto outer = graphNamed("g" + std::to_string(depth));
    auto& n = addNode(outer, "If", {"cond"}, {"o"});
    attrGraph(n, "then_branch", inner);
    attrGraph(n, "else_branch", leaf);
    valueInfo(outer.add_output(), "o", {3});
    inner = outer;
  }
  ModelBuilder m(13);
  m.input("cond", {}, TP::BOOL).input("x", {3}).output("o", {3});
  auto& n = m.node("If", {"cond"}, {"o"}, "deep");
  attrGraph(n, "then_branch", inner);
  attrGraph(n, "else_branch", leaf);
  auto r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("nested more than 16"), std::string::npos) << r.desc;
}

//
// Loop
//

/// Loop(M, cond, y0) with body: y += x * i; cond_out = sum(y) < limit; scan output y.
std::string loopModel(bool withCond) {
  ModelBuilder m(13);
  m.input("M", {}, TP::INT64).input("y0", {2}).input("x", {2});
  if (withCond) {
    m.input("cond", {}, TP::BOOL);
  }
  m.output("y_final", {2}).output("ys", {-1, 2});
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "i", {}, TP::INT64);
  valueInfo(body.add_input(), "c_in", {}, TP::BOOL);
  valueInfo(body.add_input(), "y_in", {2});
  addNode(body, "Cast", {"i"}, {"i_f"}).add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(TP::FLOAT);
    return a;
  }());
  addNode(body, "Mul", {"x", "i_f"}, {"step"});
  addNode(body, "Add", {"y_in", "step"}, {"y_out"});
  auto& rs = addNode(body, "ReduceSum", {"y_out"}, {"total"});
  attr(rs, "keepdims", int64_t{0});
  constantNode(body, "limit", {}, {20});
  addNode(body, "Less", {"total", "limit"}, {"c_out"});
  addNode(body, "Identity", {"y_out"}, {"scan"});
  valueInfo(body.add_output(), "c_out", {}, TP::BOOL);
  valueInfo(body.add_output(), "y_out", {2});
  valueInfo(body.add_output(), "scan", {2});
  auto& n = m.node("Loop", {"M", withCond ? "cond" : "", "y0"}, {"y_final", "ys"}, "loop");
  attrGraph(n, "body", body);
  return m.bytes();
}

/// The ONNX Loop semantics, naively: iteration i runs while i < M and the condition holds.
void loopReference(int64_t m, bool cond, bool useCond, std::vector<double> y, std::vector<double> const& x,
                   std::vector<double>& yFinal, std::vector<double>& ys, int64_t& iterations) {
  ys.clear();
  iterations = 0;
  for (int64_t i = 0; i < m && (!useCond || cond); ++i) {
    for (size_t k = 0; k < y.size(); ++k) {
      y[k] += x[k] * static_cast<double>(i);
    }
    cond = y[0] + y[1] < 20;
    ys.insert(ys.end(), y.begin(), y.end());
    ++iterations;
  }
  yFinal = y;
}

TEST(OnnxControlFlow, LoopWithTripCountConditionAndScanOutput) {
  Engine e;
  ASSERT_TRUE(e.build(loopModel(true)));
  struct Run {
    int64_t m;
    bool cond;
  };
  for (Run r : {Run{5, true}, Run{10, true}, Run{2, true}, Run{4, false}}) {
    SCOPED_TRACE("M=" + std::to_string(r.m) + " cond=" + std::to_string(r.cond));
    std::vector<double> yFinal, ys;
    int64_t iterations = 0;
    loopReference(r.m, r.cond, true, {0.5, 0}, {1, 2}, yFinal, ys, iterations);
    auto out =
        e.run({{"M", i64({}, {r.m})}, {"cond", boolean(r.cond)}, {"y0", f32({2}, {0.5F, 0})}, {"x", f32({2}, {1, 2})}});
    expectNear(out["y_final"].v, yFinal);
    EXPECT_EQ(dimsOf(out["ys"]), (std::vector<int64_t>{iterations, 2}));
    expectNear(out["ys"].v, ys);
  }
}

TEST(OnnxControlFlow, LoopWithoutConditionIgnoresTheBodyCondition) {
  Engine e;
  ASSERT_TRUE(e.build(loopModel(false)));
  std::vector<double> yFinal, ys;
  int64_t iterations = 0;
  loopReference(6, true, false, {0, 1}, {1, 2}, yFinal, ys, iterations);
  ASSERT_EQ(iterations, 6);
  auto out = e.run({{"M", i64({}, {6})}, {"y0", f32({2}, {0, 1})}, {"x", f32({2}, {1, 2})}});
  expectNear(out["y_final"].v, yFinal);
  expectNear(out["ys"].v, ys);
}

TEST(OnnxControlFlow, IfInsideALoopReadsBodyAndGraphValues) {
  // Loop 4 times: y = (i is odd) ? y + x : y * 2, where the branch reads the body's y_in, the graph's x and
  // the body's iteration number through the condition.
  ModelBuilder m(13);
  m.input("y0", {2}).input("x", {2}).output("y_final", {2});
  m.initI("M", {}, {4});
  auto thenG = graphNamed("odd");
  addNode(thenG, "Add", {"y_in", "x"}, {"r"});
  valueInfo(thenG.add_output(), "r", {2});
  auto elseG = graphNamed("even");
  constantNode(elseG, "two", {1}, {2});
  addNode(elseG, "Mul", {"y_in", "two"}, {"r"});
  valueInfo(elseG.add_output(), "r", {2});
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "i", {}, TP::INT64);
  valueInfo(body.add_input(), "c_in", {}, TP::BOOL);
  valueInfo(body.add_input(), "y_in", {2});
  ::onnx::TensorProto two;
  two.set_name("two_i");
  two.set_data_type(TP::INT64);
  two.add_int64_data(2);
  *body.add_initializer() = two;  // a subgraph initializer
  addNode(body, "Mod", {"i", "two_i"}, {"rem"});
  addNode(body, "Cast", {"rem"}, {"odd"}).add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(TP::BOOL);
    return a;
  }());
  auto& iff = addNode(body, "If", {"odd"}, {"y_out"});
  attrGraph(iff, "then_branch", thenG);
  attrGraph(iff, "else_branch", elseG);
  addNode(body, "Identity", {"c_in"}, {"c_out"});
  valueInfo(body.add_output(), "c_out", {}, TP::BOOL);
  valueInfo(body.add_output(), "y_out", {2});
  auto& n = m.node("Loop", {"M", "", "y0"}, {"y_final"}, "loop");
  attrGraph(n, "body", body);
  Engine e;
  ASSERT_TRUE(e.build(m.bytes()));
  std::vector<double> y{1, -1};
  std::vector<double> const x{3, 5};
  for (int i = 0; i < 4; ++i) {
    for (size_t k = 0; k < 2; ++k) {
      y[k] = i % 2 == 1 ? y[k] + x[k] : y[k] * 2;
    }
  }
  auto out = e.run({{"y0", f32({2}, {1, -1})}, {"x", f32({2}, {3, 5})}});
  expectNear(out["y_final"].v, y);
}

TEST(OnnxControlFlow, LoopBodyMustMatchTheNode) {
  ModelBuilder m(13);
  m.input("M", {}, TP::INT64).input("y0", {2}).output("y", {2});
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "i", {}, TP::INT64);
  valueInfo(body.add_input(), "c_in", {}, TP::BOOL);  // y_in is missing
  addNode(body, "Identity", {"c_in"}, {"c_out"});
  valueInfo(body.add_output(), "c_out", {}, TP::BOOL);
  auto& n = m.node("Loop", {"M", "", "y0"}, {"y"}, "short_body");
  attrGraph(n, "body", body);
  auto r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("short_body"), std::string::npos) << r.desc;
  EXPECT_NE(r.desc.find("inputs"), std::string::npos) << r.desc;
}

//
// Scan
//

TEST(OnnxControlFlow, Scan9AxesAndDirections) {
  // State s [2]; scan inputs a [3,2] (axis 0, reversed) and b [2,3] (axis 1); body: s += a_t * b_t; scan
  // outputs s stacked on axis 1 (forward) and on axis 0 (reversed: last iteration first).
  ModelBuilder m(11);
  m.input("s0", {2}).input("a", {3, 2}).input("b", {2, 3}).output("s", {2}).output("o1", {2, 3}).output("o2", {3, 2});
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "s_in", {2});
  valueInfo(body.add_input(), "a_t", {2});
  valueInfo(body.add_input(), "b_t", {2});
  addNode(body, "Mul", {"a_t", "b_t"}, {"p"});
  addNode(body, "Add", {"s_in", "p"}, {"s_out"});
  addNode(body, "Identity", {"s_out"}, {"c1"});
  addNode(body, "Identity", {"s_out"}, {"c2"});
  valueInfo(body.add_output(), "s_out", {2});
  valueInfo(body.add_output(), "c1", {2});
  valueInfo(body.add_output(), "c2", {2});
  auto& n = m.node("Scan", {"s0", "a", "b"}, {"s", "o1", "o2"}, "scan");
  attrGraph(n, "body", body);
  attr(n, "num_scan_inputs", int64_t{2});
  attr(n, "scan_input_axes", std::vector<int64_t>{0, -1});
  attr(n, "scan_input_directions", std::vector<int64_t>{1, 0});
  attr(n, "scan_output_axes", std::vector<int64_t>{1, 0});
  attr(n, "scan_output_directions", std::vector<int64_t>{0, 1});
  Engine e;
  ASSERT_TRUE(e.build(m.bytes()));
  std::vector<float> const a{1, 2, 3, 4, 5, 6};
  std::vector<float> const b{1, -1, 2, 0.5F, 3, -2};
  std::vector<double> s{0.25, -1};
  std::vector<std::vector<double>> hist;
  for (int t = 0; t < 3; ++t) {
    int ta = 2 - t;  // reversed
    for (int k = 0; k < 2; ++k) {
      s[static_cast<size_t>(k)] += a[static_cast<size_t>(ta * 2 + k)] * b[static_cast<size_t>(k * 3 + t)];
    }
    hist.push_back(s);
  }
  std::vector<double> o1(6), o2;
  for (int t = 0; t < 3; ++t) {
    for (int k = 0; k < 2; ++k) {
      o1[static_cast<size_t>(k * 3 + t)] = hist[static_cast<size_t>(t)][static_cast<size_t>(k)];
    }
  }
  for (int t = 2; t >= 0; --t) {
    o2.insert(o2.end(), hist[static_cast<size_t>(t)].begin(), hist[static_cast<size_t>(t)].end());
  }
  auto out = e.run({{"s0", f32({2}, {0.25F, -1})}, {"a", f32({3, 2}, a)}, {"b", f32({2, 3}, b)}});
  expectNear(out["s"].v, s);
  EXPECT_EQ(dimsOf(out["o1"]), (std::vector<int64_t>{2, 3}));
  expectNear(out["o1"].v, o1);
  expectNear(out["o2"].v, o2);
}

TEST(OnnxControlFlow, Scan8WithBatchAxis) {
  ModelBuilder m(8);
  m.input("s0", {2, 2}).input("x", {2, 3, 2}).output("s", {2, 2}).output("ys", {2, 3, 2});
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "s_in", {2});
  valueInfo(body.add_input(), "x_t", {2});
  addNode(body, "Add", {"s_in", "x_t"}, {"s_out"});
  addNode(body, "Identity", {"s_out"}, {"y"});
  valueInfo(body.add_output(), "s_out", {2});
  valueInfo(body.add_output(), "y", {2});
  auto& n = m.node("Scan", {"", "s0", "x"}, {"s", "ys"}, "scan8");
  attrGraph(n, "body", body);
  attr(n, "num_scan_inputs", int64_t{1});
  attr(n, "directions", std::vector<int64_t>{1});
  Engine e;
  ASSERT_TRUE(e.build(m.bytes()));
  std::vector<float> const s0{1, 2, 3, 4};
  std::vector<float> const x = iota(12, 0.5F, 1.0F);
  std::vector<double> s(s0.begin(), s0.end());
  std::vector<double> ys(12);
  for (int bi = 0; bi < 2; ++bi) {
    for (int step = 0; step < 3; ++step) {
      int t = 2 - step;  // directions = 1: the scan input is read last step first
      for (int k = 0; k < 2; ++k) {
        size_t si = static_cast<size_t>(bi * 2 + k);
        s[si] += x[static_cast<size_t>((bi * 3 + t) * 2 + k)];
        ys[static_cast<size_t>((bi * 3 + step) * 2 + k)] = s[si];
      }
    }
  }
  auto out = e.run({{"s0", f32({2, 2}, s0)}, {"x", f32({2, 3, 2}, x)}});
  expectNear(out["s"].v, s);
  EXPECT_EQ(dimsOf(out["ys"]), (std::vector<int64_t>{2, 3, 2}));
  expectNear(out["ys"].v, ys);
}

//
// RNN, GRU, LSTM against a naive implementation of the ONNX equations
//

struct RnnCase {
  std::string op = "RNN";  // RNN, GRU, LSTM
  std::string direction = "forward";
  int64_t layout = 0;
  int64_t seq = 3, batch = 2, input = 3, hidden = 4;
  bool bias = true, initH = false, initC = false, peepholes = false;
  std::vector<int32_t> seqLens;  // empty: none
  std::vector<std::string> activations;
  std::vector<float> alphas, betas;
  float clip = 0;  // 0: none
  int64_t linearBeforeReset = 0, inputForget = 0;
  bool wantY = true;
  bool dynamicSeq = false;  // X's sequence axis is dynamic

  int64_t gates() const { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }
  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
};

/// Deterministic values in [-scale, scale).
std::vector<float> pseudoRandom(int64_t n, uint32_t seed, float scale = 1.0F) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761U + 12345U;
  for (auto& x : v) {
    s = s * 1664525U + 1013904223U;
    x = scale * (static_cast<float>(s >> 8U) / static_cast<float>(1U << 24U) * 2.0F - 1.0F);
  }
  return v;
}

/// An activation of the ONNX recurrent ops, with alpha/beta taken in order from the lists (ONNX defaults).
struct RefAct {
  std::string name;
  double alpha = 0, beta = 0;
  double operator()(double x) const {
    if (name == "Tanh") return std::tanh(x);
    if (name == "Sigmoid") return 1 / (1 + std::exp(-x));
    if (name == "Relu") return x > 0 ? x : 0;
    if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
    if (name == "HardSigmoid") return std::max(0.0, std::min(1.0, alpha * x + beta));
    if (name == "Affine") return alpha * x + beta;
    if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
    if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1);
    if (name == "Softsign") return x / (1 + std::abs(x));
    if (name == "Softplus") return std::log(std::exp(x) + 1);
    if (name == "ThresholdedRelu") return x > alpha ? x : 0;
    ADD_FAILURE() << "no reference for " << name;
    return 0;
  }
};

std::vector<RefAct> refActivations(RnnCase const& c) {
  std::vector<std::string> names = c.activations;
  std::vector<std::string> defaults = c.op == "RNN"   ? std::vector<std::string>{"Tanh"}
                                      : c.op == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                      : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  if (names.empty()) {
    for (int64_t d = 0; d < c.dirs(); ++d) {
      names.insert(names.end(), defaults.begin(), defaults.end());
    }
  }
  std::vector<RefAct> r;
  size_t ai = 0, bi = 0;
  for (auto const& n : names) {
    RefAct a{n};
    bool na = n == "LeakyRelu" || n == "HardSigmoid" || n == "Affine" || n == "ScaledTanh" || n == "Elu" ||
              n == "ThresholdedRelu";
    bool nb = n == "HardSigmoid" || n == "Affine" || n == "ScaledTanh";
    a.alpha = n == "LeakyRelu" ? 0.01 : n == "HardSigmoid" ? 0.2 : 1.0;
    a.beta = n == "HardSigmoid" ? 0.5 : n == "ScaledTanh" ? 1.0 : 0.0;
    if (na && ai < c.alphas.size()) a.alpha = c.alphas[ai++];
    if (nb && bi < c.betas.size()) a.beta = c.betas[bi++];
    r.push_back(a);
  }
  return r;
}

struct RnnData {
  std::vector<float> x, w, r, b, h0, c0, p;  // x and states in the model's layout
};

RnnData rnnData(RnnCase const& c, int64_t seq, uint32_t seed) {
  int64_t const g = c.gates(), d = c.dirs(), h = c.hidden;
  RnnData r;
  r.x = pseudoRandom(seq * c.batch * c.input, seed + 1);
  r.w = pseudoRandom(d * g * h * c.input, seed + 2, 0.7F);
  r.r = pseudoRandom(d * g * h * h, seed + 3, 0.7F);
  r.b = pseudoRandom(d * 2 * g * h, seed + 4, 0.5F);
  r.h0 = pseudoRandom(d * c.batch * h, seed + 5);
  r.c0 = pseudoRandom(d * c.batch * h, seed + 6);
  r.p = pseudoRandom(d * 3 * h, seed + 7, 0.5F);
  return r;
}

/// Y [seq, dirs, batch, hidden], Y_h and Y_c [dirs, batch, hidden] (layout 0 order; converted by the caller).
struct RnnResult {
  std::vector<double> y, yh, yc;
};

RnnResult rnnReference(RnnCase const& c, RnnData const& in, int64_t seq) {
  int64_t const g = c.gates(), nd = c.dirs(), hs = c.hidden, bs = c.batch, is = c.input;
  auto acts = refActivations(c);
  size_t const perDir = acts.size() / static_cast<size_t>(nd);
  auto xAt = [&](int64_t t, int64_t b, int64_t i) {
    return c.layout == 0 ? in.x[static_cast<size_t>((t * bs + b) * is + i)]
                         : in.x[static_cast<size_t>((b * seq + t) * is + i)];
  };
  auto stateAt = [&](std::vector<float> const& s, int64_t d, int64_t b, int64_t k) {
    return c.layout == 0 ? s[static_cast<size_t>((d * bs + b) * hs + k)]
                         : s[static_cast<size_t>((b * nd + d) * hs + k)];
  };
  RnnResult res;
  res.y.assign(static_cast<size_t>(seq * nd * bs * hs), 0.0);
  res.yh.assign(static_cast<size_t>(nd * bs * hs), 0.0);
  res.yc.assign(static_cast<size_t>(nd * bs * hs), 0.0);
  for (int64_t d = 0; d < nd; ++d) {
    bool const rev = c.direction == "reverse" || d == 1;
    auto act = [&](size_t k, double v) {
      if (c.clip > 0) v = std::max(-static_cast<double>(c.clip), std::min(static_cast<double>(c.clip), v));
      return acts[perDir * static_cast<size_t>(d) + k](v);
    };
    for (int64_t b = 0; b < bs; ++b) {
      std::vector<double> h(static_cast<size_t>(hs), 0.0), cell(static_cast<size_t>(hs), 0.0);
      for (int64_t k = 0; k < hs; ++k) {
        if (c.initH) h[static_cast<size_t>(k)] = stateAt(in.h0, d, b, k);
        if (c.initC) cell[static_cast<size_t>(k)] = stateAt(in.c0, d, b, k);
      }
      int64_t const len = c.seqLens.empty() ? seq : c.seqLens[static_cast<size_t>(b)];
      for (int64_t step = 0; step < len; ++step) {
        int64_t const t = rev ? len - 1 - step : step;
        // gate pre-activations: x*W^T + Wb, and h*R^T + Rb, per gate
        auto xw = [&](int64_t gate, int64_t k) {
          double s = c.bias ? in.b[static_cast<size_t>(d * 2 * g * hs + gate * hs + k)] : 0.0;
          for (int64_t i = 0; i < is; ++i)
            s += xAt(t, b, i) * in.w[static_cast<size_t>(((d * g + gate) * hs + k) * is + i)];
          return s;
        };
        auto vr = [&](std::vector<double> const& v, int64_t gate, int64_t k) {
          double s = c.bias ? in.b[static_cast<size_t>(d * 2 * g * hs + (g + gate) * hs + k)] : 0.0;
          for (int64_t j = 0; j < hs; ++j)
            s += v[static_cast<size_t>(j)] * in.r[static_cast<size_t>(((d * g + gate) * hs + k) * hs + j)];
          return s;
        };
        auto peep = [&](int64_t which, int64_t k) {
          return c.peepholes ? in.p[static_cast<size_t>(d * 3 * hs + which * hs + k)] : 0.0;
        };
        std::vector<double> nh(static_cast<size_t>(hs)), nc(static_cast<size_t>(hs));
        if (c.op == "RNN") {
          for (int64_t k = 0; k < hs; ++k) nh[static_cast<size_t>(k)] = act(0, xw(0, k) + vr(h, 0, k));
        } else if (c.op == "GRU") {
          std::vector<double> z(static_cast<size_t>(hs)), r(static_cast<size_t>(hs)), rh(static_cast<size_t>(hs));
          for (int64_t k = 0; k < hs; ++k) {
            z[static_cast<size_t>(k)] = act(0, xw(0, k) + vr(h, 0, k));
            r[static_cast<size_t>(k)] = act(0, xw(1, k) + vr(h, 1, k));
            rh[static_cast<size_t>(k)] = r[static_cast<size_t>(k)] * h[static_cast<size_t>(k)];
          }
          for (int64_t k = 0; k < hs; ++k) {
            double pre =
                c.linearBeforeReset ? xw(2, k) + r[static_cast<size_t>(k)] * vr(h, 2, k) : xw(2, k) + vr(rh, 2, k);
            double hh = act(1, pre);
            nh[static_cast<size_t>(k)] =
                (1 - z[static_cast<size_t>(k)]) * hh + z[static_cast<size_t>(k)] * h[static_cast<size_t>(k)];
          }
        } else {
          for (int64_t k = 0; k < hs; ++k) {
            double cp = cell[static_cast<size_t>(k)];
            double i = act(0, xw(0, k) + vr(h, 0, k) + peep(0, k) * cp);
            double f = c.inputForget ? 1 - i : act(0, xw(2, k) + vr(h, 2, k) + peep(2, k) * cp);
            double cc = act(1, xw(3, k) + vr(h, 3, k));
            double cn = f * cp + i * cc;
            double o = act(0, xw(1, k) + vr(h, 1, k) + peep(1, k) * cn);
            nc[static_cast<size_t>(k)] = cn;
            nh[static_cast<size_t>(k)] = o * act(2, cn);
          }
        }
        h = nh;
        if (c.op == "LSTM") cell = nc;
        for (int64_t k = 0; k < hs; ++k)
          res.y[static_cast<size_t>(((t * nd + d) * bs + b) * hs + k)] = h[static_cast<size_t>(k)];
      }
      for (int64_t k = 0; k < hs; ++k) {
        res.yh[static_cast<size_t>((d * bs + b) * hs + k)] = h[static_cast<size_t>(k)];
        res.yc[static_cast<size_t>((d * bs + b) * hs + k)] = cell[static_cast<size_t>(k)];
      }
    }
  }
  if (c.layout == 1) {  // to [batch, seq, dirs, hidden] and [batch, dirs, hidden]
    RnnResult t = res;
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t d = 0; d < nd; ++d)
        for (int64_t b = 0; b < bs; ++b)
          for (int64_t k = 0; k < hs; ++k)
            t.y[static_cast<size_t>(((b * seq + s) * nd + d) * hs + k)] =
                res.y[static_cast<size_t>(((s * nd + d) * bs + b) * hs + k)];
    for (int64_t d = 0; d < nd; ++d)
      for (int64_t b = 0; b < bs; ++b)
        for (int64_t k = 0; k < hs; ++k) {
          t.yh[static_cast<size_t>((b * nd + d) * hs + k)] = res.yh[static_cast<size_t>((d * bs + b) * hs + k)];
          t.yc[static_cast<size_t>((b * nd + d) * hs + k)] = res.yc[static_cast<size_t>((d * bs + b) * hs + k)];
        }
    res = t;
  }
  return res;
}

std::string rnnModel(RnnCase const& c, RnnData const& data) {
  int64_t const g = c.gates(), d = c.dirs(), h = c.hidden;
  ModelBuilder m(14);
  // A dynamic sequence comes with a dynamic batch too (the batch stays the same across runs).
  int64_t const s = c.dynamicSeq ? -1 : c.seq;
  int64_t const bt = c.dynamicSeq ? -1 : c.batch;
  m.input("X", c.layout == 0 ? std::vector<int64_t>{s, bt, c.input} : std::vector<int64_t>{bt, s, c.input});
  // W as a graph input, R and B as initializers: both kinds of weights go through the same slicing.
  m.input("W", {d, g * h, c.input});
  m.initF("R", {d, g * h, h}, data.r);
  std::vector<std::string> ins{"X", "W", "R", c.bias ? "B" : "", "", "", "", ""};
  if (c.bias) m.initF("B", {d, 2 * g * h}, data.b);
  if (!c.seqLens.empty()) {
    m.input("lens", {c.batch}, TP::INT32);
    ins[4] = "lens";
  }
  std::vector<int64_t> stateDims =
      c.layout == 0 ? std::vector<int64_t>{d, c.batch, h} : std::vector<int64_t>{c.batch, d, h};
  if (c.initH) {
    m.input("h0", stateDims);
    ins[5] = "h0";
  }
  if (c.initC) {
    m.initF("c0", stateDims, data.c0);
    ins[6] = "c0";
  }
  if (c.peepholes) {
    m.initF("P", {d, 3 * h}, data.p);
    ins[7] = "P";
  }
  while (!ins.empty() && ins.back().empty()) ins.pop_back();
  if (c.op != "LSTM" && ins.size() > 6) ins.resize(6);
  std::vector<std::string> outs{c.wantY ? "Y" : "", "Y_h"};
  if (c.op == "LSTM") outs.push_back("Y_c");
  if (c.wantY) m.output("Y", {});
  m.output("Y_h", {});
  if (c.op == "LSTM") m.output("Y_c", {});
  auto& n = m.node(c.op, ins, outs, "cell");
  attr(n, "hidden_size", h);
  attr(n, "direction", c.direction);
  if (c.layout != 0) attr(n, "layout", c.layout);
  if (!c.activations.empty()) attrStrings(n, "activations", c.activations);
  if (!c.alphas.empty()) attrFloats(n, "activation_alpha", c.alphas);
  if (!c.betas.empty()) attrFloats(n, "activation_beta", c.betas);
  if (c.clip > 0) attr(n, "clip", c.clip);
  if (c.op == "GRU" && c.linearBeforeReset) attr(n, "linear_before_reset", c.linearBeforeReset);
  if (c.op == "LSTM" && c.inputForget) attr(n, "input_forget", c.inputForget);
  return m.bytes();
}

void runRnnCase(RnnCase const& c, std::vector<int64_t> const& seqs = {}) {
  RnnData data = rnnData(c, c.seq, 7);
  std::map<std::string, std::pair<Dims, Dims>> ranges;
  if (c.dynamicSeq) {
    int64_t lo = *std::min_element(seqs.begin(), seqs.end());
    int64_t hi = *std::max_element(seqs.begin(), seqs.end());
    ranges["X"] = c.layout == 0 ? std::make_pair(Dims{3, {lo, c.batch, c.input}}, Dims{3, {hi, c.batch, c.input}})
                                : std::make_pair(Dims{3, {c.batch, lo, c.input}}, Dims{3, {c.batch, hi, c.input}});
  }
  Engine e;
  ASSERT_TRUE(e.build(rnnModel(c, data), ranges));
  for (int64_t seq : seqs.empty() ? std::vector<int64_t>{c.seq} : seqs) {
    SCOPED_TRACE("seq " + std::to_string(seq));
    RnnData run = rnnData(c, seq, 7 + static_cast<uint32_t>(seq));
    run.w = data.w;  // the weights are fixed by the model; X, W (an input) and h0 vary per run
    run.r = data.r;
    run.b = data.b;
    run.c0 = data.c0;
    run.p = data.p;
    RnnResult want = rnnReference(c, run, seq);
    std::map<std::string, In> ins;
    ins["X"] =
        f32(c.layout == 0 ? std::vector<int64_t>{seq, c.batch, c.input} : std::vector<int64_t>{c.batch, seq, c.input},
            run.x);
    ins["W"] = f32({c.dirs(), c.gates() * c.hidden, c.input}, run.w);
    if (!c.seqLens.empty()) ins["lens"] = i32({c.batch}, c.seqLens);
    if (c.initH) {
      ins["h0"] = f32(c.layout == 0 ? std::vector<int64_t>{c.dirs(), c.batch, c.hidden}
                                    : std::vector<int64_t>{c.batch, c.dirs(), c.hidden},
                      run.h0);
    }
    auto out = e.run(ins);
    if (c.wantY) {
      std::vector<int64_t> yd = c.layout == 0 ? std::vector<int64_t>{seq, c.dirs(), c.batch, c.hidden}
                                              : std::vector<int64_t>{c.batch, seq, c.dirs(), c.hidden};
      EXPECT_EQ(dimsOf(out["Y"]), yd);
      expectNear(out["Y"].v, want.y, 1e-4);
    }
    expectNear(out["Y_h"].v, want.yh, 1e-4);
    if (c.op == "LSTM") expectNear(out["Y_c"].v, want.yc, 1e-4);
  }
}

TEST(OnnxRecurrent, RnnForwardDefaults) {
  RnnCase c;
  c.bias = false;
  runRnnCase(c);
}

TEST(OnnxRecurrent, RnnReverseWithInitialStateAndActivation) {
  RnnCase c;
  c.direction = "reverse";
  c.initH = true;
  c.activations = {"LeakyRelu"};
  c.alphas = {0.3F};
  runRnnCase(c);
}

TEST(OnnxRecurrent, RnnBidirectionalLayout1WithSequenceLengths) {
  RnnCase c;
  c.direction = "bidirectional";
  c.layout = 1;
  c.seq = 4;
  c.batch = 3;
  c.seqLens = {4, 2, 1};
  c.initH = true;
  c.activations = {"Tanh", "HardSigmoid"};
  c.alphas = {0.3F};
  c.betas = {0.4F};
  runRnnCase(c);
}

TEST(OnnxRecurrent, GruForwardAndLinearBeforeReset) {
  for (int64_t lbr : {0, 1}) {
    SCOPED_TRACE("linear_before_reset " + std::to_string(lbr));
    RnnCase c;
    c.op = "GRU";
    c.linearBeforeReset = lbr;
    c.initH = true;
    runRnnCase(c);
  }
}

TEST(OnnxRecurrent, GruBidirectionalWithClipSequenceLengthsAndNoBias) {
  RnnCase c;
  c.op = "GRU";
  c.direction = "bidirectional";
  c.bias = false;
  c.clip = 0.5F;
  c.seq = 4;
  c.seqLens = {3, 4};
  c.activations = {"Sigmoid", "Tanh", "HardSigmoid", "ScaledTanh"};
  c.alphas = {0.25F, 1.5F};
  c.betas = {0.5F, 0.75F};
  runRnnCase(c);
}

TEST(OnnxRecurrent, GruReverseLayout1OnlyYh) {
  RnnCase c;
  c.op = "GRU";
  c.direction = "reverse";
  c.layout = 1;
  c.wantY = false;
  c.linearBeforeReset = 1;
  runRnnCase(c);
}

TEST(OnnxRecurrent, LstmForwardWithPeepholesAndInitialStates) {
  RnnCase c;
  c.op = "LSTM";
  c.peepholes = true;
  c.initH = true;
  c.initC = true;
  runRnnCase(c);
}

TEST(OnnxRecurrent, LstmBidirectionalLayout1SequenceLengthsInputForget) {
  RnnCase c;
  c.op = "LSTM";
  c.direction = "bidirectional";
  c.layout = 1;
  c.seq = 4;
  c.batch = 3;
  c.seqLens = {2, 4, 3};
  c.inputForget = 1;
  c.initC = true;
  c.peepholes = true;
  runRnnCase(c);
}

TEST(OnnxRecurrent, LstmReverseWithActivationsAndClip) {
  RnnCase c;
  c.op = "LSTM";
  c.direction = "reverse";
  c.clip = 1.0F;
  c.activations = {"HardSigmoid", "Elu", "Softsign"};
  c.alphas = {0.3F, 0.8F};
  c.betas = {0.45F};
  runRnnCase(c);
}

TEST(OnnxRecurrent, SequenceLengthChangesBetweenRunsOfOneEngine) {
  for (std::string op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    RnnCase c;
    c.op = op;
    c.direction = "bidirectional";
    c.dynamicSeq = true;
    c.initH = true;
    runRnnCase(c, {2, 5});
    RnnCase c1 = c;
    c1.layout = 1;
    c1.initH = false;  // zero initial states of a run-time batch
    runRnnCase(c1, {4, 1});
  }
}

TEST(OnnxRecurrent, BadWeightsShapeNamesTheNode) {
  ModelBuilder m(14);
  m.input("X", {3, 2, 3}).input("W", {1, 5, 3}).input("R", {1, 4, 4}).output("Y_h", {});
  auto& n = m.node("RNN", {"X", "W", "R"}, {"", "Y_h"}, "bad_rnn");
  attr(n, "hidden_size", int64_t{4});
  auto r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("bad_rnn"), std::string::npos) << r.desc;
  EXPECT_NE(r.desc.find("W has shape"), std::string::npos) << r.desc;
}

}  // namespace
}  // namespace kiln::onnx::test

namespace kiln::onnx::test {
namespace {

// Slice with run-time starts/ends/steps (as the Loop body of the ONNX test_loop11 needs): ONNX clamping.
TEST(OnnxSliceRunTime, ClampsLikeOnnx) {
  ModelBuilder m(13);
  m.input("x", {2, 5}).input("starts", {1}, TP::INT64).input("ends", {1}, TP::INT64);
  m.input("steps", {1}, TP::INT64).output("y", {});
  m.initI("axes", {1}, {-1});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "slice");
  Engine e;
  ASSERT_TRUE(e.build(m.bytes()));
  In x = f32({2, 5}, iota(10));
  struct Case {
    int64_t s, e, step;
    std::vector<double> want;
  };
  for (Case c : {Case{1, 4, 1, {1, 2, 3, 6, 7, 8}}, Case{-1, -100, -2, {4, 2, 0, 9, 7, 5}},
                 Case{-3, 100, 2, {2, 4, 7, 9}}, Case{3, 1, 1, {}}, Case{10, 0, -1, {4, 3, 2, 1, 9, 8, 7, 6}}}) {
    SCOPED_TRACE(std::to_string(c.s) + ":" + std::to_string(c.e) + ":" + std::to_string(c.step));
    auto out = e.run({{"x", x}, {"starts", i64({1}, {c.s})}, {"ends", i64({1}, {c.e})}, {"steps", i64({1}, {c.step})}});
    EXPECT_EQ(dimsOf(out["y"]), (std::vector<int64_t>{2, static_cast<int64_t>(c.want.size() / 2)}));
    expectNear(out["y"].v, c.want);
  }
}

}  // namespace
}  // namespace kiln::onnx::test

namespace kiln::onnx::test {
namespace {

// Bodies that hand values straight through: a branch returning an outer tensor unchanged, a loop-carried value
// passed on as is, a scan output that is a body input, and one that does not depend on the iteration.
TEST(OnnxControlFlow, PassThroughOutputs) {
  ModelBuilder m(13);
  m.input("cond", {}, TP::BOOL).input("x", {2}).input("y0", {2});
  m.output("r", {2}).output("keep", {2}).output("acc", {2}).output("ins", {-1, 2}).output("inv", {-1, 2});
  auto thenG = graphNamed("then");
  valueInfo(thenG.add_output(), "x", {2});  // an outer tensor, unchanged
  auto elseG = graphNamed("else");
  addNode(elseG, "Neg", {"x"}, {"nx"});
  valueInfo(elseG.add_output(), "nx", {2});
  auto& iff = m.node("If", {"cond"}, {"r"}, "if");
  attrGraph(iff, "then_branch", thenG);
  attrGraph(iff, "else_branch", elseG);
  m.initI("M", {}, {3});
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "i", {}, TP::INT64);
  valueInfo(body.add_input(), "c_in", {}, TP::BOOL);
  valueInfo(body.add_input(), "keep_in", {2});
  valueInfo(body.add_input(), "acc_in", {2});
  addNode(body, "Add", {"acc_in", "x"}, {"acc_out"});
  addNode(body, "Mul", {"x", "x"}, {"sq"});  // loop-invariant
  valueInfo(body.add_output(), "c_in", {}, TP::BOOL);
  valueInfo(body.add_output(), "keep_in", {2});
  valueInfo(body.add_output(), "acc_out", {2});
  valueInfo(body.add_output(), "acc_in", {2});
  valueInfo(body.add_output(), "sq", {2});
  auto& loop = m.node("Loop", {"M", "cond", "y0", "y0"}, {"keep", "acc", "ins", "inv"}, "loop");
  attrGraph(loop, "body", body);
  Engine e;
  ASSERT_TRUE(e.build(m.bytes()));
  for (bool c : {true, false}) {
    SCOPED_TRACE(c);
    auto out = e.run({{"cond", boolean(c)}, {"x", f32({2}, {2, -3})}, {"y0", f32({2}, {1, 5})}});
    expectNear(out["r"].v, c ? std::vector<double>{2, -3} : std::vector<double>{-2, 3});
    expectNear(out["keep"].v, {1, 5});
    int n = c ? 3 : 0;  // the loop's condition is the If's: false runs no iteration
    expectNear(out["acc"].v, {1.0 + 2 * n, 5.0 - 3 * n});
    std::vector<double> ins, inv;
    for (int i = 0; i < n; ++i) {
      ins.insert(ins.end(), {1.0 + 2 * i, 5.0 - 3 * i});
      inv.insert(inv.end(), {4, 9});
    }
    EXPECT_EQ(dimsOf(out["ins"]), (std::vector<int64_t>{n, 2}));
    expectNear(out["ins"].v, ins);
    expectNear(out["inv"].v, inv);
  }
}

}  // namespace
}  // namespace kiln::onnx::test

namespace kiln::onnx::test {
namespace {

// A Loop inside an If branch; the loop body reads a graph input through the conditional (two scopes out).
TEST(OnnxControlFlow, LoopInsideABranch) {
  ModelBuilder m(13);
  m.input("cond", {}, TP::BOOL).input("x", {2}).input("n", {}, TP::INT64).output("y", {2});
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "i", {}, TP::INT64);
  valueInfo(body.add_input(), "c_in", {}, TP::BOOL);
  valueInfo(body.add_input(), "y_in", {2});
  addNode(body, "Mul", {"y_in", "x"}, {"y_out"});
  addNode(body, "Identity", {"c_in"}, {"c_out"});
  valueInfo(body.add_output(), "c_out", {}, TP::BOOL);
  valueInfo(body.add_output(), "y_out", {2});
  auto thenG = graphNamed("then");
  constantNode(thenG, "one", {2}, {1, 1});
  auto& loop = addNode(thenG, "Loop", {"n", "", "one"}, {"pow"});
  attrGraph(loop, "body", body);
  valueInfo(thenG.add_output(), "pow", {2});
  auto elseG = graphNamed("else");
  addNode(elseG, "Neg", {"x"}, {"nx"});
  valueInfo(elseG.add_output(), "nx", {2});
  auto& iff = m.node("If", {"cond"}, {"y"}, "if");
  attrGraph(iff, "then_branch", thenG);
  attrGraph(iff, "else_branch", elseG);
  Engine e;
  ASSERT_TRUE(e.build(m.bytes()));
  auto t = e.run({{"cond", boolean(true)}, {"x", f32({2}, {2, -3})}, {"n", i64({}, {3})}});
  expectNear(t["y"].v, {8, -27});  // x^3
  auto f = e.run({{"cond", boolean(false)}, {"x", f32({2}, {2, -3})}, {"n", i64({}, {3})}});
  expectNear(f["y"].v, {-2, 3});
}

}  // namespace
}  // namespace kiln::onnx::test

namespace kiln::onnx::test {
namespace {

// A loop-carried value that grows every iteration (ONNX allows carried shapes to change).
TEST(OnnxControlFlow, LoopCarriedValueGrows) {
  ModelBuilder m(13);
  m.input("x", {2}).input("n", {}, TP::INT64).output("acc", {-1});
  m.initF("seed", {1}, {7});
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "i", {}, TP::INT64);
  valueInfo(body.add_input(), "c_in", {}, TP::BOOL);
  valueInfo(body.add_input(), "acc_in", {-1});
  auto& cat = addNode(body, "Concat", {"acc_in", "x"}, {"acc_out"});
  attr(cat, "axis", int64_t{0});
  addNode(body, "Identity", {"c_in"}, {"c_out"});
  valueInfo(body.add_output(), "c_out", {}, TP::BOOL);
  valueInfo(body.add_output(), "acc_out", {-1});
  auto& loop = m.node("Loop", {"n", "", "seed"}, {"acc"}, "loop");
  attrGraph(loop, "body", body);
  Engine e;
  ASSERT_TRUE(e.build(m.bytes()));
  auto out = e.run({{"x", f32({2}, {1, 2})}, {"n", i64({}, {3})}});
  EXPECT_EQ(dimsOf(out["acc"]), (std::vector<int64_t>{7}));
  expectNear(out["acc"].v, {7, 1, 2, 1, 2, 1, 2});
}

}  // namespace
}  // namespace kiln::onnx::test

namespace kiln::onnx::test {
namespace {

// Branches of different shapes (the output's shape is known only at run time), and a while loop (no M).
TEST(OnnxControlFlow, BranchShapesDifferAndWhileLoop) {
  ModelBuilder m(13);
  m.input("cond", {}, TP::BOOL).input("x", {2}).output("y", {-1}).output("z", {});
  auto thenG = graphNamed("then");
  auto& c = addNode(thenG, "Concat", {"x", "x"}, {"xx"});
  attr(c, "axis", int64_t{0});
  valueInfo(thenG.add_output(), "xx", {4});
  auto elseG = graphNamed("else");
  addNode(elseG, "Neg", {"x"}, {"nx"});
  valueInfo(elseG.add_output(), "nx", {2});
  auto& iff = m.node("If", {"cond"}, {"y"}, "if");
  attrGraph(iff, "then_branch", thenG);
  attrGraph(iff, "else_branch", elseG);
  // z: double 1 until it reaches 100 (while loop: the body's condition is the only limit).
  m.initF("one", {}, {1});
  ::onnx::TensorProto t;
  t.set_name("go");
  t.set_data_type(TP::BOOL);
  t.add_int32_data(1);
  *m.graph().add_initializer() = t;
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "i", {}, TP::INT64);
  valueInfo(body.add_input(), "c_in", {}, TP::BOOL);
  valueInfo(body.add_input(), "z_in", {});
  constantNode(body, "two", {}, {2});
  constantNode(body, "hundred", {}, {100});
  addNode(body, "Mul", {"z_in", "two"}, {"z_out"});
  addNode(body, "Less", {"z_out", "hundred"}, {"c_out"});
  valueInfo(body.add_output(), "c_out", {}, TP::BOOL);
  valueInfo(body.add_output(), "z_out", {});
  auto& loop = m.node("Loop", {"", "go", "one"}, {"z"}, "while");
  attrGraph(loop, "body", body);
  Engine e;
  ASSERT_TRUE(e.build(m.bytes()));
  auto a = e.run({{"cond", boolean(true)}, {"x", f32({2}, {1, 2})}});
  EXPECT_EQ(dimsOf(a["y"]), (std::vector<int64_t>{4}));
  expectNear(a["y"].v, {1, 2, 1, 2});
  expectNear(a["z"].v, {128});  // 1, 2, ..., 64 all < 100 continue; 128 stops after it is made
  auto b = e.run({{"cond", boolean(false)}, {"x", f32({2}, {1, 2})}});
  EXPECT_EQ(dimsOf(b["y"]), (std::vector<int64_t>{2}));
  expectNear(b["y"].v, {-1, -2});
}

}  // namespace
}  // namespace kiln::onnx::test

namespace kiln::onnx::test {
namespace {

// Scan 8 with per-item sequence_lens: steps past an item's length keep its state and give zeros; a reversed
// scan input starts at the item's last valid step.
TEST(OnnxControlFlow, Scan8SequenceLens) {
  ModelBuilder m(8);
  m.input("lens", {3}, TP::INT32).input("s0", {3, 2}).input("x", {3, 4, 2}).input("w", {3, 4, 2});
  m.output("s", {3, 2}).output("ys", {3, 4, 2}).output("k", {3, 4});
  auto body = graphNamed("body");
  valueInfo(body.add_input(), "s_in", {2});
  valueInfo(body.add_input(), "x_t", {2});
  valueInfo(body.add_input(), "w_t", {2});
  addNode(body, "Mul", {"s_in", "w_t"}, {"sw"});
  addNode(body, "Add", {"sw", "x_t"}, {"s_out"});
  addNode(body, "Identity", {"s_out"}, {"y"});
  auto& rs = addNode(body, "ReduceSum", {"x_t"}, {"k"});
  attr(rs, "keepdims", int64_t{0});
  valueInfo(body.add_output(), "s_out", {2});
  valueInfo(body.add_output(), "y", {2});
  valueInfo(body.add_output(), "k", {});
  auto& n = m.node("Scan", {"lens", "s0", "x", "w"}, {"s", "ys", "k"}, "scan8");
  attrGraph(n, "body", body);
  attr(n, "num_scan_inputs", int64_t{2});
  attr(n, "directions", std::vector<int64_t>{0, 1});  // x forward, w reversed
  Engine e;
  ASSERT_TRUE(e.build(m.bytes()));
  std::vector<int32_t> const lens{4, 2, 0};
  std::vector<float> const s0{1, 2, 3, 4, 5, 6};
  std::vector<float> const x = pseudoRandom(24, 3);
  std::vector<float> const w = pseudoRandom(24, 4);
  std::vector<double> s(s0.begin(), s0.end());
  std::vector<double> ys(24, 0.0), ks(12, 0.0);
  for (int b = 0; b < 3; ++b) {
    int const len = lens[static_cast<size_t>(b)];
    for (int t = 0; t < len; ++t) {
      int const tw = len - 1 - t;
      double k = 0;
      for (int j = 0; j < 2; ++j) {
        double xv = x[static_cast<size_t>((b * 4 + t) * 2 + j)];
        double& sv = s[static_cast<size_t>(b * 2 + j)];
        sv = sv * w[static_cast<size_t>((b * 4 + tw) * 2 + j)] + xv;
        ys[static_cast<size_t>((b * 4 + t) * 2 + j)] = sv;
        k += xv;
      }
      ks[static_cast<size_t>(b * 4 + t)] = k;
    }
  }
  auto out =
      e.run({{"lens", i32({3}, lens)}, {"s0", f32({3, 2}, s0)}, {"x", f32({3, 4, 2}, x)}, {"w", f32({3, 4, 2}, w)}});
  expectNear(out["s"].v, s);
  EXPECT_EQ(dimsOf(out["ys"]), (std::vector<int64_t>{3, 4, 2}));
  expectNear(out["ys"].v, ys);
  expectNear(out["k"].v, ks);
}

}  // namespace
}  // namespace kiln::onnx::test
