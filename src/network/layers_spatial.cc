// Spatial layer family: Deconvolution, Resize, GridSample, LRN, ParametricReLU, Padding, RaggedSoftMax
// (factories declared in network/layer_factories.h, and their layer classes).
#include <cmath>

#include "network/layer_factories.h"
#include "network/layers.h"

namespace kiln::network {

namespace {

Dims noDims() {
  Dims d{};
  d.nbDims = -1;
  return d;
}

/// Shape of deconvolution weights of `count` values: [C, K / groups, k...] with C = count / (K / groups * kernel
/// volume). nbDims == -1, with `why` set, when the count does not fit.
Dims deconvKernelShape(int64_t count, int64_t nbOutputMaps, int64_t groups, std::vector<int64_t> const& kernel,
                       std::string* why) {
  Dims bad = noDims();
  if (groups < 1 || nbOutputMaps % groups != 0) {
    *why = strCat(nbOutputMaps, " output maps are not divisible by ", groups, " groups");
    return bad;
  }
  int64_t kv = 1;
  for (int64_t k : kernel) kv *= k;
  int64_t per = nbOutputMaps / groups * kv;
  if (per <= 0 || count <= 0 || count % per != 0) {
    *why =
        strCat("kernel weights have ", count,
               " values, which is not a multiple of K / groups * kernel volume = ", nbOutputMaps / groups, " * ", kv);
    return bad;
  }
  std::vector<int64_t> shape{count / per, nbOutputMaps / groups};
  shape.insert(shape.end(), kernel.begin(), kernel.end());
  return makeDims(shape);
}

bool validLrn(int64_t window, double alpha, double beta, double k, std::string* why) {
  if (window < 1 || window > 15 || window % 2 == 0)
    *why = strCat("window = ", window, " must be odd and in [1, 15]");
  else if (!(std::fabs(alpha) <= 1e20))
    *why = strCat("alpha = ", alpha, " must be in [-1e20, 1e20]");
  else if (!(beta >= 0.01 && beta <= 1e5))
    *why = strCat("beta = ", beta, " must be in [0.01, 1e5]");
  else if (!(k >= 1e-5 && k <= 1e10))
    *why = strCat("k = ", k, " must be in [1e-5, 1e10]");
  else
    return true;
  return false;
}

//
// Layer classes
//

class DeconvolutionLayer final : public LayerBase<IDeconvolutionLayer> {
 public:
  DeconvolutionLayer(NetworkImpl& net, ir::Node* node, Weights kernel, Weights bias)
      : LayerBase(net, LayerType::kDECONVOLUTION, node), kernel_(kernel), bias_(bias) {}
  void setNbOutputMaps(int64_t nbOutputMaps) noexcept override {
    if (nbOutputMaps < 1) return error(strCat("setNbOutputMaps: ", nbOutputMaps, " must be >= 1"));
    reshapeKernel(nbOutputMaps, getNbGroups(), kernelShape());
    setInt("num_output_maps", nbOutputMaps);
  }
  int64_t getNbOutputMaps() const noexcept override { return node_->attrs.getInt("num_output_maps"); }
  void setNbGroups(int64_t nbGroups) noexcept override {
    if (nbGroups < 1) return error(strCat("setNbGroups: ", nbGroups, " must be >= 1"));
    reshapeKernel(getNbOutputMaps(), nbGroups, kernelShape());
    setInt("groups", nbGroups);
  }
  int64_t getNbGroups() const noexcept override { return node_->attrs.getInt("groups", 1); }
  void setKernelWeights(Weights weights) noexcept override {
    if (!net_.checkWeights(weights, node_->name, "kernel weights", -1)) return;
    Dims shape{};
    if (weights.count > 0) {
      std::string why;
      shape = deconvKernelShape(weights.count, getNbOutputMaps(), getNbGroups(), kernelShape(), &why);
      if (shape.nbDims < 0) return error(strCat("setKernelWeights: ", why));
    }
    kernel_ = weights;
    setWeightInput(1, weights, shape, "kernel");
  }
  Weights getKernelWeights() const noexcept override { return kernel_; }
  void setBiasWeights(Weights weights) noexcept override {
    if (!net_.checkWeights(weights, node_->name, "bias weights", weights.count == 0 ? 0 : getNbOutputMaps())) return;
    bias_ = weights;
    setWeightInput(2, weights, makeDims({weights.count}), "bias");
  }
  Weights getBiasWeights() const noexcept override { return bias_; }
  void setPrePadding(Dims const& padding) noexcept override { setSpatial("pads_begin", padding, 0, "pre-padding"); }
  Dims getPrePadding() const noexcept override { return toDims(node_->attrs.getInts("pads_begin")); }
  void setPostPadding(Dims const& padding) noexcept override { setSpatial("pads_end", padding, 0, "post-padding"); }
  Dims getPostPadding() const noexcept override { return toDims(node_->attrs.getInts("pads_end")); }
  void setPaddingMode(PaddingMode paddingMode) noexcept override {
    if (!validEnum(paddingMode))
      return error(strCat("setPaddingMode: unknown mode ", static_cast<int32_t>(paddingMode)));
    setInt("padding_mode", static_cast<int64_t>(paddingMode));
  }
  PaddingMode getPaddingMode() const noexcept override {
    return static_cast<PaddingMode>(node_->attrs.getInt("padding_mode"));
  }
  void setKernelSizeNd(Dims const& kernelSize) noexcept override {
    if (kernelSize.nbDims < 1 || kernelSize.nbDims > 3)
      return error(
          strCat("setKernelSizeNd: the kernel must have 1, 2 or 3 dimensions, got ", dimsToString(kernelSize)));
    for (int32_t i = 0; i < kernelSize.nbDims; ++i)
      if (kernelSize.d[i] < 1)
        return error(strCat("setKernelSizeNd: ", dimsToString(kernelSize), " has a dim below 1"));
    if (kernelSize.nbDims != nbSpatial()) {
      size_t n = static_cast<size_t>(kernelSize.nbDims);
      node_->attrs.setInts("strides", std::vector<int64_t>(n, 1));
      node_->attrs.setInts("dilations", std::vector<int64_t>(n, 1));
      node_->attrs.setInts("pads_begin", std::vector<int64_t>(n, 0));
      node_->attrs.setInts("pads_end", std::vector<int64_t>(n, 0));
    }
    reshapeKernel(getNbOutputMaps(), getNbGroups(), toInts(kernelSize));
    setInts("kernel_shape", toInts(kernelSize));
  }
  Dims getKernelSizeNd() const noexcept override { return toDims(kernelShape()); }
  void setStrideNd(Dims const& stride) noexcept override { setSpatial("strides", stride, 1, "stride"); }
  Dims getStrideNd() const noexcept override { return toDims(node_->attrs.getInts("strides")); }
  void setPaddingNd(Dims const& padding) noexcept override {
    if (setSpatial("pads_begin", padding, 0, "padding")) setInts("pads_end", toInts(padding));
  }
  Dims getPaddingNd() const noexcept override { return getPrePadding(); }
  void setDilationNd(Dims const& dilation) noexcept override { setSpatial("dilations", dilation, 1, "dilation"); }
  Dims getDilationNd() const noexcept override { return toDims(node_->attrs.getInts("dilations")); }

