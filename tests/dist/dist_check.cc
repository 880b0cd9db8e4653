// Checks of KVStore "dist_sync", run by tests/dist/dist_test.sh under mpirun (every rank runs
// this program; each prints "dist_check: rank R: PASS <mode>" when its checks hold).
//   collectives  Init broadcasts rank 0's values; Push sums over ranks for fused small keys, a key
//                larger than one allreduce chunk, several values per key; updater; Barrier;
//                the mxnet-cpp KVStore("dist_sync") with an SGD optimizer.
//   equivalence  an MLP trained N steps by K ranks on their parts of each batch ends with the
//                weights of one process trained on the combined batches (computed here too).
//   mismatch     rank 1 pushes a different shape: every rank reports rank, key and shapes.
//   throw        rank 1 stops on an error after 2 steps; the others stop with an error.
//   kill         rank 1 is killed (SIGKILL) after 2 steps; mpirun ends the job.
//   stuck        rank 1 stops calling the store; the others time out (SYMBIND_DIST_TIMEOUT).
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <symbind/core/error.h>
#include <symbind/executor/executor.h>
#include <symbind/train/kvstore.h>

#include "mxnet-cpp/MxNetCpp.h"

using namespace symbind;

namespace {

int g_rank = 0;

void Expect(bool ok, const std::string& what) {
  if (!ok) throw Error("check failed: " + what);
}

NDArray Filled(const TShape& shape, float v) {
  NDArray a(shape);
  a.Fill(v);
  return a;
}

bool AllEqual(const NDArray& a, float v) {
  const float* p = a.fdata();
  for (int64_t i = 0; i < a.Size(); ++i)
    if (p[i] != v) return false;
  return true;
}

void Collectives() {
  auto kv = KVStore::Create("dist_sync");
  const int k = kv->num_workers(), r = kv->rank();
  Expect(KVStore::Create("horovod")->num_workers() == k, "horovod alias");
  // Init: rank 0's values everywhere.
  std::vector<std::string> keys = {"small_a", "small_b", "big"};
  const int64_t big = (int64_t{1} << 20) + 12345;  // more than one allreduce chunk
  std::vector<NDArray> init = {Filled(TShape({3, 4}), 10.0f + r), Filled(TShape({7}), 20.0f + r),
                               Filled(TShape({big}), 30.0f + r)};
  kv->Init(keys, init);
  std::vector<NDArray> out(3);
  kv->Pull(keys, {&out[0], &out[1], &out[2]});
  Expect(AllEqual(out[0], 10) && AllEqual(out[1], 20) && AllEqual(out[2], 30), "Init keeps rank 0's values");
  // Push without updater: the sum over ranks (and over the local values of one key) is stored.
  kv->Push({"small_a", "small_b", "big", "small_a"},
           {Filled(TShape({3, 4}), r + 1.0f), Filled(TShape({7}), 2.0f * r), Filled(TShape({big}), r + 1.0f),
            Filled(TShape({3, 4}), 1.0f)});
  kv->Pull(keys, {&out[0], &out[1], &out[2]});
  const float tri = k * (k + 1) / 2.0f;
  Expect(AllEqual(out[0], tri + k), "fused sum of small_a");
  Expect(AllEqual(out[1], 2.0f * (tri - k)), "fused sum of small_b");
  Expect(AllEqual(out[2], tri), "chunked sum of big");
  // With an updater every rank applies it to the same sum.
  kv->SetUpdater([](const std::string&, const NDArray& sum, NDArray* stored) {
    float* w = stored->fdata();
    const float* g = sum.fdata();
    for (int64_t i = 0; i < stored->Size(); ++i) w[i] -= 0.5f * g[i];
  });
  kv->Push({"small_b"}, {Filled(TShape({7}), 1.0f)});
  kv->Pull({"small_b"}, {&out[1]});
  Expect(AllEqual(out[1], 2.0f * (tri - k) - 0.5f * k), "updater on the sum");
  kv->Barrier();

  // mxnet-cpp: the same through the compat KVStore and an SGD optimizer.

  mxnet::cpp::KVStore store("dist_sync");
  Expect(mxnet::cpp::KVStore::GetNumWorkers() == k && mxnet::cpp::KVStore::GetRank() == r, "compat rank");
  std::unique_ptr<mxnet::cpp::Optimizer> opt(mxnet::cpp::OptimizerRegistry::Find("sgd"));
  opt->SetParam("lr", 0.25f);
  mxnet::cpp::KVStore::SetOptimizer(std::move(opt));
  mxnet::cpp::NDArray w(std::vector<mxnet::cpp::mx_float>{1.0f + r, 2.0f + r}, mxnet::cpp::Shape(2), mxnet::cpp::Context::cpu());
  mxnet::cpp::KVStore::Init(3, w);
  mxnet::cpp::NDArray g(std::vector<mxnet::cpp::mx_float>{1.0f * (r + 1), 2.0f}, mxnet::cpp::Shape(2), mxnet::cpp::Context::cpu());
  mxnet::cpp::KVStore::Push(3, g);
  mxnet::cpp::NDArray got(mxnet::cpp::Shape(2), mxnet::cpp::Context::cpu());
  mxnet::cpp::KVStore::Pull(3, &got);
  std::vector<mxnet::cpp::mx_float> v(2);
  got.SyncCopyToCPU(v.data(), 2);
  Expect(v[0] == 1.0f - 0.25f * tri && v[1] == 2.0f - 0.25f * 2.0f * k, "compat SGD through dist_sync");
  mxnet::cpp::KVStore::Barrier();
}

// A 12-16-4 MLP, data from a fixed seed (the same on every rank).
Symbol Mlp() {
  Symbol x = Symbol::Variable("data");
  Symbol h = OpBuilder("FullyConnected").SetParam("num_hidden", 16).SetInput("data", x).CreateSymbol("fc1");
  h = OpBuilder("Activation").SetParam("act_type", "tanh").SetInput("data", h).CreateSymbol("act1");
  h = OpBuilder("FullyConnected").SetParam("num_hidden", 4).SetInput("data", h).CreateSymbol("fc2");
  return OpBuilder("SoftmaxOutput").SetParam("normalization", "batch").SetInput("data", h).CreateSymbol("softmax");
}

struct Trainer {
  std::unique_ptr<Executor> exec;
  std::vector<std::string> names;  // parameters with gradients
  std::map<std::string, NDArray> momentum;
};

Trainer Bind(int batch) {
  Trainer t;
  t.exec = SimpleBind(Mlp(), Context::CPU(), {{"data", NDArray(TShape({batch, 12}))},
                                              {"softmax_label", NDArray(TShape({batch}))}});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (auto& kv : t.exec->arg_dict()) {  // map order: the same draws in every process
    if (kv.first == "data" || kv.first == "softmax_label") continue;
    float* p = kv.second.fdata();
    for (int64_t i = 0; i < kv.second.Size(); ++i) p[i] = u(rng);
    t.names.push_back(kv.first);
    t.momentum[kv.first] = NDArray(kv.second.shape());
  }
  return t;
}

void Sgd(float* w, const float* g, float* m, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    m[i] = 0.9f * m[i] - 0.1f * (scale * g[i] + 1e-3f * w[i]);
    w[i] += m[i];
  }
}

