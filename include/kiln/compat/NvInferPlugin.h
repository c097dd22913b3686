// TensorRT compatibility: NvInferPlugin.h, the built-in plugin library. Link kiln::plugins
// (libkiln_plugins.so), which exports initLibNvInferPlugins next to initLibKilnPlugins.
#ifndef KILN_COMPAT_NV_INFER_PLUGIN_H
#define KILN_COMPAT_NV_INFER_PLUGIN_H

#include "../kiln_builtin_plugins.h"
#include "NvInfer.h"

extern "C" {
/// Registers every built-in plugin creator under `libNamespace` (TensorRT's name for initLibKilnPlugins, with
/// the same behaviour). `logger` is an nvinfer1::ILogger*.
KILN_API bool initLibNvInferPlugins(void* logger, char const* libNamespace) noexcept;
}

#endif  // KILN_COMPAT_NV_INFER_PLUGIN_H
