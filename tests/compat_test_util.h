// Shared by the mxnet-cpp compatibility tests (written against mxnet-cpp/MxNetCpp.h only).
#pragma once
#include <vector>

#include "mxnet-cpp/MxNetCpp.h"

namespace symbind::test {

// An array's elements, copied out as an mxnet-cpp client would.
inline std::vector<mxnet::cpp::mx_float> Values(mxnet::cpp::NDArray a) {
  std::vector<mxnet::cpp::mx_float> v;
  a.SyncCopyToCPU(&v);
  return v;
}

}  // namespace symbind::test
