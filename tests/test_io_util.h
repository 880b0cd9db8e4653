// Helpers shared by the io tests: a little-endian byte writer for hand-made files and paths.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>
#include "shared_dir.h"

namespace symbind_test {

// Appends little-endian values; pos() gives the offset of the next byte.
class Bytes {
 public:
  template <typename T>
  Bytes& put(T v) {
    s_.append(reinterpret_cast<const char*>(&v), sizeof(T));
    return *this;
  }
  Bytes& u32(uint32_t v) { return put(v); }
  Bytes& i32(int32_t v) { return put(v); }
  Bytes& u64(uint64_t v) { return put(v); }
  Bytes& i64(int64_t v) { return put(v); }
  Bytes& f32(float v) { return put(v); }
  Bytes& raw(const std::string& b) {
    s_ += b;
    return *this;
  }
  // int32 ndim + int64 dims (V1/V2/V3 shapes).
  Bytes& shape64(const std::vector<int64_t>& dims) {
    i32(static_cast<int32_t>(dims.size()));
    for (auto d : dims) i64(d);
    return *this;
  }
  Bytes& list_header(uint64_t count) { return u64(0x112).u64(0).u64(count); }
  Bytes& names(const std::vector<std::string>& n) {
    u64(n.size());
    for (auto& s : n) u64(s.size()).raw(s);
    return *this;
  }
  size_t pos() const { return s_.size(); }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

// This test process's own directory under $TMPDIR (or /tmp), removed with everything in it
// when the process exits, so that no run leaves files behind.
inline const std::string& ProcessTempDir() {
  struct Dir {
    std::string path;
    Dir() {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/symbind_test_XXXXXX";
      if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a directory like " + pattern);
      path = pattern;
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

// A path in this process's temporary directory, unique per name.
inline std::string TempPath(const std::string& name) { return ProcessTempDir() + "/" + name; }

}  // namespace symbind_test
