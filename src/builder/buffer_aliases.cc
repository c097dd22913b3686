// Shared arena buffers: views, outputs written over an input's memory and in-place concatenation (see
// buffer_aliases.h).
#include "builder/buffer_aliases.h"

#include <algorithm>
#include <map>

#include "builder/passes/pass.h"
#include "core/status.h"
#include "ir/contiguous_views.h"
#include "kiln/kiln.h"

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

constexpr auto kLinear = static_cast<int64_t>(TensorFormat::kLINEAR);

// True when a node reads and writes plain row-major data: no GPU layout other than kLINEAR, no recorded blocked
// CPU format.
bool nodeIsPlain(Node const& n) {
  if (n.attrs.getInt("format", kLinear) != kLinear) return false;
  for (char const* key : {"cpu_formats_in", "cpu_formats_out"})
    for (int64_t f : n.attrs.getInts(key))
      if (f != 0) return false;
  return true;
}

// True when a value is stored plain row-major by its producer.
bool valueIsPlain(Value const* v) {
  Node const* p = v->producer;
  if (!p) return true;
  if (p->op == OpType::kReformat) return p->attrs.getInt("to", kLinear) == kLinear;
  return p->attrs.getInt("format", kLinear) == kLinear &&
         recordedFormat(*p, "cpu_formats_out", static_cast<size_t>(v->producerOutput)) == 0;
}

class Planner {
 public:
  Planner(ir::Graph const& g, AliasInputs const& in, std::vector<int32_t>& firstUse, std::vector<int32_t>& lastUse)
      : g_(g), in_(in), firstUse_(firstUse), lastUse_(lastUse) {
    out_.aliasOf.assign(g.values().size(), -1);
    out_.offset.assign(g.values().size(), 0);
  }

  BufferAliases run() {
    // In execution order, so that the buffers a node reads are settled when it is looked at. A buffer's lastUse
    // then already covers every later reader: a sharer made earlier was folded in with its own lastUse, which
    // counts the steps reading it, and one made later reads the buffer at that later step.
    auto const& nodes = g_.nodes();
    for (size_t ni = 0; ni < nodes.size(); ++ni) {
      Node const& n = *nodes[ni];
      if (reusesInput(n, ni)) continue;
      if (n.op == OpType::kSlice || n.op == OpType::kGather) sliceView(n, ni);
      if (n.op == OpType::kConcatenation) concatInPlace(n, ni);
    }
    return std::move(out_);
  }

 private:
  int32_t owner(Value const* v) const { return out_.aliasOf[v->id] >= 0 ? out_.aliasOf[v->id] : v->id; }
  bool fixedShape(Value const* v) const { return in_.fixed[v->id].shape.nbDims >= 0; }
  bool aligned(int64_t offset) const { return in_.alignment <= 1 || offset % in_.alignment == 0; }

  // `out` shares the bytes of `in` from `extra` bytes on; the owner lives as long as every sharer.
  void share(Value const* out, Value const* in, int64_t extra, size_t ni) {
    int32_t root = owner(in);
    out_.aliasOf[out->id] = root;
    out_.offset[out->id] = out_.offset[in->id] + extra;
    lastUse_[root] = std::max({lastUse_[root], lastUse_[out->id], static_cast<int32_t>(ni)});
  }

  // Views and outputs written over an input (true when the node was one of those, shared or not).
  bool reusesInput(Node const& n, size_t ni) {
    Value const* in = nullptr;
    Value const* out = n.outputs.empty() ? nullptr : n.outputs[0];
    if (isViewNode(n)) {
      in = n.inputs[0];
    } else if (int32_t i = in_.reusableInput ? in_.reusableInput(n) : -1; i >= 0 && out) {
      in = n.input(static_cast<size_t>(i));
      if (!in) return true;
      int32_t root = owner(in);
      // Written over only when nothing after this node reads that buffer and the node reads it through no other
      // input (the kernel would read overwritten data there), in one format (else the kernel reorders anyway).
      if (lastUse_[root] != static_cast<int32_t>(ni)) return true;
      for (size_t j = 0; j < n.inputs.size(); ++j)
        if (j != static_cast<size_t>(i) && n.inputs[j] && in_.inArena[n.inputs[j]->id] && owner(n.inputs[j]) == root)
          return true;
      if (recordedFormat(n, "cpu_formats_in", static_cast<size_t>(i)) != recordedFormat(n, "cpu_formats_out", 0))
        return true;
    } else {
      return false;
    }
    if (!in || !out || !in_.inArena[in->id] || !in_.inArena[out->id] || out_.aliasOf[out->id] >= 0 ||
        in_.bytes[in->id] != in_.bytes[out->id])
      return true;
    share(out, in, 0, ni);
    return true;
  }

