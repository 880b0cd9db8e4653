// MXNet cpp-package compatibility: basic types (mx_float, Shape, Context, OpReqType,
// dmlc::optional) and the LG logging stream.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <iostream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <symbind/core/context.h>
#include <symbind/core/tshape.h>

namespace dmlc {

// The subset of dmlc::optional the generated operator functions use.
template <typename T>
class optional {
 public:
  optional() = default;
  optional(const T& v) : has_(true), value_(v) {}  // NOLINT: implicit as in dmlc
  bool has_value() const { return has_; }
  explicit operator bool() const { return has_; }
  const T& value() const {
    if (!has_) throw std::logic_error("dmlc::optional has no value");
    return value_;
  }
  const T& operator*() const { return value_; }
  bool operator==(const optional& o) const {
    return has_ == o.has_ && (!has_ || value_ == o.value_);
  }

 private:
  bool has_ = false;
  T value_{};
};

template <typename T>
std::ostream& operator<<(std::ostream& os, const optional<T>& v) {
  if (!v) return os << "None";
  if constexpr (std::is_same_v<T, bool>) return os << (*v ? "True" : "False");
  else return os << *v;
}

}  // namespace dmlc

namespace mxnet {
namespace cpp {

typedef float mx_float;
typedef unsigned int mx_uint;
typedef mx_uint index_t;

// MXNet's device types.
enum DeviceType { kCPU = 1, kGPU = 2, kCPUPinned = 3 };

// How an executor writes a gradient.
enum OpReqType { kNullOp = 0, kWriteTo = 1, kWriteInplace = 2, kAddTo = 3 };

class Context {
 public:
  Context(const DeviceType& type, int id);
  static Context cpu(int device_id = 0) { return Context(DeviceType::kCPU, device_id); }
  // symbind computes on the CPU only: throws std::runtime_error.
  static Context gpu(int device_id = 0);
  DeviceType GetDeviceType() const { return type_; }
  int GetDeviceId() const { return id_; }
  symbind::Context native() const;

 private:
  DeviceType type_;
  int id_;
};

// A shape (MXNet's cpp-package Shape): dims as mx_uint.
class Shape {
 public:
  Shape() = default;
  template <typename... Ints,
            typename = std::enable_if_t<(sizeof...(Ints) > 0) &&
                                        (std::is_integral_v<std::decay_t<Ints>> && ...)>>
  explicit Shape(Ints... dims) : dims_{static_cast<index_t>(dims)...} {}
  Shape(const std::vector<index_t>& v) : dims_(v) {}  // NOLINT: implicit as in MXNet
  Shape(const index_t* begin, const index_t* end) : dims_(begin, end) {}
  explicit Shape(const symbind::TShape& s);

  const index_t* data() const { return dims_.data(); }
  index_t ndim() const { return static_cast<index_t>(dims_.size()); }
  index_t operator[](size_t i) const { return dims_[i]; }
  index_t& operator[](size_t i) { return dims_[i]; }
  size_t Size() const {
    size_t n = 1;
    for (auto d : dims_) n *= d;
    return n;
  }
  const std::vector<index_t>& dims() const { return dims_; }
  operator std::vector<index_t>() const { return dims_; }  // NOLINT
  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return dims_ != o.dims_; }
  symbind::TShape ToTShape() const;

 private:
  std::vector<index_t> dims_;
};

// "(2,3)": the form operator parameters take.
std::ostream& operator<<(std::ostream& os, const Shape& s);

// Number of GPUs symbind can use: always 0.
int MXGetGPUCount();
// Kept for source compatibility: nothing to shut down.
void MXNotifyShutdown();
// Seeds the generator behind NDArray::SampleGaussian/SampleUniform and the initializers.
void MXRandomSeed(int seed);

// MXNet's LG: a log line on stderr, ended by the destructor.
class LogLine {
 public:
  LogLine() = default;
  ~LogLine() { std::cerr << std::endl; }
  template <typename T>
  LogLine& operator<<(const T& v) {
    std::cerr << v;
    return *this;
  }
  LogLine& operator<<(std::ostream& (*manip)(std::ostream&)) {
    std::cerr << manip;
    return *this;
  }
};

// dmlc's CHECK failure: throws with the streamed message when destroyed.
class CheckFailure {
 public:
  explicit CheckFailure(const char* what) : msg_(std::string("Check failed: ") + what + " ") {}
  ~CheckFailure() noexcept(false) { throw std::runtime_error(msg_); }
  template <typename T>
  CheckFailure& operator<<(const T& v) {
    std::ostringstream os;
    os << v;
    msg_ += os.str();
    return *this;
  }

 private:
  std::string msg_;
};

}  // namespace cpp
}  // namespace mxnet

#ifndef LG
#define LG ::mxnet::cpp::LogLine()
#endif
// dmlc-style checks, for programs that use them without including dmlc/logging.h.
#ifndef CHECK
#define CHECK(x) \
  if (x) {                \
  } else                  \
    ::mxnet::cpp::CheckFailure(#x)
#define CHECK_EQ(a, b) CHECK((a) == (b))
#define CHECK_NE(a, b) CHECK((a) != (b))
#define CHECK_LT(a, b) CHECK((a) < (b))
#define CHECK_LE(a, b) CHECK((a) <= (b))
#define CHECK_GT(a, b) CHECK((a) > (b))
#define CHECK_GE(a, b) CHECK((a) >= (b))
#endif
