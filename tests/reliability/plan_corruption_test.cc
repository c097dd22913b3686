// Plan integrity: real plans (reference and oneDNN tactics, static and dynamic shapes) cut at every length and
// with sampled single-bit flips are all refused by deserializeCudaEngine with a named reason (magic, version,
// checksum, truncation, layout, schema, target, graph), never loaded, never a crash. Changes that get past the
// checksums (resealed) must load or be refused cleanly. Counts are printed as "refused N / tried M".
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "e2e/e2e_util.h"
#include "plan/plan_format.h"

namespace kiln_e2e {
namespace {

namespace pd = kiln::plan::detail;

// A one-layer network: the smallest plan there is.
std::vector<uint8_t> tinyPlan(CapturingLogger& logger) {
  return buildPlan(logger, [](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
    kiln::ITensor* x = net.addInput("input", kiln::DataType::kFLOAT, kiln::Dims2(2, 8));
    kiln::IActivationLayer* relu = x == nullptr ? nullptr : net.addActivation(*x, kiln::ActivationType::kRELU);
    if (relu == nullptr) {
      return false;
    }
    relu->getOutput(0)->setName("output");
    net.markOutput(*relu->getOutput(0));
    return true;
  });
}

// The demo CNN, narrow and small (a few KB of weights), so that every truncation length stays cheap.
kiln_samples::ResNetSpec smallCnnSpec() {
  kiln_samples::ResNetSpec s = kiln_samples::smallResNetSpec();
  s.height = 8;
  s.width = 8;
  s.stemChannels = 4;
  s.stageChannels = {4, 8};
  return s;
}

std::vector<uint8_t> cnnPlan(CapturingLogger& logger, kiln_samples::ResNetWeights const& weights,
                             bool referenceOnly = true) {
  BuildOptions options;
  options.referenceOnly = referenceOnly;
  return buildPlan(
      logger,
      [&](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
        return kiln_samples::addResNet(net, weights);
      },
      options);
}

kiln_samples::BertSpec smallBertSpec() {
  kiln_samples::BertSpec s;
  s.hidden = 16;
  s.heads = 2;
  s.ffn = 32;
  s.maxSeq = 8;
  s.optSeq = 4;
  return s;
}

// A BERT-style layer with dynamic batch and sequence (a profile in the plan).
std::vector<uint8_t> bertPlan(CapturingLogger& logger, kiln_samples::BertWeights const& weights) {
  return buildPlan(logger, [&](kiln::IBuilder& builder, kiln::INetworkDefinition& net, kiln::IBuilderConfig& config) {
    return kiln_samples::addBertLayer(net, weights) && kiln_samples::addBertProfile(builder, config, weights.spec);
  });
}

// The reason a refusal names, from its message ("" when it names none of them).
std::string refusalKind(std::string const& message) {
  static std::vector<std::pair<char const*, char const*>> const kKinds = {
      {"empty plan", "truncation"},
      {"wrong magic", "magic"},
      {"too small for a header", "magic"},
      {"plan format", "version"},
      {"checksum mismatch", "checksum"},
      {"truncated", "truncation"},
      {"starts at byte", "layout"},
      {"nonzero padding", "layout"},
      {"section 0 is not the graph", "layout"},
      {"second graph section", "layout"},
      {"schema verification", "schema"},
      {"the plan targets", "target"},
      {"built for", "target"},
  };
  for (auto const& [needle, kind] : kKinds) {
    if (message.find(needle) != std::string::npos) {
      return kind;
    }
  }
  return "";
}

// Tallies of one corruption experiment.
struct Tally {
  int tried = 0;
  int refused = 0;
  std::map<std::string, int> byKind;
  std::vector<std::string> failures;  // loaded, or refused without a named reason

