// Shared import of the ONNX recurrent ops (see recurrent_util.h). Per direction: the gates' input projections
// X*W_g^T + biases for all steps (one matrix multiply each, before the loop), then an ILoop with an iterator per
// gate over the time axis (reversed for the reverse direction), a recurrence per state, the op's cell, and
// outputs stacked in time order. sequence_lens masks steps at or past each item's length: the state holds and Y
// is zero there (so the reverse direction starts at the item's last valid step).
#include "parsers/onnx/ops/recurrent_util.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "parsers/onnx/ops/control_flow_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// One activation function with its parameters.
struct Activation {
  ActivationType type = ActivationType::kTANH;
  bool affine = false;  ///< alpha * x + beta (no ActivationType for it).
  float alpha = 0.0F;
  float beta = 0.0F;
};

/// Parses activation `name`, taking its alpha/beta from the lists in order (defaults as the ONNX operators').
Result<Activation> parseActivation(Node const& node, std::string name, std::vector<float> const& alphas, size_t& ai,
                                   std::vector<float> const& betas, size_t& bi) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  Activation a;
  bool needAlpha = false;
  bool needBeta = false;
  if (name == "relu") {
    a.type = ActivationType::kRELU;
  } else if (name == "tanh") {
    a.type = ActivationType::kTANH;
  } else if (name == "sigmoid") {
    a.type = ActivationType::kSIGMOID;
  } else if (name == "softsign") {
    a.type = ActivationType::kSOFTSIGN;
  } else if (name == "softplus") {
    a = {ActivationType::kSOFTPLUS, false, 1.0F, 1.0F};
  } else if (name == "affine") {
    a = {ActivationType::kRELU, true, 1.0F, 0.0F};
    needAlpha = needBeta = true;
  } else if (name == "leakyrelu") {
    a = {ActivationType::kLEAKY_RELU, false, 0.01F, 0.0F};
    needAlpha = true;
  } else if (name == "thresholdedrelu") {
    a = {ActivationType::kTHRESHOLDED_RELU, false, 1.0F, 0.0F};
    needAlpha = true;
  } else if (name == "scaledtanh") {
    a = {ActivationType::kSCALED_TANH, false, 1.0F, 1.0F};
    needAlpha = needBeta = true;
  } else if (name == "hardsigmoid") {
    a = {ActivationType::kHARD_SIGMOID, false, 0.2F, 0.5F};
    needAlpha = needBeta = true;
  } else if (name == "elu") {
    a = {ActivationType::kELU, false, 1.0F, 0.0F};
    needAlpha = true;
  } else {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "activation '", name, "' is not supported");
  }
  if (needAlpha && ai < alphas.size()) {
    a.alpha = alphas[ai++];
  }
  if (needBeta && bi < betas.size()) {
    a.beta = betas[bi++];
  }
  return a;
}

/// Layer-making helpers over the context (all errors name the node).
class Layers {
 public:
  Layers(ImportContext& ctx, Node const& node) : ctx_(ctx), node_(node) {}

