// Factories behind NetworkImpl's layer-breadth add* methods: NetworkImpl::addX(args) returns addXLayer(*this,
// args). Each family file defines its factories: layers_spatial.cc, layers_select.cc, layers_index.cc,
// layers_control.cc, layers_plugin.cc (addGatherV2's kELEMENT/kND modes stay in the Gather code of network.cc).
//
// How to add a layer from a family file (see addUnary/addGather in network.cc for complete examples):
//   1. Resolve tensor arguments with `TensorImpl* x = net.own(input, "addResize");` (nullptr: already
//      reported, return nullptr). x->value() is the ir::Value, x->getDimensions()/getType() its inferred
//      shape/type (nbDims == -1 when unknown).
//   2. Validate the other arguments; report with
//      `net.reporter().fail(invalidArgument("addResize: layer '", net.nextLayerName(LayerType::kRESIZE), "': ..."))`
//      and return nullptr.
//   3. Weights become hidden Constant inputs: `ir::Node* c = net.addWeightConstant(name + "_kernel", w, shape,
//      nullptr);` (check them first with net.checkWeights(...)), then pass c->outputs[0] as the input.
//   4. `ir::Node* n = net.addLayerNode(ir::OpType::kResize, LayerType::kRESIZE, {x->value()}, numOutputs);`
//      then set every attribute ops.def lists for the op: n->attrs.setInt/setFloat/setInts/setString.
//   5. Define the layer class in the family file: `class ResizeLayer final : public LayerBase<IResizeLayer>`
//      (constructor `ResizeLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kRESIZE,
//      node) {}`), setters via the protected LayerState helpers setInt/setFloat/setInts/eraseAttr (they mark
//      the layer changed for shape inference) and error(); override acceptsInput()/onInputSet() for optional
//      inputs, beforeInfer() for rank-dependent attributes; record hidden constants in weightNodes_.
//   6. `return net.adoptLayer(std::make_unique<ResizeLayer>(net, n));`
// Objects that are not layers (ILoop, IIfConditional) are kept alive with net.keepAlive(std::move(obj)).
// Shape inference (KILN_REGISTER_INFER) and kernels (KILN_REGISTER_TACTIC) go in the family's own files
// under src/ir/infer/ and src/backends/reference/.
#pragma once

#include "network/network.h"

namespace kiln::network {

// layers_spatial.cc
IDeconvolutionLayer* addDeconvolutionNdLayer(NetworkImpl& net, ITensor& input, int64_t nbOutputMaps,
                                             Dims const& kernelSize, Weights kernelWeights, Weights biasWeights);
IResizeLayer* addResizeLayer(NetworkImpl& net, ITensor& input);
IGridSampleLayer* addGridSampleLayer(NetworkImpl& net, ITensor& input, ITensor& grid);
ILRNLayer* addLRNLayer(NetworkImpl& net, ITensor& input, int64_t window, float alpha, float beta, float k);
IParametricReLULayer* addParametricReLULayer(NetworkImpl& net, ITensor& input, ITensor& slope);
IPaddingLayer* addPaddingNdLayer(NetworkImpl& net, ITensor& input, Dims const& prePadding, Dims const& postPadding);
IRaggedSoftMaxLayer* addRaggedSoftMaxLayer(NetworkImpl& net, ITensor& input, ITensor& bounds);

// layers_select.cc
/// `indicesType` is kINT32 for the overload without it.
ITopKLayer* addTopKLayer(NetworkImpl& net, ITensor& input, TopKOperation op, int32_t k, uint32_t reduceAxes,
                         DataType indicesType);
/// `indicesType` is kINT32 for the overload without it.
INMSLayer* addNMSLayer(NetworkImpl& net, ITensor& boxes, ITensor& scores, ITensor& maxOutputBoxesPerClass,
                       DataType indicesType);
/// `indicesType` is kINT32 for the overload without it.
INonZeroLayer* addNonZeroLayer(NetworkImpl& net, ITensor& input, DataType indicesType);
ICumulativeLayer* addCumulativeLayer(NetworkImpl& net, ITensor& input, ITensor& axis, CumulativeOperation operation,
                                     bool exclusive, bool reverse);
IOneHotLayer* addOneHotLayer(NetworkImpl& net, ITensor& indices, ITensor& values, ITensor& depth, int32_t axis);
IReverseSequenceLayer* addReverseSequenceLayer(NetworkImpl& net, ITensor& input, ITensor& sequenceLens);
IAssertionLayer* addAssertionLayer(NetworkImpl& net, ITensor& condition, char const* message);
ISelectLayer* addSelectLayer(NetworkImpl& net, ITensor& condition, ITensor& thenInput, ITensor& elseInput);
/// `outputType` is kFLOAT for the deprecated two-argument addFill.
IFillLayer* addFillLayer(NetworkImpl& net, Dims const& dimensions, FillOperation op, DataType outputType);

// layers_index.cc
IScatterLayer* addScatterLayer(NetworkImpl& net, ITensor& data, ITensor& indices, ITensor& updates, ScatterMode mode);
IEinsumLayer* addEinsumLayer(NetworkImpl& net, ITensor* const* inputs, int32_t nbInputs, char const* equation);
ISqueezeLayer* addSqueezeLayer(NetworkImpl& net, ITensor& input, ITensor& axes);
IUnsqueezeLayer* addUnsqueezeLayer(NetworkImpl& net, ITensor& input, ITensor& axes);
/// `outputType` is kINT8 for the deprecated two-argument addQuantize.
IQuantizeLayer* addQuantizeLayer(NetworkImpl& net, ITensor& input, ITensor& scale, DataType outputType);
/// `outputType` is kFLOAT for the deprecated two-argument addDequantize.
IDequantizeLayer* addDequantizeLayer(NetworkImpl& net, ITensor& input, ITensor& scale, DataType outputType);
IDynamicQuantizeLayer* addDynamicQuantizeLayer(NetworkImpl& net, ITensor& input, int32_t axis, int32_t blockSize,
                                               DataType outputType, DataType scaleType);
IDynamicQuantizeLayer* addDynamicQuantizeV2Layer(NetworkImpl& net, ITensor& input, Dims const& blockShape,
                                                 DataType outputType, DataType scaleType);

// layers_tf_idf_vectorizer.cc
ITfIdfVectorizerLayer* addTfIdfVectorizerLayer(NetworkImpl& net, ITensor& input, TfIdfVectorizerMode mode,
                                               int32_t minGramLength, int32_t maxGramLength, int32_t maxSkipCount,
                                               Weights pool, Weights ngramCounts, Weights ngramIndexes,
                                               Weights weights);

// layers_plugin.cc
IPluginV2Layer* addPluginV2Layer(NetworkImpl& net, ITensor* const* inputs, int32_t nbInputs, IPluginV2& plugin);
IPluginV3Layer* addPluginV3Layer(NetworkImpl& net, ITensor* const* inputs, int32_t nbInputs, ITensor* const* shapeInputs,
                                 int32_t nbShapeInputs, IPluginV3& plugin);

// layers_control.cc
IIfConditional* addIfConditionalLayer(NetworkImpl& net);
ILoop* addLoopLayer(NetworkImpl& net);
/// The graph the builder sees: `flat` (the network's own graph) when the network has no IIfConditional/ILoop;
/// otherwise a copy with every construct's body moved into the subgraph of an If/Loop node (owned by the
/// network, valid until the next call). Lowering errors are reported; `flat` is returned then.
ir::Graph const& lowerControlFlow(NetworkImpl const& net, ir::Graph const& flat);

}  // namespace kiln::network
