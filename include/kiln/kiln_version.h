// Kiln version macros, plus the TensorRT API level that the public Kiln headers mirror.
// Usable from C and C++ preprocessor expressions; this header declares nothing else.
#ifndef KILN_KILN_VERSION_H
#define KILN_KILN_VERSION_H

/// Kiln major version. Headers and library must agree on it (and, while it is 0, on the minor version too).
#define KILN_VERSION_MAJOR 0
/// Kiln minor version.
#define KILN_VERSION_MINOR 1
/// Kiln patch version.
#define KILN_VERSION_PATCH 0

/// Packs a version triple into one integer: major * 10000 + minor * 100 + patch.
#define KILN_VERSION_INT(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))

/// This header's Kiln version as one integer (see KILN_VERSION_INT). kiln::getInferLibVersion() returns the
/// library's value of it, which lets an application detect a header/library mismatch.
#define KILN_VERSION KILN_VERSION_INT(KILN_VERSION_MAJOR, KILN_VERSION_MINOR, KILN_VERSION_PATCH)

/// Major version of the TensorRT C++ API whose names, signatures and enum values the Kiln headers mirror.
/// The NV_TENSORRT_* spellings are deliberately not defined here; a separate compatibility header owns them.
#define KILN_TRT_API_MAJOR 10
/// Minor version of the mirrored TensorRT C++ API.
#define KILN_TRT_API_MINOR 16
/// Mirrored TensorRT API level as one integer (major * 10000 + minor * 100), e.g. 101600 for 10.16.
#define KILN_TRT_API_VERSION KILN_VERSION_INT(KILN_TRT_API_MAJOR, KILN_TRT_API_MINOR, 0)

#endif  // KILN_KILN_VERSION_H
