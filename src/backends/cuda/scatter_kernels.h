// Device launchers of Scatter (kELEMENT and kND, reduction none/add/mul/max/min as ScatterReduction's integers).
// Updates that can hit the same element are applied by one thread in the reference's order, so every reduction
// (and "last update wins" for none) matches the reference deterministically. Out-of-range indices (an error on
// the host) are skipped. The output must already hold a copy of the data.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// kELEMENT: one thread per line of the indices along the axis.
struct ScatterElementPlan {
  int32_t rank = 0, axis = 0;
  int64_t idxDims[8] = {};
  int64_t idxStrides[8] = {};
  int64_t dataStrides[8] = {};
  int64_t axisDim = 0;  // the data's extent on the axis
};

/// kND: one thread per slab element, walking the index tuples in order.
struct ScatterNdPlan {
  int64_t tuples = 0, slab = 0;
  int32_t tupleLen = 0;
  int64_t tupleDims[8] = {};
  int64_t tupleStrides[8] = {};
};

/// dtype: DataType code (float, half, bf16, fp8, int8, uint8, int32, int64, bool); cudaErrorInvalidValue for others.
cudaError_t launchScatterElement(void* y, void const* indices, bool indices64, void const* updates, int32_t dtype,
                                 int32_t reduction, ScatterElementPlan const& plan, cudaStream_t stream);
cudaError_t launchScatterNd(void* y, void const* indices, bool indices64, void const* updates, int32_t dtype,
                            int32_t reduction, ScatterNdPlan const& plan, cudaStream_t stream);

}  // namespace kiln::cuda
