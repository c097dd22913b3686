// Shared helpers of the selection-family kernel tests (topk, nms, nonzero, cumulative, onehot,
// reverse_sequence, assertion, select, fill): build a one-node graph, infer, run through
// evaluateOnHostDynamic (so data-dependent outputs are allocated on request).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::selecttest {

using Ints = std::vector<int64_t>;

/// One node input: a graph input (contents reach only the kernel), a Constant (known to inference), or absent.
struct In {
  HostTensor t;
  bool constant = false;
  bool absent = false;
};
inline In var(HostTensor t) { return {std::move(t), false, false}; }
inline In cst(HostTensor t) { return {std::move(t), true, false}; }
inline In none() { return {HostTensor(), false, true}; }

template <typename T = double>
HostTensor tensor(DataType dtype, Ints const& shape, std::vector<T> const& v) {
  return HostTensor::fromVector(dtype, makeDims(shape), v);
}
inline HostTensor scalar(DataType dtype, double v) {
  Dims d{};
  d.nbDims = 0;
  return HostTensor::fromVector(dtype, d, std::vector<double>{v});
}

inline std::vector<double> doubles(HostTensor const& t) {
  std::vector<double> r;
  for (int64_t i = 0; i < t.count(); ++i) r.push_back(t.doubleAt(i));
  return r;
}
inline Ints ints(HostTensor const& t) {
  Ints r;
  for (int64_t i = 0; i < t.count(); ++i) r.push_back(t.intAt(i));
  return r;
}

struct RunResult {
  Status status;                    // of inference, then of the kernel
  std::vector<ir::TensorInfo> inferred;  // inferred output infos
  std::vector<HostTensor> out;
};

/// Builds a one-node graph with `numOutputs` outputs, infers shapes (no host evaluation) and runs the
/// reference kernel unless `execute` is false.
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
  for (int i = 0; i < numOutputs; ++i) r.inferred.push_back({n->output(i)->dtype, n->output(i)->shape});
  if (!execute) return r;
  Result<std::vector<HostTensor>> o = backends::evaluateOnHostDynamic(*n, ptrs, r.inferred);
  r.status = o.status();
  if (o.isOk()) r.out = std::move(*o);
  return r;
}

inline ir::Attributes attrs(std::initializer_list<std::pair<std::string const, ir::AttrValue>> kv) {
  ir::Attributes a;
  for (auto const& [k, v] : kv) a.set(k, v);
  return a;
}

/// The integer types and float types ONNX allows for numeric ops, Kiln's extensions included.
inline std::vector<DataType> numericTypes() {
  return {DataType::kFLOAT, DataType::kHALF,   DataType::kBF16,   DataType::kFLOAT64, DataType::kINT8,
          DataType::kUINT8, DataType::kINT16,  DataType::kUINT16, DataType::kINT32,   DataType::kUINT32,
          DataType::kINT64, DataType::kUINT64};
}

}  // namespace kiln::selecttest
