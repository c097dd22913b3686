// Helpers shared by the kernel tests that run one node whose inputs are all constants (the spatial family and
// Convolution, Pooling, MatrixMultiply, Normalization, SoftMax, Reduce, Scale): deterministic inputs, constants,
// running the node, tolerances per type.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"

namespace kiln::spatialtest {

// Values k/16 with |k| <= 32: exact in float16 and bfloat16, so only the output is rounded.
inline std::vector<double> randomValues(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<double>(static_cast<int32_t>((s >> 16) % 65) - 32) / 16.0;
  }
  return v;
}

inline ir::Value* constant(ir::Graph& g, std::string const& name, DataType dt, std::vector<int64_t> const& shape,
                    std::vector<double> const& vals) {
  return g.addConstant(name, HostTensor::fromVector(dt, makeDims(shape), vals))->output(0);
}

// Infers the graph, then runs `n` (whose inputs are all constants) with the reference backend.
inline Result<HostTensor> run(ir::Graph& g, ir::Node* n) {
  KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(g, nullptr));
  std::vector<HostTensor const*> in;
  for (ir::Value* v : n->inputs) in.push_back(v ? &*v->producer->constant : nullptr);
  KILN_ASSIGN_OR_RETURN(HostTensor out, HostTensor::allocate(n->output(0)->dtype, n->output(0)->shape, "test"));
  std::vector<HostTensor> outs{out};
  KILN_RETURN_IF_ERROR(backends::evaluateOnHost(*n, in, outs));
  return outs[0];
}

inline double tolerance(DataType dt) {
  return dt == DataType::kFLOAT64 ? 1e-12 : dt == DataType::kFLOAT ? 1e-5 : (dt == DataType::kHALF ? 2e-3 : 1e-2);
}

inline void expectClose(HostTensor const& out, std::vector<double> const& ref, DataType dt) {
  ASSERT_EQ(out.count(), static_cast<int64_t>(ref.size()));
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(out.doubleAt(static_cast<int64_t>(i)), ref[i], tolerance(dt) * std::max(1.0, std::fabs(ref[i])))
        << "at " << i;
}

inline std::vector<double> values(HostTensor const& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.count(); ++i) v.push_back(t.doubleAt(i));
  return v;
}

inline DataType const kFloatTypes[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFLOAT64};

}  // namespace kiln::spatialtest
