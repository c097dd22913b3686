// gpu tests of the PointwiseFused tactic: NVRTC compiles the generated source for every admitted operation and type
// (no device needed), and the generated kernels match the reference on contiguous, one-element and general
// broadcasts in every float type, under CUDA graph capture, with one compile per distinct source.
#include "backends/cuda/pointwise_fused.h"

#include <gtest/gtest.h>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/pointwise_codegen.h"
#include "backends/pointwise_test_programs.h"

namespace kiln::cudatest {
namespace {

using pwtest::programAttrs;

constexpr DataType kFloatTypes[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

TEST(CudaPointwiseFusedCodegen, EveryOperationAndTypeCompilesWithNvrtc) {
  // NVRTC needs no device: this runs everywhere the CUDA toolkit is.
  int compiled = 0;
  for (auto const& np : pwtest::perOperationPrograms())
    for (DataType t : kFloatTypes) {
      std::string src = cuda::pwgen::generateSource(np.program, {t, t}, t);
      auto cubin = cuda::compilePointwiseSource(src, "sm_90", "layer '" + np.name + "'");
      ASSERT_TRUE(cubin.isOk()) << np.name << " " << dataTypeName(t) << ": " << cubin.status().toString() << "\n"
                                << src;
      EXPECT_GT(cubin->size(), 0u);
      ++compiled;
    }
  // Mixed and bool storage: bool and fp16 inputs, each output type.
  ir::PointwiseProgram sel;
  sel.numInputs = 3;
  sel.instructions = {pwtest::instr(ir::PwOpcode::kSelect, 0, {pwtest::in(0), pwtest::in(1), pwtest::in(2)})};
  for (DataType out : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    std::string src = cuda::pwgen::generateSource(sel, {DataType::kBOOL, DataType::kHALF, DataType::kFLOAT}, out);
    EXPECT_TRUE(cuda::compilePointwiseSource(src, "sm_90", "select").isOk());
  }
  ir::PointwiseProgram cmp;
  cmp.numInputs = 2;
  cmp.instructions = {pwtest::instr(ir::PwOpcode::kElementWise, static_cast<int32_t>(ElementWiseOperation::kLESS),
                                    {pwtest::in(0), pwtest::in(1)})};
  EXPECT_TRUE(
      cuda::compilePointwiseSource(
          cuda::pwgen::generateSource(cmp, {DataType::kBF16, DataType::kBF16}, DataType::kBOOL), "sm_90", "less")
          .isOk());
  EXPECT_GT(compiled, 150);
}

TEST(CudaPointwiseFusedCodegen, SourceIsDeterministicAndKeyedByTypes) {
  auto p = pwtest::richProgram(DataType::kHALF);
  std::vector<DataType> f32(3, DataType::kFLOAT), f16(3, DataType::kHALF);
  EXPECT_EQ(cuda::pwgen::generateSource(p, f32, DataType::kFLOAT),
            cuda::pwgen::generateSource(p, f32, DataType::kFLOAT));
  EXPECT_NE(cuda::pwgen::generateSource(p, f32, DataType::kFLOAT),
            cuda::pwgen::generateSource(p, f16, DataType::kFLOAT));
}

TEST(CudaPointwiseFusedCodegen, NvrtcFailureCarriesTheLogAndTheLayer) {
  auto r = cuda::compilePointwiseSource("extern \"C\" __global__ void k() { undeclared_thing(); }", "sm_90",
                                        "layer 'PWN(a, b)'");
  ASSERT_FALSE(r.isOk());
  std::string const msg = r.status().toString();
  EXPECT_NE(msg.find("PWN(a, b)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("undeclared_thing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NVRTC"), std::string::npos) << msg;
}

NodeSpec richSpec(DataType t, DataType mid, std::vector<std::vector<int64_t>> const& shapes, uint32_t seed) {
  NodeSpec s{ir::OpType::kPointwiseFused, programAttrs(pwtest::richProgram(mid), t), {}};
  for (size_t k = 0; k < shapes.size(); ++k)
    s.inputs.push_back(var(randomTensor(t, shapes[k], seed + static_cast<uint32_t>(k), -2, 2)));
  return s;
}

double richTolerance(DataType t, DataType mid) {
  // A value computed in fp32 (here) or fp64 (the reference) may round to the neighbouring fp16/bf16 value at
  // the Cast inside the program.
  if (t == DataType::kFLOAT && mid != DataType::kFLOAT) return mid == DataType::kHALF ? 2e-3 : 1e-2;
  return -1;
}

TEST(CudaPointwiseFused, ContiguousInputsEveryFloatType) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 1;
  for (DataType t : kFloatTypes)
    for (DataType mid : kFloatTypes)
      for (auto const& shape : std::vector<std::vector<int64_t>>{{2, 3, 37}, {8}, {1 << 20}, {5}, {0, 4}}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " mid ", dataTypeName(mid), " ", shape.size()));
        expectMatchesReference(richSpec(t, mid, {shape, shape, shape}, seed += 3), richTolerance(t, mid));
      }
}

TEST(CudaPointwiseFused, OneElementInputsTakeTheVectorPath) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 100;
  for (DataType t : kFloatTypes) {
    expectMatchesReference(richSpec(t, DataType::kFLOAT, {{4, 33}, {1}, {}}, seed += 3));
    expectMatchesReference(richSpec(t, DataType::kFLOAT, {{1, 1}, {4, 64}, {4, 64}}, seed += 3));
  }
}

TEST(CudaPointwiseFused, GeneralBroadcastEveryFloatType) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 200;
  for (DataType t : kFloatTypes) {
    expectMatchesReference(richSpec(t, DataType::kFLOAT, {{2, 3, 37}, {3, 1}, {2, 1, 37}}, seed += 3));
    expectMatchesReference(richSpec(t, DataType::kFLOAT, {{1, 7, 1, 5}, {3, 1, 4, 1}, {5}}, seed += 3));
    expectMatchesReference(
        richSpec(t, DataType::kFLOAT, {{2, 1, 3, 1, 2, 1, 3, 2}, {1, 2, 1, 3, 1, 2, 1, 1}, {2}}, seed += 3));
  }
}

