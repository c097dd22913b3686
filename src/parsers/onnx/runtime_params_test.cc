// Tests of ONNX ops whose parameter inputs (axes, starts/ends/steps, split sizes, pads, shapes, scales, Range
// bounds) are graph inputs known only at run time: each model is parsed and built once, then run several times with
// different parameter values; expected numbers are worked out by hand (comments show how). Absurd run-time sizes
// fail the enqueue with a message instead of allocating.
#include <cstdint>
#include <limits>

#include "onnx_test_util.h"

namespace kiln::onnx::test {
namespace {

using TP = ::onnx::TensorProto;

/// A host input: type, dims and bytes.
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
  in.bytes.resize(v.size() * sizeof(T) + 1);
  if (!v.empty()) {
    std::memcpy(in.bytes.data(), v.data(), v.size() * sizeof(T));
  }
  return in;
}
In f32(std::vector<int64_t> const& dims, std::vector<float> const& v) { return makeIn(DataType::kFLOAT, dims, v); }
In i64(std::vector<int64_t> const& dims, std::vector<int64_t> const& v) { return makeIn(DataType::kINT64, dims, v); }
In i32(std::vector<int64_t> const& dims, std::vector<int32_t> const& v) { return makeIn(DataType::kINT32, dims, v); }

/// Output memory on request (refusing absurd sizes, as a careful application would).
class Allocator : public kiln::IOutputAllocator {
 public:
  void* reallocateOutputAsync(char const*, void*, uint64_t size, uint64_t, cudaStream_t) override {
    if (size > (uint64_t{1} << 30)) {
      return nullptr;
    }
    if (size + 8 > bytes.size()) {
      bytes.resize(size + 8);
    }
    return bytes.data();
  }
  void notifyShape(char const*, Dims const& dims) noexcept override { shape = dims; }
  std::vector<uint8_t> bytes;
  Dims shape{};
};

/// One parsed and built model, run many times.
class Engine {
 public:
  explicit Engine(std::string const& bytes) {
    builder_.reset(kiln::createInferBuilder(logger_));
    std::unique_ptr<kiln::INetworkDefinition> network(builder_->createNetworkV2(0));
    std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*network, logger_));
    if (!parser->parse(bytes.data(), bytes.size())) {
      ADD_FAILURE() << "parse failed: " << (parser->getNbErrors() ? parser->getError(0)->desc() : "?");
      return;
    }
    std::unique_ptr<kiln::IBuilderConfig> config(builder_->createBuilderConfig());
    config->setDefaultDeviceType(kiln::DeviceType::kCPU);
    config->setBuilderOptimizationLevel(0);
    config->setTacticSources(1U << static_cast<uint32_t>(kiln::TacticSource::kREFERENCE));
    std::unique_ptr<kiln::IHostMemory> plan(builder_->buildSerializedNetwork(*network, *config));
    if (!plan) {
      ADD_FAILURE() << "build failed: " << logger_.last;
      return;
    }
    runtime_.reset(kiln::createInferRuntime(logger_));
    engine_.reset(runtime_->deserializeCudaEngine(plan->data(), plan->size()));
    if (!engine_) {
      ADD_FAILURE() << "deserialize failed: " << logger_.last;
      return;
    }
    context_.reset(engine_->createExecutionContext());
    for (int32_t i = 0; i < engine_->getNbIOTensors(); ++i) {
      char const* name = engine_->getIOTensorName(i);
      if (engine_->getTensorIOMode(name) == kiln::TensorIOMode::kOUTPUT) {
        EXPECT_TRUE(context_->setOutputAllocator(name, &allocators_[name]));
      }
    }
  }

  /// Runs with `ins`; false (with the logged error in error()) when the enqueue fails.
  bool run(std::map<std::string, In>& ins) {
    if (!context_) {
      return false;
    }
    for (auto& [name, in] : ins) {
      EXPECT_TRUE(context_->setInputShape(name.c_str(), in.dims)) << name;
      EXPECT_TRUE(context_->setTensorAddress(name.c_str(), in.bytes.data())) << name;
    }
    logger_.last.clear();
    return context_->enqueueV3(nullptr);
  }

  /// Output `name` of the last run, as doubles, with its shape.
  Out output(std::string const& name) {
    Out o;
    Allocator const& a = allocators_[name];
    o.dims = a.shape;
    int64_t n = 1;
    for (int32_t k = 0; k < o.dims.nbDims; ++k) {
      n *= o.dims.d[k];
    }
    appendAsDoubles(engine_->getTensorDataType(name.c_str()), a.bytes.data(), n, o.v);
    return o;
  }
  std::string const& error() const { return logger_.last; }

 private:
  TestLogger logger_;
  std::unique_ptr<kiln::IBuilder> builder_;
  std::unique_ptr<kiln::IRuntime> runtime_;
  std::unique_ptr<kiln::ICudaEngine> engine_;
  std::unique_ptr<kiln::IExecutionContext> context_;
  std::map<std::string, Allocator> allocators_;
};

