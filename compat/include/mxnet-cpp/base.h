// MXNet cpp-package compatibility: basic types (mx_float, Shape, Context, OpReqType).
// Like every installed mxnet-cpp header: C++11, and only mxnet/, dmlc/ and nnvm/ headers; the
// symbind objects behind the classes stay in libmxnet.so (compat/compat_internal.h).
// dmlc::optional, LG and CHECK come from dmlc/optional.h and dmlc/logging.h (capi/include).
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

#include <dmlc/logging.h>
#include <dmlc/optional.h>


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
  // symbind computes on the CPU only: a GPU context may be constructed (MXNet programs make
  // one before choosing), and arrays and executors on it run on the CPU, with a warning on
  // stderr the first time.
  static Context gpu(int device_id = 0) { return Context(DeviceType::kGPU, device_id); }
  DeviceType GetDeviceType() const { return type_; }
  int GetDeviceId() const { return id_; }

 private:
  DeviceType type_;
  int id_;
};

// A shape (MXNet's cpp-package Shape, also reachable as mxnet-cpp/shape.h): dims as mx_uint.
// Constructors follow MXNet's: one dim or a vector explicitly, 2 to 5 dims implicitly, so a
// braced list converts (`array.Reshape({2, 1024})`).
class Shape {
 public:
  Shape() {}
  explicit Shape(index_t s1) : dims_{s1} {}
  Shape(index_t s1, index_t s2) : dims_{s1, s2} {}
  Shape(index_t s1, index_t s2, index_t s3) : dims_{s1, s2, s3} {}
  Shape(index_t s1, index_t s2, index_t s3, index_t s4) : dims_{s1, s2, s3, s4} {}
  Shape(index_t s1, index_t s2, index_t s3, index_t s4, index_t s5) : dims_{s1, s2, s3, s4, s5} {}
  explicit Shape(const std::vector<index_t>& v) : dims_(v) {}
  template <typename Iterator,
            typename = typename std::enable_if<!std::is_integral<Iterator>::value>::type>
  Shape(Iterator begin, Iterator end) : dims_(begin, end) {}
  template <typename Iterator>
  void CopyFrom(Iterator begin, Iterator end) { dims_.assign(begin, end); }

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

 private:
  std::vector<index_t> dims_;
};

// "(2,3)": the form operator parameters take.
std::ostream& operator<<(std::ostream& os, const Shape& s);

}  // namespace cpp
}  // namespace mxnet

