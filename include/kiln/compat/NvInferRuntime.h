// TensorRT compatibility: NvInferRuntime.h for code written against TensorRT 10.16. Namespace nvinfer1 holds
// every Kiln name (a using-directive, so the namespace may be reopened, as plugin code does); the NV_TENSORRT_*
// macros give the TensorRT API level Kiln mirrors. Put include/kiln/compat on the include path (kiln::kiln
// does not add it) and code including <NvInferRuntime.h> compiles against Kiln unchanged.
#ifndef KILN_COMPAT_NV_INFER_RUNTIME_H
#define KILN_COMPAT_NV_INFER_RUNTIME_H

#include "../kiln_runtime.h"
#include "../kiln_version.h"

/// TensorRT major version whose API Kiln mirrors.
#define NV_TENSORRT_MAJOR KILN_TRT_API_MAJOR
/// TensorRT minor version whose API Kiln mirrors.
#define NV_TENSORRT_MINOR KILN_TRT_API_MINOR
/// TensorRT patch level (Kiln mirrors the API of x.y.0).
#define NV_TENSORRT_PATCH 0
/// TensorRT build number (none for Kiln).
#define NV_TENSORRT_BUILD 0
/// Packs a TensorRT version triple: major * 10000 + minor * 100 + patch, as TensorRT does.
#define NV_TENSORRT_VERSION_INT(major, minor, patch) ((major) * 10000L + (minor) * 100L + (patch) * 1L)
/// The mirrored TensorRT API level as one integer (101600 for 10.16). Note that getInferLibVersion() returns
/// the Kiln library's own version (KILN_VERSION), not this number.
#define NV_TENSORRT_VERSION NV_TENSORRT_VERSION_INT(NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, NV_TENSORRT_PATCH)
/// Export macro of TensorRT's headers.
#ifndef TENSORRTAPI
#define TENSORRTAPI KILN_API
#endif
/// Deprecation macros of TensorRT's headers.
#ifndef TRT_DEPRECATED
#define TRT_DEPRECATED KILN_DEPRECATED
#endif
#ifndef TRT_DEPRECATED_API
#define TRT_DEPRECATED_API KILN_DEPRECATED KILN_API
#endif
#ifndef TRTNOEXCEPT
#define TRTNOEXCEPT
#endif

/// TensorRT's namespace: every Kiln public name, reachable as nvinfer1::Name.
namespace nvinfer1 {
using namespace kiln;
}  // namespace nvinfer1

// TensorRT declares these at global scope (extern "C").
using kiln::getInferLibVersion;
using kiln::getPluginRegistry;

/// Registers plugin creator class `name` with the plugin registry during static initialization.
#define REGISTER_TENSORRT_PLUGIN(name) REGISTER_KILN_PLUGIN(name)

#endif  // KILN_COMPAT_NV_INFER_RUNTIME_H