void Equivalence(int steps) {
  auto kv = KVStore::Create("dist_sync");
  const int k = kv->num_workers(), r = kv->rank(), batch = 8;
  // Combined batches for all steps.
  std::mt19937 rng(11);
  std::normal_distribution<float> n01;
  std::vector<std::vector<float>> xs(steps), ys(steps);
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < k * batch * 12; ++i) xs[s].push_back(n01(rng));
    for (int i = 0; i < k * batch; ++i) ys[s].push_back(static_cast<float>(rng() % 4));
  }
  // K ranks, each on its rows of every combined batch.
  Trainer dist = Bind(batch);
  auto args = dist.exec->arg_dict(), grads = dist.exec->grad_dict();
  std::vector<NDArray> weights, grad_list;
  for (auto& n : dist.names) weights.push_back(args[n]), grad_list.push_back(grads[n]);
  kv->Init(dist.names, weights);
  kv->SetUpdater([&](const std::string& key, const NDArray& sum, NDArray* stored) {
    Sgd(stored->fdata(), sum.fdata(), dist.momentum.at(key).fdata(), stored->Size(), 1.0f / k);
  });
  for (int s = 0; s < steps; ++s) {
    args["data"].SyncCopyFromCPU(xs[s].data() + r * batch * 12, static_cast<size_t>(batch * 12));
    args["softmax_label"].SyncCopyFromCPU(ys[s].data() + r * batch, static_cast<size_t>(batch));
    dist.exec->Forward(true);
    dist.exec->Backward();
    kv->Push(dist.names, grad_list);
    std::vector<NDArray*> outs;
    for (auto& w : weights) outs.push_back(&w);
    kv->Pull(dist.names, outs);
  }
  // One process on the combined batches.
  Trainer one = Bind(k * batch);
  auto oargs = one.exec->arg_dict(), ograds = one.exec->grad_dict();
  for (int s = 0; s < steps; ++s) {
    oargs["data"].SyncCopyFromCPU(xs[s].data(), xs[s].size());
    oargs["softmax_label"].SyncCopyFromCPU(ys[s].data(), ys[s].size());
    one.exec->Forward(true);
    one.exec->Backward();
    for (auto& n : one.names)
      Sgd(oargs[n].fdata(), ograds[n].fdata(), one.momentum[n].fdata(), oargs[n].Size(), 1.0f);
  }
  double worst = 0, moved = 0;
  for (auto& n : dist.names) {
    const float* a = args[n].fdata();
    const float* b = oargs[n].fdata();
    for (int64_t i = 0; i < args[n].Size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / (1e-3 + std::fabs(b[i])));
    }
  }
  // The weights must have moved, or the comparison says nothing.
  Trainer start = Bind(batch);
  for (auto& kvp : start.exec->arg_dict())
    if (oargs.count(kvp.first) && kvp.first != "data" && kvp.first != "softmax_label")
      for (int64_t i = 0; i < kvp.second.Size(); ++i)
        moved = std::max(moved, static_cast<double>(std::fabs(kvp.second.fdata()[i] - oargs[kvp.first].fdata()[i])));
  std::printf("dist_check: rank %d: %d ranks x batch %d, %d steps: max relative difference to one process %.3g "
              "(weights moved by up to %.3g)\n", r, k, batch, steps, worst, moved);
  Expect(moved > 0.05, "training moved the weights");
  Expect(worst < 1e-4, "weights equal one process on the combined batch");
}

