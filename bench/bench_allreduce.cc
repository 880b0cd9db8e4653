// Allreduce bandwidth of KVStore "dist_sync" Push against a plain MPI_Allreduce loop on the same
// bytes. Run under mpirun:  mpirun -np 2 build/bench/bench_allreduce
// Prints, per size, the bus bandwidth (bytes * 2 (n-1)/n per second, as NCCL/OSU-style tools
// report) of KVStore Push, of MPI_Allreduce, and of MPI_Iallreduce + MPI_Wait (the nonblocking
// collective KVStore polls with a deadline), each the best of 3 rounds; ratio = KVStore /
// MPI_Allreduce. "100 keys" pushes many small keys in one call (fused) against one MPI call per key.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <symbind/train/kvstore.h>
#include "bench_util.h"

using namespace symbind;
using Clock = std::chrono::steady_clock;

namespace {
double Seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int Reps(int64_t floats) { return floats >= (1 << 22) ? 10 : floats >= (1 << 16) ? 50 : 500; }
}  // namespace

int Main() {
  auto kv = KVStore::Create("dist_sync");
  const int n = kv->num_workers(), rank = kv->rank();
  const double bus = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  if (rank == 0)
    std::printf("%-18s %14s %14s %16s %8s\n", "size", "KVStore GB/s", "Allreduce GB/s", "Iallreduce GB/s",
                "ratio");
  struct Case {
    std::string name;
    int keys;
    int64_t floats_per_key;
  };
  const std::vector<Case> cases = {{"4 KiB", 1, 1024},           {"256 KiB", 1, 1 << 16},
                                   {"4 MiB", 1, 1 << 20},        {"64 MiB", 1, 1 << 24},
                                   {"100 keys x 4 KiB", 100, 1024}};
  for (const Case& c : cases) {
    std::vector<std::string> keys;
    std::vector<NDArray> vals;
    for (int k = 0; k < c.keys; ++k) {
      keys.push_back(c.name + "/" + std::to_string(k));
      vals.push_back(NDArray(TShape({c.floats_per_key})));
    }
    kv->Init(keys, vals);
    const int reps = Reps(c.floats_per_key * c.keys);
    const double bytes = static_cast<double>(c.floats_per_key) * c.keys * sizeof(float);
    kv->Push(keys, vals);  // warm up
    std::vector<std::vector<float>> bufs(static_cast<size_t>(c.keys),
                                         std::vector<float>(static_cast<size_t>(c.floats_per_key)));
    auto best = [&](auto&& body) {
      double s = 1e30;
      for (int round = 0; round < 3; ++round) {
        kv->Barrier();
        auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) body();
        s = std::min(s, Seconds(t0) / reps);
      }
      return s;
    };
    const double kv_s = best([&] { kv->Push(keys, vals); });
    // The same bytes with MPI alone: one call per key, as without fusion.
    const double mpi_s = best([&] {
      for (auto& b : bufs)
        MPI_Allreduce(MPI_IN_PLACE, b.data(), static_cast<int>(b.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
    const double nb_s = best([&] {
      for (auto& b : bufs) {
        MPI_Request req;
        MPI_Iallreduce(MPI_IN_PLACE, b.data(), static_cast<int>(b.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
      }
    });
    if (rank == 0)
      std::printf("%-18s %14.3f %14.3f %16.3f %8.2f\n", c.name.c_str(), bus * bytes / kv_s / 1e9,
                  bus * bytes / mpi_s / 1e9, bus * bytes / nb_s / 1e9, mpi_s / kv_s);
  }
  return 0;
}

int main() { return symbind::bench::RunMain("bench_allreduce", [&] { return Main(); }); }
