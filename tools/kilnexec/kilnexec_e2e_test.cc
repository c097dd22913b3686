// End-to-end tests of the kilnexec binary: every flag of the issue on the built-in network or on a small ONNX
// model the test writes (y = relu(x W + b), p = softmax(y), dynamic batch), with outputs checked against a
// forward pass computed here, exit codes (0 ok, 1 failure, 2 usage) and the notes for flags this build cannot
// act on.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "device.h"
#include "tensor_io.h"
#ifdef KILNEXEC_HAVE_ONNX
#include "parsers/onnx/onnx_test_util.h"
#endif

namespace kilnexec {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(fs::path const& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Short runs everywhere: CI time matters more than stable numbers here.
constexpr char const* kQuick = " --duration=0 --iterations=3 --warmUp=0";

// The model's weights: W [4, 3], b [3].
std::vector<float> const kW = {0.5F, -1.0F, 0.25F, 1.5F, 0.75F, -0.5F, -2.0F, 1.0F, 0.125F, 0.0F, -0.25F, 2.0F};
std::vector<float> const kB = {0.1F, -0.2F, 0.3F};

class Kilnexec : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kilnexec_e2e_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(char const* name) const { return (dir_ / name).string(); }

  // Runs the binary. These tests check the CPU backends' numbers (to 1e-5) and plans (target cpu), so unless
  // `pinCpu` is false or the flags choose a backend or a plan, they pin --backend=cpu: on a machine with a GPU
  // the default would be cuda (kilnexec_gpu_test.cc covers that).
  Result run(std::string args, bool pinCpu = true) const {
    if (pinCpu && args.find("--backend") == std::string::npos && args.find("--loadEngine") == std::string::npos)
      args = "--backend=cpu " + args;
    fs::path const out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    std::string const cmd = "cd '" + dir_.string() + "' && '" KILNEXEC_BINARY "' " + args + " > '" + out.string() +
                            "' 2> '" + err.string() + "' < /dev/null";
    int const status = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  // Writes the ONNX model; false (the test then skips) when this build has no ONNX parser.
  bool writeModel() {
#ifdef KILNEXEC_HAVE_ONNX
    kiln::onnx::test::ModelBuilder m(17);
    m.input("x", {-1, 4}).output("y", {-1, 3}).output("p", {-1, 3});
    m.initF("W", {4, 3}, kW).initF("b", {3}, kB);
    m.node("MatMul", {"x", "W"}, {"xw"}, "matmul");
    m.node("Add", {"xw", "b"}, {"xwb"}, "bias");
    m.node("Relu", {"xwb"}, {"y"}, "relu");
    kiln::onnx::test::attr(m.node("Softmax", {"y"}, {"p"}, "softmax"), "axis", int64_t{1});
    std::string const bytes = m.bytes();
    std::string error;
    return writeFile(path("m.onnx"), bytes.data(), bytes.size(), error);
#else
    return false;
#endif
  }

  fs::path dir_;
};

#define REQUIRE_MODEL() \
  if (!writeModel()) GTEST_SKIP() << "this build has no ONNX parser"

// y = relu(x W + b) and p = softmax(y), in double, for x [n, 4].
void forward(std::vector<float> const& x, size_t n, std::vector<double>& y, std::vector<double>& p) {
  y.assign(n * 3, 0);
  p.assign(n * 3, 0);
  for (size_t r = 0; r < n; ++r) {
    double sum = 0;
    for (size_t c = 0; c < 3; ++c) {
      double acc = kB[c];
      for (size_t k = 0; k < 4; ++k) acc += double(x[r * 4 + k]) * kW[k * 3 + c];
      y[r * 3 + c] = std::max(acc, 0.0);
    }
    double const mx = std::max({y[r * 3], y[r * 3 + 1], y[r * 3 + 2]});
    for (size_t c = 0; c < 3; ++c) sum += std::exp(y[r * 3 + c] - mx);
    for (size_t c = 0; c < 3; ++c) p[r * 3 + c] = std::exp(y[r * 3 + c] - mx) / sum;
  }
}

TEST_F(Kilnexec, NoModelBuildsAndBenchmarksTheBuiltInNetwork) {
  Result r = run(std::string("--percentile=50,99") + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (char const* s : {"&&&& RUNNING Kiln kilnexec", "built-in network small_resnet", "Backend: cpu",
                        "Throughput: ", "Latency: min = ", "percentile(50%)", "percentile(99%)",
                        "Enqueue Time:", "H2D Latency:", "Compute Time:", "D2H Latency:", "Total Host Walltime:",
                        "Coefficient of variation", "&&&& PASSED Kiln kilnexec"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << "no progress bar when stdout is not a terminal";
}

TEST_F(Kilnexec, OnnxBuildSaveLoadRunAndExport) {
  REQUIRE_MODEL();
  Result b =
      run("--onnx=m.onnx --minShapes=x:1x4 --optShapes=x:2x4 --maxShapes=x:8x4 --saveEngine=m.plan "
          "--skipInference");
  ASSERT_EQ(b.code, 0) << b.out << b.err;
  EXPECT_NE(b.out.find("Saved plan to m.plan"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("Throughput"), std::string::npos) << "--skipInference runs nothing";
  ASSERT_TRUE(fs::exists(path("m.plan")));

  // Inputs from a .npy, 5 rows (inside the profile).
  std::vector<float> x(20);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7F * static_cast<float>(i)) * 2.0F;
  Tensor in{"x", kiln::DataType::kFLOAT, {5, 4}, std::vector<uint8_t>(80)};
  std::memcpy(in.bytes.data(), x.data(), 80);
  std::vector<uint8_t> const npy = writeNpy(in);
  std::string error;
  ASSERT_TRUE(writeFile(path("x.npy"), npy.data(), npy.size(), error));

  Result r =
      run(std::string("--loadEngine=m.plan --loadInputs=x:x.npy --exportOutput=out.json --exportTimes=times.json "
                      "--exportProfile=profile.json --exportLayerInfo=layers.json --dumpOutput --dumpProfile "
                      "--dumpLayerInfo --separateProfileRun") +
          kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Input 'x': 5x4 (loaded)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Output 'y' float32 5x3:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("=== Profile (3 runs) ==="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("=== Layer information ==="), std::string::npos) << r.out;

  std::vector<double> y, p;
  forward(x, 5, y, p);
  nlohmann::json out = nlohmann::json::parse(slurp(dir_ / "out.json"));
  ASSERT_EQ(out.size(), 2u);
  for (auto const& o : out) {
    std::vector<double> const& want = o["name"] == "y" ? y : p;
    EXPECT_EQ(o["dimensions"], "5x3");
    ASSERT_EQ(o["values"].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(o["values"][i].get<double>(), want[i], 1e-5) << o["name"] << i;
  }
  nlohmann::json times = nlohmann::json::parse(slurp(dir_ / "times.json"));
  EXPECT_EQ(times.size(), 3u);
  EXPECT_TRUE(times[0].contains("latencyMs"));
  nlohmann::json profile = nlohmann::json::parse(slurp(dir_ / "profile.json"));
  EXPECT_EQ(profile[0]["count"], 3);
  EXPECT_GE(profile.size(), 2u);
  nlohmann::json layers = nlohmann::json::parse(slurp(dir_ / "layers.json"));
  EXPECT_TRUE(layers.contains("Layers"));

  // Outputs as .npz read back, and raw input files.
  std::string const raw = path("x.raw");
  ASSERT_TRUE(writeFile(raw, x.data(), 80, error));
  Result r2 =
      run(std::string("--loadEngine=m.plan --shapes=x:5x4 --loadInputs=x:x.raw --exportOutput=out.npz") + kQuick);
  ASSERT_EQ(r2.code, 0) << r2.out << r2.err;
  std::vector<uint8_t> npz;
  ASSERT_TRUE(readFile(path("out.npz"), npz, error));
  std::vector<Tensor> arrays;
  ASSERT_TRUE(readNpz(npz, arrays, error)) << error;
  ASSERT_EQ(arrays.size(), 2u);
  std::vector<double> const got = toDoubles(arrays[0].name == "y" ? arrays[0] : arrays[1]);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(got[i], y[i], 1e-5);

  // Outside the profile: the run fails with exit 1.
  Result bad = run(std::string("--loadEngine=m.plan --shapes=x:9x4") + kQuick);
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("9x4"), std::string::npos) << bad.err;
}

TEST_F(Kilnexec, InspectReadsTheHeaderOnly) {
  REQUIRE_MODEL();
  ASSERT_EQ(run("--onnx=m.onnx --optShapes=x:2x4 --maxShapes=x:8x4 --fp16 --saveEngine=m.plan --skipInference").code,
            0);
  Result r = run("--inspect=m.plan");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (char const* s :
       {"Format: 1.", "target cpu", "Builder flags (precisions): FP16", "Plugins: none", "Input  x: float32 -1x4",
        "Profile 0 x: min 2x4, opt 2x4, max 8x4", "(verified)", "(not read)", "the weights were not loaded"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  std::string error;
  ASSERT_TRUE(writeFile(path("junk.plan"), "junk", 4, error));
  Result bad = run("--inspect=junk.plan");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("not a Kiln plan"), std::string::npos) << bad.err;
}

TEST_F(Kilnexec, CheckAgainstTheReference) {
  REQUIRE_MODEL();
  Result ok = run(std::string("--onnx=m.onnx --shapes=x:4x4 --check") + kQuick);
  ASSERT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("y: 12 elements, max abs"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("--check: PASSED"), std::string::npos) << ok.out;

  // FP16 against the fp32 reference with a tolerance fp16 cannot meet.
  Result fail = run(std::string("--onnx=m.onnx --shapes=x:4x4 --fp16 --check --atol=1e-9 --rtol=0") + kQuick);
  EXPECT_EQ(fail.code, 1) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("FAIL"), std::string::npos) << fail.out;
  EXPECT_NE(fail.err.find("--check: FAILED"), std::string::npos) << fail.err;
  Result loose = run(std::string("--onnx=m.onnx --shapes=x:4x4 --fp16 --check --atol=1e-2 --rtol=1e-2") + kQuick);
  EXPECT_EQ(loose.code, 0) << loose.out << loose.err;

  Result layers = run(std::string("--onnx=m.onnx --shapes=x:4x4 --fp16 --check-layers --atol=1e-9 --rtol=0") + kQuick);
  EXPECT_EQ(layers.code, 1) << layers.out << layers.err;
  EXPECT_NE(layers.err.find("the first layer that diverges is 'matmul/"), std::string::npos)
      << layers.out << layers.err;
  Result same = run(std::string("--onnx=m.onnx --shapes=x:4x4 --check-layers") + kQuick);
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("layer outputs match the reference"), std::string::npos) << same.out;
}

TEST_F(Kilnexec, HtmlReport) {
  Result r = run(std::string("--report=engine.html") + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::string const html = slurp(dir_ / "engine.html");
  EXPECT_NE(html.find("<svg id=\"graph\""), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"profile\""), std::string::npos);
  EXPECT_NE(html.find("small_resnet"), std::string::npos);
}

TEST_F(Kilnexec, BuildFlags) {
  REQUIRE_MODEL();
  auto layersOf = [](std::string const& out) {
    auto p = out.find(": ", out.find("Engine loaded in"));
    return std::atoi(out.c_str() + p + 2);
  };
  Result fused = run(std::string("--onnx=m.onnx --shapes=x:2x4 --builderOptimizationLevel=3") + kQuick);
  Result plain = run(std::string("--onnx=m.onnx --shapes=x:2x4 --builderOptimizationLevel=0") + kQuick);
  ASSERT_EQ(fused.code, 0) << fused.err;
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_LT(layersOf(fused.out), layersOf(plain.out)) << "level 3 fuses the bias and the ReLU into the MatMul";
  for (char const* flags :
       {"--bf16", "--stronglyTyped", "--best", "--memPoolSize=workspace:16M",
        "--profilingVerbosity=none --dumpLayerInfo", "--backend=reference --threads=2", "--verbose --avgRuns=1"}) {
    Result r = run(std::string("--onnx=m.onnx --shapes=x:2x4 ") + flags + kQuick);
    EXPECT_EQ(r.code, 0) << flags << "\n" << r.out << r.err;
  }
  Result verbose = run(std::string("--onnx=m.onnx --shapes=x:2x4 --verbose --avgRuns=1") + kQuick);
  EXPECT_NE(verbose.out.find("Average on 1 runs"), std::string::npos) << verbose.out;
  Result dynamicDefault = run(std::string("--onnx=m.onnx") + kQuick);  // trtexec: dynamic dims default to 1
  EXPECT_EQ(dynamicDefault.code, 0) << dynamicDefault.err;
  EXPECT_NE(dynamicDefault.err.find("dynamic input 'x'"), std::string::npos) << dynamicDefault.err;
}

// --tacticSources edits what the builder may time: without oneDNN the CPU build takes the reference kernels;
// without any CPU source it fails naming a layer; the reference backend says it ignores the flag.
TEST_F(Kilnexec, TacticSources) {
  Result all = run(std::string("--backend=cpu --dumpLayerInfo") + kQuick);
  ASSERT_EQ(all.code, 0) << all.out << all.err;
  EXPECT_NE(all.out.find("tactic=convolution_onednn"), std::string::npos) << all.out;
  Result noOnednn = run(std::string("--backend=cpu --tacticSources=-onednn --dumpLayerInfo") + kQuick);
  ASSERT_EQ(noOnednn.code, 0) << noOnednn.out << noOnednn.err;
  EXPECT_EQ(noOnednn.out.find("_onednn"), std::string::npos) << noOnednn.out;  // no oneDNN tactic
  EXPECT_NE(noOnednn.out.find("tactic=convolution_reference"), std::string::npos) << noOnednn.out;
  Result none = run(std::string("--backend=cpu --tacticSources=-ONEDNN,-REFERENCE,-KILN") + kQuick);
  EXPECT_EQ(none.code, 1) << none.out << none.err;
  EXPECT_NE(none.err.find("from the allowed tactic sources"), std::string::npos) << none.err;
  Result reference = run(std::string("--backend=reference --tacticSources=-REFERENCE") + kQuick);
  EXPECT_EQ(reference.code, 0) << reference.out << reference.err;
  EXPECT_NE(reference.err.find("--tacticSources: the reference backend"), std::string::npos) << reference.err;
}

TEST_F(Kilnexec, DefaultBackendIsCudaOnlyWhereCudaCanRun) {
  Result r = run(std::string("--percentile=50") + kQuick, /*pinCpu=*/false);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::string why;
  bool const gpu = device::usable(why);
  EXPECT_NE(r.out.find(gpu ? "Backend: cuda" : "Backend: cpu"), std::string::npos) << why << "\n" << r.out;
  EXPECT_EQ(r.err.find("does nothing"), std::string::npos) << r.err;
}

TEST_F(Kilnexec, GpuFlagsOnTheCpuBackendSaySo) {
  Result r = run(std::string("--backend=cpu --useCudaGraph --noDataTransfers --infStreams=2 --device=0 "
                             "--timingCacheFile=t.cache --int8") +
                 kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (char const* s : {"--useCudaGraph: the cpu backend runs on the host, so this flag does nothing there",
                        "--noDataTransfers: the cpu backend", "--infStreams=2: the cpu backend",
                        "--device=0: the cpu backend", "--timingCacheFile=t.cache: the cpu backend", "--int8: INT8"})
    EXPECT_NE(r.err.find(s), std::string::npos) << s << "\n" << r.err;
  EXPECT_FALSE(fs::exists(path("t.cache")));
}

TEST_F(Kilnexec, PluginLibraryThatCannotBeLoadedExitsOneNamingIt) {
  for (char const* flag : {"--staticPlugins", "--dynamicPlugins"}) {
    Result r = run(std::string("--backend=cpu ") + flag + "=" + path("no_such_plugins.so") + kQuick);
    EXPECT_EQ(r.code, 1) << flag << r.out << r.err;
    EXPECT_NE(r.err.find(std::string(flag) + "=" + path("no_such_plugins.so")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("cannot"), std::string::npos) << r.err;
  }
}

TEST_F(Kilnexec, ExitCodes) {
  Result help = run("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--loadInputs"), std::string::npos);
  Result unknown = run("--noSuchFlag");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("unknown flag --noSuchFlag"), std::string::npos) << unknown.err;
  Result contradictory = run("--onnx=a.onnx --loadEngine=a.plan");
  EXPECT_EQ(contradictory.code, 2);
  EXPECT_NE(contradictory.err.find("--onnx and --loadEngine"), std::string::npos) << contradictory.err;
  std::string why;
  if (!device::usable(why)) {
    // Without a usable GPU, --backend=cuda fails and says why: no CUDA in this build, or Kiln's CUDA backend
    // cannot run here (the build's message).
    Result cuda = run(std::string("--backend=cuda") + kQuick);
    EXPECT_EQ(cuda.code, 1) << cuda.out << cuda.err;
    EXPECT_TRUE(cuda.err.find(device::compiledIn() ? "the CUDA backend" : "no CUDA support") != std::string::npos)
        << cuda.err;
  }
  Result missing = run("--onnx=missing.onnx");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("missing.onnx"), std::string::npos) << missing.err;
  std::string error;
  ASSERT_TRUE(writeFile(path("bad.plan"), "KILNPLAN garbage", 16, error));
  Result badPlan = run("--loadEngine=bad.plan");
  EXPECT_EQ(badPlan.code, 1);
  EXPECT_NE(badPlan.err.find("does not load"), std::string::npos) << badPlan.err;
  EXPECT_NE(badPlan.out.find("&&&& FAILED"), std::string::npos) << badPlan.out;
}

}  // namespace
}  // namespace kilnexec