TEST(CudaPointwiseFused, ChannelsLastWithFullAndOneElementInputs) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 250;
  for (DataType t : kFloatTypes) {
    NodeSpec s = richSpec(t, DataType::kFLOAT, {{2, 16, 5, 7}, {2, 16, 5, 7}, {1}}, seed += 3);
    s.hwc = true;
    expectMatchesReference(s);
  }
}

TEST(CudaPointwiseFused, EveryOperationMatchesTheReference) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 300;
  for (auto const& np : pwtest::perOperationPrograms())
    for (DataType t : kFloatTypes) {
      SCOPED_TRACE(np.name + " " + dataTypeName(t));
      NodeSpec s{ir::OpType::kPointwiseFused,
                 programAttrs(np.program, t),
                 {var(randomTensor(t, {3, 41}, seed, -2, 2)), var(randomTensor(t, {41}, seed + 1, -2, 2))}};
      seed += 2;
      expectMatchesReference(s);
    }
}

TEST(CudaPointwiseFused, BoolAndMixedStorage) {
  KILN_REQUIRE_GPU();
  ir::PointwiseProgram sel;
  sel.numInputs = 3;
  sel.instructions = {pwtest::instr(ir::PwOpcode::kSelect, 0, {pwtest::in(0), pwtest::in(1), pwtest::in(2)}),
                      pwtest::instr(ir::PwOpcode::kCast, static_cast<int32_t>(DataType::kHALF), {pwtest::tmp(0)})};
  for (DataType out : kFloatTypes) {
    NodeSpec s{ir::OpType::kPointwiseFused,
               programAttrs(sel, out),
               {var(randomTensor(DataType::kBOOL, {6, 20}, 1)), var(randomTensor(DataType::kHALF, {6, 20}, 2)),
                var(randomTensor(DataType::kFLOAT, {20}, 3))}};
    expectMatchesReference(s);
  }
  ir::PointwiseProgram cmp;
  cmp.numInputs = 2;
  cmp.instructions = {pwtest::instr(ir::PwOpcode::kElementWise, static_cast<int32_t>(ElementWiseOperation::kLESS),
                                    {pwtest::in(0), pwtest::in(1)})};
  NodeSpec s{ir::OpType::kPointwiseFused,
             programAttrs(cmp, DataType::kBOOL),
             {var(randomTensor(DataType::kBF16, {5, 67}, 4)), var(randomTensor(DataType::kBF16, {5, 67}, 5))}};
  expectMatchesReference(s);
}