  std::vector<ir::TensorInfo> infos(std::vector<Value*> const& vs) const {
    std::vector<ir::TensorInfo> r;
    for (Value const* v : vs) {
      ir::TensorInfo t;
      if (v)
        t = in_.fixed[v->id];
      else
        t.shape.nbDims = -1;
      r.push_back(t);
    }
    return r;
  }

  // A Slice or Gather that selects one contiguous run of an arena tensor reads it where it lies.
  void sliceView(Node const& n, size_t ni) {
    Value const* x = n.input(0);
    Value const* y = n.outputs.size() == 1 ? n.outputs[0] : nullptr;
    if (!x || !y || !in_.inArena[x->id] || !in_.inArena[y->id] || out_.aliasOf[y->id] >= 0 || !fixedShape(x) ||
        !fixedShape(y) || !nodeIsPlain(n) || !valueIsPlain(x))
      return;
    std::optional<std::vector<int64_t>> off = ir::contiguousViewOffsets(n, infos(n.inputs), infos(n.outputs));
    if (!off || !aligned(out_.offset[x->id] + off->front())) return;
    share(y, x, off->front(), ni);
    out_.inPlace.emplace_back(ni, std::vector<int64_t>{1});
    out_.log.push_back(
        strCat("memory: ", n.describe(), " is a view at byte ", off->front(), " of '", x->name, "' (not run)"));
  }

  // Moves the buffer of each input that can move inside the output's, at the input's offset.
  void concatInPlace(Node const& n, size_t ni) {
    Value const* y = n.outputs.size() == 1 ? n.outputs[0] : nullptr;
    if (!y || !in_.inArena[y->id] || out_.aliasOf[y->id] >= 0 || !fixedShape(y) || !nodeIsPlain(n) || !valueIsPlain(y))
      return;
    std::optional<std::vector<int64_t>> off = ir::contiguousViewOffsets(n, infos(n.inputs), infos(n.outputs));
    if (!off) return;
    // A buffer read through two inputs cannot sit at two offsets.
    std::map<int32_t, int> readers;
    for (Value const* x : n.inputs)
      if (x && in_.inArena[x->id]) ++readers[owner(x)];
    std::vector<int64_t> placed(n.inputs.size(), 0);
    std::string where;
    size_t count = 0;
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      Value const* x = n.inputs[j];
      if (!x || !in_.inArena[x->id] || !fixedShape(x) || !valueIsPlain(x)) continue;
      int32_t root = owner(x);
      Value const* r = g_.values()[static_cast<size_t>(root)].get();
      if (readers[root] != 1 || out_.offset[x->id] != 0 || in_.bytes[root] != in_.bytes[x->id] || !fixedShape(r) ||
          !valueIsPlain(r) || !aligned((*off)[j]))
        continue;
      moveInto(root, y->id, (*off)[j]);
      placed[j] = 1;
      where += strCat(count++ ? ", " : "", j, " at byte ", (*off)[j]);
    }
    if (count == 0) return;
    lastUse_[y->id] = std::max(lastUse_[y->id], static_cast<int32_t>(ni));
    out_.inPlace.emplace_back(ni, placed);
    out_.log.push_back(strCat("memory: ", n.describe(), " has input", count > 1 ? "s " : " ", where,
                              " written in place in its output (",
                              count == n.inputs.size() ? "not run" : "the others copied", ")"));
  }

  // Makes `root` (an owner) and everything sharing it live `at` bytes into `dest`'s buffer; `dest`'s buffer then
  // lives from the first to the last step of any of them.
  void moveInto(int32_t root, int32_t dest, int64_t at) {
    for (size_t v = 0; v < out_.aliasOf.size(); ++v)
      if (out_.aliasOf[v] == root) {
        out_.aliasOf[v] = dest;
        out_.offset[v] += at;
      }
    out_.aliasOf[static_cast<size_t>(root)] = dest;
    out_.offset[static_cast<size_t>(root)] = at;
    auto d = static_cast<size_t>(dest), r = static_cast<size_t>(root);
    firstUse_[d] = firstUse_[d] < 0 ? firstUse_[r] : std::min(firstUse_[d], firstUse_[r]);
    lastUse_[d] = std::max(lastUse_[d], lastUse_[r]);
  }

  ir::Graph const& g_;
  AliasInputs const& in_;
  std::vector<int32_t>& firstUse_;
  std::vector<int32_t>& lastUse_;
  BufferAliases out_;
};

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

BufferAliases planBufferAliases(ir::Graph const& g, AliasInputs const& in, std::vector<int32_t>& firstUse,
                                std::vector<int32_t>& lastUse) {
  return Planner(g, in, firstUse, lastUse).run();
}

}  // namespace kiln::builder
