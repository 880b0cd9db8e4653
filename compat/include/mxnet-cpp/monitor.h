// MXNet cpp-package compatibility: Monitor prints statistics of node outputs every
// `interval` batches (install on an executor, then tic() before and toc() after Forward).
#pragma once
#include <cmath>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/executor.h"
#include "mxnet-cpp/ndarray.h"

namespace mxnet {
namespace cpp {

// norm(x) / sqrt(size(x)) as a one-element array.
inline NDArray _default_monitor_func(const NDArray& x) {
  std::vector<mx_float> v;
  NDArray(x).SyncCopyToCPU(&v);
  double s = 0;
  for (float f : v) s += static_cast<double>(f) * f;
  std::vector<mx_float> out{static_cast<mx_float>(std::sqrt(s) / std::sqrt(static_cast<double>(v.size())))};
  return NDArray(out);
}

class Monitor {
 public:
  typedef std::function<NDArray(const NDArray&)> StatFunc;
  typedef std::tuple<int, std::string, NDArray> Stat;

  explicit Monitor(int interval, std::regex pattern = std::regex(".*"),
                   StatFunc stat_func = _default_monitor_func)
      : interval(interval), pattern(pattern), stat_func(stat_func) {}

  void install(Executor* exe, bool monitor_all = false) {
    exe->SetMonitorCallback(
        [this](const std::string& name, const NDArray& value) {
          if (!activated || !std::regex_match(name, pattern)) return;
          stats.emplace_back(step, name, stat_func(value));
        },
        monitor_all);
    exes.push_back(exe);
  }
  void tic() {
    if (step % interval == 0) {
      activated = true;
      stats.clear();
    }
    ++step;
  }
  std::vector<Stat> toc() {
    std::vector<Stat> out;
    if (!activated) return out;
    activated = false;
    out.swap(stats);
    return out;
  }
  void toc_print() {
    for (auto& s : toc()) {
      std::vector<mx_float> v;
      std::get<2>(s).SyncCopyToCPU(&v);
      LG << "Batch: " << std::get<0>(s) << " " << std::get<1>(s) << " " << (v.empty() ? 0.0f : v[0]);
    }
  }

 protected:
  int interval;
  std::regex pattern;
  StatFunc stat_func;
  std::vector<Executor*> exes;
  int step = 0;
  bool activated = false;
  std::vector<Stat> stats;
};

}  // namespace cpp
}  // namespace mxnet