  /// Records the hidden constants created by the factory.
  void setWeightNodes(ir::Node* kernel, ir::Node* bias) {
    if (kernel) weightNodes_[1] = kernel;
    if (bias) weightNodes_[2] = bias;
  }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index <= 2; }
  void onInputSet(int32_t index) override {
    if (index == 1) kernel_ = emptyWeights(kernel_.type);
    if (index == 2) bias_ = emptyWeights(bias_.type);
  }

 private:
  std::vector<int64_t> kernelShape() const { return node_->attrs.getInts("kernel_shape"); }
  int32_t nbSpatial() const { return static_cast<int32_t>(kernelShape().size()); }
  bool setSpatial(char const* attr, Dims const& d, int64_t minValue, char const* what) {
    if (d.nbDims != nbSpatial()) {
      error(strCat(what, " needs ", nbSpatial(), " values (one per spatial dimension), got ", dimsToString(d)));
      return false;
    }
    for (int32_t i = 0; i < d.nbDims; ++i) {
      if (d.d[i] < minValue) {
        error(strCat(what, " ", dimsToString(d), " has a value below ", minValue));
        return false;
      }
    }
    setInts(attr, toInts(d));
    return true;
  }
  // Reshapes the hidden kernel constant; reports when the weights' count does not fit (new weights must follow).
  void reshapeKernel(int64_t nbOutputMaps, int64_t groups, std::vector<int64_t> const& kernel) {
    auto it = weightNodes_.find(1);
    if (it == weightNodes_.end()) return;
    std::string why;
    Dims shape = deconvKernelShape(kernel_.count, nbOutputMaps, groups, kernel, &why);
    if (shape.nbDims < 0) return error(strCat(why, " (set matching kernel weights)"));
    it->second->constant = HostTensor::borrow(kernel_.type, shape, kernel_.values);
    net_.markChanged(it->second);
  }
  Weights kernel_;
  Weights bias_;
};

class ResizeLayer final : public LayerBase<IResizeLayer> {
 public:
  ResizeLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kRESIZE, node) {}
  void setOutputDimensions(Dims const& dimensions) noexcept override {
    if (dimensions.nbDims < 1 || dimensions.nbDims > Dims::MAX_DIMS)
      return error(strCat("setOutputDimensions: invalid dimensions ", dimsToString(dimensions)));
    for (int32_t i = 0; i < dimensions.nbDims; ++i)
      if (dimensions.d[i] < 0)
        return error(strCat("setOutputDimensions: ", dimsToString(dimensions), " has a negative extent"));
    eraseAttr("scales");
    setInts("output_dims", toInts(dimensions));
  }
  Dims getOutputDimensions() const noexcept override {
    if (node_->inputs.size() > 1 && node_->inputs[1]) return noDims();
    return node_->attrs.has("output_dims") ? toDims(node_->attrs.getInts("output_dims")) : noDims();
  }
  void setScales(float const* scales, int32_t nbScales) noexcept override {
    if (!scales || nbScales < 1 || nbScales > Dims::MAX_DIMS)
      return error(strCat("setScales: needs 1 to ", Dims::MAX_DIMS, " scales, got ", nbScales));
    std::vector<double> v;
    for (int32_t i = 0; i < nbScales; ++i) {
      if (!(scales[i] > 0.0F) || !std::isfinite(scales[i]))
        return error(strCat("setScales: scale ", i, " = ", scales[i], " must be positive and finite"));
      v.push_back(static_cast<double>(scales[i]));
    }
    eraseAttr("output_dims");
    node_->attrs.set("scales", ir::AttrValue{std::move(v)});
    net_.markChanged(node_);
  }
  int32_t getScales(int32_t size, float* scales) const noexcept override {
    if (!node_->attrs.has("scales") || (node_->inputs.size() > 1 && node_->inputs[1])) return -1;
    std::vector<double> v = node_->attrs.getFloats("scales");
    for (int32_t i = 0; scales && i < size && i < static_cast<int32_t>(v.size()); ++i)
      scales[i] = static_cast<float>(v[i]);
    return static_cast<int32_t>(v.size());
  }
  void setResizeMode(InterpolationMode interpolationMode) noexcept override {
    if (!validEnum(interpolationMode))
      return error(strCat("setResizeMode: unknown mode ", static_cast<int32_t>(interpolationMode)));
    setInt("mode", static_cast<int64_t>(interpolationMode));
  }
  InterpolationMode getResizeMode() const noexcept override {
    return static_cast<InterpolationMode>(node_->attrs.getInt("mode"));
  }
  void setCoordinateTransformation(ResizeCoordinateTransformation coordTransform) noexcept override {
    if (!validEnum(coordTransform))
      return error(strCat("setCoordinateTransformation: unknown value ", static_cast<int32_t>(coordTransform)));
    setInt("coordinate_transformation", static_cast<int64_t>(coordTransform));
  }
  ResizeCoordinateTransformation getCoordinateTransformation() const noexcept override {
    return static_cast<ResizeCoordinateTransformation>(node_->attrs.getInt("coordinate_transformation"));
  }
  void setSelectorForSinglePixel(ResizeSelector selector) noexcept override {
    if (!validEnum(selector))
      return error(strCat("setSelectorForSinglePixel: unknown value ", static_cast<int32_t>(selector)));
    setInt("selector", static_cast<int64_t>(selector));
  }
  ResizeSelector getSelectorForSinglePixel() const noexcept override {
    return static_cast<ResizeSelector>(node_->attrs.getInt("selector"));
  }
  void setNearestRounding(ResizeRoundMode value) noexcept override {
    if (!validEnum(value)) return error(strCat("setNearestRounding: unknown value ", static_cast<int32_t>(value)));
    setInt("nearest_rounding", static_cast<int64_t>(value));
  }
  ResizeRoundMode getNearestRounding() const noexcept override {
    return static_cast<ResizeRoundMode>(node_->attrs.getInt("nearest_rounding"));
  }
  void setCubicCoeff(float a) noexcept override {
    if (!std::isfinite(a)) return error("setCubicCoeff: the coefficient must be finite");
    setFloat("cubic_coeff", a);
  }
  float getCubicCoeff() const noexcept override { return static_cast<float>(node_->attrs.getFloat("cubic_coeff")); }
  void setExcludeOutside(bool excludeFlag) noexcept override { setInt("exclude_outside", excludeFlag ? 1 : 0); }
  bool getExcludeOutside() const noexcept override { return node_->attrs.getInt("exclude_outside") != 0; }
  /// With neither output dimensions, scales nor input 1, the output keeps the input's shape (scales of 1).
  void beforeInfer() override {
    bool in1 = node_->inputs.size() > 1 && node_->inputs[1];
    ir::Value const* x = node_->input(0);  // already inferred when this runs
    Dims xd = x ? x->shape : noDims();
    if (!in1 && !node_->attrs.has("output_dims") && !node_->attrs.has("scales") && xd.nbDims >= 1)
      node_->attrs.set("scales", ir::AttrValue{std::vector<double>(static_cast<size_t>(xd.nbDims), 1.0)});
  }

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

class GridSampleLayer final : public LayerBase<IGridSampleLayer> {
 public:
  GridSampleLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kGRID_SAMPLE, node) {}
  void setInterpolationMode(InterpolationMode mode) noexcept override {
    if (!validEnum(mode)) return error(strCat("setInterpolationMode: unknown mode ", static_cast<int32_t>(mode)));
    setInt("mode", static_cast<int64_t>(mode));
  }
  InterpolationMode getInterpolationMode() const noexcept override {
    return static_cast<InterpolationMode>(node_->attrs.getInt("mode"));
  }
  void setAlignCorners(bool alignCorners) noexcept override { setInt("align_corners", alignCorners ? 1 : 0); }
  bool getAlignCorners() const noexcept override { return node_->attrs.getInt("align_corners") != 0; }
  bool setSampleMode(SampleMode mode) noexcept override {
    if (mode != SampleMode::kFILL && mode != SampleMode::kCLAMP && mode != SampleMode::kREFLECT) return false;
    setInt("sample_mode", static_cast<int64_t>(mode));
    return true;
  }
  SampleMode getSampleMode() const noexcept override {
    return static_cast<SampleMode>(node_->attrs.getInt("sample_mode"));
  }

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

class LRNLayer final : public LayerBase<ILRNLayer> {
 public:
  LRNLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kLRN, node) {}
  void setWindowSize(int64_t windowSize) noexcept override {
    if (check("setWindowSize", windowSize, getAlpha(), getBeta(), getK())) setInt("window", windowSize);
  }
  int64_t getWindowSize() const noexcept override { return node_->attrs.getInt("window"); }
  void setAlpha(float alpha) noexcept override {
    if (check("setAlpha", getWindowSize(), alpha, getBeta(), getK())) setFloat("alpha", alpha);
  }
  float getAlpha() const noexcept override { return static_cast<float>(node_->attrs.getFloat("alpha")); }
  void setBeta(float beta) noexcept override {
    if (check("setBeta", getWindowSize(), getAlpha(), beta, getK())) setFloat("beta", beta);
  }
  float getBeta() const noexcept override { return static_cast<float>(node_->attrs.getFloat("beta")); }
  void setK(float k) noexcept override {
    if (check("setK", getWindowSize(), getAlpha(), getBeta(), k)) setFloat("k", k);
  }
  float getK() const noexcept override { return static_cast<float>(node_->attrs.getFloat("k")); }

