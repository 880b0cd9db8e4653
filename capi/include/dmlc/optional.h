// dmlc::optional as MXNet's generated op.h uses it: empty or a value; printed as the value or
// "None" (the parameter string MXNet expects).
#ifndef DMLC_OPTIONAL_H_
#define DMLC_OPTIONAL_H_

#include <ostream>
#include <stdexcept>
#include <string>

namespace dmlc {

struct nullopt_t {
  explicit constexpr nullopt_t(int) {}
};
constexpr nullopt_t nullopt = nullopt_t(0);

template <typename T>
class optional {
 public:
  optional() : has_(false), value_() {}
  optional(const T& value) : has_(true), value_(value) {}  // NOLINT: implicit as in dmlc
  optional(nullopt_t) : has_(false), value_() {}           // NOLINT
  optional& operator=(const T& value) {
    has_ = true;
    value_ = value;
    return *this;
  }
  optional& operator=(nullopt_t) {
    has_ = false;
    return *this;
  }
  const T& operator*() const { return value_; }
  T& operator*() { return value_; }
  const T& value() const {
    if (!has_) throw std::logic_error("dmlc::optional has no value");
    return value_;
  }
  bool has_value() const { return has_; }
  explicit operator bool() const { return has_; }
  bool operator==(const optional& o) const {
    return has_ == o.has_ && (!has_ || value_ == o.value_);
  }

 private:
  bool has_;
  T value_;
};

template <typename T>
std::ostream& operator<<(std::ostream& os, const optional<T>& v) {
  if (v) os << *v;
  else os << "None";
  return os;
}
inline std::ostream& operator<<(std::ostream& os, const optional<bool>& v) {
  return os << (!v ? "None" : *v ? "True" : "False");
}

}  // namespace dmlc

#endif  // DMLC_OPTIONAL_H_