  Result<ITensor*> ew(ITensor* a, ITensor* b, ElementWiseOperation op) {
    IElementWiseLayer* l = ctx_.network().addElementWise(*a, *b, op);
    KO_RETURN_IF_ERROR(ctx_.check(l, node_, "elementwise"));
    return l->getOutput(0);
  }
  Result<ITensor*> slice(ITensor* t, Dims const& start, Dims const& size) {
    Dims stride{start.nbDims, {}};
    for (int32_t i = 0; i < stride.nbDims; ++i) {
      stride.d[i] = 1;
    }
    ISliceLayer* l = ctx_.network().addSlice(*t, start, size, stride);
    KO_RETURN_IF_ERROR(ctx_.check(l, node_, "slice"));
    return l->getOutput(0);
  }
  Result<ITensor*> reshape(ITensor* t, Dims const& dims) { return kiln::onnx::reshape(ctx_, node_, t, dims, false); }
  Result<ITensor*> matmulT(ITensor* a, ITensor* b) {
    IMatrixMultiplyLayer* l =
        ctx_.network().addMatrixMultiply(*a, MatrixOperation::kNONE, *b, MatrixOperation::kTRANSPOSE);
    KO_RETURN_IF_ERROR(ctx_.check(l, node_, "matmul"));
    return l->getOutput(0);
  }
  Result<ITensor*> gather(ITensor* t, int32_t axis, int64_t index, bool keepAxis) {
    KO_ASSIGN_OR_RETURN(Constant * c, ctx_.newConstant(DataType::kINT32, keepAxis ? Dims{1, {1}} : Dims{0, {}}));
    auto i32 = static_cast<int32_t>(index);
    std::memcpy(c->bytes.data(), &i32, sizeof(i32));
    KO_ASSIGN_OR_RETURN(ITensor * idx, ctx_.constantTensor(c, node_.name() + "_index"));
    IGatherLayer* l = ctx_.network().addGather(*t, *idx, axis);
    KO_RETURN_IF_ERROR(ctx_.check(l, node_, "gather"));
    return l->getOutput(0);
  }
  Result<ITensor*> cast(ITensor* t, DataType type) {
    if (t->getType() == type) {
      return t;
    }
    ICastLayer* l = ctx_.network().addCast(*t, type);
    KO_RETURN_IF_ERROR(ctx_.check(l, node_, "cast"));
    return l->getOutput(0);
  }
  Result<ITensor*> floatConstant(float v, Dims const& dims) {
    KO_ASSIGN_OR_RETURN(Constant * c, ctx_.newConstant(DataType::kFLOAT, dims));
    for (int64_t i = 0; i < c->count(); ++i) {
      std::memcpy(c->bytes.data() + i * 4, &v, sizeof(v));
    }
    return ctx_.constantTensor(c, node_.name() + "_const");
  }
  Result<ITensor*> concat(std::vector<ITensor*> ts, int32_t axis) {
    if (ts.size() == 1) {
      return ts[0];
    }
    IConcatenationLayer* l = ctx_.network().addConcatenation(ts.data(), static_cast<int32_t>(ts.size()));
    KO_RETURN_IF_ERROR(ctx_.check(l, node_, "concat"));
    l->setAxis(axis);
    return l->getOutput(0);
  }
  Result<ITensor*> activation(Activation const& a, ITensor* v) {
    if (a.affine) {
      KO_ASSIGN_OR_RETURN(ITensor * s, floatConstant(a.alpha, Dims{2, {1, 1}}));
      KO_ASSIGN_OR_RETURN(ITensor * b, floatConstant(a.beta, Dims{2, {1, 1}}));
      KO_ASSIGN_OR_RETURN(ITensor * p, ew(v, s, ElementWiseOperation::kPROD));
      return ew(p, b, ElementWiseOperation::kSUM);
    }
    IActivationLayer* l = ctx_.network().addActivation(*v, a.type);
    KO_RETURN_IF_ERROR(ctx_.check(l, node_, "activation"));
    l->setAlpha(a.alpha);
    l->setBeta(a.beta);
    return l->getOutput(0);
  }
  Result<ITensor*> clip(ITensor* v, float bound) {
    IActivationLayer* l = ctx_.network().addActivation(*v, ActivationType::kCLIP);
    KO_RETURN_IF_ERROR(ctx_.check(l, node_, "clip"));
    l->setAlpha(-bound);
    l->setBeta(bound);
    return l->getOutput(0);
  }
  Result<ITensor*> select(ITensor* c, ITensor* a, ITensor* b) {
    ISelectLayer* l = ctx_.network().addSelect(*c, *a, *b);
    KO_RETURN_IF_ERROR(ctx_.check(l, node_, "select"));
    return l->getOutput(0);
  }

  ImportContext& ctx() { return ctx_; }

 private:
  ImportContext& ctx_;
  Node const& node_;
};

/// One direction's weights, sliced out of W, R, B and P.
struct DirectionWeights {
  std::vector<ITensor*> w;   // [1, H, I] per gate
  std::vector<ITensor*> r;   // [H, H] per gate
  std::vector<ITensor*> wb;  // [1, H] per gate (nullptr without B)
  std::vector<ITensor*> rb;  // [1, H] per gate (nullptr without B)
  std::vector<ITensor*> p;   // [1, H] input, output, forget (empty without P)
};

