// Helpers shared by the single-node reference kernel tests: build a one-node graph from inputs that are graph
// inputs, constants or absent, infer its shapes and run the reference kernel.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"

namespace kiln::reftest {

using ir::OpType;

// One input of the node under test: a graph input (contents reach only the kernel), a Constant (contents known
// to shape inference too), or absent.
struct In {
  HostTensor t;
  bool constant = false;
  bool absent = false;
};
inline In var(HostTensor t) { return {std::move(t), false, false}; }
inline In cst(HostTensor t) { return {std::move(t), true, false}; }
inline In none() { return {HostTensor(), false, true}; }

template <typename T = double>
HostTensor tensor(DataType dtype, std::vector<int64_t> const& shape, std::vector<T> const& v) {
  return HostTensor::fromVector(dtype, makeDims(shape), v);
}

// A double rounded to a storage type and back (the expected value of a kernel that rounds once on store).
inline double roundTo(DataType t, double v) { return tensor(t, {1}, std::vector<double>{v}).doubleAt(0); }

inline std::vector<double> doubles(HostTensor const& t) {
  std::vector<double> r;
  for (int64_t i = 0; i < t.count(); ++i)
    r.push_back(t.doubleAt(i));
  return r;
}

struct RunResult {
  Status status;  // of inference, then of the kernel
  Dims shape{};   // inferred output shape (valid when inference succeeded)
  DataType dtype = DataType::kFLOAT;
  HostTensor out;
};

// Builds a one-node graph, infers shapes (without host evaluation) and runs the reference kernel.
inline RunResult runNode(OpType op, ir::Attributes const& attrs, std::vector<In> const& ins,
                                   bool execute = true) {
  RunResult r;
  ir::Graph g;
  std::vector<ir::Value*> vals;
  std::vector<HostTensor const*> ptrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (ins[i].absent) {
      vals.push_back(nullptr);
      ptrs.push_back(nullptr);
    } else if (ins[i].constant) {
      vals.push_back(g.addConstant(strCat("c", i), ins[i].t)->output(0));
      ptrs.push_back(&ins[i].t);
    } else {
      vals.push_back(*g.addInput(strCat("x", i), ins[i].t.dtype(), ins[i].t.shape()));
      ptrs.push_back(&ins[i].t);
    }
  }
  ir::Node* n = g.addNode(op, "node", vals);
  n->attrs = attrs;
  g.markOutput(n->output(0));
  r.status = ir::inferGraphInPlace(g, nullptr);
  if (!r.status.isOk())
    return r;
  r.shape = n->output(0)->shape;
  r.dtype = n->output(0)->dtype;
  if (!execute)
    return r;
  if (!dimsKnown(r.shape)) {
    r.status = invalidArgument("output shape ", dimsToString(r.shape), " is not known");
    return r;
  }
  Result<HostTensor> out = HostTensor::allocate(r.dtype, r.shape, "test output");
  if (!out.isOk()) {
    r.status = out.status();
    return r;
  }
  std::vector<HostTensor> outs{*out};
  r.status = backends::evaluateOnHost(*n, ptrs, outs);
  r.out = outs[0];
  return r;
}

inline ir::Attributes attrs(std::initializer_list<std::pair<std::string const, ir::AttrValue>> kv) {
  ir::Attributes a;
  for (auto const& [k, v] : kv)
    a.set(k, v);
  return a;
}

}  // namespace kiln::reftest
