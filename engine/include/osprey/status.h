// Errors are values: every fallible call returns Status or Result<T>.
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace osprey {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,    // the caller gave something malformed (model, input, option)
  kNotFound,           // a named thing (file, input, output) does not exist
  kUnimplemented,      // valid ONNX that this engine does not support
  kResourceExhausted,  // an explicit limit was hit (elements, memory)
  kFailedPrecondition, // the object is not in a state to do this
  kInternal,           // a bug in the engine
  kUnavailable,        // temporarily cannot serve (queue full, not ready, shutting down)
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: message"
  std::string to_string() const;
  // Returns a copy whose message is prefixed with `context: `.
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <class... Args>
Status invalid_argument(const Args&... args) {
  return {StatusCode::kInvalidArgument, str_cat(args...)};
}
template <class... Args>
Status not_found(const Args&... args) {
  return {StatusCode::kNotFound, str_cat(args...)};
}
template <class... Args>
Status unimplemented(const Args&... args) {
  return {StatusCode::kUnimplemented, str_cat(args...)};
}
template <class... Args>
Status resource_exhausted(const Args&... args) {
  return {StatusCode::kResourceExhausted, str_cat(args...)};
}
template <class... Args>
Status failed_precondition(const Args&... args) {
  return {StatusCode::kFailedPrecondition, str_cat(args...)};
}
template <class... Args>
Status unavailable(const Args&... args) {
  return {StatusCode::kUnavailable, str_cat(args...)};
}
template <class... Args>
Status internal_error(const Args&... args) {
  return {StatusCode::kInternal, str_cat(args...)};
}

// Holds either a value or a non-OK Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::kInternal, "Result built from OK status");
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace osprey

#define OSPREY_CONCAT_INNER(a, b) a##b
#define OSPREY_CONCAT(a, b) OSPREY_CONCAT_INNER(a, b)

#define OSPREY_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::osprey::Status osprey_status_ = (expr);        \
    if (!osprey_status_.ok()) return osprey_status_; \
  } while (0)

#define OSPREY_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

// OSPREY_ASSIGN_OR_RETURN(auto x, make_x());
#define OSPREY_ASSIGN_OR_RETURN(lhs, expr) \
  OSPREY_ASSIGN_OR_RETURN_IMPL(OSPREY_CONCAT(osprey_result_, __LINE__), lhs, expr)