std::vector<int64_t> dimsOf(Dims const& d) { return std::vector<int64_t>(d.d, d.d + std::max(d.nbDims, 0)); }

/// Runs and checks shape and values of output "y".
void expectRun(Engine& e, std::map<std::string, In> ins, std::vector<int64_t> const& shape,
               std::vector<double> const& want, char const* what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(e.run(ins)) << e.error();
  Out y = e.output("y");
  EXPECT_EQ(dimsOf(y.dims), shape);
  expectNear(y.v, want, 1e-5);
}

// x [2, 3, 2] = 0..11 (row-major).
std::vector<float> const kX = iota(12);

TEST(OnnxRunTimeParams, ReduceSumAxesInput) {
  for (int64_t keep : {int64_t{0}, int64_t{1}}) {
    ModelBuilder m(13);
    m.input("x", {2, 3, 2}).input("axes", {1}, TP::INT64).output("y");
    attr(m.node("ReduceSum", {"x", "axes"}, {"y"}), "keepdims", keep);
    Engine e(m.bytes());
    // Over axis 1: y[i][k] = sum_j x[i][j][k] = {0+2+4, 1+3+5, 6+8+10, 7+9+11}.
    expectRun(e, {{"x", f32({2, 3, 2}, kX)}, {"axes", i64({1}, {1})}},
              keep ? std::vector<int64_t>{2, 1, 2} : std::vector<int64_t>{2, 2}, {6, 9, 24, 27}, "axis 1");
    // Over axis -1 (2): pairs summed: {1, 5, 9, 13, 17, 21}.
    expectRun(e, {{"x", f32({2, 3, 2}, kX)}, {"axes", i64({1}, {-1})}},
              keep ? std::vector<int64_t>{2, 3, 1} : std::vector<int64_t>{2, 3}, {1, 5, 9, 13, 17, 21}, "axis -1");
    // Over axis 0: x[0] + x[1] = {6, 8, ..., 16}.
    expectRun(e, {{"x", f32({2, 3, 2}, kX)}, {"axes", i64({1}, {0})}},
              keep ? std::vector<int64_t>{1, 3, 2} : std::vector<int64_t>{3, 2}, {6, 8, 10, 12, 14, 16}, "axis 0");
    std::map<std::string, In> bad = {{"x", f32({2, 3, 2}, kX)}, {"axes", i64({1}, {3})}};
    EXPECT_FALSE(e.run(bad));
    EXPECT_NE(e.error().find("out of range"), std::string::npos) << e.error();
  }
}

TEST(OnnxRunTimeParams, ReduceEmptyAxesInput) {
  for (int64_t noop : {int64_t{0}, int64_t{1}}) {
    ModelBuilder m(13);
    m.input("x", {2, 2}).input("axes", {0}, TP::INT64).output("y");
    auto& n = m.node("ReduceSum", {"x", "axes"}, {"y"});
    attr(n, "keepdims", int64_t{1});
    attr(n, "noop_with_empty_axes", noop);
    Engine e(m.bytes());
    // Empty axes: everything (1+2+3+4 = 10), or nothing with noop_with_empty_axes.
    expectRun(e, {{"x", f32({2, 2}, {1, 2, 3, 4})}, {"axes", i64({0}, {})}},
              noop ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{1, 1},
              noop ? std::vector<double>{1, 2, 3, 4} : std::vector<double>{10}, "empty");
  }
}

