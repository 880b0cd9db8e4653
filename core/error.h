// Every failure reachable from the public API is a symbind::Error (or a subclass).
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace symbind {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// Bad parameter strings: unknown key, bad format, out of range.
class ParamError : public Error {
 public:
  using Error::Error;
};

// Shape inference found an inconsistency.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// Type (dtype) inference found an inconsistency, or a dtype an operator cannot compute in.
class TypeError : public Error {
 public:
  using Error::Error;
};

// An index outside the axis it indexes (take with mode='raise', gather_nd, ravel_multi_index):
// MXNet's IndexError, which its Python package raises as Python's IndexError.
class IndexError : public Error {
 public:
  using Error::Error;
};

// Malformed or truncated files.
class IOError : public Error {
 public:
  using Error::Error;
};

// An allocation the caller asked for cannot be satisfied.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

namespace detail {
inline void AppendAll(std::ostringstream&) {}
template <typename T, typename... Rest>
void AppendAll(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  AppendAll(os, rest...);
}
}  // namespace detail

// Concatenates its arguments with operator<< into one string.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  detail::AppendAll(os, args...);
  return os.str();
}

// "a, b, c": the list of names an error message offers.
inline std::string JoinNames(const std::vector<std::string>& names) {
  std::string s;
  for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

inline bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace symbind

// Throws symbind::Error with a streamed message when `cond` is false.
#define SYMBIND_CHECK(cond, ...)                               \
  do {                                                         \
    if (!(cond)) throw ::symbind::Error(::symbind::StrCat(__VA_ARGS__)); \
  } while (0)