 private:
  bool check(char const* what, int64_t window, double alpha, double beta, double k) const {
    std::string why;
    if (validLrn(window, alpha, beta, k, &why)) return true;
    error(strCat(what, ": ", why));
    return false;
  }
};

class ParametricReLULayer final : public LayerBase<IParametricReLULayer> {
 public:
  ParametricReLULayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kPARAMETRIC_RELU, node) {}

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

class PaddingLayer final : public LayerBase<IPaddingLayer> {
 public:
  PaddingLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kPADDING, node) {}
  void setPrePaddingNd(Dims const& padding) noexcept override { setPads("setPrePaddingNd", "pads_begin", padding); }
  Dims getPrePaddingNd() const noexcept override { return toDims(node_->attrs.getInts("pads_begin")); }
  void setPostPaddingNd(Dims const& padding) noexcept override { setPads("setPostPaddingNd", "pads_end", padding); }
  Dims getPostPaddingNd() const noexcept override { return toDims(node_->attrs.getInts("pads_end")); }

 private:
  void setPads(char const* what, char const* attr, Dims const& padding) {
    if (padding.nbDims < 1 || padding.nbDims > Dims::MAX_DIMS)
      return error(strCat(what, ": invalid padding ", dimsToString(padding)));
    setInts(attr, toInts(padding));
  }
};

