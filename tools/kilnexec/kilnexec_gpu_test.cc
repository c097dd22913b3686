// gpu: the kilnexec binary on the CUDA backend: the default backend, device buffers with H2D/D2H timed by
// CUDA events, --check against the CPU reference, --useCudaGraph, --noDataTransfers, --infStreams, --device,
// --timingCacheFile, the profiler exports, a GPU plan saved and loaded, a data-dependent output (NonZero)
// through a device IOutputAllocator. Every case skips where no CUDA device is usable.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
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
  bool has(char const* s) const { return out.find(s) != std::string::npos || err.find(s) != std::string::npos; }
};

std::string slurp(fs::path const& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr char const* kQuick = " --duration=0 --iterations=4 --warmUp=0";

class KilnexecGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!device::usable(why)) GTEST_SKIP() << "no usable CUDA device: " << why;
    dir_ = fs::temp_directory_path() / ("kilnexec_gpu_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string path(char const* name) const { return (dir_ / name).string(); }
  Result run(std::string const& args) const {
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
  fs::path dir_;
};

// The mean of a summary line ("[I] H2D Latency: min = ..., mean = X ms, ...").
double meanOf(std::string const& out, char const* line) {
  auto p = out.find(line);
  if (p == std::string::npos) return -1;
  p = out.find("mean = ", p);
  return p == std::string::npos ? -1 : std::atof(out.c_str() + p + 7);
}

TEST_F(KilnexecGpu, DefaultsToCudaAndTimesTransfers) {
  Result r = run(std::string("--exportTimes=times.json") + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(r.has("Backend: cuda")) << r.out;
  EXPECT_TRUE(r.has("&&&& PASSED")) << r.out;
  EXPECT_GT(meanOf(r.out, "H2D Latency:"), 0.0) << r.out;
  EXPECT_GT(meanOf(r.out, "D2H Latency:"), 0.0) << r.out;
  EXPECT_GT(meanOf(r.out, "GPU Compute Time:"), 0.0) << r.out;
  auto j = nlohmann::json::parse(slurp(path("times.json")));
  ASSERT_GE(j.size(), 4u);
  for (auto const& t : j) {
    double const sum = t["h2dMs"].get<double>() + t["computeMs"].get<double>() + t["d2hMs"].get<double>();
    EXPECT_NEAR(t["latencyMs"].get<double>(), sum, 1e-3) << t.dump();
    EXPECT_LE(t["startH2dMs"].get<double>(), t["startComputeMs"].get<double>());
    EXPECT_LE(t["endComputeMs"].get<double>(), t["endD2hMs"].get<double>());
  }
}

TEST_F(KilnexecGpu, CheckAgainstTheReference) {
  for (char const* flags : {"--backend=cuda", "--backend=cuda --useCudaGraph", "--backend=cuda --noDataTransfers",
                            "--backend=cuda --infStreams=3", "--backend=cuda --device=0",
                            "--backend=cuda --useCudaGraph --infStreams=2 --noDataTransfers"}) {
    // TF32 is on by default (as in TensorRT): loose tolerances; a wiring mistake gives garbage, not 1e-2.
    Result r = run(std::string(flags) + " --check --atol=2e-2 --rtol=2e-2" + kQuick);
    EXPECT_EQ(r.code, 0) << flags << "\n" << r.out << r.err;
    EXPECT_TRUE(r.has("--check: PASSED")) << flags << "\n" << r.out << r.err;
    // The GPU flags are acted on: no note says otherwise.
    EXPECT_FALSE(r.has("does nothing")) << flags << "\n" << r.err;
    EXPECT_FALSE(r.has("capture failed")) << flags << "\n" << r.err;
  }
}

TEST_F(KilnexecGpu, CudaGraphIsUsed) {
  Result r = run(std::string("--backend=cuda --useCudaGraph") + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(r.has("CUDA graph")) << r.out;
  EXPECT_FALSE(r.has("capture failed")) << r.err;
}

TEST_F(KilnexecGpu, NoDataTransfersLeavesOutTheCopies) {
  Result r = run(std::string("--backend=cuda --noDataTransfers --exportTimes=t.json") + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (auto const& t : nlohmann::json::parse(slurp(path("t.json")))) {
    EXPECT_LT(t["h2dMs"].get<double>(), 0.05) << t.dump();  // two events back to back
    EXPECT_LT(t["d2hMs"].get<double>(), 0.05) << t.dump();
  }
}

TEST_F(KilnexecGpu, InfStreamsRunsEveryStream) {
  Result r = run("--backend=cuda --infStreams=3 --duration=0 --iterations=5 --warmUp=0 --exportTimes=t.json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(slurp(path("t.json")));
  EXPECT_GE(j.size(), 5u);
  EXPECT_EQ(j.size() % 3, 0u) << "every round runs one inference per stream";
}

TEST_F(KilnexecGpu, BadDeviceFails) {
  Result r = run(std::string("--backend=cuda --device=1023") + kQuick);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(r.has("--device=1023")) << r.err;
}

TEST_F(KilnexecGpu, TimingCacheIsWrittenAndRead) {
  Result first = run(std::string("--backend=cuda --timingCacheFile=t.cache --saveEngine=a.plan") + kQuick);
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  ASSERT_TRUE(fs::exists(path("t.cache")));
  EXPECT_GT(fs::file_size(path("t.cache")), 16u);
  EXPECT_TRUE(first.has("Wrote the timing cache")) << first.out;
  Result second = run(std::string("--backend=cuda --timingCacheFile=t.cache --saveEngine=b.plan") + kQuick);
  ASSERT_EQ(second.code, 0) << second.out << second.err;
  EXPECT_TRUE(second.has("Loaded the timing cache")) << second.out;
  EXPECT_EQ(slurp(path("a.plan")), slurp(path("b.plan"))) << "the cache gives the same tactics";
  // A corrupt cache is refused with a warning and rebuilt.
  std::string bytes = slurp(path("t.cache"));
  bytes[bytes.size() / 2] ^= 1;
  std::string error;
  ASSERT_TRUE(writeFile(path("t.cache"), bytes.data(), bytes.size(), error));
  Result third = run(std::string("--backend=cuda --timingCacheFile=t.cache") + kQuick);
  EXPECT_EQ(third.code, 0) << third.out << third.err;
  EXPECT_TRUE(third.has("cannot be used")) << third.err;
}

TEST_F(KilnexecGpu, ProfileFromTheGpu) {
  for (char const* flags : {"", " --separateProfileRun", " --useCudaGraph"}) {
    Result r = run(std::string("--backend=cuda --dumpProfile --exportProfile=p.json") + flags + kQuick);
    ASSERT_EQ(r.code, 0) << flags << "\n" << r.out << r.err;
    auto j = nlohmann::json::parse(slurp(path("p.json")));
    ASSERT_GE(j.size(), 2u) << j.dump();
    double total = 0;
    for (size_t i = 1; i < j.size(); ++i) total += j[i]["timeMs"].get<double>();
    EXPECT_GT(total, 0.0) << flags << "\n" << j.dump();
  }
}

TEST_F(KilnexecGpu, SavedGpuPlanLoadsOnTheGpu) {
  Result save = run(std::string("--backend=cuda --saveEngine=g.plan --skipInference"));
  ASSERT_EQ(save.code, 0) << save.out << save.err;
  Result load = run(std::string("--loadEngine=g.plan --exportOutput=o.npz") + kQuick);
  ASSERT_EQ(load.code, 0) << load.out << load.err;
  EXPECT_TRUE(load.has("Backend: cuda")) << load.out;
  Result wrong = run(std::string("--loadEngine=g.plan --backend=cpu") + kQuick);
  EXPECT_EQ(wrong.code, 1) << wrong.out << wrong.err;
  EXPECT_TRUE(wrong.has("built for")) << wrong.err;
}

TEST_F(KilnexecGpu, DataDependentOutputThroughDeviceAllocator) {
#ifdef KILNEXEC_HAVE_ONNX
  // y = NonZero(x > 0): its shape is known only after the run.
  kiln::onnx::test::ModelBuilder m(17);
  m.input("x", {2, 3}).output("y", {2, -1}, 7);
  m.initF("zero", {}, {0.0F});
  m.node("Greater", {"x", "zero"}, {"g"}, "greater");
  m.node("NonZero", {"g"}, {"y"}, "nonzero");
  std::string const bytes = m.bytes();
  std::string error;
  ASSERT_TRUE(writeFile(path("nz.onnx"), bytes.data(), bytes.size(), error));
  // x = [[1, -1, 2], [-3, 4, 0]]: positive at (0,0), (0,2), (1,1).
  Tensor x{"x", kiln::DataType::kFLOAT, {2, 3}, {}};
  std::vector<float> const xv = {1, -1, 2, -3, 4, 0};
  x.bytes.assign(reinterpret_cast<uint8_t const*>(xv.data()), reinterpret_cast<uint8_t const*>(xv.data() + 6));
  std::vector<uint8_t> const npy = writeNpy(x);
  ASSERT_TRUE(writeFile(path("x.npy"), npy.data(), npy.size(), error)) << error;
  Result r =
      run(std::string("--onnx=nz.onnx --backend=cuda --loadInputs=x:x.npy --exportOutput=y.json --check") + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(slurp(path("y.json")));
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["dimensions"], "2x3");
  std::vector<double> const expected = {0, 0, 1, 0, 2, 1};  // row indices, then column indices
  ASSERT_EQ(j[0]["values"].size(), expected.size()) << j.dump();
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(j[0]["values"][i].get<double>(), expected[i]) << i;
#else
  GTEST_SKIP() << "this build has no ONNX parser";
#endif
}

}  // namespace
}  // namespace kilnexec
