// Tests of kilnexec's performance summary and JSON exports: trtexec's keys, numbers from the timings given.
#include "report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>

namespace kilnexec {
namespace {

BenchmarkResult fakeBenchmark() {
  BenchmarkResult r;
  double t = 0;
  for (double ms : {2.0, 4.0, 6.0, 8.0}) {  // 4 inferences of 2..8 ms, 1 ms apart
    InferenceTime x;
    x.enqStart = x.h2dStart = x.h2dEnd = x.computeStart = t;
    x.enqEnd = x.computeEnd = x.d2hStart = x.d2hEnd = t + ms;
    r.times.push_back(x);
    t += ms + 1;
  }
  r.walltimeMs = r.times.back().d2hEnd - r.times.front().h2dStart;  // 2+1+4+1+6+1+8 = 23
  r.profiler.reportLayerTime("conv", 3.0F);
  r.profiler.reportLayerTime("relu", 1.0F);
  r.profiler.reportLayerTime("conv", 5.0F);
  r.profiler.reportLayerTime("relu", 1.0F);
  return r;
}

TEST(Report, PerformanceSummary) {
  PerformanceSummary s = summarize(fakeBenchmark(), {50});
  EXPECT_EQ(s.inferences, 4u);
  EXPECT_DOUBLE_EQ(s.walltimeS, 0.023);
  EXPECT_DOUBLE_EQ(s.throughputQps, 4 / 0.023);
  EXPECT_DOUBLE_EQ(s.latency.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.compute.median, 5.0);
  EXPECT_DOUBLE_EQ(s.totalComputeMs, 20.0);
  EXPECT_EQ(s.h2d.max, 0);
  std::string const text = formatPerformanceSummary(s);
  for (char const* key :
       {"Throughput: 173.91 qps", "Latency: min = 2 ms", "Enqueue Time:", "H2D Latency:", "Compute Time:",
        "D2H Latency:", "Total Host Walltime: 0.023 s", "Total Compute Time: 0.02 s", "Coefficient of variation"})
    EXPECT_NE(text.find(key), std::string::npos) << key << "\n" << text;
}

TEST(Report, ProfileTablesAndJson) {
  BenchmarkResult r = fakeBenchmark();
  std::vector<LayerTime> t = layerTimes(r.profiler);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "conv");
  EXPECT_DOUBLE_EQ(t[0].totalMs, 8);
  EXPECT_DOUBLE_EQ(t[0].averageMs, 4);
  EXPECT_DOUBLE_EQ(t[0].medianMs, 4);
  EXPECT_DOUBLE_EQ(t[0].percent, 80);
  nlohmann::json j = nlohmann::json::parse(profileJson(r.profiler));
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["count"], 2);
  EXPECT_EQ(j[1]["name"], "conv");
  EXPECT_DOUBLE_EQ(j[2]["timeMs"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j[2]["percentage"].get<double>(), 20.0);
  EXPECT_NE(formatProfileTable(r.profiler).find("conv"), std::string::npos);

  nlohmann::json times = nlohmann::json::parse(timesJson(r));
  ASSERT_EQ(times.size(), 4u);
  EXPECT_DOUBLE_EQ(times[1]["startEnqMs"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(times[1]["latencyMs"].get<double>(), 4.0);
  for (char const* key : {"endEnqMs", "startH2dMs", "endH2dMs", "startComputeMs", "endComputeMs", "startD2hMs",
                          "endD2hMs", "h2dMs", "computeMs", "d2hMs"})
    EXPECT_TRUE(times[0].contains(key)) << key;
}

TEST(Report, OutputsJsonAndFiles) {
  Tensor a{"probs", kiln::DataType::kFLOAT, {1, 2}, std::vector<uint8_t>(8)};
  float const v[2] = {0.25F, -1.0F};
  std::memcpy(a.bytes.data(), v, 8);
  Tensor b{"idx", kiln::DataType::kINT64, {1}, {7, 0, 0, 0, 0, 0, 0, 0}};
  nlohmann::json j = nlohmann::json::parse(outputsJson({a, b}));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "probs");
  EXPECT_EQ(j[0]["dimensions"], "1x2");
  EXPECT_EQ(j[0]["values"], nlohmann::json::parse("[0.25, -1.0]"));
  EXPECT_EQ(j[1]["values"][0], 7);
  std::string const dump = formatOutputs({a, b}, 1);
  EXPECT_NE(dump.find("Output 'probs' float32 1x2: 0.25 ... (1 more)"), std::string::npos) << dump;

  std::string error;
  EXPECT_FALSE(exportOutputs("/nonexistent-dir/out.json", {a}, error));
  EXPECT_FALSE(exportOutputs("two.npy", {a, b}, error));
  EXPECT_NE(error.find("one array"), std::string::npos) << error;
}

}  // namespace
}  // namespace kilnexec
