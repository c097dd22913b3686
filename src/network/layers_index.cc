// Indexing and quantization layer family: Scatter, Einsum, Squeeze, Unsqueeze, Quantize, Dequantize,
// DynamicQuantize (factories declared in network/layer_factories.h, and their layer classes).
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

IScatterLayer* addScatterLayer(NetworkImpl& net, ITensor& /*data*/, ITensor& /*indices*/, ITensor& /*updates*/,
                               ScatterMode /*mode*/) {
  return notImplemented<IScatterLayer>(net, "addScatter");
}

IEinsumLayer* addEinsumLayer(NetworkImpl& net, ITensor* const* /*inputs*/, int32_t /*nbInputs*/,
                             char const* /*equation*/) {
  return notImplemented<IEinsumLayer>(net, "addEinsum");
}

ISqueezeLayer* addSqueezeLayer(NetworkImpl& net, ITensor& /*input*/, ITensor& /*axes*/) {
  return notImplemented<ISqueezeLayer>(net, "addSqueeze");
}

IUnsqueezeLayer* addUnsqueezeLayer(NetworkImpl& net, ITensor& /*input*/, ITensor& /*axes*/) {
  return notImplemented<IUnsqueezeLayer>(net, "addUnsqueeze");
}

IQuantizeLayer* addQuantizeLayer(NetworkImpl& net, ITensor& /*input*/, ITensor& /*scale*/, DataType /*outputType*/) {
  return notImplemented<IQuantizeLayer>(net, "addQuantize");
}

IDequantizeLayer* addDequantizeLayer(NetworkImpl& net, ITensor& /*input*/, ITensor& /*scale*/,
                                     DataType /*outputType*/) {
  return notImplemented<IDequantizeLayer>(net, "addDequantize");
}

IDynamicQuantizeLayer* addDynamicQuantizeLayer(NetworkImpl& net, ITensor& /*input*/, int32_t /*axis*/,
                                               int32_t /*blockSize*/, DataType /*outputType*/,
                                               DataType /*scaleType*/) {
  return notImplemented<IDynamicQuantizeLayer>(net, "addDynamicQuantize");
}

IDynamicQuantizeLayer* addDynamicQuantizeV2Layer(NetworkImpl& net, ITensor& /*input*/, Dims const& /*blockShape*/,
                                                 DataType /*outputType*/, DataType /*scaleType*/) {
  return notImplemented<IDynamicQuantizeLayer>(net, "addDynamicQuantizeV2");
}

}  // namespace kiln::network
