// Real models with parameters bound once, for tests that bind many executors over the same
// parameter arrays (concurrency, Reshape).
#pragma once
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/symbol_json.h>

#include "op_test_util.h"
#include "shared_dir.h"

namespace symbind::test {

// A symbol with its parameter arrays; executors bind these arrays (shared) plus their own
// array for the input `data`.
struct SharedModel {
  Symbol symbol;
  std::map<std::string, NDArray> params;  // arguments other than data (and labels)
  std::map<std::string, NDArray> aux;
};

// MTCNN net `name` ("det1", "det2", "det3") with its real parameters.
inline SharedModel LoadMtcnnModel(const std::string& name) {
  SharedModel m;
  LoadCheckpoint(symbind_test::SharedDir() + "/models/mtcnn/" + name, 1, &m.symbol, &m.params,
                 &m.aux);
  return m;
}

// `symbol` with Gaussian parameters and aux states for input `data_shape` (labels of loss
// heads excluded). The Gaussians are scaled as a trained net's would be (weights by
// sqrt(2 / fan_in), BatchNorm moving variance near 1) so that deep nets neither overflow nor
// produce NaN, which would weaken a comparison.
inline SharedModel GaussianModel(const Symbol& symbol, const TShape& data_shape) {
  SharedModel m;
  m.symbol = symbol;
  ShapeInferResult shapes = InferShape(m.symbol, {{"data", data_shape}});
  auto scaled = [](const std::string& name, const TShape& shape) {
    NDArray a(shape);
    FillGaussian(a, kDefaultSeed, name);
    float* p = a.fdata();
    const int64_t n = a.Size();
    const double weight_scale = std::sqrt(2.0 * shape[0] / static_cast<double>(n));
    for (int64_t i = 0; i < n; ++i) {
      if (EndsWith(name, "_weight")) p[i] = static_cast<float>(p[i] * weight_scale);
      else if (EndsWith(name, "_moving_var")) p[i] = 1.0f + 0.1f * std::fabs(p[i]);
      else if (EndsWith(name, "_gamma")) p[i] = 1.0f + 0.1f * p[i];
      else p[i] *= 0.1f;  // biases, betas, moving means
    }
    return a;
  };
  auto arg_names = m.symbol.ListArguments();
  for (size_t i = 0; i < arg_names.size(); ++i)
    if (arg_names[i] != "data" && !EndsWith(arg_names[i], "_label"))
      m.params[arg_names[i]] = scaled(arg_names[i], shapes.arg_shapes[i]);
  auto aux_names = m.symbol.ListAuxiliaryStates();
  for (size_t i = 0; i < aux_names.size(); ++i) m.aux[aux_names[i]] = scaled(aux_names[i], shapes.aux_shapes[i]);
  return m;
}

// ResNet-18's graph up to the logits (fc1, before the softmax, so outputs are raw and every
// bit counts) with GaussianModel's parameters.
inline SharedModel ResNet18Logits(const TShape& data_shape) {
  Symbol full = LoadSymbolFile(symbind_test::SharedDir() + "/models/symbols/resnet-18-symbol.json");
  return GaussianModel(full.GetInternals()["fc1_output"], data_shape);
}

// An inference executor over the model's shared parameters with `data` as its own input
// (no gradient arrays; labels of loss heads, if any, are allocated per executor).
inline std::unique_ptr<Executor> BindShared(const SharedModel& m, const NDArray& data) {
  std::map<std::string, NDArray> args = m.params;
  args["data"] = data;
  std::map<std::string, OpReq> no_grads;
  for (auto& name : m.symbol.ListArguments()) no_grads[name] = OpReq::kNull;
  return SimpleBind(m.symbol, Context::CPU(), args, {}, no_grads, m.aux);
}

// Deep copies of an executor's outputs.
inline std::vector<NDArray> CopyOutputs(const Executor& exec) {
  std::vector<NDArray> out;
  for (auto& o : exec.outputs()) out.push_back(o.Copy());
  return out;
}

// True when every output has the same shape, dtype and bytes as `want`.
inline bool BitIdentical(const std::vector<NDArray>& got, const std::vector<NDArray>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i].shape() != want[i].shape() || got[i].dtype() != want[i].dtype() ||
        std::memcmp(got[i].raw_data(), want[i].raw_data(), got[i].bytes()) != 0)
      return false;
  return true;
}

// Sets the process-wide thread count for a scope and restores the previous one.
class ScopedNumThreads {
 public:
  explicit ScopedNumThreads(int n) : previous_(GetNumThreads()) { SetNumThreads(n); }
  ~ScopedNumThreads() { SetNumThreads(previous_); }
  ScopedNumThreads(const ScopedNumThreads&) = delete;
  ScopedNumThreads& operator=(const ScopedNumThreads&) = delete;

 private:
  int previous_;
};

}  // namespace symbind::test
