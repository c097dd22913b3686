// Kiln public API: the built-in plugin library (libkiln_plugins.so, CMake target kiln::plugins), Kiln's
// counterpart of TensorRT's libnvinfer_plugin: EfficientNMS_TRT, BatchedNMS(Dynamic)_TRT, normalization,
// activation and layout plugins under TensorRT's names, versions and fields (list in docs/plugins.md).
#ifndef KILN_KILN_BUILTIN_PLUGINS_H
#define KILN_KILN_BUILTIN_PLUGINS_H

#include "kiln_plugin.h"

extern "C" {
/// Registers every built-in plugin creator with getPluginRegistry() under `libNamespace` (nullptr: ""),
/// logging to `logger` (a kiln::ILogger*; nullptr: stderr). Idempotent per namespace: a second call for a
/// namespace already registered returns true and changes nothing. False when a creator could not be
/// registered (for example because another library registered the same name/version/namespace); then none of
/// this call's creators stays registered.
KILN_API bool initLibKilnPlugins(void* logger, char const* libNamespace) noexcept;
}

#endif  // KILN_KILN_BUILTIN_PLUGINS_H
