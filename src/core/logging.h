// Reporter: sends messages to the user's ILogger and errors also to the IErrorRecorder, as TensorRT does.
#pragma once

#include <mutex>
#include <string>

#include "core/status.h"
#include "kiln/kiln_base.h"

namespace kiln {

/// TensorRT error code for a Kiln status code.
ErrorCode toErrorCode(StatusCode code);

/// Logger + error recorder pair owned by a builder, runtime, engine or context. Not owning either.
class Reporter {
 public:
  explicit Reporter(ILogger* logger = nullptr) : logger_(logger) {}
  /// Copies share the recorder and hold a reference to it (IErrorRecorder::incRefCount), released on
  /// destruction, so every incRefCount is matched by a decRefCount.
  Reporter(Reporter const& o) : logger_(o.logger_) { setRecorder(o.recorder_); }
  Reporter& operator=(Reporter const& o) {
    if (this != &o) {
      logger_ = o.logger_;
      setRecorder(o.recorder_);
    }
    return *this;
  }
  ~Reporter() { setRecorder(nullptr); }
  void setLogger(ILogger* logger) { logger_ = logger; }
  ILogger* logger() const { return logger_; }
  void setRecorder(IErrorRecorder* recorder);
  IErrorRecorder* recorder() const { return recorder_; }

  /// Logs an error (kERROR) and reports it to the recorder; returns false so API calls can `return
  /// reporter.fail(status)`.
  bool fail(Status const& status) const;
  void error(std::string const& msg) const;
  void warning(std::string const& msg) const;
  void info(std::string const& msg) const;
  void verbose(std::string const& msg) const;
  void log(ILogger::Severity sev, std::string const& msg) const;

 private:
  ILogger* logger_ = nullptr;
  IErrorRecorder* recorder_ = nullptr;
};

}  // namespace kiln
