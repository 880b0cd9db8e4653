// Where the real-model tests find MXNet's models: ../shared beside the clone, not in it. Tests
// that read it carry the [shared] tag; without the directory, ctest skips them (tests/CMakeLists.txt).
#pragma once
#include <string>

namespace symbind_test {

// The directory holding models/ (the CMake cache variable SYMBIND_SHARED_DIR).
std::string SharedDir();

}  // namespace symbind_test
