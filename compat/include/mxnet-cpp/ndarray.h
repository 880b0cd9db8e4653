// MXNet cpp-package compatibility: NDArray, a handle to an array (copies share it).
#pragma once
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <mxnet/c_api.h>

#include "mxnet-cpp/base.h"

namespace mxnet {
namespace cpp {

// What an NDArray refers to: defined inside libmxnet.so (compat/compat_internal.h).
struct NDArrayImpl;

class NDArray {
 public:
  NDArray();  // an empty handle
  // Zero-filled arrays (delay_alloc is accepted and ignored). dtype: MXNet's type flag.
  NDArray(const std::vector<mx_uint>& shape, const Context& context, bool delay_alloc = true,
          int dtype = 0);
  NDArray(const Shape& shape, const Context& context, bool delay_alloc = true, int dtype = 0);
  // 1-D copy of `size` values.
  NDArray(const mx_float* data, size_t size);
  NDArray(const mx_float* data, const Shape& shape, const Context& context);
  NDArray(const std::vector<mx_float>& data, const Shape& shape, const Context& context);
  explicit NDArray(const std::vector<mx_float>& data);

  // Element-wise arithmetic (float32 arrays); the binary forms return new arrays.
  NDArray operator+(mx_float scalar) const;
  NDArray operator-(mx_float scalar) const;
  NDArray operator*(mx_float scalar) const;
  NDArray operator/(mx_float scalar) const;
  NDArray operator%(mx_float scalar) const;
  NDArray operator+(const NDArray& rhs) const;
  NDArray operator-(const NDArray& rhs) const;
  NDArray operator*(const NDArray& rhs) const;
  NDArray operator/(const NDArray& rhs) const;
  NDArray operator%(const NDArray& rhs) const;
  // Fills every element.
  NDArray& operator=(mx_float scalar);
  NDArray& operator+=(mx_float scalar);
  NDArray& operator-=(mx_float scalar);
  NDArray& operator*=(mx_float scalar);
  NDArray& operator/=(mx_float scalar);
  NDArray& operator%=(mx_float scalar);
  NDArray& operator+=(const NDArray& rhs);
  NDArray& operator-=(const NDArray& rhs);
  NDArray& operator*=(const NDArray& rhs);
  NDArray& operator/=(const NDArray& rhs);
  NDArray& operator%=(const NDArray& rhs);

  // Index of the maximum along axis 1 of a 2-D array, one per row.
  NDArray ArgmaxChannel();

  void SyncCopyFromCPU(const mx_float* data, size_t size);
  void SyncCopyFromCPU(const std::vector<mx_float>& data);
  void SyncCopyToCPU(mx_float* data, size_t size = 0);
  void SyncCopyToCPU(std::vector<mx_float>* data, size_t size = 0);
  // Copies into `other`'s storage (shapes must match); returns `other`.
  NDArray CopyTo(NDArray* other) const;
  // A deep copy (on `context`, always the CPU here).
  NDArray Copy(const Context& context) const;
  NDArray Copy() const;
  size_t Offset(size_t h = 0, size_t w = 0) const;
  size_t Offset(size_t c, size_t h, size_t w) const;
  mx_float At(size_t h, size_t w) const;
  mx_float At(size_t c, size_t h, size_t w) const;
  // Row `index` along axis 0 (a view without that axis).
  NDArray At(size_t index) const;
  // Rows [begin, end) along axis 0 (a view).
  NDArray Slice(mx_uint begin, mx_uint end) const;
  // A view with another shape of the same size.
  NDArray Reshape(const Shape& new_shape) const;
  void WaitToRead() const {}
  void WaitToWrite() {}
  static void WaitAll() {}

  static void SampleGaussian(mx_float mu, mx_float sigma, NDArray* out);
  static void SampleUniform(mx_float begin, mx_float end, NDArray* out);
  // .params files (MXNet's NDArray list format).
  static void Load(const std::string& file_name, std::vector<NDArray>* array_list = nullptr,
                   std::map<std::string, NDArray>* array_map = nullptr);
  static std::map<std::string, NDArray> LoadToMap(const std::string& file_name);
  static std::vector<NDArray> LoadToList(const std::string& file_name);
  static void LoadFromBuffer(const void* buffer, size_t size,
                             std::vector<NDArray>* array_list = nullptr,
                             std::map<std::string, NDArray>* array_map = nullptr);
  static std::map<std::string, NDArray> LoadFromBufferToMap(const void* buffer, size_t size);
  static std::vector<NDArray> LoadFromBufferToList(const void* buffer, size_t size);
  static void Save(const std::string& file_name, const std::map<std::string, NDArray>& array_map);
  static void Save(const std::string& file_name, const std::vector<NDArray>& array_list);

  size_t Size() const;
  std::vector<mx_uint> GetShape() const;
  int GetDType() const;
  // Pointer to the float32 data (valid while the array lives).
  const mx_float* GetData() const;
  Context GetContext() const;

  bool IsNone() const;
  // A C API handle to this array's storage (made on first use, freed with the last copy of
  // this NDArray).
  NDArrayHandle GetHandle() const;

 private:
  friend struct NDArrayImpl;
  std::shared_ptr<NDArrayImpl> impl_;  // never null; shared by copies
};

std::ostream& operator<<(std::ostream& out, const NDArray& ndarray);

}  // namespace cpp
}  // namespace mxnet