TEST(OnnxRunTimeParams, Opset18ReduceFamilyAxesInput) {
  struct Case {
    char const* op;
    std::vector<double> overAxis1;  // x [2, 2] = {1, -2, 3, 4}, reduced over axis 1
    std::vector<double> overAxis0;
  };
  // Mean: (1-2)/2, (3+4)/2 | (1+3)/2, (-2+4)/2. L2: sqrt(1+4), sqrt(9+16) | sqrt(1+9), sqrt(4+16).
  // Max: 1, 4 | 3, 4. SumSquare: 5, 25 | 10, 20. L1: 3, 7 | 4, 6.
  for (Case const& c :
       {Case{"ReduceMean", {-0.5, 3.5}, {2, 1}},
        Case{"ReduceL2", {std::sqrt(5.0), 5}, {std::sqrt(10.0), std::sqrt(20.0)}}, Case{"ReduceMax", {1, 4}, {3, 4}},
        Case{"ReduceSumSquare", {5, 25}, {10, 20}}, Case{"ReduceL1", {3, 7}, {4, 6}}}) {
    ModelBuilder m(18);
    m.input("x", {2, 2}).input("axes", {1}, TP::INT32).output("y");
    attr(m.node(c.op, {"x", "axes"}, {"y"}), "keepdims", int64_t{0});
    Engine e(m.bytes());
    expectRun(e, {{"x", f32({2, 2}, {1, -2, 3, 4})}, {"axes", i32({1}, {1})}}, {2}, c.overAxis1, c.op);
    expectRun(e, {{"x", f32({2, 2}, {1, -2, 3, 4})}, {"axes", i32({1}, {0})}}, {2}, c.overAxis0, c.op);
  }
}