  void report(char const* what) const {
    std::string kinds;
    for (auto const& [k, n] : byKind) {
      kinds += " " + k + "=" + std::to_string(n);
    }
    std::printf("[reliability] %s: refused %d / tried %d (%s )\n", what, refused, tried, kinds.c_str());
    ::testing::Test::RecordProperty(std::string(what) + "_refused", refused);
    ::testing::Test::RecordProperty(std::string(what) + "_tried", tried);
  }
};

// Loads `bytes`, expecting a refusal with a named reason; records the outcome under `label`.
void expectRefused(kiln::IRuntime& runtime, CapturingLogger& logger, std::vector<uint8_t> const& bytes,
                   std::string const& label, Tally& tally) {
  ++tally.tried;
  int const before = logger.errorCount();
  std::unique_ptr<kiln::ICudaEngine> engine(runtime.deserializeCudaEngine(bytes.data(), bytes.size()));
  if (engine != nullptr) {
    tally.failures.push_back(label + ": loaded");
    return;
  }
  if (logger.errorCount() == before) {
    tally.failures.push_back(label + ": refused without an error");
    return;
  }
  std::string const message = logger.lastError();
  std::string const kind = refusalKind(message);
  if (kind.empty() || message.find("deserializeCudaEngine") == std::string::npos) {
    tally.failures.push_back(label + ": refused without a named reason: " + message);
    return;
  }
  ++tally.refused;
  ++tally.byKind[kind];
}

struct NamedPlan {
  std::string name;
  std::vector<uint8_t> bytes;
};

class PlanCorruption : public ::testing::Test {
 protected:
  void SetUp() override {
    cnn_ = kiln_samples::makeResNetWeights(smallCnnSpec());
    bert_ = kiln_samples::makeBertWeights(smallBertSpec());
    plans_.push_back({"tiny", tinyPlan(logger_)});
    plans_.push_back({"cnn_reference", cnnPlan(logger_, cnn_)});
#ifdef KILN_HAVE_ONEDNN
    plans_.push_back({"cnn_onednn", cnnPlan(logger_, cnn_, false)});
#endif
    plans_.push_back({"bert_dynamic", bertPlan(logger_, bert_)});
    for (auto const& p : plans_) {
      ASSERT_GT(p.bytes.size(), pd::headerBytes(1)) << p.name;
    }
    runtime_.reset(kiln::createInferRuntime(logger_));
    ASSERT_NE(runtime_, nullptr);
    logger_.setEchoErrors(false);
  }

