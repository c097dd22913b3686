// Control-flow family: IIfConditional and ILoop with their boundary layers (factories declared in
// network/layer_factories.h). Bodies become ir::Node::subgraphs of If/Loop nodes (see ir/ops.def).
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

IIfConditional* addIfConditionalLayer(NetworkImpl& net) {
  return notImplemented<IIfConditional>(net, "addIfConditional");
}

ILoop* addLoopLayer(NetworkImpl& net) { return notImplemented<ILoop>(net, "addLoop"); }

}  // namespace kiln::network
