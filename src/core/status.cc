// Status formatting.
#include "core/status.h"

namespace kiln {

char const* statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kInvalidGraph: return "invalid graph";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kOutOfMemory: return "out of memory";
    case StatusCode::kInvalidPlan: return "invalid plan";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kInvalidState: return "invalid state";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::toString() const {
  if (isOk()) return "OK";
  return strCat(statusCodeName(code_), ": ", message_);
}

Status Status::withContext(std::string const& context) const {
  if (isOk()) return *this;
  return Status(code_, strCat(context, ": ", message_));
}

}  // namespace kiln
