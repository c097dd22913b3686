// kilnexec's device module in a build without CUDA (KILN_BUILD_CUDA off): nothing is usable, every call says
// so, and nothing here is ever reached on the CPU backends.
#include "device.h"

namespace kilnexec::device {
namespace {

bool none(std::string& error) {
  error = "this build of kilnexec has no CUDA support (configure Kiln with -DKILN_BUILD_CUDA=ON)";
  return false;
}

}  // namespace

bool compiledIn() { return false; }
bool usable(std::string& why) { return none(why); }
bool setDevice(int, std::string& error) { return none(error); }
std::string currentDeviceName() { return ""; }

Buffer::~Buffer() = default;
Buffer::Buffer(Buffer&& other) noexcept : ptr_(other.ptr_), capacity_(other.capacity_) {}
Buffer& Buffer::operator=(Buffer&&) noexcept { return *this; }
bool Buffer::reserve(size_t, std::string& error) { return none(error); }

Stream::~Stream() = default;
bool Stream::create(std::string& error) { return none(error); }
bool Stream::synchronize(std::string& error) const { return none(error); }

Event::~Event() = default;
bool Event::create(std::string& error) { return none(error); }
bool Event::record(cudaStream_t, std::string& error) { return none(error); }

bool elapsedMs(Event const&, Event const&, double&, std::string& error) { return none(error); }
bool copyToDevice(void*, void const*, size_t, cudaStream_t, std::string& error) { return none(error); }
bool copyToHost(void*, void const*, size_t, cudaStream_t, std::string& error) { return none(error); }

Graph::~Graph() = default;
bool Graph::capture(cudaStream_t, std::function<bool()> const&, std::string& error) { return none(error); }
bool Graph::launch(cudaStream_t, std::string& error) { return none(error); }

}  // namespace kilnexec::device
