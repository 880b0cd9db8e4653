#include "threading.h"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <cstdlib>
#include <memory>
#include <mutex>

namespace symbind {

namespace {
std::mutex g_mutex;
std::unique_ptr<tbb::global_control> g_control;

struct EnvThreads {
  EnvThreads() {
    const char* env = std::getenv("SYMBIND_NUM_THREADS");
    if (env && std::atoi(env) > 0) SetNumThreads(std::atoi(env));
  }
} g_env_threads;
}  // namespace

void SetNumThreads(int n) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_control.reset();
  if (n > 0)
    g_control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      static_cast<size_t>(n));
}

int GetNumThreads() {
  return static_cast<int>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

}  // namespace symbind