class Step final : public RecurrentStep {
 public:
  Step(Layers& L, DirectionWeights const& w, std::vector<Activation> const& acts, bool hasClip, float clip)
      : L_(L), w_(w), acts_(acts), hasClip_(hasClip), clip_(clip) {}

  ITensor* x(int32_t gate) const override { return x_[static_cast<size_t>(gate)]; }
  ITensor* h() const override { return h_; }
  ITensor* c() const override { return c_; }
  Result<ITensor*> timesR(ITensor* v, int32_t gate) override { return L_.matmulT(v, w_.r[static_cast<size_t>(gate)]); }
  ITensor* rb(int32_t gate) const override { return w_.rb[static_cast<size_t>(gate)]; }
  ITensor* p(int32_t k) const override { return w_.p.empty() ? nullptr : w_.p[static_cast<size_t>(k)]; }
  Result<ITensor*> act(int32_t k, ITensor* v) override {
    if (hasClip_) {
      KO_ASSIGN_OR_RETURN(v, L_.clip(v, clip_));
    }
    return L_.activation(acts_[static_cast<size_t>(k)], v);
  }
  Result<ITensor*> add(ITensor* a, ITensor* b) override { return L_.ew(a, b, ElementWiseOperation::kSUM); }
  Result<ITensor*> sub(ITensor* a, ITensor* b) override { return L_.ew(a, b, ElementWiseOperation::kSUB); }
  Result<ITensor*> mul(ITensor* a, ITensor* b) override { return L_.ew(a, b, ElementWiseOperation::kPROD); }
  Result<ITensor*> oneMinus(ITensor* v) override {
    KO_ASSIGN_OR_RETURN(ITensor * one, L_.floatConstant(1.0F, Dims{2, {1, 1}}));
    return L_.ew(one, v, ElementWiseOperation::kSUB);
  }

  std::vector<ITensor*> x_;
  ITensor* h_ = nullptr;
  ITensor* c_ = nullptr;

 private:
  Layers& L_;
  DirectionWeights const& w_;
  std::vector<Activation> const& acts_;
  bool hasClip_;
  float clip_;
};

/// Static extent `i` of `t` (error naming the node and `what` when unknown).
Result<int64_t> staticDim(Node const& node, ITensor* t, int32_t i, char const* what) {
  Dims d = t->getDimensions();
  if (i >= d.nbDims || d.d[i] < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, what, " needs a static dim ", i, " (got ",
                                    dimsString(d), ")");
  }
  return d.d[i];
}

}  // namespace

