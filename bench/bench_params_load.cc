// .params load speed from the page cache, against a plain memcpy of the same bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include <symbind/io/ndarray_file.h>
#include "bench_util.h"

using namespace symbind;
using Clock = std::chrono::steady_clock;

int Main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/tmp/symbind-bench.params";
  // About 256 MB in 64 arrays, like a large model's weights.
  std::map<std::string, NDArray> arrays;
  for (int i = 0; i < 64; ++i) {
    NDArray a(TShape({1024, 1024}));
    a.Fill(static_cast<float>(i));
    arrays["arg:w" + std::to_string(i)] = a;
  }
  SaveNDArrays(path, arrays);
  const double bytes = 64.0 * 1024 * 1024 * 4;
  LoadNDArrayFile(path);  // warm the page cache
  std::vector<double> load_s;
  for (int r = 0; r < 5; ++r) {
    auto t0 = Clock::now();
    NDArrayFile f = LoadNDArrayFile(path);
    load_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (f.arrays.size() != 64) return 1;
  }
  std::vector<char> src(static_cast<size_t>(bytes), 1);
  std::vector<char> dst(src.size(), 0);  // already faulted in: pure copy bandwidth
  std::vector<double> copy_s;
  for (int r = 0; r < 5; ++r) {
    auto t0 = Clock::now();
    std::memcpy(dst.data(), src.data(), src.size());
    copy_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (dst[12345] != 1) return 1;
  }
  std::sort(load_s.begin(), load_s.end());
  std::sort(copy_s.begin(), copy_s.end());
  std::printf("params_load_gb_per_s %.2f\n", bytes / load_s[2] / 1e9);
  std::printf("memcpy_gb_per_s %.2f\n", bytes / copy_s[2] / 1e9);
  std::remove(path.c_str());
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_params_load", [&] { return Main(argc, argv); }); }
