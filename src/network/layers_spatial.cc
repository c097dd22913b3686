// Spatial layer family: Deconvolution, Resize, GridSample, LRN, ParametricReLU, Padding, RaggedSoftMax
// (factories declared in network/layer_factories.h, and their layer classes).
#include "network/layer_factories.h"

namespace kiln::network {

namespace {

// Placeholder until the family is implemented: reports and returns nullptr.
template <typename L>
L* notImplemented(NetworkImpl& net, char const* method) {
  net.reporter().fail(unsupported(method, ": not implemented yet"));
  return nullptr;
}

}  // namespace

IDeconvolutionLayer* addDeconvolutionNdLayer(NetworkImpl& net, ITensor& /*input*/, int64_t /*nbOutputMaps*/,
                                             Dims const& /*kernelSize*/, Weights /*kernelWeights*/,
                                             Weights /*biasWeights*/) {
  return notImplemented<IDeconvolutionLayer>(net, "addDeconvolutionNd");
}

IResizeLayer* addResizeLayer(NetworkImpl& net, ITensor& /*input*/) {
  return notImplemented<IResizeLayer>(net, "addResize");
}

IGridSampleLayer* addGridSampleLayer(NetworkImpl& net, ITensor& /*input*/, ITensor& /*grid*/) {
  return notImplemented<IGridSampleLayer>(net, "addGridSample");
}

ILRNLayer* addLRNLayer(NetworkImpl& net, ITensor& /*input*/, int64_t /*window*/, float /*alpha*/, float /*beta*/,
                       float /*k*/) {
  return notImplemented<ILRNLayer>(net, "addLRN");
}

IParametricReLULayer* addParametricReLULayer(NetworkImpl& net, ITensor& /*input*/, ITensor& /*slope*/) {
  return notImplemented<IParametricReLULayer>(net, "addParametricReLU");
}

IPaddingLayer* addPaddingNdLayer(NetworkImpl& net, ITensor& /*input*/, Dims const& /*prePadding*/,
                                 Dims const& /*postPadding*/) {
  return notImplemented<IPaddingLayer>(net, "addPaddingNd");
}

IRaggedSoftMaxLayer* addRaggedSoftMaxLayer(NetworkImpl& net, ITensor& /*input*/, ITensor& /*bounds*/) {
  return notImplemented<IRaggedSoftMaxLayer>(net, "addRaggedSoftMax");
}

}  // namespace kiln::network