class RaggedSoftMaxLayer final : public LayerBase<IRaggedSoftMaxLayer> {
 public:
  RaggedSoftMaxLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kRAGGED_SOFTMAX, node) {}

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

}  // namespace

//
// Factories
//

IDeconvolutionLayer* addDeconvolutionNdLayer(NetworkImpl& net, ITensor& input, int64_t nbOutputMaps,
                                             Dims const& kernelSize, Weights kernelWeights, Weights biasWeights) {
  TensorImpl* x = net.own(input, "addDeconvolutionNd");
  if (!x) return nullptr;
  std::string name = net.nextLayerName(LayerType::kDECONVOLUTION);
  auto fail = [&](std::string const& msg) -> IDeconvolutionLayer* {
    net.reporter().fail(invalidArgument("addDeconvolutionNd: layer '", name, "': ", msg));
    return nullptr;
  };
  if (nbOutputMaps < 1) return fail(strCat("nbOutputMaps = ", nbOutputMaps, " must be >= 1"));
  if (kernelSize.nbDims < 1 || kernelSize.nbDims > 3)
    return fail(strCat("the kernel size must have 1, 2 or 3 dimensions, got ", dimsToString(kernelSize)));
  for (int32_t i = 0; i < kernelSize.nbDims; ++i)
    if (kernelSize.d[i] < 1) return fail(strCat("kernel size ", dimsToString(kernelSize), " has a dim below 1"));
  if (!net.checkWeights(kernelWeights, name, "kernel weights", -1)) return nullptr;
  if (!net.checkWeights(biasWeights, name, "bias weights", biasWeights.count == 0 ? 0 : nbOutputMaps)) return nullptr;
  std::vector<int64_t> kernel = toInts(kernelSize);
  Dims kshape{};
  if (kernelWeights.count > 0) {
    std::string why;
    kshape = deconvKernelShape(kernelWeights.count, nbOutputMaps, 1, kernel, &why);
    if (kshape.nbDims < 0) return fail(why);
    Dims xd = x->getDimensions();
    if (xd.nbDims >= 0 && xd.nbDims != kernelSize.nbDims + 2)
      return fail(strCat("input ", dimsToString(xd), " must have rank ", kernelSize.nbDims + 2));
    if (xd.nbDims >= 2 && xd.d[1] >= 0 && xd.d[1] != kshape.d[0])
      return fail(strCat("kernel weights have ", kernelWeights.count, " values; the input's ", xd.d[1],
                         " channels need ", xd.d[1] * volume(kshape) / kshape.d[0]));
  }
  ir::Node* kc =
      kernelWeights.count > 0 ? net.addWeightConstant(name + "_kernel", kernelWeights, kshape, nullptr) : nullptr;
  ir::Node* bc = biasWeights.count > 0
                     ? net.addWeightConstant(name + "_bias", biasWeights, makeDims({biasWeights.count}), nullptr)
                     : nullptr;
  ir::Node* n = net.addLayerNode(ir::OpType::kDeconvolution, LayerType::kDECONVOLUTION,
                                 {x->value(), kc ? kc->outputs[0] : nullptr, bc ? bc->outputs[0] : nullptr});
  size_t ns = kernel.size();
  n->attrs.setInt("num_output_maps", nbOutputMaps);
  n->attrs.setInts("kernel_shape", kernel);
  n->attrs.setInts("strides", std::vector<int64_t>(ns, 1));
  n->attrs.setInts("pads_begin", std::vector<int64_t>(ns, 0));
  n->attrs.setInts("pads_end", std::vector<int64_t>(ns, 0));
  n->attrs.setInt("padding_mode", static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_DOWN));
  n->attrs.setInts("dilations", std::vector<int64_t>(ns, 1));
  n->attrs.setInt("groups", 1);
  auto layer = std::make_unique<DeconvolutionLayer>(net, n, kernelWeights, biasWeights);
  layer->setWeightNodes(kc, bc);
  return net.adoptLayer(std::move(layer));
}