TEST(OnnxRunTimeParams, SqueezeUnsqueezeAxesInput) {
  ModelBuilder m(13);
  m.input("x", {1, 3, 1}).input("axes", {1}, TP::INT64).input("uaxes", {2}, TP::INT64).output("s").output("y");
  m.node("Squeeze", {"x", "axes"}, {"s"});
  m.node("Unsqueeze", {"s", "uaxes"}, {"y"});
  Engine e(m.bytes());
  std::vector<float> x = {1, 2, 3};
  // Squeeze axis 0 -> [3, 1]; unsqueeze at 0 and 3 -> [1, 3, 1, 1].
  std::map<std::string, In> a = {{"x", f32({1, 3, 1}, x)}, {"axes", i64({1}, {0})}, {"uaxes", i64({2}, {0, 3})}};
  ASSERT_TRUE(e.run(a)) << e.error();
  EXPECT_EQ(dimsOf(e.output("s").dims), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(dimsOf(e.output("y").dims), (std::vector<int64_t>{1, 3, 1, 1}));
  // Squeeze axis -1 -> [1, 3]; unsqueeze at 1 and -1 -> [1, 1, 3, 1].
  std::map<std::string, In> b = {{"x", f32({1, 3, 1}, x)}, {"axes", i64({1}, {-1})}, {"uaxes", i64({2}, {1, -1})}};
  ASSERT_TRUE(e.run(b)) << e.error();
  EXPECT_EQ(dimsOf(e.output("s").dims), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(dimsOf(e.output("y").dims), (std::vector<int64_t>{1, 1, 3, 1}));
  expectNear(e.output("y").v, {1, 2, 3});
  // Squeezing the extent-3 axis fails when the engine runs.
  std::map<std::string, In> c = {{"x", f32({1, 3, 1}, x)}, {"axes", i64({1}, {1})}, {"uaxes", i64({2}, {0, 1})}};
  EXPECT_FALSE(e.run(c));
  EXPECT_FALSE(e.error().empty());
}

TEST(OnnxRunTimeParams, CumSumAxisInput) {
  ModelBuilder m(14);
  m.input("x", {2, 3}).input("axis", {}, TP::INT32).output("y");
  attr(m.node("CumSum", {"x", "axis"}, {"y"}), "exclusive", int64_t{1});
  Engine e(m.bytes());
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  // Exclusive along rows: {0, 0, 0, 1, 2, 3}; along columns: {0, 1, 3, 0, 4, 9}.
  expectRun(e, {{"x", f32({2, 3}, x)}, {"axis", i32({}, {0})}}, {2, 3}, {0, 0, 0, 1, 2, 3}, "axis 0");
  expectRun(e, {{"x", f32({2, 3}, x)}, {"axis", i32({}, {-1})}}, {2, 3}, {0, 1, 3, 0, 4, 9}, "axis -1");
}

TEST(OnnxRunTimeParams, SliceAllInputsAtRunTime) {
  ModelBuilder m(13);
  m.input("x", {3, 4})
      .input("starts", {1}, TP::INT64)
      .input("ends", {1}, TP::INT64)
      .input("axes", {1}, TP::INT64)
      .input("steps", {1}, TP::INT64)
      .output("y");
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  Engine e(m.bytes());
  In x = f32({3, 4}, iota(12));  // rows {0..3}, {4..7}, {8..11}
  auto run = [&](int64_t s, int64_t en, int64_t a, int64_t k, std::vector<int64_t> const& shape,
                 std::vector<double> const& want, char const* what) {
    expectRun(e,
              {{"x", x},
               {"starts", i64({1}, {s})},
               {"ends", i64({1}, {en})},
               {"axes", i64({1}, {a})},
               {"steps", i64({1}, {k})}},
              shape, want, what);
  };
  int64_t const big = std::numeric_limits<int64_t>::max();
  int64_t const small = std::numeric_limits<int64_t>::min();
  // Columns 1.. (end clamped to 4).
  run(1, big, 1, 1, {3, 3}, {1, 2, 3, 5, 6, 7, 9, 10, 11}, "cols 1:");
  // Rows backwards from the last: 2, 1, 0 (end below -rows clamps to before the first).
  run(-1, small, 0, -1, {3, 4}, {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3}, "rows ::-1");
  // Columns -3..-1 every 2nd: column 1 only (1, 3 would be -1 = 3 excluded).
  run(-3, -1, -1, 2, {3, 1}, {1, 5, 9}, "cols -3:-1:2");
  // Columns 3 down to 1 exclusive, step -2: column 3 only.
  run(3, 1, 1, -2, {3, 1}, {3, 7, 11}, "cols 3:1:-2");
  // Start past the end: empty.
  run(5, 10, 0, 1, {0, 4}, {}, "rows 5:10");
  // Start clamped from -100 to 0, end 2: rows 0, 1.
  run(-100, 2, 0, 1, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}, "rows -100:2");
  // A zero step fails when the engine runs.
  std::map<std::string, In> zero = {
      {"x", x}, {"starts", i64({1}, {0})}, {"ends", i64({1}, {2})}, {"axes", i64({1}, {0})}, {"steps", i64({1}, {0})}};
  EXPECT_FALSE(e.run(zero));
  EXPECT_NE(e.error().find("step is 0"), std::string::npos) << e.error();
}

TEST(OnnxRunTimeParams, SplitSizesInput) {
  ModelBuilder m(13);
  m.input("x", {6}).input("split", {2}, TP::INT64).output("a").output("b");
  m.node("Split", {"x", "split"}, {"a", "b"});
  Engine e(m.bytes());
  In x = f32({6}, iota(6, 10));  // 10..15
  std::map<std::string, In> one = {{"x", x}, {"split", i64({2}, {2, 4})}};
  ASSERT_TRUE(e.run(one)) << e.error();
  expectNear(e.output("a").v, {10, 11});
  expectNear(e.output("b").v, {12, 13, 14, 15});
  std::map<std::string, In> two = {{"x", x}, {"split", i64({2}, {5, 1})}};
  ASSERT_TRUE(e.run(two)) << e.error();
  expectNear(e.output("a").v, {10, 11, 12, 13, 14});
  expectNear(e.output("b").v, {15});
  // Sizes past the end, or short of it, fail when the engine runs.
  std::map<std::string, In> bad = {{"x", x}, {"split", i64({2}, {5, 4})}};
  EXPECT_FALSE(e.run(bad));
  std::map<std::string, In> shortOf = {{"x", x}, {"split", i64({2}, {2, 2})}};
  EXPECT_FALSE(e.run(shortOf));
  EXPECT_NE(e.error().find("do not add up"), std::string::npos) << e.error();
}

TEST(OnnxRunTimeParams, RangeEveryType) {
  {
    ModelBuilder m(11);
    m.input("s", {}, TP::INT64).input("l", {}, TP::INT64).input("d", {}, TP::INT64).output("y", {}, TP::INT64);
    m.node("Range", {"s", "l", "d"}, {"y"});
    Engine e(m.bytes());
    expectRun(e, {{"s", i64({}, {0})}, {"l", i64({}, {10})}, {"d", i64({}, {3})}}, {4}, {0, 3, 6, 9}, "0:10:3");
    expectRun(e, {{"s", i64({}, {10})}, {"l", i64({}, {4})}, {"d", i64({}, {-2})}}, {3}, {10, 8, 6}, "10:4:-2");
    expectRun(e, {{"s", i64({}, {5})}, {"l", i64({}, {1})}, {"d", i64({}, {2})}}, {0}, {}, "empty");
    // 2^40 elements: refused when the engine runs, nothing allocated.
    std::map<std::string, In> huge = {{"s", i64({}, {0})}, {"l", i64({}, {int64_t{1} << 40})}, {"d", i64({}, {1})}};
    EXPECT_FALSE(e.run(huge));
    EXPECT_NE(e.error().find("sized while running"), std::string::npos) << e.error();
  }
  {
    ModelBuilder m(11);
    m.input("s", {}, TP::INT32).input("l", {}, TP::INT32).input("d", {}, TP::INT32).output("y", {}, TP::INT32);
    m.node("Range", {"s", "l", "d"}, {"y"});
    Engine e(m.bytes());
    expectRun(e, {{"s", i32({}, {-3})}, {"l", i32({}, {3})}, {"d", i32({}, {4})}}, {2}, {-3, 1}, "-3:3:4");
  }
  {
    ModelBuilder m(11);
    m.input("s", {}).input("l", {}).input("d", {}).output("y");
    m.node("Range", {"s", "l", "d"}, {"y"});
    Engine e(m.bytes());
    // ceil((2 - 1) / 0.25) = 4 values; ceil((0 - 1) / -0.3) = ceil(3.33) = 4 values.
    expectRun(e, {{"s", f32({}, {1})}, {"l", f32({}, {2})}, {"d", f32({}, {0.25F})}}, {4}, {1, 1.25, 1.5, 1.75},
              "1:2:0.25");
    expectRun(e, {{"s", f32({}, {1})}, {"l", f32({}, {0})}, {"d", f32({}, {-0.3F})}}, {4}, {1, 0.7, 0.4, 0.1},
              "1:0:-0.3");
    // delta 0: an infinite count, refused when the engine runs.
    std::map<std::string, In> zero = {{"s", f32({}, {1})}, {"l", f32({}, {2})}, {"d", f32({}, {0})}};
    EXPECT_FALSE(e.run(zero));
    EXPECT_NE(e.error().find("sized while running"), std::string::npos) << e.error();
  }
}

TEST(OnnxRunTimeParams, PadInputs) {
  {
    ModelBuilder m(13);
    m.input("x", {2, 2}).input("pads", {4}, TP::INT64).input("v", {}).output("y");
    m.node("Pad", {"x", "pads", "v"}, {"y"});
    Engine e(m.bytes());
    In x = f32({2, 2}, {1, 2, 3, 4});
    // One row before, one column after, filled with 9.
    expectRun(e, {{"x", x}, {"pads", i64({4}, {1, 0, 0, 1})}, {"v", f32({}, {9})}}, {3, 3}, {9, 9, 9, 1, 2, 9, 3, 4, 9},
              "constant");
    // One column before, one row after.
    expectRun(e, {{"x", x}, {"pads", i64({4}, {0, 1, 1, 0})}, {"v", f32({}, {-1})}}, {3, 3},
              {-1, 1, 2, -1, 3, 4, -1, -1, -1}, "constant 2");
    // Cropping the last column: [[1], [3]].
    expectRun(e, {{"x", x}, {"pads", i64({4}, {0, 0, 0, -1})}, {"v", f32({}, {0})}}, {2, 1}, {1, 3}, "crop");
  }
  for (char const* mode : {"edge", "reflect"}) {
    ModelBuilder m(13);
    m.input("x", {2, 3}).input("pads", {4}, TP::INT64).output("y");
    attr(m.node("Pad", {"x", "pads"}, {"y"}), "mode", std::string(mode));
    Engine e(m.bytes());
    In x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    bool edge = std::string(mode) == "edge";
    // One column before and after. edge: {1,1,2,3,3}; reflect: {2,1,2,3,2}.
    expectRun(
        e, {{"x", x}, {"pads", i64({4}, {0, 1, 0, 1})}}, {2, 5},
        edge ? std::vector<double>{1, 1, 2, 3, 3, 4, 4, 5, 6, 6} : std::vector<double>{2, 1, 2, 3, 2, 5, 4, 5, 6, 5},
        mode);
    // One row after: edge repeats row 1, reflect mirrors row 0.
    expectRun(e, {{"x", x}, {"pads", i64({4}, {0, 0, 1, 0})}}, {3, 3},
              edge ? std::vector<double>{1, 2, 3, 4, 5, 6, 4, 5, 6} : std::vector<double>{1, 2, 3, 4, 5, 6, 1, 2, 3},
              mode);
  }
}

TEST(OnnxRunTimeParams, ConstantOfShapeInput) {
  ModelBuilder m(11);
  m.input("shape", {2}, TP::INT64).output("y", {}, TP::INT64);
  auto& n = m.node("ConstantOfShape", {"shape"}, {"y"});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(TP::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(7);
  Engine e(m.bytes());
  expectRun(e, {{"shape", i64({2}, {2, 3})}}, {2, 3}, std::vector<double>(6, 7), "2x3");
  expectRun(e, {{"shape", i64({2}, {1, 0})}}, {1, 0}, {}, "1x0");
  // 2^40 elements, or a negative extent: refused when the engine runs.
  std::map<std::string, In> huge = {{"shape", i64({2}, {int64_t{1} << 20, int64_t{1} << 20})}};
  EXPECT_FALSE(e.run(huge));
  EXPECT_NE(e.error().find("sized while running"), std::string::npos) << e.error();
  std::map<std::string, In> negative = {{"shape", i64({2}, {2, -1})}};
  EXPECT_FALSE(e.run(negative));
}

TEST(OnnxRunTimeParams, ExpandShapeInput) {
  ModelBuilder m(13);
  m.input("x", {3, 1}).input("shape", {3}, TP::INT64).output("y");
  m.node("Expand", {"x", "shape"}, {"y"});
  Engine e(m.bytes());
  In x = f32({3, 1}, {1, 2, 3});
  // [3, 1] to [2, 1, 2] broadcasts to [2, 3, 2]: each value twice, all of it twice.
  expectRun(e, {{"x", x}, {"shape", i64({3}, {2, 1, 2})}}, {2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}, "2,1,2");
  expectRun(e, {{"x", x}, {"shape", i64({3}, {1, 3, 1})}}, {1, 3, 1}, {1, 2, 3}, "1,3,1");
  // [3, 1] cannot broadcast to [2, 2, 2] (3 against 2).
  std::map<std::string, In> mismatch = {{"x", x}, {"shape", i64({3}, {2, 2, 2})}};
  EXPECT_FALSE(e.run(mismatch));
  EXPECT_NE(e.error().find("cannot be broadcast"), std::string::npos) << e.error();
  std::map<std::string, In> huge = {{"x", x}, {"shape", i64({3}, {int64_t{1} << 20, 1, int64_t{1} << 20})}};
  EXPECT_FALSE(e.run(huge));
  EXPECT_NE(e.error().find("sized while running"), std::string::npos) << e.error();
}

TEST(OnnxRunTimeParams, ResizeScalesInputDriveTheCoordinates) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 1, 2}).input("scales", {4}).output("y");
  attr(m.node("Resize", {"x", "", "scales"}, {"y"}), "mode", std::string("linear"));
  Engine e(m.bytes());
  In x = f32({1, 1, 1, 2}, {0, 10});
  // Scale 2 (half_pixel): source = (i + 0.5) / 2 - 0.5 = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
  expectRun(e, {{"x", x}, {"scales", f32({4}, {1, 1, 1, 2})}}, {1, 1, 1, 4}, {0, 2.5, 7.5, 10}, "x2");
  // Scale 1.7 gives floor(3.4) = 3 outputs, sampled with the given scale (not 3/2): (i + 0.5) / 1.7 - 0.5 =
  // -0.206 (0), 0.382, 0.971.
  expectRun(e, {{"x", x}, {"scales", f32({4}, {1, 1, 1, 1.7F})}}, {1, 1, 1, 3},
            {0, 10 * (1.5 / 1.7 - 0.5), 10 * (2.5 / 1.7 - 0.5)}, "x1.7");
}

