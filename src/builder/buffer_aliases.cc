// Shared arena buffers: views and outputs written over an input's memory (see buffer_aliases.h).
#include "builder/buffer_aliases.h"

#include <algorithm>

#include "builder/passes/pass.h"

namespace kiln::builder {
namespace {

using ir::Node;
using ir::OpType;
using ir::Value;

// The CPU activation format recorded at slot i of a node's `cpu_formats_in`/`cpu_formats_out` (0: plain, also
// where nothing is recorded).
int64_t recordedFormat(Node const& n, char const* key, size_t i) {
  if (!n.attrs.has(key)) return 0;
  std::vector<int64_t> v = n.attrs.getInts(key);
  return i < v.size() ? v[i] : 0;
}

}  // namespace

bool isViewNode(Node const& n) {
  if (n.inputs.empty() || !n.inputs[0] || n.outputs.size() != 1) return false;
  if (n.inputs[0]->dtype != n.outputs[0]->dtype) return false;
  if (n.op == OpType::kShuffle)
    return passutil::isIdentityPermutation(n.attrs.getInts("first_perm")) &&
           passutil::isIdentityPermutation(n.attrs.getInts("second_perm"));
  if (n.op == OpType::kIdentity) return n.inputs.size() == 1;
  return n.op == OpType::kSqueeze || n.op == OpType::kUnsqueeze;
}

std::vector<int32_t> planBufferAliases(ir::Graph const& g, std::vector<bool> const& inArena,
                                       std::vector<int64_t> const& bytes, std::vector<int32_t>& lastUse,
                                       ReusableInputFn const& reusableInput) {
  std::vector<int32_t> aliasOf(g.values().size(), -1);
  auto owner = [&](Value const* v) { return aliasOf[v->id] >= 0 ? aliasOf[v->id] : v->id; };
  // In execution order, so that the buffers a node reads are settled when it is looked at. A buffer's lastUse
  // then already covers every later reader: a view made earlier was folded in with its own lastUse, which counts
  // the steps reading it, and one made later reads the buffer at that later step.
  auto const& nodes = g.nodes();
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    Node const& n = *nodes[ni];
    Value const* in = nullptr;
    Value const* out = n.outputs.empty() ? nullptr : n.outputs[0];
    if (isViewNode(n)) {
      in = n.inputs[0];
    } else if (int32_t i = reusableInput ? reusableInput(n) : -1; i >= 0 && out) {
      in = n.input(static_cast<size_t>(i));
      if (!in) continue;
      int32_t root = owner(in);
      // Written over only when nothing after this node reads that buffer and the node reads it through no other
      // input (the kernel would read overwritten data there), in one format (else the kernel reorders anyway).
      if (lastUse[root] != static_cast<int32_t>(ni)) continue;
      bool readElsewhere = false;
      for (size_t j = 0; j < n.inputs.size(); ++j)
        if (j != static_cast<size_t>(i) && n.inputs[j] && inArena[n.inputs[j]->id] && owner(n.inputs[j]) == root)
          readElsewhere = true;
      if (readElsewhere) continue;
      if (recordedFormat(n, "cpu_formats_in", static_cast<size_t>(i)) != recordedFormat(n, "cpu_formats_out", 0))
        continue;
    }
    if (!in || !out || !inArena[in->id] || !inArena[out->id] || aliasOf[out->id] >= 0 ||
        bytes[in->id] != bytes[out->id])
      continue;
    int32_t root = owner(in);
    aliasOf[out->id] = root;
    lastUse[root] = std::max({lastUse[root], lastUse[out->id], static_cast<int32_t>(ni)});
  }
  return aliasOf;
}

}  // namespace kiln::builder
