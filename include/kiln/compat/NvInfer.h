// TensorRT compatibility: NvInfer.h (the builder and network API plus everything of NvInferRuntime.h) mapped
// onto Kiln's kiln.h; see NvInferRuntime.h.
#ifndef KILN_COMPAT_NV_INFER_H
#define KILN_COMPAT_NV_INFER_H

#include "../kiln.h"
#include "NvInferRuntime.h"

#endif  // KILN_COMPAT_NV_INFER_H
