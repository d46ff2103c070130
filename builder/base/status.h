// Errors as values. An Error names the input file and the place in it (a key
// path, a line and column, a byte offset) so that the one place that prints
// it can tell the user exactly what is wrong and where.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace graph_ascend {

struct Error {
  std::string file;     // the input or output path concerned; may be empty
  std::string where;    // "line 3, column 7 (byte 41)", "key data.X.input_args"
  std::string message;  // what is wrong, without the file and place

  // "file: where: message", leaving out empty parts, on one line: control
  // characters and bytes that are not UTF-8 escaped (OneLine).
  std::string ToString() const;
};

// `text` safe to print on one line of a message: \n, \r, \t as such, other
// control characters (C0, DEL) and bytes that are not valid UTF-8 as \xNN.
// Backslashes stay: escaping twice gives the same text.
std::string OneLine(std::string_view text);

// Bytes of a file quoted in a message: OneLine, cut after `max` bytes ("...").
std::string QuoteBytes(std::string_view bytes, size_t max = 40);

// Ok or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)) {}  // NOLINT: implicit on purpose

  static Status Ok() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }
  Error& error() { return *error_; }

 private:
  std::optional<Error> error_;
};

// A value or an Error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}    // NOLINT
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  Result(Status status) : v_(std::move(status.error())) {}  // NOLINT: only for errors

  bool ok() const { return v_.index() == 0; }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

inline Error MakeError(std::string file, std::string where, std::string message) {
  return Error{std::move(file), std::move(where), std::move(message)};
}

}  // namespace graph_ascend

// Returns the error of a Status-returning expression from the enclosing function.
#define GA_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::graph_ascend::Status _st = (expr);      \
    if (!_st.ok()) return _st.error();        \
  } while (0)
