#include "threading.h"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include <symbind/core/error.h>

namespace symbind {

namespace {
std::mutex g_mutex;
std::unique_ptr<tbb::global_control> g_control;

struct EnvThreads {
  EnvThreads() {
    const char* env = std::getenv("SYMBIND_NUM_THREADS");
    if (!env || !*env) return;
    // Static initialisation cannot throw: a bad value is reported and ignored.
    try {
      const int64_t n = ParseNumThreads(env, "SYMBIND_NUM_THREADS");
      const std::string note = ThreadClampNote(n, "SYMBIND_NUM_THREADS");
      if (!note.empty()) std::cerr << "symbind: warning: " << note << "\n";
      if (n > 0) SetNumThreads(n);
    } catch (const Error& e) {
      std::cerr << "symbind: warning: ignoring " << e.what() << "\n";
    }
  }
} g_env_threads;
}  // namespace

int MaxNumThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return 4 * static_cast<int>(std::max(1u, std::min(hw, 1u << 16)));
}

int64_t ParseNumThreads(const std::string& text, const std::string& what) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  errno = 0;
  const long long v = digits ? std::strtoll(text.c_str(), nullptr, 10) : -1;
  if (!digits || errno == ERANGE)
    throw ParamError(StrCat(what, " must be a non-negative integer thread count (0: all cores), got '",
                            text, "'"));
  return v;
}

std::string ThreadClampNote(int64_t n, const std::string& what) {
  if (n <= MaxNumThreads()) return "";
  return StrCat(what, " ", n, " is more than the maximum of ", MaxNumThreads(),
                " threads (4 x the hardware threads); using ", MaxNumThreads());
}

int SetNumThreads(int64_t n) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_control.reset();
  if (n > 0)
    g_control = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism,
        static_cast<size_t>(std::min<int64_t>(n, MaxNumThreads())));
  return static_cast<int>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

int GetNumThreads() {
  return static_cast<int>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

}  // namespace symbind
