// Reporter implementation.
#include "core/logging.h"

namespace kiln {

ErrorCode toErrorCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return ErrorCode::kSUCCESS;
    case StatusCode::kInvalidArgument: return ErrorCode::kINVALID_ARGUMENT;
    case StatusCode::kInvalidGraph: return ErrorCode::kINVALID_CONFIG;
    case StatusCode::kUnsupported: return ErrorCode::kUNSUPPORTED_STATE;
    case StatusCode::kOutOfMemory: return ErrorCode::kFAILED_ALLOCATION;
    case StatusCode::kInvalidPlan: return ErrorCode::kINVALID_ARGUMENT;
    case StatusCode::kNotFound: return ErrorCode::kINVALID_ARGUMENT;
    case StatusCode::kInvalidState: return ErrorCode::kINVALID_STATE;
    case StatusCode::kInternal: return ErrorCode::kINTERNAL_ERROR;
  }
  return ErrorCode::kUNSPECIFIED_ERROR;
}

void Reporter::setRecorder(IErrorRecorder* recorder) {
  if (recorder == recorder_) return;
  if (recorder) recorder->incRefCount();
  if (recorder_) recorder_->decRefCount();
  recorder_ = recorder;
}

bool Reporter::fail(Status const& status) const {
  if (status.isOk()) return true;
  std::string msg = status.message();
  log(ILogger::Severity::kERROR, msg);
  if (recorder_) recorder_->reportError(toErrorCode(status.code()), msg.c_str());
  return false;
}

void Reporter::error(std::string const& msg) const { log(ILogger::Severity::kERROR, msg); }
void Reporter::warning(std::string const& msg) const { log(ILogger::Severity::kWARNING, msg); }
void Reporter::info(std::string const& msg) const { log(ILogger::Severity::kINFO, msg); }
void Reporter::verbose(std::string const& msg) const { log(ILogger::Severity::kVERBOSE, msg); }

void Reporter::log(ILogger::Severity sev, std::string const& msg) const {
  if (logger_) logger_->log(sev, msg.c_str());
}

}  // namespace kiln
