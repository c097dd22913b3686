// Tests of kilnexec's command line: trtexec's defaults and value syntax, every flag accepted, unknown and
// contradictory flags refused with a message, and the notes for flags this build cannot act on.
#include "options.h"

#include <gtest/gtest.h>

namespace kilnexec {
namespace {

ParseResult parse(std::vector<std::string> args) { return parseCommandLine(args); }

TEST(Options, TrtexecDefaults) {
  ParseResult r = parse({});
  ASSERT_TRUE(r.ok);
  Options const& o = r.options;
  EXPECT_EQ(o.iterations, 10);
  EXPECT_EQ(o.durationS, 3.0);
  EXPECT_EQ(o.warmUpMs, 200.0);
  EXPECT_EQ(o.avgRuns, 10);
  EXPECT_EQ(o.percentiles, (std::vector<double>{90, 95, 99}));
  EXPECT_EQ(o.builderOptimizationLevel, 3);
  EXPECT_EQ(o.infStreams, 1);
  EXPECT_EQ(o.backend, Backend::kCpu);
  EXPECT_FALSE(o.backendGiven);
  EXPECT_TRUE(o.onnx.empty());
}

TEST(Options, EveryFlagIsAccepted) {
  ParseResult r = parse({"--onnx=m.onnx",
                         "--saveEngine=m.plan",
                         "--fp16",
                         "--bf16",
                         "--int8",
                         "--best",
                         "--minShapes=x:1x3",
                         "--optShapes=x:2x3",
                         "--maxShapes=x:4x3",
                         "--shapes=x:2x3",
                         "--memPoolSize=workspace:64M,dlaSRAM:1G,tacticSharedMem:512K",
                         "--builderOptimizationLevel=5",
                         "--timingCacheFile=t.cache",
                         "--staticPlugins=a.so,b.so",
                         "--dynamicPlugins=c.so",
                         "--iterations=7",
                         "--duration=0.5",
                         "--warmUp=12.5",
                         "--avgRuns=3",
                         "--percentile=50,99.9",
                         "--useCudaGraph",
                         "--noDataTransfers",
                         "--infStreams=2",
                         "--separateProfileRun",
                         "--dumpProfile",
                         "--exportProfile=p.json",
                         "--exportTimes=t.json",
                         "--dumpLayerInfo",
                         "--exportLayerInfo=l.json",
                         "--profilingVerbosity=detailed",
                         "--loadInputs=x:in.npy",
                         "--dumpOutput",
                         "--exportOutput=o.json",
                         "--verbose",
                         "--device=1",
                         "--backend=reference",
                         "--threads=3",
                         "--check",
                         "--check-layers",
                         "--atol=1e-3",
                         "--rtol=0.01",
                         "--report=r.html",
                         "--tacticSources=-CUDNN,+kiln,-cublas_lt"});
  ASSERT_TRUE(r.ok) << r.error;
  Options const& o = r.options;
  EXPECT_EQ(o.onnx, "m.onnx");
  EXPECT_TRUE(o.fp16 && o.bf16 && o.int8 && o.best);
  ASSERT_EQ(o.optShapes.size(), 1u);
  EXPECT_EQ(o.optShapes[0].dims, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(o.memPoolSizes.size(), 3u);
  EXPECT_EQ(o.memPoolSizes[0].second, 64ll << 20);
  EXPECT_EQ(o.memPoolSizes[1].second, 1ll << 30);
  EXPECT_EQ(o.memPoolSizes[2].second, 512ll << 10);
  EXPECT_EQ(o.staticPlugins, (std::vector<std::string>{"a.so", "b.so"}));
  EXPECT_EQ(o.iterations, 7);
  EXPECT_EQ(o.durationS, 0.5);
  EXPECT_EQ(o.warmUpMs, 12.5);
  EXPECT_EQ(o.percentiles, (std::vector<double>{50, 99.9}));
  EXPECT_EQ(o.infStreams, 2);
  EXPECT_EQ(o.device, 1);
  EXPECT_TRUE(o.deviceGiven);
  EXPECT_EQ(o.backend, Backend::kReference);
  EXPECT_EQ(o.threads, 3);
  EXPECT_TRUE(o.check && o.checkLayers);
  EXPECT_EQ(o.atol, 1e-3);
  ASSERT_EQ(o.loadInputs.size(), 1u);
  EXPECT_EQ(o.loadInputs[0], (std::pair<std::string, std::string>{"x", "in.npy"}));
  EXPECT_EQ(o.report, "r.html");
  EXPECT_EQ(o.profilingVerbosity, "detailed");
  // trtexec's +/- syntax, names in any case, in order: kCUDNN = 2, kKILN = 5, kCUBLAS_LT = 1.
  EXPECT_EQ(o.tacticSources, (std::vector<std::pair<bool, int32_t>>{{false, 2}, {true, 5}, {false, 1}}));
}

TEST(Options, ValueSyntax) {
  ParseResult r = parse({"--shapes='input:0':1x3x224x224,mask:1x128", "--loadInputs=input:0:a.raw,all.npz",
                         "--memPoolSize=workspace:100"});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.options.shapes.size(), 2u);
  EXPECT_EQ(r.options.shapes[0].name, "input:0");
  EXPECT_EQ(r.options.shapes[0].dims, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(r.options.loadInputs[0], (std::pair<std::string, std::string>{"input:0", "a.raw"}));
  EXPECT_EQ(r.options.loadInputs[1], (std::pair<std::string, std::string>{"", "all.npz"}));
  EXPECT_EQ(r.options.memPoolSizes[0].second, 100ll << 20);  // no suffix: MiB, as trtexec
  EXPECT_TRUE(parse({"--backend=cuda"}).ok);
  EXPECT_TRUE(parse({"--checkLayers"}).options.check);
  EXPECT_TRUE(parse({"-h"}).options.help);
}

void expectUsageError(std::vector<std::string> args, std::string const& mentions) {
  ParseResult r = parse(args);
  EXPECT_FALSE(r.ok) << args[0];
  EXPECT_NE(r.error.find(mentions), std::string::npos) << r.error;
}

TEST(Options, RefusesUnknownAndMalformedFlags) {
  expectUsageError({"--frobnicate"}, "unknown flag --frobnicate");
  expectUsageError({"--fp16=1"}, "--fp16 takes no value");
  expectUsageError({"--iterations"}, "--iterations needs a value");
  expectUsageError({"--iterations=0"}, "--iterations");
  expectUsageError({"--iterations=ten"}, "--iterations");
  expectUsageError({"--duration=-1"}, "--duration");
  expectUsageError({"--percentile=101"}, "--percentile");
  expectUsageError({"--builderOptimizationLevel=6"}, "--builderOptimizationLevel");
  expectUsageError({"--shapes=x:1xa"}, "--shapes");
  expectUsageError({"--shapes=1x3"}, "--shapes");
  expectUsageError({"--shapes=x:1,x:2"}, "given twice");
  expectUsageError({"--memPoolSize=heap:1G"}, "--memPoolSize");
  expectUsageError({"--memPoolSize=workspace:lots"}, "--memPoolSize");
  expectUsageError({"--backend=tpu"}, "--backend");
  expectUsageError({"--profilingVerbosity=all"}, "--profilingVerbosity");
  expectUsageError({"--loadInputs=in.npy"}, "--loadInputs");
  expectUsageError({"model.onnx"}, "unexpected argument");
  expectUsageError({"--threads=0"}, "--threads");
  expectUsageError({"--tacticSources=CUDNN"}, "expected +NAME or -NAME");  // no sign
  expectUsageError({"--tacticSources=-CUDNN,+TPU"}, "got '+TPU'");
  expectUsageError({"--tacticSources=-CUDNN,"}, "got ''");
  expectUsageError({"--tacticSources=+"}, "--tacticSources");
}

TEST(Options, RefusesContradictions) {
  expectUsageError({"--onnx=a.onnx", "--loadEngine=a.plan"}, "--onnx and --loadEngine");
  expectUsageError({"--loadEngine=a.plan", "--fp16"}, "build flags");
  expectUsageError({"--loadEngine=a.plan", "--saveEngine=b.plan"}, "build flags");
  expectUsageError({"--loadEngine=a.plan", "--tacticSources=-CUDNN"}, "--tacticSources");
  expectUsageError({"--loadEngine=a.plan", "--check"}, "--check needs the network");
  expectUsageError({"--stronglyTyped", "--fp16"}, "--stronglyTyped");
  expectUsageError({"--skipInference", "--check"}, "--skipInference");
  expectUsageError({"--skipInference", "--exportTimes=t.json"}, "--exportTimes");
  expectUsageError({"--skipInference", "--dumpOutput"}, "--dumpOutput");
  expectUsageError({"--minShapes=x:1"}, "--optShapes");
  expectUsageError({"--optShapes=x:2", "--maxShapes=y:4"}, "'y'");
  expectUsageError({"--inspect=a.plan", "--onnx=a.onnx"}, "--inspect");
}

TEST(Options, NotesForFlagsThisBuildCannotActOn) {
  ParseResult r =
      parse({"--int8", "--useCudaGraph", "--noDataTransfers", "--infStreams=4", "--device=2",
             "--timingCacheFile=t.cache", "--staticPlugins=a.so", "--dynamicPlugins=b.so", "--memPoolSize=dlaSRAM:1M"});
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<std::string> const notes = unsupportedFlagNotes(r.options);
  for (char const* flag : {"--int8", "--useCudaGraph", "--noDataTransfers", "--infStreams=4", "--device=2",
                           "--timingCacheFile", "dlaSRAM"}) {
    bool found = false;
    for (auto const& n : notes) found = found || n.find(flag) != std::string::npos;
    EXPECT_TRUE(found) << flag;
  }
  // Plugin libraries are loaded (app.cc), not noted.
  for (auto const& n : notes) EXPECT_EQ(n.find("Plugins="), std::string::npos) << n;
  EXPECT_TRUE(unsupportedFlagNotes(parse({"--fp16", "--infStreams=1"}).options).empty());
  for (auto const& n : notes)
    if (n.rfind("--useCudaGraph", 0) == 0) {
      EXPECT_NE(n.find("the cpu backend"), std::string::npos) << n;
    }
  ParseResult ref = parse({"--backend=reference", "--useCudaGraph"});
  ASSERT_EQ(unsupportedFlagNotes(ref.options).size(), 1u);
  EXPECT_NE(unsupportedFlagNotes(ref.options)[0].find("the reference backend"), std::string::npos);
}

TEST(Options, GpuFlagsAreActedOnWithCuda) {
  ParseResult r = parse({"--backend=cuda", "--int8", "--useCudaGraph", "--noDataTransfers", "--infStreams=4",
                         "--device=2", "--timingCacheFile=t.cache", "--staticPlugins=a.so"});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.options.backend, Backend::kCuda);
  EXPECT_TRUE(r.options.useCudaGraph && r.options.noDataTransfers);
  EXPECT_EQ(r.options.infStreams, 4);
  EXPECT_EQ(r.options.device, 2);
  EXPECT_EQ(r.options.timingCacheFile, "t.cache");
  std::vector<std::string> const notes = unsupportedFlagNotes(r.options);
  // Only what Kiln cannot do anywhere is noted: INT8 (plugin libraries are loaded).
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("--int8", 0), 0u) << notes[0];
  for (char const* flag : {"--useCudaGraph", "--noDataTransfers", "--infStreams", "--device", "--timingCacheFile"})
    for (auto const& n : notes) EXPECT_EQ(n.find(flag), std::string::npos) << n;
}

TEST(Options, HelpDescribesTheGpuFlags) {
  std::string const help = usageText();
  for (char const* s : {"--useCudaGraph", "CUDA graph", "--noDataTransfers", "--infStreams=N", "--device=N",
                        "--timingCacheFile=FILE", "falls back to cpu"})
    EXPECT_NE(help.find(s), std::string::npos) << s;
  EXPECT_EQ(help.find("Accepted; no timing cache"), std::string::npos);
}

TEST(Options, Dims) {
  std::vector<int64_t> d;
  EXPECT_TRUE(parseDims("1x3x224x224", d));
  EXPECT_EQ(d, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_TRUE(parseDims("2,5", d));
  EXPECT_EQ(d, (std::vector<int64_t>{2, 5}));
  EXPECT_FALSE(parseDims("", d));
  EXPECT_FALSE(parseDims("1x-1", d));
  EXPECT_FALSE(parseDims("1x2x3x4x5x6x7x8x9", d));
  EXPECT_EQ(formatDims({1, 10}), "1x10");
  EXPECT_EQ(formatDims({}), "scalar");
}

}  // namespace
}  // namespace kilnexec