IResizeLayer* addResizeLayer(NetworkImpl& net, ITensor& input) {
  TensorImpl* x = net.own(input, "addResize");
  if (!x) return nullptr;
  Dims xd = x->getDimensions();  // before the node exists: asking infers the network so far
  ir::Node* n = net.addLayerNode(ir::OpType::kResize, LayerType::kRESIZE, {x->value()});
  // Until output dims or scales are set, the output keeps the input's shape (scales of 1).
  if (xd.nbDims >= 1) n->attrs.set("scales", ir::AttrValue{std::vector<double>(static_cast<size_t>(xd.nbDims), 1.0)});
  n->attrs.setInt("mode", static_cast<int64_t>(InterpolationMode::kNEAREST));
  n->attrs.setInt("coordinate_transformation", static_cast<int64_t>(ResizeCoordinateTransformation::kASYMMETRIC));
  n->attrs.setInt("selector", static_cast<int64_t>(ResizeSelector::kFORMULA));
  n->attrs.setInt("nearest_rounding", static_cast<int64_t>(ResizeRoundMode::kFLOOR));
  n->attrs.setFloat("cubic_coeff", -0.75);
  n->attrs.setInt("exclude_outside", 0);
  return net.adoptLayer(std::make_unique<ResizeLayer>(net, n));
}