Status importRecurrent(ImportContext& ctx, Node const& node, RecurrentOp const& op) {
  Layers L(ctx, node);
  int64_t const g = op.gates;
  KO_ASSIGN_OR_RETURN(std::string direction, attrString(node, "direction", "forward"));
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "direction '", direction,
                                    "' is not one of "
                                    "forward, reverse, bidirectional");
  }
  int32_t const numDir = direction == "bidirectional" ? 2 : 1;
  KO_ASSIGN_OR_RETURN(int64_t layout, attrInt(node, "layout", 0));
  if (layout != 0 && layout != 1) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "layout must be 0 or 1, not ", layout);
  }
  int32_t const seqAxis = layout == 0 ? 0 : 1;
  int32_t const batchAxis = 1 - seqAxis;
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * w, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * r, ctx.tensor(node, 2));
  if (x->getType() != DataType::kFLOAT) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "only float32 X is supported");
  }
  if (x->getDimensions().nbDims != 3 || w->getDimensions().nbDims != 3 || r->getDimensions().nbDims != 3) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "X, W and R must be 3-D");
  }
  KO_ASSIGN_OR_RETURN(int64_t wDirs, staticDim(node, w, 0, "W"));
  KO_ASSIGN_OR_RETURN(int64_t gh, staticDim(node, w, 1, "W"));
  KO_ASSIGN_OR_RETURN(int64_t in, staticDim(node, w, 2, "W"));
  KO_ASSIGN_OR_RETURN(int64_t hidden, attrInt(node, "hidden_size", gh / g));
  if (wDirs != numDir || gh != g * hidden || hidden <= 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "W has shape ", dimsString(w->getDimensions()),
                                    "; direction '", direction, "' and hidden_size ", hidden, " need [", numDir, ",",
                                    g * hidden, ",", in, "]");
  }
  Dims rd = r->getDimensions();
  if (rd.d[0] != numDir || rd.d[1] != g * hidden || rd.d[2] != hidden) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "R has shape ", dimsString(rd), "; it needs [",
                                    numDir, ",", g * hidden, ",", hidden, "]");
  }
  ITensor* b = nullptr;
  if (ImportContext::hasInput(node, 3)) {
    KO_ASSIGN_OR_RETURN(b, ctx.tensor(node, 3));
    Dims bd = b->getDimensions();
    if (bd.nbDims != 2 || bd.d[0] != numDir || bd.d[1] != 2 * g * hidden) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "B has shape ", dimsString(bd), "; it needs [",
                                      numDir, ",", 2 * g * hidden, "]");
    }
  }
  ITensor* p = nullptr;
  if (op.hasCell && ImportContext::hasInput(node, 7)) {
    KO_ASSIGN_OR_RETURN(p, ctx.tensor(node, 7));
    Dims pd = p->getDimensions();
    if (pd.nbDims != 2 || pd.d[0] != numDir || pd.d[1] != 3 * hidden) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "P has shape ", dimsString(pd), "; it needs [",
                                      numDir, ",", 3 * hidden, "]");
    }
  }
  // Activations: one set per direction (a single set serves both directions).
  size_t const perDir = op.defaultActivations.size();
  KO_ASSIGN_OR_RETURN(std::vector<float> alphas, attrFloats(node, "activation_alpha"));
  KO_ASSIGN_OR_RETURN(std::vector<float> betas, attrFloats(node, "activation_beta"));
  std::vector<std::string> names;
  if (auto const* a = findAttr(node, "activations")) {
    names.assign(a->strings().begin(), a->strings().end());
  }
  if (names.empty()) {
    for (int32_t d = 0; d < numDir; ++d) {
      names.insert(names.end(), op.defaultActivations.begin(), op.defaultActivations.end());
    }
  } else if (names.size() == perDir && numDir == 2) {
    std::vector<std::string> twice = names;
    names.insert(names.end(), twice.begin(), twice.end());
  }
  if (names.size() != perDir * static_cast<size_t>(numDir)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "activations has ", names.size(),
                                    " entries; it needs ", perDir * static_cast<size_t>(numDir));
  }
  std::vector<Activation> acts;
  size_t ai = 0;
  size_t bi = 0;
  for (auto const& name : names) {
    KO_ASSIGN_OR_RETURN(Activation a, parseActivation(node, name, alphas, ai, betas, bi));
    acts.push_back(a);
  }
  auto const* clipAttr = findAttr(node, "clip");
  KO_ASSIGN_OR_RETURN(float clip, attrFloat(node, "clip", 0.0F));
  bool const hasClip = clipAttr != nullptr;
  if (hasClip && !(clip > 0.0F)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "clip must be positive, not ", clip);
  }

  // Run-time extents: the shape of X, its batch extent and (for the masks) its sequence length.
  IShapeLayer* shapeL = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(shapeL, node, "shape"));
  KO_ASSIGN_OR_RETURN(ITensor * xShape, L.cast(shapeL->getOutput(0), DataType::kINT64));
  KO_ASSIGN_OR_RETURN(ITensor * batch, L.gather(xShape, 0, batchAxis, true));
  KO_ASSIGN_OR_RETURN(ITensor * hiddenT, ctx.int64Tensor({hidden}, node.name() + "_hidden"));
  KO_ASSIGN_OR_RETURN(ITensor * stateShape, L.concat({batch, hiddenT}, 0));
  ITensor* lens = nullptr;
  if (ImportContext::hasInput(node, 4)) {
    KO_ASSIGN_OR_RETURN(lens, ctx.tensor(node, 4));
    KO_ASSIGN_OR_RETURN(lens, L.cast(lens, DataType::kINT64));
  }
  KO_ASSIGN_OR_RETURN(ITensor * zero11, L.floatConstant(0.0F, Dims{2, {1, 1}}));
  auto zeros = [&]() -> Result<ITensor*> {
    IFillLayer* f = ctx.network().addFill(Dims{2, {1, 1}}, FillOperation::kLINSPACE, DataType::kFLOAT);
    KO_RETURN_IF_ERROR(ctx.check(f, node, "zeros"));
    f->setInput(0, *stateShape);
    f->setAlpha(0.0);
    f->setBeta(0.0);
    return f->getOutput(0);
  };
  auto initialState = [&](int input, int32_t d) -> Result<ITensor*> {
    if (!ImportContext::hasInput(node, input)) {
      return zeros();
    }
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, input));
    if (t->getDimensions().nbDims != 3) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "initial states must be 3-D");
    }
    return L.gather(t, layout == 0 ? 0 : 1, d, false);
  };

  std::vector<ITensor*> ys, yhs, ycs;
  bool const wantY = node.output_size() > 0 && !node.output(0).empty();
  for (int32_t d = 0; d < numDir; ++d) {
    bool const reverse = direction == "reverse" || d == 1;
    DirectionWeights dw;
    for (int64_t k = 0; k < g; ++k) {
      KO_ASSIGN_OR_RETURN(ITensor * wk, L.slice(w, Dims{3, {d, k * hidden, 0}}, Dims{3, {1, hidden, in}}));
      KO_ASSIGN_OR_RETURN(ITensor * rk, L.slice(r, Dims{3, {d, k * hidden, 0}}, Dims{3, {1, hidden, hidden}}));
      KO_ASSIGN_OR_RETURN(rk, L.reshape(rk, Dims{2, {hidden, hidden}}));
      dw.w.push_back(wk);
      dw.r.push_back(rk);
      ITensor* wb = nullptr;
      ITensor* rb = nullptr;
      if (b != nullptr) {
        KO_ASSIGN_OR_RETURN(wb, L.slice(b, Dims{2, {d, k * hidden}}, Dims{2, {1, hidden}}));
        KO_ASSIGN_OR_RETURN(rb, L.slice(b, Dims{2, {d, (g + k) * hidden}}, Dims{2, {1, hidden}}));
      }
      dw.wb.push_back(wb);
      dw.rb.push_back(rb);
    }
    if (p != nullptr) {
      for (int64_t k = 0; k < 3; ++k) {
        KO_ASSIGN_OR_RETURN(ITensor * pk, L.slice(p, Dims{2, {d, k * hidden}}, Dims{2, {1, hidden}}));
        dw.p.push_back(pk);
      }
    }
    ILoop* loop = ctx.network().addLoop();
    if (loop == nullptr) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the network refused the loop");
    }
    loop->setName(cat(node.name().empty() ? node.op_type() : node.name(), "_dir", d, "_", ctx.newId()).c_str());
    std::vector<Activation> dirActs(acts.begin() + static_cast<std::ptrdiff_t>(perDir * static_cast<size_t>(d)),
                                    acts.begin() + static_cast<std::ptrdiff_t>(perDir * static_cast<size_t>(d + 1)));
    Step step(L, dw, dirActs, hasClip, clip);
    for (int64_t k = 0; k < g; ++k) {
      // X * W_k^T for every step at once, plus the biases that do not depend on the state.
      KO_ASSIGN_OR_RETURN(ITensor * xw, L.matmulT(x, dw.w[static_cast<size_t>(k)]));
      if (b != nullptr) {
        ITensor* bias = dw.wb[static_cast<size_t>(k)];
        if (k != op.separateRbGate) {
          KO_ASSIGN_OR_RETURN(bias, L.ew(bias, dw.rb[static_cast<size_t>(k)], ElementWiseOperation::kSUM));
        }
        KO_ASSIGN_OR_RETURN(bias, L.reshape(bias, Dims{3, {1, 1, hidden}}));
        KO_ASSIGN_OR_RETURN(xw, L.ew(xw, bias, ElementWiseOperation::kSUM));
      }
      IIteratorLayer* it = loop->addIterator(*xw, seqAxis, reverse);
      KO_RETURN_IF_ERROR(ctx.check(it, node, "time_step"));
      step.x_.push_back(it->getOutput(0));
    }
    KO_ASSIGN_OR_RETURN(ITensor * h0, initialState(5, d));
    IRecurrenceLayer* hRec = loop->addRecurrence(*h0);
    KO_RETURN_IF_ERROR(ctx.check(hRec, node, "hidden_state"));
    step.h_ = hRec->getOutput(0);
    IRecurrenceLayer* cRec = nullptr;
    if (op.hasCell) {
      KO_ASSIGN_OR_RETURN(ITensor * c0, initialState(6, d));
      cRec = loop->addRecurrence(*c0);
      KO_RETURN_IF_ERROR(ctx.check(cRec, node, "cell_state"));
      step.c_ = cRec->getOutput(0);
    }
    KO_ASSIGN_OR_RETURN(CellState next, op.cell(step));
    ITensor* y = next.h;
    if (lens != nullptr) {
      // The time index of this step: 0, 1, ... forward; S-1, S-2, ... in reverse.
      ITensor* start = nullptr;
      if (reverse) {
        KO_ASSIGN_OR_RETURN(ITensor * s, L.gather(xShape, 0, seqAxis, false));
        KO_ASSIGN_OR_RETURN(ITensor * one, scalarConstant(ctx, node, DataType::kINT64, 1));
        KO_ASSIGN_OR_RETURN(start, L.ew(s, one, ElementWiseOperation::kSUB));
      }
      KO_ASSIGN_OR_RETURN(ITensor * t, iterationCounter(ctx, node, *loop, DataType::kINT64, start, reverse ? -1 : 1));
      KO_ASSIGN_OR_RETURN(ITensor * t1, L.reshape(t, Dims{1, {1}}));
      KO_ASSIGN_OR_RETURN(ITensor * valid, L.ew(t1, lens, ElementWiseOperation::kLESS));
      KO_ASSIGN_OR_RETURN(valid, L.reshape(valid, Dims{2, {-1, 1}}));
      KO_ASSIGN_OR_RETURN(y, L.select(valid, next.h, zero11));
      KO_ASSIGN_OR_RETURN(next.h, L.select(valid, next.h, step.h_));
      if (op.hasCell) {
        KO_ASSIGN_OR_RETURN(next.c, L.select(valid, next.c, step.c_));
      }
    }
    hRec->setInput(1, *next.h);
    if (cRec != nullptr) {
      cRec->setInput(1, *next.c);
    }
    // Outputs with their direction axis: [1, B, H] (layout 0) or [B, 1, H] (layout 1).
    Dims const withDir = layout == 0 ? Dims{3, {1, -1, hidden}} : Dims{3, {-1, 1, hidden}};
    if (wantY) {
      KO_ASSIGN_OR_RETURN(ITensor * y3, L.reshape(y, withDir));
      ILoopOutputLayer* o =
          loop->addLoopOutput(*y3, reverse ? LoopOutput::kREVERSE : LoopOutput::kCONCATENATE, seqAxis);
      KO_RETURN_IF_ERROR(ctx.check(o, node, "Y"));
      ys.push_back(o->getOutput(0));
    }
    ILoopOutputLayer* oh = loop->addLoopOutput(*hRec->getOutput(0), LoopOutput::kLAST_VALUE);
    KO_RETURN_IF_ERROR(ctx.check(oh, node, "Y_h"));
    KO_ASSIGN_OR_RETURN(ITensor * yh, L.reshape(oh->getOutput(0), withDir));
    yhs.push_back(yh);
    if (cRec != nullptr) {
      ILoopOutputLayer* oc = loop->addLoopOutput(*cRec->getOutput(0), LoopOutput::kLAST_VALUE);
      KO_RETURN_IF_ERROR(ctx.check(oc, node, "Y_c"));
      KO_ASSIGN_OR_RETURN(ITensor * yc, L.reshape(oc->getOutput(0), withDir));
      ycs.push_back(yc);
    }
  }
  if (wantY) {
    KO_ASSIGN_OR_RETURN(ITensor * y, L.concat(ys, layout == 0 ? 1 : 2));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, y));
  }
  KO_ASSIGN_OR_RETURN(ITensor * yh, L.concat(yhs, layout == 0 ? 0 : 1));
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, yh));
  if (op.hasCell) {
    KO_ASSIGN_OR_RETURN(ITensor * yc, L.concat(ycs, layout == 0 ? 0 : 1));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 2, yc));
  }
  return Status::success();
}

}  // namespace kiln::onnx
