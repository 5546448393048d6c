// Errors, in two kinds (STYLE.md habit 5, after Halide's src/Error.h):
//  - UserError: bad input from the user (malformed model, unsupported operator, wrong flag). The
//    message names the thing and what to do; the CLI prints it once and exits with code 1.
//  - InternalError: a broken invariant of ours. Carries file and line; also exit code 1 from the
//    CLI, but worded as a bug report.
// Raise them with TLM_USER_ERROR(...) / TLM_CHECK(cond) << ...; both take a stream of parts.
// Candidate programs that fail are *not* errors: they are records with an error kind (measure/).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tlm {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& msg) : std::runtime_error(msg) {}
};

class InternalError : public std::runtime_error {
 public:
  explicit InternalError(const std::string& msg) : std::runtime_error(msg) {}
};

namespace detail {
// Collects a message with operator<< and throws when destroyed at the end of the statement.
template <typename E>
class ErrorBuilder {
 public:
  ErrorBuilder(const char* file, int line, const char* cond) {
    if (file) os_ << "internal error at " << file << ":" << line << ": ";
    if (cond) os_ << "condition failed: " << cond << ": ";
  }
  template <typename T>
  ErrorBuilder& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] ~ErrorBuilder() noexcept(false) { throw E(os_.str()); }

 private:
  std::ostringstream os_;
};

// Lets `cond ? (void)0 : Voidify() & builder << ...` compile as one expression.
struct Voidify {
  template <typename T>
  void operator&(const T&) {}
};
}  // namespace detail

}  // namespace tlm

#define TLM_USER_ERROR() ::tlm::detail::ErrorBuilder<::tlm::UserError>(nullptr, 0, nullptr)
#define TLM_INTERNAL_ERROR() \
  ::tlm::detail::ErrorBuilder<::tlm::InternalError>(__FILE__, __LINE__, nullptr)
#define TLM_CHECK(cond)   \
  (cond) ? (void)0        \
         : ::tlm::detail::Voidify() & \
               ::tlm::detail::ErrorBuilder<::tlm::InternalError>(__FILE__, __LINE__, #cond)
#define TLM_USER_CHECK(cond) \
  (cond) ? (void)0           \
         : ::tlm::detail::Voidify() & ::tlm::detail::ErrorBuilder<::tlm::UserError>(nullptr, 0, nullptr)
