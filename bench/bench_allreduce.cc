// Allreduce bandwidth of KVStore "dist_sync" Push against a plain MPI_Allreduce loop on the same
// bytes. Run under mpirun:  mpirun -np 2 build/bench/bench_allreduce
// Prints, per size, the bus bandwidth (bytes * 2 (n-1)/n per second, as NCCL/OSU-style tools
// report) of both and their ratio; "100 keys" pushes many small keys in one call (fused).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <symbind/train/kvstore.h>

using namespace symbind;
using Clock = std::chrono::steady_clock;

namespace {
double Seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int Reps(int64_t floats) { return floats >= (1 << 22) ? 10 : floats >= (1 << 16) ? 50 : 500; }
}  // namespace

int main() {
  auto kv = KVStore::Create("dist_sync");
  const int n = kv->num_workers(), rank = kv->rank();
  const double bus = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  if (rank == 0)
    std::printf("%-18s %14s %14s %8s\n", "size", "KVStore GB/s", "MPI GB/s", "ratio");
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
    kv->Barrier();
    auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) kv->Push(keys, vals);
    const double kv_s = Seconds(t0) / reps;
    // The same bytes with MPI alone: one MPI_Allreduce per key, as without fusion.
    std::vector<std::vector<float>> bufs(static_cast<size_t>(c.keys),
                                         std::vector<float>(static_cast<size_t>(c.floats_per_key)));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = Clock::now();
    for (int r = 0; r < reps; ++r)
      for (auto& b : bufs)
        MPI_Allreduce(MPI_IN_PLACE, b.data(), static_cast<int>(b.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const double mpi_s = Seconds(t0) / reps;
    if (rank == 0)
      std::printf("%-18s %14.3f %14.3f %8.2f\n", c.name.c_str(), bus * bytes / kv_s / 1e9,
                  bus * bytes / mpi_s / 1e9, mpi_s / kv_s);
  }
  return 0;
}