IGridSampleLayer* addGridSampleLayer(NetworkImpl& net, ITensor& input, ITensor& grid) {
  TensorImpl* x = net.own(input, "addGridSample");
  TensorImpl* g = x ? net.own(grid, "addGridSample") : nullptr;
  if (!g) return nullptr;
  Dims xd = x->getDimensions(), gd = g->getDimensions();
  // 4-D as TensorRT; 5-D (volumetric, grid [N, D_out, H_out, W_out, 3]) is a Kiln extension.
  int32_t const rank = xd.nbDims >= 0 ? xd.nbDims : gd.nbDims;
  bool const rankOk = rank < 0 || rank == 4 || rank == 5;
  if (!rankOk || (xd.nbDims >= 0 && xd.nbDims != rank) ||
      (gd.nbDims >= 0 && (gd.nbDims != rank || (gd.d[rank - 1] >= 0 && gd.d[rank - 1] != rank - 2)))) {
    net.reporter().fail(invalidArgument("addGridSample: layer '", net.nextLayerName(LayerType::kGRID_SAMPLE),
                                        "': input ", dimsToString(xd), " must be [N, C, H, W] and grid ",
                                        dimsToString(gd), " [N, H_out, W_out, 2] (or [N, C, D, H, W] and ",
                                        "[N, D_out, H_out, W_out, 3])"));
    return nullptr;
  }
  ir::Node* n = net.addLayerNode(ir::OpType::kGridSample, LayerType::kGRID_SAMPLE, {x->value(), g->value()});
  n->attrs.setInt("mode", static_cast<int64_t>(InterpolationMode::kLINEAR));
  n->attrs.setInt("align_corners", 0);
  n->attrs.setInt("sample_mode", static_cast<int64_t>(SampleMode::kFILL));
  return net.adoptLayer(std::make_unique<GridSampleLayer>(net, n));
}

ILRNLayer* addLRNLayer(NetworkImpl& net, ITensor& input, int64_t window, float alpha, float beta, float k) {
  TensorImpl* x = net.own(input, "addLRN");
  if (!x) return nullptr;
  std::string why;
  if (!validLrn(window, alpha, beta, k, &why)) {
    net.reporter().fail(invalidArgument("addLRN: layer '", net.nextLayerName(LayerType::kLRN), "': ", why));
    return nullptr;
  }
  ir::Node* n = net.addLayerNode(ir::OpType::kLRN, LayerType::kLRN, {x->value()});
  n->attrs.setInt("window", window);
  n->attrs.setFloat("alpha", alpha);
  n->attrs.setFloat("beta", beta);
  n->attrs.setFloat("k", k);
  return net.adoptLayer(std::make_unique<LRNLayer>(net, n));
}

