// Helpers shared by test_ops_shape.cc and test_ops_spatial_misc.cc.
#pragma once
#include <functional>
#include <string>

#include "op_test_util.h"

namespace symbind::test {

// The message of the symbind::Error `f` throws, or "" when it throws none.
inline std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace symbind::test
