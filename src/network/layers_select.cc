// Selection layer family: TopK, NMS, NonZero, Cumulative, OneHot, ReverseSequence, Assertion, Select, Fill
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

ITopKLayer* addTopKLayer(NetworkImpl& net, ITensor& /*input*/, TopKOperation /*op*/, int32_t /*k*/,
                         uint32_t /*reduceAxes*/, DataType /*indicesType*/) {
  return notImplemented<ITopKLayer>(net, "addTopK");
}

INMSLayer* addNMSLayer(NetworkImpl& net, ITensor& /*boxes*/, ITensor& /*scores*/, ITensor& /*maxOutputBoxesPerClass*/,
                       DataType /*indicesType*/) {
  return notImplemented<INMSLayer>(net, "addNMS");
}

INonZeroLayer* addNonZeroLayer(NetworkImpl& net, ITensor& /*input*/, DataType /*indicesType*/) {
  return notImplemented<INonZeroLayer>(net, "addNonZero");
}

ICumulativeLayer* addCumulativeLayer(NetworkImpl& net, ITensor& /*input*/, ITensor& /*axis*/,
                                     CumulativeOperation /*operation*/, bool /*exclusive*/, bool /*reverse*/) {
  return notImplemented<ICumulativeLayer>(net, "addCumulative");
}

IOneHotLayer* addOneHotLayer(NetworkImpl& net, ITensor& /*indices*/, ITensor& /*values*/, ITensor& /*depth*/,
                             int32_t /*axis*/) {
  return notImplemented<IOneHotLayer>(net, "addOneHot");
}

IReverseSequenceLayer* addReverseSequenceLayer(NetworkImpl& net, ITensor& /*input*/, ITensor& /*sequenceLens*/) {
  return notImplemented<IReverseSequenceLayer>(net, "addReverseSequence");
}

IAssertionLayer* addAssertionLayer(NetworkImpl& net, ITensor& /*condition*/, char const* /*message*/) {
  return notImplemented<IAssertionLayer>(net, "addAssertion");
}

ISelectLayer* addSelectLayer(NetworkImpl& net, ITensor& /*condition*/, ITensor& /*thenInput*/,
                             ITensor& /*elseInput*/) {
  return notImplemented<ISelectLayer>(net, "addSelect");
}

IFillLayer* addFillLayer(NetworkImpl& net, Dims const& /*dimensions*/, FillOperation /*op*/, DataType /*outputType*/) {
  return notImplemented<IFillLayer>(net, "addFill");
}

}  // namespace kiln::network
