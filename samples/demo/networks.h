// Sample networks built through Kiln's public API only: a ResNet-style CNN and a BERT-style encoder layer.
// Weights are deterministic pseudo-random values kept in plain structs, so that tests can run their own
// forward pass over exactly the values the network was built with. Also: a logger and a run helper.
#pragma once

#include <kiln/kiln.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace kiln_samples {

/// Deterministic pseudo-random numbers (splitmix64): the same sequence on every platform and compiler.
class Random {
 public:
  /// A generator whose sequence is fixed by `seed`.
  explicit Random(uint64_t seed) : state_(seed) {}
  /// Next 64 random bits.
  uint64_t next();
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi);
  /// `n` values uniform in [lo, hi).
  std::vector<float> uniformVector(size_t n, float lo, float hi);

 private:
  uint64_t state_;
};

/// A square convolution without bias followed by batch normalization folded into a per-channel affine map:
/// y[c] = conv(x)[c] * bnScale[c] + bnShift[c].
struct ConvBn {
  int64_t inChannels = 0;
  int64_t outChannels = 0;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t padding = 0;
  std::vector<float> weights;  ///< [outChannels][inChannels][kernel][kernel].
  std::vector<float> bnScale;  ///< [outChannels].
  std::vector<float> bnShift;  ///< [outChannels].
};

/// ResNet basic block: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)), where the shortcut is x, or a
/// 1x1 conv + BN when the stride or the channel count changes.
struct BasicBlock {
  ConvBn conv1;
  ConvBn conv2;
  bool hasDownsample = false;
  ConvBn downsample;
};

/// Shape of a ResNet-style network: stem conv-BN-ReLU, 3x3/2 max pool (padding 1), stages of basic blocks
/// (the first block of every stage but the first has stride 2), global average pool, flatten, FC, softmax.
struct ResNetSpec {
  std::string name = "small_resnet";
  int64_t batch = 1;
  int64_t inChannels = 3;
  int64_t height = 64;
  int64_t width = 64;
  int64_t stemChannels = 16;
  int64_t stemKernel = 3;
  int64_t stemStride = 1;
  std::vector<int64_t> stageChannels{16, 32};
  std::vector<int32_t> blocksPerStage{1, 1};
  int64_t classes = 10;
  uint64_t seed = 1;
};

/// The parameters of a ResNetSpec network.
struct ResNetWeights {
  ResNetSpec spec;
  ConvBn stem;
  std::vector<BasicBlock> blocks;  ///< In order, all stages.
  std::vector<float> fcWeights;    ///< [classes][channels of the last stage].
  std::vector<float> fcBias;       ///< [classes].
};

/// The demo's CNN: conv-BN-ReLU, max pool, two basic blocks (the second with stride 2 and a downsample).
ResNetSpec smallResNetSpec();

/// ResNet-18: 7x7/2 stem of 64 channels, four stages of two basic blocks (64, 128, 256, 512 channels).
ResNetSpec resNet18Spec(int64_t batch, int64_t height, int64_t width, int64_t classes);

/// Random weights for `spec`, fixed by spec.seed (He-scaled convolutions, BN scales near 1).
ResNetWeights makeResNetWeights(ResNetSpec const& spec);

/// Adds the network to `network`: input "input" [batch, inChannels, height, width] kFLOAT; outputs "logits"
/// [batch, classes] and "probs" (softmax of the logits). `weights` must outlive the build. Returns false if a
/// layer could not be added (Kiln reported why).
bool addResNet(kiln::INetworkDefinition& network, ResNetWeights const& weights);

/// Shape of a BERT-style encoder layer (post-LN): x1 = LN(x + Attention(x)), y = LN(x1 + FFN(x1)), with
/// FFN(x) = GELU(x W1 + b1) W2 + b2. The input is [batch, seq, hidden] with dynamic batch and seq.
struct BertSpec {
  std::string name = "bert_layer";
  int64_t hidden = 64;
  int64_t heads = 4;
  int64_t ffn = 256;
  int64_t minBatch = 1, optBatch = 2, maxBatch = 4;
  int64_t minSeq = 1, optSeq = 16, maxSeq = 64;
  float epsilon = 1e-5F;
  uint64_t seed = 2;
};

/// The parameters of a BertSpec layer. Matrices are [in][out], row-major (y = x W + b).
struct BertWeights {
  BertSpec spec;
  std::vector<float> wq, bq, wk, bk, wv, bv, wo, bo;
  std::vector<float> ln1Scale, ln1Bias;
  std::vector<float> w1, b1, w2, b2;
  std::vector<float> ln2Scale, ln2Bias;
  std::vector<float> attentionScale;  ///< One value: 1 / sqrt(hidden / heads).
};

/// Random weights for `spec`, fixed by spec.seed.
BertWeights makeBertWeights(BertSpec const& spec);

/// Adds the layer to `network`: input "input" [-1, -1, hidden] kFLOAT, output "output" of the same shape.
/// `weights` must outlive the build. Returns false if a layer could not be added (Kiln reported why).
bool addBertLayer(kiln::INetworkDefinition& network, BertWeights const& weights);

/// Adds to `config` an optimization profile with the spec's min/opt/max batch and sequence length.
/// Returns false if the profile was refused.
bool addBertProfile(kiln::IBuilder& builder, kiln::IBuilderConfig& config, BertSpec const& spec);

/// A host tensor of floats with its name and shape.
struct HostTensor {
  std::string name;
  kiln::Dims dims{};
  std::vector<float> data;
};

/// Number of elements of `dims` (1 for rank 0; 0 if any extent is negative).
int64_t volume(kiln::Dims const& dims);

/// Runs one inference of a CPU engine's context: sets every input's shape and address from `inputs`, sizes
/// and fills `outputs` (one per engine output, in I/O order), then calls enqueueV3 with a null stream.
/// Returns false if any call failed (Kiln reported why).
bool runContext(kiln::IExecutionContext& context, std::vector<HostTensor> const& inputs,
                std::vector<HostTensor>& outputs);

/// A logger that prints warnings and errors to stderr (and more when `verbose`) and counts errors.
class ConsoleLogger : public kiln::ILogger {
 public:
  /// Prints messages up to `maxSeverity`.
  explicit ConsoleLogger(Severity maxSeverity = Severity::kWARNING) : maxSeverity_(maxSeverity) {}
  void log(Severity severity, kiln::AsciiChar const* msg) noexcept override;
  /// Number of kERROR and kINTERNAL_ERROR messages seen.
  int errorCount() const;

 private:
  Severity maxSeverity_;
  mutable std::mutex mutex_;
  int errors_ = 0;
};

}  // namespace kiln_samples
