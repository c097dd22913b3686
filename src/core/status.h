// Status and Result<T>: how every internal function reports failure (no exceptions inside the library).
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace kiln {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller passed something wrong (API misuse, bad shapes)
  kInvalidGraph,     // the network or IR is malformed
  kUnsupported,      // valid, but this build cannot do it
  kOutOfMemory,      // an allocation failed or would pass the memory cap
  kInvalidPlan,      // a plan file is corrupted, truncated or of another format
  kNotFound,         // a named tensor, tactic or plugin does not exist
  kInvalidState,     // a call came in the wrong order
  kInternal,         // a bug in Kiln
};

/// Name of a status code, for messages.
const char* statusCodeName(StatusCode code);

/// Concatenates its arguments with operator<< into one string.
template <typename... Args>
std::string strCat(Args const&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

/// An error code and a message; ok() when the code is kOk.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  std::string const& message() const { return message_; }
  /// "<code>: <message>".
  std::string toString() const;
  /// The same status with "<context>: " put before its message.
  Status withContext(std::string const& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename... Args>
Status errorStatus(StatusCode code, Args const&... args) {
  return Status(code, strCat(args...));
}
template <typename... Args>
Status invalidArgument(Args const&... args) {
  return errorStatus(StatusCode::kInvalidArgument, args...);
}
template <typename... Args>
Status invalidGraph(Args const&... args) {
  return errorStatus(StatusCode::kInvalidGraph, args...);
}
template <typename... Args>
Status unsupported(Args const&... args) {
  return errorStatus(StatusCode::kUnsupported, args...);
}
template <typename... Args>
Status invalidPlan(Args const&... args) {
  return errorStatus(StatusCode::kInvalidPlan, args...);
}
template <typename... Args>
Status internalError(Args const&... args) {
  return errorStatus(StatusCode::kInternal, args...);
}

/// A value or the Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit on purpose, like absl::StatusOr
  Result(Status status) : v_(std::move(status)) {}  // NOLINT

  bool isOk() const { return v_.index() == 0; }
  explicit operator bool() const { return isOk(); }
  Status status() const { return isOk() ? Status::ok() : std::get<1>(v_); }
  T& value() & { return std::get<0>(v_); }
  T const& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  T const& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  T const* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

/// Returns the Status of `expr` from the enclosing function when it is an error.
#define KILN_RETURN_IF_ERROR(expr)            \
  do {                                        \
    ::kiln::Status kiln_status_ = (expr);     \
    if (!kiln_status_.isOk()) return kiln_status_; \
  } while (0)

#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.isOk()) return tmp.status();            \
  lhs = std::move(tmp).value()

/// `KILN_ASSIGN_OR_RETURN(auto x, f())`: x = the value of f(), or return its Status.
#define KILN_ASSIGN_OR_RETURN(lhs, expr) KILN_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(kiln_result_, __LINE__), lhs, expr)

/// Returns an error Status when `cond` is false.
#define KILN_CHECK_ARG(cond, ...) \
  do {                            \
    if (!(cond)) return ::kiln::invalidArgument(__VA_ARGS__); \
  } while (0)