void Mismatch() {
  auto kv = KVStore::Create("dist_sync");
  const int r = kv->rank();
  kv->Init({"fc1_weight", "fc1_bias"}, {Filled(TShape({4, 3}), 1), Filled(TShape({4}), 0)});
  try {
    kv->Push({"fc1_weight", "fc1_bias"}, {Filled(TShape({4, 3}), 1), Filled(TShape({4}), 0)});
    // rank 1 pushes a store of its own with another shape for the same key
    auto other = KVStore::Create("dist_sync");
    other->Init({"w"}, {Filled(r == 1 ? TShape({5, 3}) : TShape({4, 3}), 0)});
  } catch (const Error& e) {
    std::printf("dist_check: rank %d caught: %s\n", r, e.what());
    const std::string m = e.what();
    Expect(m.find("disagree") != std::string::npos && m.find("rank 1") != std::string::npos &&
               m.find("'w'") != std::string::npos && m.find("(5,3)") != std::string::npos,
           "the message names rank 1, key w and its shape");
    std::printf("dist_check: rank %d: PASS mismatch\n", r);
    std::fflush(stdout);
    throw;  // the job ends with an error, as a training program would
  }
  throw Error("no error for mismatched shapes");
}

// Steps of a 2-key store; rank 1 misbehaves after two steps as `mode` says.
void Fault(const std::string& mode) {
  auto kv = KVStore::Create("dist_sync");
  const int r = kv->rank();
  kv->Init({"a", "b"}, {Filled(TShape({100}), 0), Filled(TShape({10}), 0)});
  for (int step = 0;; ++step) {
    if (r == 1 && step == 2) {
      if (mode == "kill") std::raise(SIGKILL);
      if (mode == "throw") throw Error("rank 1 fails on purpose (dist_check throw)");
      if (mode == "stuck") std::this_thread::sleep_for(std::chrono::seconds(120));
    }
    kv->Push({"a", "b"}, {Filled(TShape({100}), 1), Filled(TShape({10}), 1)});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (step > 400) throw Error("the job did not stop");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "collectives") Collectives();
    else if (mode == "equivalence") Equivalence(argc > 2 ? std::atoi(argv[2]) : 20);
    else if (mode == "mismatch") Mismatch();
    else if (mode == "throw" || mode == "kill" || mode == "stuck") Fault(mode);
    else throw Error("usage: dist_check collectives|equivalence [steps]|mismatch|throw|kill|stuck");
    g_rank = KVStore::Create("dist_sync")->rank();
    std::printf("dist_check: rank %d: PASS %s\n", g_rank, mode.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_check: error: %s\n", e.what());
    return 1;
  }
}
