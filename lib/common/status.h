// Status and Result: how every fallible function in libtrainmover reports.
//
// The codes are the C API's tm_result_t, so there is one list of error kinds.
// A Status carries a message naming what was wrong and, for peer failures,
// the slot at fault. Library code never throws and never aborts.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "common/str.h"
#include "trainmover/trainmover.h"

namespace trainmover {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  Status(tm_result_t code, std::string message, int failed_slot = -1)
      : code_(code), message_(std::move(message)), failed_slot_(failed_slot) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == TM_SUCCESS; }
  tm_result_t code() const { return code_; }
  const std::string& message() const { return message_; }
  // The slot at fault, or -1 when none is known.
  int failed_slot() const { return failed_slot_; }

  // Returns a copy whose message is "context: message".
  Status with_context(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_, failed_slot_);
  }

 private:
  tm_result_t code_ = TM_SUCCESS;
  std::string message_;
  int failed_slot_ = -1;
};

template <typename... Args>
Status error(tm_result_t code, const Args&... parts) {
  return Status(code, str_cat(parts...));
}

// Status for a failed system call: "what: strerror(errno)".
Status system_error(const std::string& what, int errno_value);

// A value or the Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {}  // NOLINT: must not be ok()

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace trainmover

// Returns early from the enclosing function when `expr` is not ok.
#define TM_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::trainmover::Status tm_status_ = (expr); \
    if (!tm_status_.ok()) return tm_status_;  \
  } while (0)

#define TM_CONCAT_INNER(a, b) a##b
#define TM_CONCAT(a, b) TM_CONCAT_INNER(a, b)
// `TM_ASSIGN_OR_RETURN(auto x, f());` binds the value or returns the error.
#define TM_ASSIGN_OR_RETURN(decl, expr) \
  TM_ASSIGN_OR_RETURN_IMPL(TM_CONCAT(tm_result_, __LINE__), decl, expr)
#define TM_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  decl = std::move(tmp).value()
