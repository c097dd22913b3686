// kiln-plugin-check in a build without CUDA: every device operation fails saying so.
#include "device.h"

namespace kiln::plugincheck::device {
namespace {
constexpr char const* kNoCuda = "this kiln-plugin-check was built without CUDA (configure with -DKILN_BUILD_CUDA=ON)";
}

bool available(std::string& why) {
  why = kNoCuda;
  return false;
}
void* alloc(size_t, std::string& error) {
  error = kNoCuda;
  return nullptr;
}
void release(void*) {}
bool toDevice(void*, void const*, size_t, std::string& error) {
  error = kNoCuda;
  return false;
}
bool toHost(void*, void const*, size_t, std::string& error) {
  error = kNoCuda;
  return false;
}
bool fill(void*, int, size_t, std::string& error) {
  error = kNoCuda;
  return false;
}
bool run(std::function<int32_t(cudaStream_t)> const&, std::string& error) {
  error = kNoCuda;
  return false;
}
bool runCaptured(std::function<int32_t(cudaStream_t)> const&, std::string& error) {
  error = kNoCuda;
  return false;
}

}  // namespace kiln::plugincheck::device
