// Sample networks built through Kiln's public API (see networks.h): weight generation, network construction,
// the optimization profile of the BERT layer, a console logger and a helper that runs one inference.
#include "demo/networks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

namespace kiln_samples {

using kiln::DataType;
using kiln::Dims;
using kiln::INetworkDefinition;
using kiln::ITensor;
using kiln::Weights;

uint64_t Random::next() {
  state_ += 0x9E3779B97F4A7C15ULL;
  uint64_t z = state_;
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

float Random::uniform(float lo, float hi) {
  double const unit = static_cast<double>(next() >> 11U) * (1.0 / 9007199254740992.0);  // 53 bits -> [0, 1)
  return static_cast<float>(lo + (hi - lo) * unit);
}

std::vector<float> Random::uniformVector(size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (float& x : v) {
    x = uniform(lo, hi);
  }
  return v;
}

namespace {

Weights floatWeights(std::vector<float> const& v) {
  return Weights{DataType::kFLOAT, v.data(), static_cast<int64_t>(v.size())};
}

Weights noWeights() { return Weights{DataType::kFLOAT, nullptr, 0}; }

ConvBn makeConvBn(Random& rng, int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  ConvBn c;
  c.inChannels = in;
  c.outChannels = out;
  c.kernel = kernel;
  c.stride = stride;
  c.padding = padding;
  float const bound = std::sqrt(6.0F / static_cast<float>(in * kernel * kernel));  // He uniform
  c.weights = rng.uniformVector(static_cast<size_t>(out * in * kernel * kernel), -bound, bound);
  c.bnScale = rng.uniformVector(static_cast<size_t>(out), 0.5F, 1.0F);
  c.bnShift = rng.uniformVector(static_cast<size_t>(out), -0.1F, 0.1F);
  return c;
}

// Names the layer and returns its output 0, or nullptr if the layer could not be added.
ITensor* named(kiln::ILayer* layer, std::string const& name) {
  if (layer == nullptr) {
    std::fprintf(stderr, "networks: could not add layer %s\n", name.c_str());
    return nullptr;
  }
  layer->setName(name.c_str());
  return layer->getOutput(0);
}

// conv (no bias) -> BN as a per-channel Scale -> optional ReLU.
ITensor* addConvBn(INetworkDefinition& net, ITensor& x, ConvBn const& c, bool relu, std::string const& name) {
  kiln::IConvolutionLayer* conv =
      net.addConvolutionNd(x, c.outChannels, kiln::DimsHW(c.kernel, c.kernel), floatWeights(c.weights), noWeights());
  if (conv != nullptr) {
    conv->setStrideNd(kiln::DimsHW(c.stride, c.stride));
    conv->setPaddingNd(kiln::DimsHW(c.padding, c.padding));
  }
  ITensor* y = named(conv, name + ".conv");
  if (y == nullptr) {
    return nullptr;
  }
  y = named(net.addScale(*y, kiln::ScaleMode::kCHANNEL, floatWeights(c.bnShift), floatWeights(c.bnScale), noWeights()),
            name + ".bn");
  if (y == nullptr || !relu) {
    return y;
  }
  return named(net.addActivation(*y, kiln::ActivationType::kRELU), name + ".relu");
}

ITensor* addBasicBlock(INetworkDefinition& net, ITensor& x, BasicBlock const& b, std::string const& name) {
  ITensor* y = addConvBn(net, x, b.conv1, true, name + ".conv1");
  if (y != nullptr) {
    y = addConvBn(net, *y, b.conv2, false, name + ".conv2");
  }
  ITensor* shortcut = &x;
  if (b.hasDownsample) {
    shortcut = addConvBn(net, x, b.downsample, false, name + ".downsample");
  }
  if (y == nullptr || shortcut == nullptr) {
    return nullptr;
  }
  y = named(net.addElementWise(*y, *shortcut, kiln::ElementWiseOperation::kSUM), name + ".add");
  if (y == nullptr) {
    return nullptr;
  }
  return named(net.addActivation(*y, kiln::ActivationType::kRELU), name + ".relu");
}

// A constant layer of shape `dims` over `values`.
ITensor* addConst(INetworkDefinition& net, Dims const& dims, std::vector<float> const& values,
                  std::string const& name) {
  return named(net.addConstant(dims, floatWeights(values)), name);
}

// x [..., in] times a constant [in][out] matrix plus a bias: [..., out]. `rank` is x's rank.
ITensor* addLinear(INetworkDefinition& net, ITensor& x, int32_t rank, int64_t in, int64_t out,
                   std::vector<float> const& w, std::vector<float> const& b, std::string const& name) {
  Dims wDims{};
  Dims bDims{};
  wDims.nbDims = rank;
  bDims.nbDims = rank;
  for (int32_t i = 0; i < rank; ++i) {
    wDims.d[i] = 1;
    bDims.d[i] = 1;
  }
  wDims.d[rank - 2] = in;
  wDims.d[rank - 1] = out;
  bDims.d[rank - 1] = out;
  ITensor* wt = addConst(net, wDims, w, name + ".weight");
  ITensor* bt = addConst(net, bDims, b, name + ".bias");
  if (wt == nullptr || bt == nullptr) {
    return nullptr;
  }
  ITensor* y = named(net.addMatrixMultiply(x, kiln::MatrixOperation::kNONE, *wt, kiln::MatrixOperation::kNONE),
                     name + ".matmul");
  if (y == nullptr) {
    return nullptr;
  }
  return named(net.addElementWise(*y, *bt, kiln::ElementWiseOperation::kSUM), name + ".add_bias");
}

kiln::Permutation perm(std::initializer_list<int32_t> order) {
  kiln::Permutation p{};
  int32_t i = 0;
  for (int32_t o : order) {
    p.order[i++] = o;
  }
  for (; i < Dims::MAX_DIMS; ++i) {
    p.order[i] = i;
  }
  return p;
}

// [B, S, H] -> [B, heads, S, H / heads].
ITensor* splitHeads(INetworkDefinition& net, ITensor& x, int64_t heads, int64_t headDim, std::string const& name) {
  kiln::IShuffleLayer* s = net.addShuffle(x);
  if (s != nullptr) {
    s->setReshapeDimensions(kiln::Dims4(0, 0, heads, headDim));
    s->setSecondTranspose(perm({0, 2, 1, 3}));
  }
  return named(s, name);
}

ITensor* addLayerNorm(INetworkDefinition& net, ITensor& x, std::vector<float> const& scale,
                      std::vector<float> const& bias, float epsilon, int64_t hidden, std::string const& name) {
  ITensor* s = addConst(net, kiln::Dims3(1, 1, hidden), scale, name + ".scale");
  ITensor* b = addConst(net, kiln::Dims3(1, 1, hidden), bias, name + ".bias");
  if (s == nullptr || b == nullptr) {
    return nullptr;
  }
  kiln::INormalizationLayer* ln = net.addNormalization(x, *s, *b, 1U << 2U);
  if (ln != nullptr) {
    ln->setEpsilon(epsilon);
  }
  return named(ln, name);
}

}  // namespace

ResNetSpec smallResNetSpec() { return ResNetSpec{}; }

ResNetSpec resNet18Spec(int64_t batch, int64_t height, int64_t width, int64_t classes) {
  ResNetSpec s;
  s.name = "resnet18";
  s.batch = batch;
  s.height = height;
  s.width = width;
  s.stemChannels = 64;
  s.stemKernel = 7;
  s.stemStride = 2;
  s.stageChannels = {64, 128, 256, 512};
  s.blocksPerStage = {2, 2, 2, 2};
  s.classes = classes;
  s.seed = 18;
  return s;
}

ResNetWeights makeResNetWeights(ResNetSpec const& spec) {
  Random rng(spec.seed);
  ResNetWeights w;
  w.spec = spec;
  w.stem = makeConvBn(rng, spec.inChannels, spec.stemChannels, spec.stemKernel, spec.stemStride, spec.stemKernel / 2);
  int64_t channels = spec.stemChannels;
  for (size_t stage = 0; stage < spec.stageChannels.size(); ++stage) {
    int64_t const out = spec.stageChannels[stage];
    for (int32_t i = 0; i < spec.blocksPerStage[stage]; ++i) {
      int64_t const stride = (stage > 0 && i == 0) ? 2 : 1;
      BasicBlock b;
      b.conv1 = makeConvBn(rng, channels, out, 3, stride, 1);
      b.conv2 = makeConvBn(rng, out, out, 3, 1, 1);
      b.hasDownsample = stride != 1 || channels != out;
      if (b.hasDownsample) {
        b.downsample = makeConvBn(rng, channels, out, 1, stride, 0);
      }
      w.blocks.push_back(std::move(b));
      channels = out;
    }
  }
  float const bound = 1.0F / std::sqrt(static_cast<float>(channels));
  w.fcWeights = rng.uniformVector(static_cast<size_t>(spec.classes * channels), -bound, bound);
  w.fcBias = rng.uniformVector(static_cast<size_t>(spec.classes), -0.1F, 0.1F);
  return w;
}

bool addResNet(INetworkDefinition& net, ResNetWeights const& w) {
  ResNetSpec const& s = w.spec;
  net.setName(s.name.c_str());
  ITensor* x = net.addInput("input", DataType::kFLOAT, kiln::Dims4(s.batch, s.inChannels, s.height, s.width));
  if (x == nullptr) {
    return false;
  }
  x = addConvBn(net, *x, w.stem, true, "stem");
  if (x == nullptr) {
    return false;
  }
  kiln::IPoolingLayer* pool = net.addPoolingNd(*x, kiln::PoolingType::kMAX, kiln::DimsHW(3, 3));
  if (pool != nullptr) {
    pool->setStrideNd(kiln::DimsHW(2, 2));
    pool->setPaddingNd(kiln::DimsHW(1, 1));
  }
  x = named(pool, "stem.maxpool");
  size_t block = 0;
  for (size_t stage = 0; stage < s.blocksPerStage.size() && x != nullptr; ++stage) {
    for (int32_t i = 0; i < s.blocksPerStage[stage] && x != nullptr; ++i, ++block) {
      x = addBasicBlock(net, *x, w.blocks[block], "layer" + std::to_string(stage + 1) + "." + std::to_string(i));
    }
  }
  if (x == nullptr) {
    return false;
  }
  x = named(net.addReduce(*x, kiln::ReduceOperation::kAVG, (1U << 2U) | (1U << 3U), true), "avgpool");
  if (x == nullptr) {
    return false;
  }
  kiln::IShuffleLayer* flatten = net.addShuffle(*x);
  if (flatten != nullptr) {
    flatten->setReshapeDimensions(kiln::Dims2(0, -1));
  }
  x = named(flatten, "flatten");
  int64_t const channels = s.stageChannels.empty() ? s.stemChannels : s.stageChannels.back();
  ITensor* fcW = addConst(net, kiln::Dims2(s.classes, channels), w.fcWeights, "fc.weight");
  ITensor* fcB = addConst(net, kiln::Dims2(1, s.classes), w.fcBias, "fc.bias");
  if (x == nullptr || fcW == nullptr || fcB == nullptr) {
    return false;
  }
  x = named(net.addMatrixMultiply(*x, kiln::MatrixOperation::kNONE, *fcW, kiln::MatrixOperation::kTRANSPOSE),
            "fc.matmul");
  if (x == nullptr) {
    return false;
  }
  ITensor* logits = named(net.addElementWise(*x, *fcB, kiln::ElementWiseOperation::kSUM), "fc.add_bias");
  if (logits == nullptr) {
    return false;
  }
  kiln::ISoftMaxLayer* softmax = net.addSoftMax(*logits);
  if (softmax != nullptr) {
    softmax->setAxes(1U << 1U);
  }
  ITensor* probs = named(softmax, "softmax");
  if (probs == nullptr) {
    return false;
  }
  logits->setName("logits");
  probs->setName("probs");
  net.markOutput(*logits);
  net.markOutput(*probs);
  return true;
}

BertWeights makeBertWeights(BertSpec const& spec) {
  Random rng(spec.seed);
  auto const h = static_cast<size_t>(spec.hidden);
  auto const f = static_cast<size_t>(spec.ffn);
  float const bh = std::sqrt(3.0F / static_cast<float>(h));
  float const bf = std::sqrt(3.0F / static_cast<float>(f));
  BertWeights w;
  w.spec = spec;
  for (auto* m : {&w.wq, &w.wk, &w.wv, &w.wo}) {
    *m = rng.uniformVector(h * h, -bh, bh);
  }
  for (auto* b : {&w.bq, &w.bk, &w.bv, &w.bo}) {
    *b = rng.uniformVector(h, -0.1F, 0.1F);
  }
  w.ln1Scale = rng.uniformVector(h, 0.8F, 1.2F);
  w.ln1Bias = rng.uniformVector(h, -0.1F, 0.1F);
  w.w1 = rng.uniformVector(h * f, -bh, bh);
  w.b1 = rng.uniformVector(f, -0.1F, 0.1F);
  w.w2 = rng.uniformVector(f * h, -bf, bf);
  w.b2 = rng.uniformVector(h, -0.1F, 0.1F);
  w.ln2Scale = rng.uniformVector(h, 0.8F, 1.2F);
  w.ln2Bias = rng.uniformVector(h, -0.1F, 0.1F);
  w.attentionScale = {1.0F / std::sqrt(static_cast<float>(spec.hidden / spec.heads))};
  return w;
}

bool addBertLayer(INetworkDefinition& net, BertWeights const& w) {
  BertSpec const& s = w.spec;
  int64_t const headDim = s.hidden / s.heads;
  net.setName(s.name.c_str());
  ITensor* x = net.addInput("input", DataType::kFLOAT, kiln::Dims3(-1, -1, s.hidden));
  if (x == nullptr) {
    return false;
  }
  ITensor* q = addLinear(net, *x, 3, s.hidden, s.hidden, w.wq, w.bq, "attention.query");
  ITensor* k = addLinear(net, *x, 3, s.hidden, s.hidden, w.wk, w.bk, "attention.key");
  ITensor* v = addLinear(net, *x, 3, s.hidden, s.hidden, w.wv, w.bv, "attention.value");
  if (q == nullptr || k == nullptr || v == nullptr) {
    return false;
  }
  q = splitHeads(net, *q, s.heads, headDim, "attention.query.split");
  k = splitHeads(net, *k, s.heads, headDim, "attention.key.split");
  v = splitHeads(net, *v, s.heads, headDim, "attention.value.split");
  ITensor* scale = addConst(net, kiln::Dims4(1, 1, 1, 1), w.attentionScale, "attention.scale");
  if (q == nullptr || k == nullptr || v == nullptr || scale == nullptr) {
    return false;
  }
  ITensor* scores = named(
      net.addMatrixMultiply(*q, kiln::MatrixOperation::kNONE, *k, kiln::MatrixOperation::kTRANSPOSE), "attention.qk");
  if (scores == nullptr) {
    return false;
  }
  scores = named(net.addElementWise(*scores, *scale, kiln::ElementWiseOperation::kPROD), "attention.qk_scaled");
  if (scores == nullptr) {
    return false;
  }
  kiln::ISoftMaxLayer* softmax = net.addSoftMax(*scores);
  if (softmax != nullptr) {
    softmax->setAxes(1U << 3U);
  }
  ITensor* probs = named(softmax, "attention.softmax");
  if (probs == nullptr) {
    return false;
  }
  ITensor* context =
      named(net.addMatrixMultiply(*probs, kiln::MatrixOperation::kNONE, *v, kiln::MatrixOperation::kNONE),
            "attention.context");
  if (context == nullptr) {
    return false;
  }
  kiln::IShuffleLayer* merge = net.addShuffle(*context);
  if (merge != nullptr) {
    merge->setFirstTranspose(perm({0, 2, 1, 3}));
    merge->setReshapeDimensions(kiln::Dims3(0, 0, s.hidden));
  }
  context = named(merge, "attention.merge_heads");
  if (context == nullptr) {
    return false;
  }
  ITensor* attn = addLinear(net, *context, 3, s.hidden, s.hidden, w.wo, w.bo, "attention.output");
  if (attn == nullptr) {
    return false;
  }
  ITensor* x1 = named(net.addElementWise(*x, *attn, kiln::ElementWiseOperation::kSUM), "attention.residual");
  if (x1 == nullptr) {
    return false;
  }
  x1 = addLayerNorm(net, *x1, w.ln1Scale, w.ln1Bias, s.epsilon, s.hidden, "attention.layernorm");
  if (x1 == nullptr) {
    return false;
  }
  ITensor* h = addLinear(net, *x1, 3, s.hidden, s.ffn, w.w1, w.b1, "ffn.intermediate");
  if (h == nullptr) {
    return false;
  }
  h = named(net.addActivation(*h, kiln::ActivationType::kGELU_ERF), "ffn.gelu");
  if (h == nullptr) {
    return false;
  }
  h = addLinear(net, *h, 3, s.ffn, s.hidden, w.w2, w.b2, "ffn.output");
  if (h == nullptr) {
    return false;
  }
  ITensor* y = named(net.addElementWise(*x1, *h, kiln::ElementWiseOperation::kSUM), "ffn.residual");
  if (y == nullptr) {
    return false;
  }
  y = addLayerNorm(net, *y, w.ln2Scale, w.ln2Bias, s.epsilon, s.hidden, "ffn.layernorm");
  if (y == nullptr) {
    return false;
  }
  y->setName("output");
  net.markOutput(*y);
  return true;
}

bool addBertProfile(kiln::IBuilder& builder, kiln::IBuilderConfig& config, BertSpec const& s) {
  kiln::IOptimizationProfile* profile = builder.createOptimizationProfile();
  if (profile == nullptr) {
    return false;
  }
  bool ok =
      profile->setDimensions("input", kiln::OptProfileSelector::kMIN, kiln::Dims3(s.minBatch, s.minSeq, s.hidden));
  ok = ok &&
       profile->setDimensions("input", kiln::OptProfileSelector::kOPT, kiln::Dims3(s.optBatch, s.optSeq, s.hidden));
  ok = ok &&
       profile->setDimensions("input", kiln::OptProfileSelector::kMAX, kiln::Dims3(s.maxBatch, s.maxSeq, s.hidden));
  return ok && config.addOptimizationProfile(profile) >= 0;
}

int64_t volume(Dims const& dims) {
  int64_t v = 1;
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    if (dims.d[i] < 0) {
      return 0;
    }
    v *= dims.d[i];
  }
  return v;
}

bool runContext(kiln::IExecutionContext& context, std::vector<HostTensor> const& inputs,
                std::vector<HostTensor>& outputs) {
  kiln::ICudaEngine const& engine = context.getEngine();
  for (HostTensor const& in : inputs) {
    if (!context.setInputShape(in.name.c_str(), in.dims) ||
        !context.setInputTensorAddress(in.name.c_str(), in.data.data())) {
      return false;
    }
  }
  outputs.clear();
  for (int32_t i = 0; i < engine.getNbIOTensors(); ++i) {
    char const* name = engine.getIOTensorName(i);
    if (name == nullptr) {
      return false;
    }
    if (engine.getTensorIOMode(name) != kiln::TensorIOMode::kOUTPUT) {
      continue;
    }
    HostTensor out;
    out.name = name;
    out.dims = context.getTensorShape(name);
    if (out.dims.nbDims < 0) {
      return false;
    }
    // A zero-size output still needs a valid address.
    out.data.resize(static_cast<size_t>(std::max<int64_t>(volume(out.dims), 1)));
    outputs.push_back(std::move(out));
  }
  for (HostTensor& out : outputs) {
    if (!context.setTensorAddress(out.name.c_str(), out.data.data())) {
      return false;
    }
  }
  if (!context.enqueueV3(nullptr)) {
    return false;
  }
  for (HostTensor& out : outputs) {
    out.data.resize(static_cast<size_t>(volume(out.dims)));
  }
  return true;
}

void ConsoleLogger::log(Severity severity, kiln::AsciiChar const* msg) noexcept {
  char const* tag = "";
  switch (severity) {
    case Severity::kINTERNAL_ERROR:
      tag = "internal error";
      break;
    case Severity::kERROR:
      tag = "error";
      break;
    case Severity::kWARNING:
      tag = "warning";
      break;
    case Severity::kINFO:
      tag = "info";
      break;
    case Severity::kVERBOSE:
      tag = "verbose";
      break;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (severity <= Severity::kERROR) {
    ++errors_;
  }
  if (severity <= maxSeverity_) {
    std::fprintf(stderr, "[kiln %s] %s\n", tag, msg);
  }
}

int ConsoleLogger::errorCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return errors_;
}

}  // namespace kiln_samples