  CapturingLogger logger_;
  kiln_samples::ResNetWeights cnn_;
  kiln_samples::BertWeights bert_;
  std::vector<NamedPlan> plans_;
  std::unique_ptr<kiln::IRuntime> runtime_;
};

TEST_F(PlanCorruption, IntactPlansLoadAndRun) {
  for (auto const& p : plans_) {
    std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime_, p.bytes);
    ASSERT_NE(engine, nullptr) << p.name << ": " << logger_.lastError();
    std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
    ASSERT_NE(context, nullptr) << p.name;
  }
  EXPECT_EQ(logger_.errorCount(), 0) << logger_.lastError();
}

TEST_F(PlanCorruption, EveryTruncationLengthIsRefused) {
  Tally tally;
  for (auto const& p : plans_) {
    for (size_t len = 0; len < p.bytes.size(); ++len) {
      std::vector<uint8_t> const bytes(p.bytes.begin(), p.bytes.begin() + static_cast<std::ptrdiff_t>(len));
      expectRefused(*runtime_, logger_, bytes, p.name + " cut to " + std::to_string(len), tally);
    }
  }
  tally.report("truncations");
  EXPECT_EQ(tally.refused, tally.tried);
  EXPECT_TRUE(tally.failures.empty()) << tally.failures.size() << " not refused, first: " << tally.failures.front();
  EXPECT_EQ(logger_.internalErrorCount(), 0);
}

TEST_F(PlanCorruption, SingleBitFlipsAreRefused) {
  Tally tally;
  kiln_samples::Random rng(7);
  for (auto const& p : plans_) {
    // Every bit of the header and its section table, then 1500 random bits over the whole plan and the last byte.
    size_t const header = pd::headerBytes(pd::loadLE32(p.bytes.data() + pd::kOffNumSections));
    std::set<size_t> bits;
    for (size_t b = 0; b < header * 8; ++b) {
      bits.insert(b);
    }
    while (bits.size() < header * 8 + 1500) {
      bits.insert(static_cast<size_t>(rng.next() % (p.bytes.size() * 8)));
    }
    for (size_t b = 0; b < 8; ++b) {
      bits.insert((p.bytes.size() - 1) * 8 + b);
    }
    std::vector<uint8_t> bytes = p.bytes;
    for (size_t bit : bits) {
      auto const mask = static_cast<uint8_t>(1U << (bit % 8));
      bytes[bit / 8] ^= mask;
      expectRefused(*runtime_, logger_, bytes,
                    p.name + " byte " + std::to_string(bit / 8) + " bit " + std::to_string(bit % 8), tally);
      bytes[bit / 8] ^= mask;
    }
  }
  tally.report("bit_flips");
  EXPECT_EQ(tally.refused, tally.tried);
  EXPECT_TRUE(tally.failures.empty()) << tally.failures.size() << " not refused, first: " << tally.failures.front();
  EXPECT_EQ(logger_.internalErrorCount(), 0);
  EXPECT_GT(tally.byKind["checksum"], 0);
  EXPECT_GT(tally.byKind["magic"], 0);
  EXPECT_GT(tally.byKind["version"], 0);
}

// Header fields changed with the checksums made to match again: each is refused naming the field.
TEST_F(PlanCorruption, ResealedHeaderChangesAreRefusedByName) {
  std::vector<uint8_t> const& plan = plans_[1].bytes;
  auto resealed = [&](auto&& change) {
    std::vector<uint8_t> b = plan;
    change(b);
    EXPECT_TRUE(pd::resealPlan(b.data(), b.size()));
    return b;
  };
  auto refusal = [&](std::vector<uint8_t> const& b) {
    int const before = logger_.errorCount();
    std::unique_ptr<kiln::ICudaEngine> engine(runtime_->deserializeCudaEngine(b.data(), b.size()));
    EXPECT_EQ(engine, nullptr);
    return logger_.errorCount() > before ? logger_.lastError() : std::string("(no error)");
  };
  std::string m = refusal(resealed([](std::vector<uint8_t>& b) { pd::storeLE16(b.data() + pd::kOffMajor, 99); }));
  EXPECT_EQ(refusalKind(m), "version") << m;
  EXPECT_NE(m.find("99"), std::string::npos) << m;
  for (char const* target : {"sm_90", "sm_75", "npu"}) {
    m = refusal(resealed([&](std::vector<uint8_t>& b) {
      std::memset(b.data() + pd::kOffTarget, 0, pd::kFixedStringBytes);
      std::memcpy(b.data() + pd::kOffTarget, target, std::strlen(target));
    }));
    EXPECT_NE(m.find(target), std::string::npos) << m;
  }
  // The graph section's flatbuffer garbled (its checksum made right): the schema verifier refuses it.
  m = refusal(resealed([](std::vector<uint8_t>& b) {
    uint64_t const offset = pd::loadLE64(b.data() + pd::kOffTable + 8);
    uint64_t const size = pd::loadLE64(b.data() + pd::kOffTable + 16);
    for (uint64_t i = 0; i < size; i += 3) {
      b[offset + i] = static_cast<uint8_t>(0xA5 ^ i);
    }
  }));
  EXPECT_EQ(refusalKind(m), "schema") << m;
  // A section table entry moved: a layout refusal, not a read past the end.
  m = refusal(resealed([](std::vector<uint8_t>& b) {
    uint8_t* entry = b.data() + pd::kOffTable + pd::kSectionEntryBytes;
    pd::storeLE64(entry + 8, pd::loadLE64(entry + 8) + 64);
  }));
  EXPECT_TRUE(refusalKind(m) == "layout" || refusalKind(m) == "truncation") << m;
  EXPECT_EQ(logger_.internalErrorCount(), 0);
}

// Bit flips that get past the checksums (resealed) reach the schema and graph checks: each such plan is refused
// with an error or loads and then runs (or fails to run) cleanly. Under the sanitizers this is the plan fuzzer's
// property on a fixed sample.
TEST_F(PlanCorruption, ResealedBitFlipsNeverCrash) {
  int tried = 0;
  int refused = 0;
  int loaded = 0;
  kiln_samples::Random rng(11);
  for (auto const& p : plans_) {
    for (int i = 0; i < 100; ++i) {
      std::vector<uint8_t> b = p.bytes;
      size_t const bit = static_cast<size_t>(rng.next() % (b.size() * 8));
      b[bit / 8] ^= static_cast<uint8_t>(1U << (bit % 8));
      ASSERT_TRUE(pd::resealPlan(b.data(), b.size()));
      ++tried;
      int const before = logger_.errorCount();
      std::unique_ptr<kiln::ICudaEngine> engine(runtime_->deserializeCudaEngine(b.data(), b.size()));
      if (engine == nullptr) {
        EXPECT_GT(logger_.errorCount(), before) << p.name << " bit " << bit << " refused without an error";
        ++refused;
        continue;
      }
      ++loaded;
      std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
      if (context != nullptr && engine->getNbIOTensors() > 0) {
        // Inputs with their profile-0 minimum shapes; outputs sized by the context.
        std::vector<std::vector<uint8_t>> buffers;
        bool bound = true;
        for (int32_t t = 0; t < engine->getNbIOTensors() && bound; ++t) {
          char const* name = engine->getIOTensorName(t);
          if (engine->getTensorIOMode(name) == kiln::TensorIOMode::kINPUT) {
            bound = context->setInputShape(name, engine->getProfileShape(name, 0, kiln::OptProfileSelector::kMIN));
          }
        }
        for (int32_t t = 0; t < engine->getNbIOTensors() && bound; ++t) {
          char const* name = engine->getIOTensorName(t);
          int64_t const n = kiln_samples::volume(context->getTensorShape(name));
          if (n < 0 || n > (int64_t{1} << 22)) {
            bound = false;
            break;
          }
          buffers.emplace_back(static_cast<size_t>(n * 8 + 8), 0);
          bound = context->setTensorAddress(name, buffers.back().data());
        }
        if (bound) {
          (void)context->enqueueV3(nullptr);
        }
      }
    }
  }
  std::printf("[reliability] resealed_bit_flips: refused %d, loaded %d / tried %d\n", refused, loaded, tried);
  EXPECT_EQ(refused + loaded, tried);
  EXPECT_EQ(logger_.internalErrorCount(), 0) << logger_.lastError();
}

TEST(PlanCorruptionBlobs, NullAndEmptyBlobsAreRefused) {
  CapturingLogger logger(false);
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  int before = logger.errorCount();
  EXPECT_EQ(std::unique_ptr<kiln::ICudaEngine>(runtime->deserializeCudaEngine(nullptr, 0)), nullptr);
  EXPECT_GT(logger.errorCount(), before);
  before = logger.errorCount();
  EXPECT_EQ(std::unique_ptr<kiln::ICudaEngine>(runtime->deserializeCudaEngine(nullptr, 4096)), nullptr);
  EXPECT_GT(logger.errorCount(), before);
  std::vector<uint8_t> const zeros(4096, 0);
  before = logger.errorCount();
  EXPECT_EQ(std::unique_ptr<kiln::ICudaEngine>(runtime->deserializeCudaEngine(zeros.data(), zeros.size())), nullptr);
  EXPECT_GT(logger.errorCount(), before);
}

TEST_F(PlanCorruption, ReserializedEngineLoadsAndComputesTheSame) {
  std::vector<uint8_t> const& plan = plans_[1].bytes;
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime_, plan);
  ASSERT_NE(engine, nullptr) << logger_.lastError();
  std::unique_ptr<kiln::IHostMemory> again(engine->serialize());
  ASSERT_NE(again, nullptr);
  auto const* p = static_cast<uint8_t const*>(again->data());
  std::unique_ptr<kiln::ICudaEngine> engine2 = loadEngine(*runtime_, std::vector<uint8_t>(p, p + again->size()));
  ASSERT_NE(engine2, nullptr) << logger_.lastError();

  kiln_samples::ResNetSpec const& s = cnn_.spec;
  kiln_samples::HostTensor const input = randomInput("input", kiln::Dims4(s.batch, s.inChannels, s.height, s.width), 5);
  std::vector<kiln_samples::HostTensor> out1;
  std::vector<kiln_samples::HostTensor> out2;
  std::unique_ptr<kiln::IExecutionContext> c1(engine->createExecutionContext());
  std::unique_ptr<kiln::IExecutionContext> c2(engine2->createExecutionContext());
  ASSERT_TRUE(c1 != nullptr && c2 != nullptr);
  ASSERT_TRUE(kiln_samples::runContext(*c1, {input}, out1));
  ASSERT_TRUE(kiln_samples::runContext(*c2, {input}, out2));
  ASSERT_EQ(out1.size(), out2.size());
  for (size_t i = 0; i < out1.size(); ++i) {
    ASSERT_EQ(out1[i].data.size(), out2[i].data.size());
    EXPECT_EQ(std::memcmp(out1[i].data.data(), out2[i].data.data(), out1[i].data.size() * sizeof(float)), 0)
        << out1[i].name;
  }
}

}  // namespace
}  // namespace kiln_e2e
