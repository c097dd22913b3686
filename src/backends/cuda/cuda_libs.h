// cuBLASLt and cuDNN for the CUDA tactics: one handle per host thread and device (cuDNN handles must not be
// shared by threads running at once; cuBLASLt's are, but one per thread costs nothing), errors as Status.
#pragma once

#include <cublasLt.h>
#include <cudnn.h>

#include <string>

#include "core/status.h"

namespace kiln::cuda {

Result<cublasLtHandle_t> cublasLt();
Result<cudnnHandle_t> cudnn();

Status cublasStatus(cublasStatus_t s, std::string const& what);
Status cudnnStatusOf(cudnnStatus_t s, std::string const& what);

#define KILN_CUBLAS_RETURN_IF_ERROR(expr, what)                                                      \
  do {                                                                                               \
    cublasStatus_t kiln_cublas_st_ = (expr);                                                         \
    if (kiln_cublas_st_ != CUBLAS_STATUS_SUCCESS) return ::kiln::cuda::cublasStatus(kiln_cublas_st_, what); \
  } while (0)
#define KILN_CUDNN_RETURN_IF_ERROR(expr, what)                                                        \
  do {                                                                                                \
    cudnnStatus_t kiln_cudnn_st_ = (expr);                                                            \
    if (kiln_cudnn_st_ != CUDNN_STATUS_SUCCESS) return ::kiln::cuda::cudnnStatusOf(kiln_cudnn_st_, what); \
  } while (0)

}  // namespace kiln::cuda