// The kernel enqueued inside a CUDA graph capture (no compile, load or allocation there), replayed twice.
TEST(CudaPointwiseFused, RunsUnderGraphCaptureAndCompilesEachSourceOnce) {
  KILN_REQUIRE_GPU();
  for (bool broadcast : {false, true}) {
    SCOPED_TRACE(broadcast ? "broadcast" : "contiguous");
    DataType const t = DataType::kHALF;
    std::vector<std::vector<int64_t>> shapes = {
        {4, 256}, broadcast ? std::vector<int64_t>{4, 1} : std::vector<int64_t>{4, 256}, {}};
    ir::Graph g;
    std::vector<HostTensor> hosts;
    std::vector<ir::Value*> vals;
    for (size_t k = 0; k < shapes.size(); ++k) {
      hosts.push_back(randomTensor(t, shapes[k], 10 + static_cast<uint32_t>(k), -2, 2));
      vals.push_back(*g.addInput(strCat("x", k), t, hosts.back().shape()));
    }
    ir::Node* n = g.addNode(ir::OpType::kPointwiseFused, "PWN(a, b, c)", vals);
    n->attrs = programAttrs(pwtest::richProgram(DataType::kFLOAT), t);
    g.markOutput(n->outputs[0]);
    ir::HostEvaluator eval = backends::referenceEvaluator();
    ASSERT_TRUE(ir::inferGraphInPlace(g, &eval).isOk());
    std::vector<HostTensor const*> ptrs;
    for (auto const& h : hosts) ptrs.push_back(&h);
    auto ref = backends::evaluateOnHostDynamic(*n, ptrs, {{t, n->outputs[0]->shape}});
    ASSERT_TRUE(ref.isOk()) << ref.status().toString();
    backends::Tactic const* tactic = backends::TacticRegistry::instance().find("pointwisefused_cuda_nvrtc");
    ASSERT_NE(tactic, nullptr);
    auto k1 = tactic->create(*n);
    ASSERT_TRUE(k1.isOk()) << k1.status().toString();
    int64_t const compiled = cuda::pointwiseModulesCompiled();
    auto k2 = tactic->create(*n);  // a second layer with the same chain: the cached module
    ASSERT_TRUE(k2.isOk());
    EXPECT_EQ(cuda::pointwiseModulesCompiled(), compiled);

    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    std::vector<void*> dev(hosts.size(), nullptr);
    for (size_t k = 0; k < hosts.size(); ++k) {
      ASSERT_EQ(cudaMalloc(&dev[k], std::max<size_t>(hosts[k].bytes(), 1)), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dev[k], hosts[k].data(), hosts[k].bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    HostTensor const& r = (*ref)[0];
    void* dy = nullptr;
    ASSERT_EQ(cudaMalloc(&dy, r.bytes()), cudaSuccess);
    ASSERT_EQ(cudaMemset(dy, 0xff, r.bytes()), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    backends::DeviceStream ds(device(), stream);
    backends::LaunchContext ctx;
    ctx.stream = &ds;
    for (size_t k = 0; k < hosts.size(); ++k) ctx.inputs.push_back({dev[k], t, hosts[k].shape()});
    ctx.outputs = {{dy, t, r.shape()}};
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    Status s = (*k2)->enqueue(ctx);
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int rep = 0; rep < 2; ++rep) ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    HostTensor got = *HostTensor::allocate(t, r.shape(), "test download");
    ASSERT_EQ(cudaMemcpy(got.mutableData(), dy, r.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_LE(normRelativeError(got, r), defaultTolerance(t));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    for (void* p : dev) cudaFree(p);
    cudaFree(dy);
    cudaStreamDestroy(stream);
  }
}

}  // namespace
}  // namespace kiln::cudatest
