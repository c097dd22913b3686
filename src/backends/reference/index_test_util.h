// Test helpers of the index/quantize family's kernel tests: build a one-node graph (inputs as graph inputs or
// Constants), infer shapes without host evaluation and run the reference kernels on every output.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::indextest {

using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

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

inline Doubles doubles(HostTensor const& t) {
  Doubles r;
  for (int64_t i = 0; i < t.count(); ++i) r.push_back(t.doubleAt(i));
  return r;
}

struct RunResult {
  Status status;             // of inference, then of the kernel
  std::vector<Dims> shapes;  // inferred output shapes
  std::vector<DataType> dtypes;
  std::vector<HostTensor> outs;
  Dims const& shape() const { return shapes.at(0); }
  HostTensor const& out() const { return outs.at(0); }
};

inline RunResult runNode(ir::OpType op, ir::Attributes const& attrs, std::vector<In> const& ins, int numOutputs = 1,
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
  ir::Node* n = g.addNode(op, "node", vals, numOutputs);
  n->attrs = attrs;
  for (int i = 0; i < numOutputs; ++i) g.markOutput(n->output(i));
  r.status = ir::inferGraphInPlace(g, nullptr);
  if (!r.status.isOk()) return r;
  std::vector<HostTensor> outs;
  for (int i = 0; i < numOutputs; ++i) {
    r.shapes.push_back(n->output(i)->shape);
    r.dtypes.push_back(n->output(i)->dtype);
  }
  if (!execute) return r;
  for (int i = 0; i < numOutputs; ++i) {
    if (!dimsKnown(r.shapes[i])) {
      r.status = invalidArgument("output shape ", dimsToString(r.shapes[i]), " is not known");
      return r;
    }
    Result<HostTensor> out = HostTensor::allocate(r.dtypes[i], r.shapes[i], "test output");
    if (!out.isOk()) {
      r.status = out.status();
      return r;
    }
    outs.push_back(*out);
  }
  r.status = backends::evaluateOnHost(*n, ptrs, outs);
  r.outs = outs;
  return r;
}

inline ir::Attributes attrs(std::initializer_list<std::pair<std::string const, ir::AttrValue>> kv) {
  ir::Attributes a;
  for (auto const& [k, v] : kv) a.set(k, v);
  return a;
}

/// True when a failed status names the node under test.
inline bool namesNode(Status const& s) { return s.message().find("'node'") != std::string::npos; }

}  // namespace kiln::indextest