TEST(OnnxRunTimeParams, UpsampleScalesInput) {
  ModelBuilder m(9);
  m.input("x", {1, 2}).input("scales", {2}).output("y");
  m.node("Upsample", {"x", "scales"}, {"y"});
  Engine e(m.bytes());
  // Nearest, asymmetric, floor: source = floor(i / scale).
  expectRun(e, {{"x", f32({1, 2}, {3, 4})}, {"scales", f32({2}, {2, 2})}}, {2, 4}, {3, 3, 4, 4, 3, 3, 4, 4}, "x2");
  expectRun(e, {{"x", f32({1, 2}, {3, 4})}, {"scales", f32({2}, {1, 1.5F})}}, {1, 3}, {3, 3, 4}, "x1.5");
}

TEST(OnnxRunTimeParams, TileRepeatsInput) {
  ModelBuilder m(13);
  m.input("x", {1, 2}).input("r", {2}, TP::INT64).output("y");
  m.node("Tile", {"x", "r"}, {"y"});
  Engine e(m.bytes());
  In x = f32({1, 2}, {1, 2});
  expectRun(e, {{"x", x}, {"r", i64({2}, {2, 1})}}, {2, 2}, {1, 2, 1, 2}, "2x1");
  expectRun(e, {{"x", x}, {"r", i64({2}, {1, 3})}}, {1, 6}, {1, 2, 1, 2, 1, 2}, "1x3");
  std::map<std::string, In> huge = {{"x", x}, {"r", i64({2}, {int64_t{1} << 20, int64_t{1} << 20})}};
  EXPECT_FALSE(e.run(huge));
  EXPECT_NE(e.error().find("sized while running"), std::string::npos) << e.error();
}