IParametricReLULayer* addParametricReLULayer(NetworkImpl& net, ITensor& input, ITensor& slope) {
  TensorImpl* x = net.own(input, "addParametricReLU");
  TensorImpl* s = x ? net.own(slope, "addParametricReLU") : nullptr;
  if (!s) return nullptr;
  Dims xd = x->getDimensions(), sd = s->getDimensions();
  if (xd.nbDims >= 0 && sd.nbDims >= 0) {
    bool ok = sd.nbDims <= xd.nbDims;
    for (int32_t i = 0; ok && i < sd.nbDims; ++i) {
      int64_t a = sd.d[sd.nbDims - 1 - i], b = xd.d[xd.nbDims - 1 - i];
      ok = a < 0 || b < 0 || a == 1 || a == b;
    }
    if (!ok) {
      net.reporter().fail(invalidArgument("addParametricReLU: layer '", net.nextLayerName(LayerType::kPARAMETRIC_RELU),
                                          "': slope ", dimsToString(sd), " does not broadcast to the input ",
                                          dimsToString(xd)));
      return nullptr;
    }
  }
  ir::Node* n = net.addLayerNode(ir::OpType::kParametricReLU, LayerType::kPARAMETRIC_RELU, {x->value(), s->value()});
  return net.adoptLayer(std::make_unique<ParametricReLULayer>(net, n));
}

IPaddingLayer* addPaddingNdLayer(NetworkImpl& net, ITensor& input, Dims const& prePadding, Dims const& postPadding) {
  TensorImpl* x = net.own(input, "addPaddingNd");
  if (!x) return nullptr;
  Dims xd = x->getDimensions();
  std::string why;
  if (prePadding.nbDims < 1 || prePadding.nbDims > Dims::MAX_DIMS || prePadding.nbDims != postPadding.nbDims)
    why = strCat("pre-padding ", dimsToString(prePadding), " and post-padding ", dimsToString(postPadding),
                 " must have the same number (>= 1) of dimensions");
  else if (xd.nbDims >= 0 && prePadding.nbDims > xd.nbDims)
    why = strCat(prePadding.nbDims, " padded dimensions for an input of rank ", xd.nbDims);
  if (!why.empty()) {
    net.reporter().fail(invalidArgument("addPaddingNd: layer '", net.nextLayerName(LayerType::kPADDING), "': ", why));
    return nullptr;
  }
  ir::Node* n = net.addLayerNode(ir::OpType::kPadding, LayerType::kPADDING, {x->value()});
  n->attrs.setInts("pads_begin", toInts(prePadding));
  n->attrs.setInts("pads_end", toInts(postPadding));
  return net.adoptLayer(std::make_unique<PaddingLayer>(net, n));
}

IRaggedSoftMaxLayer* addRaggedSoftMaxLayer(NetworkImpl& net, ITensor& input, ITensor& bounds) {
  TensorImpl* x = net.own(input, "addRaggedSoftMax");
  TensorImpl* b = x ? net.own(bounds, "addRaggedSoftMax") : nullptr;
  if (!b) return nullptr;
  Dims xd = x->getDimensions();
  std::string why;
  if (b->getType() != DataType::kINT32)
    why = strCat("bounds must be int32, got ", dataTypeName(b->getType()));
  else if (xd.nbDims >= 0 && xd.nbDims != 2 && xd.nbDims != 3)
    why = strCat("input ", dimsToString(xd), " must be [1, Z, S] or [Z, S]");
  if (!why.empty()) {
    net.reporter().fail(
        invalidArgument("addRaggedSoftMax: layer '", net.nextLayerName(LayerType::kRAGGED_SOFTMAX), "': ", why));
    return nullptr;
  }
  ir::Node* n = net.addLayerNode(ir::OpType::kRaggedSoftMax, LayerType::kRAGGED_SOFTMAX, {x->value(), b->value()});
  return net.adoptLayer(std::make_unique<RaggedSoftMaxLayer>(net, n));
}

}  // namespace kiln::network
