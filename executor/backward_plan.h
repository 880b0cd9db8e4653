// Executor::BackwardPlan: where each gradient goes during Backward (built in backward.cc).
// Internal to executor/; executor.cc needs the complete type for the executor's lifetime.
#pragma once
#include <vector>

#include <symbind/core/ndarray.h>

#include "executor.h"
#include "task_graph.h"

namespace symbind {

// dst += src, element by element. Gradient buffers are float32, or float64 for float64
// entries; another dst dtype (a float16 argument gradient) sums in float32 and takes the
// result back.
inline void AddInto(const NDArray& dst, const NDArray& src) {
  if (dst.dtype() == DType::kFloat64) {
    const NDArray s64 = src.dtype() == DType::kFloat64 ? src : src.AsType(DType::kFloat64);
    double* d = dst.data<double>();
    const double* s = s64.data<double>();
    for (int64_t i = 0, n = dst.Size(); i < n; ++i) d[i] += s[i];
    return;
  }
  if (dst.dtype() != DType::kFloat32) {
    NDArray sum = dst.AsType(DType::kFloat32), out = dst;
    AddInto(sum, src);
    sum.CopyTo(&out);
    return;
  }
  const NDArray s32 = src.dtype() == DType::kFloat32 ? src : src.AsType(DType::kFloat32);
  float* d = dst.fdata();
  const float* s = s32.fdata();
  for (int64_t i = 0, n = dst.Size(); i < n; ++i) d[i] += s[i];
}

// Where each gradient goes during Backward.
struct Executor::BackwardPlan {
  // Per op node (indexed like op_nodes_): whether it runs backward, its req and in_grad arrays.
  std::vector<bool> runs;
  std::vector<std::vector<OpReq>> req;
  std::vector<std::vector<NDArray>> in_grads;
  std::vector<std::vector<NDArray>> out_grads;
  // Entries whose gradient is the sum of several contributions: target and parts, summed in
  // a fixed order so results do not depend on the schedule.
  struct Sum {
    NDArray target;
    bool accumulate;  // grad_req add: target += sum
    std::vector<NDArray> parts;
    // target (=|+=) parts[0] + parts[1] + ..., always in this order.
    void Apply() {
      if (!accumulate) parts[0].CopyTo(&target);
      else AddInto(target, parts[0]);
      for (size_t k = 1; k < parts.size(); ++k) AddInto(target, parts[k]);
    }
  };
  std::vector<std::vector<Sum>> sums_before_node;  // summed before that node's backward
  std::vector<Sum> final_sums;                     // argument gradients, summed at the end
  std::vector<NDArray> head_grads;                 // one per output (ones by default)
  std::vector<bool> head_is_ones;
  std::vector<bool> head_used;  // whether any gradient reads head gradient h
  TaskGraph tasks;  // task i = op_nodes_[size-1-i] (reverse topological)
};

}  // namespace symbind
