// Building: where the network comes from (an ONNX model or the built-in demo network), the builder
// configuration kilnexec's flags ask for, the optimization profile, and the build itself.
#pragma once

#include <kiln/kiln.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "options.h"

namespace kilnexec {

/// Logger for kilnexec: errors and warnings to stderr as "[E] ..."/"[W] ...", info and verbose only with
/// --verbose; keeps the error messages so that a failure can be explained in one line.
class ToolLogger : public kiln::ILogger {
 public:
  explicit ToolLogger(bool verbose) : verbose_(verbose) {}
  void log(Severity severity, kiln::AsciiChar const* msg) noexcept override;
  /// The last error message Kiln logged ("" if none).
  std::string lastError() const;
  /// When true, nothing is printed (messages are still kept): for the reference build of --check.
  void setQuiet(bool quiet) { quiet_ = quiet; }

 private:
  bool verbose_;
  bool quiet_ = false;
  mutable std::mutex mutex_;
  std::string lastError_;
};

/// A network ready to build, with what keeps its weights alive (the ONNX parser or the built-in weights).
struct NetworkSource {
  std::unique_ptr<kiln::IBuilder> builder;
  std::unique_ptr<kiln::INetworkDefinition> network;
  std::shared_ptr<void> weightsOwner;  ///< the ONNX parser or the built-in network's weights
  std::string description;             ///< "model.onnx" or "built-in network small_resnet"
};

/// The name of the built-in demo network.
std::string builtinNetworkName();

/// Creates the network of `options` (--onnx, or the built-in network when no model is given). Returns false
/// with `error` set when the model cannot be read or parsed (or this build has no ONNX parser).
bool createNetwork(Options const& options, kiln::ILogger& logger, NetworkSource& source, std::string& error);

/// Marks every layer output that is not already a network output as one (for --check-layers). Returns
/// (tensor name, producing layer name) for every layer output, in layer order.
std::vector<std::pair<std::string, std::string>> markAllOutputs(kiln::INetworkDefinition& network);

/// How to build: kilnexec's flags, or the reference build of --check (reference kernels, fp32, level 0, on the
/// CPU whatever --backend says).
struct BuildRequest {
  bool reference = false;
  kiln::IProgressMonitor* monitor = nullptr;
  /// Receives informational lines for the user (the timing cache loaded or written), when not null.
  std::vector<std::string>* infoLines = nullptr;
};

/// Builds `source` as `options` say into `plan`: for the GPU (DeviceType::kGPU) when options.backend is kCuda,
/// else for the CPU. Returns false with `error` (and Kiln's reason) on failure, including an optimization
/// profile that cannot be formed from the shape flags. `notes` receives warnings for the user (e.g. a dynamic
/// dimension defaulted to 1, as trtexec does). On the GPU, --timingCacheFile is read first when the file
/// exists (a cache Kiln refuses gives a note and a fresh cache) and written back after a successful build.
bool buildPlan(Options const& options, BuildRequest const& request, NetworkSource& source, ToolLogger& logger,
               std::vector<uint8_t>& plan, std::vector<std::string>& notes, std::string& error);

}  // namespace kilnexec