TEST(OnnxRunTimeParams, ResizeSizesInput) {
  ModelBuilder m(13);
  m.input("x", {1, 2}).input("sizes", {2}, TP::INT64).output("y");
  auto& n = m.node("Resize", {"x", "", "", "sizes"}, {"y"});
  attr(n, "coordinate_transformation_mode", std::string("asymmetric"));
  attr(n, "nearest_mode", std::string("floor"));
  Engine e(m.bytes());
  // Nearest, asymmetric, floor with scale out / in: source = floor(i * in / out).
  expectRun(e, {{"x", f32({1, 2}, {3, 4})}, {"sizes", i64({2}, {1, 4})}}, {1, 4}, {3, 3, 4, 4}, "1x4");
  expectRun(e, {{"x", f32({1, 2}, {3, 4})}, {"sizes", i64({2}, {2, 1})}}, {2, 1}, {3, 3}, "2x1");
}

// Build-time guarantees stay: a constant Range of 2^40 values is refused by the parser.
TEST(OnnxRunTimeParams, ConstantFastPathsStay) {
  ModelBuilder m(11);
  m.initI("s", {}, {0}).initI("l", {}, {int64_t{1} << 40}).initI("d", {}, {1}).output("y", {}, TP::INT64);
  m.node("Range", {"s", "l", "d"}, {"y"});
  ParseResult r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("too large"), std::string::npos) << r.desc;
  // Constant axes still give static shapes (no run-time reads needed).
  ModelBuilder c(13);
  c.input("x", {2, 3, 2}).initI("axes", {1}, {1}).output("y");
  c.node("ReduceSum", {"x", "axes"}, {"y"});
  auto outs = run(c.bytes(), {{"x", {Dims{3, {2, 3, 2}}, kX}}});
  ASSERT_EQ(outs.count("y"), 1U);
  EXPECT_EQ(dimsOf(outs["y"].dims), (std::vector<int64_t>{2, 1, 2}));
  expectNear(outs["y"].v, {6, 9, 24, 27});
}

}  // namespace
}  // namespace kiln::onnx::test
