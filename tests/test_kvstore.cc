// symbind::KVStore in one process, the checks that need no MPI, and data sharding
// (part_index / num_parts). The distributed behaviour is tested under mpirun by
// tests/dist/dist_check.cc (ctest -R dist_).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include <symbind/io/mnist.h>
#include <symbind/train/collective.h>
#include <symbind/train/kvstore.h>

#include "mxnet-cpp/MxNetCpp.h"

using namespace symbind;

namespace {
NDArray Filled(const TShape& s, float v) {
  NDArray a(s);
  a.Fill(v);
  return a;
}
}  // namespace

TEST_CASE("KVStore local: Init, Push sums, updater, Pull", "[kvstore]") {
  auto kv = KVStore::Create("local");
  CHECK(kv->rank() == 0);
  CHECK(kv->num_workers() == 1);
  NDArray init = Filled(TShape({2, 2}), 1);
  kv->Init({"w", "b"}, {init, Filled(TShape({3}), 0)});
  init.Fill(9);  // the store keeps its own copy
  NDArray w, b;
  kv->Pull({"w", "b"}, {&w, &b});
  CHECK(w.ToVector() == std::vector<float>(4, 1.0f));
  // Values for one key are summed; without an updater the sum replaces the stored value.
  kv->Push({"w", "w", "b"}, {Filled(TShape({2, 2}), 2), Filled(TShape({2, 2}), 3), Filled(TShape({3}), 1)});
  kv->Pull({"w", "b"}, {&w, &b});
  CHECK(w.ToVector() == std::vector<float>(4, 5.0f));
  CHECK(b.ToVector() == std::vector<float>(3, 1.0f));
  std::vector<std::string> seen;
  kv->SetUpdater([&](const std::string& key, const NDArray& pushed, NDArray* stored) {
    seen.push_back(key);
    for (int64_t i = 0; i < stored->Size(); ++i) stored->SetFlat(i, stored->GetFlat(i) - 0.5f * pushed.GetFlat(i));
  });
  kv->Push({"b", "w"}, {Filled(TShape({3}), 2), Filled(TShape({2, 2}), 4)});
  kv->Pull({"w", "b"}, {&w, &b});
  CHECK(seen == std::vector<std::string>{"b", "w"});
  CHECK(w.ToVector() == std::vector<float>(4, 3.0f));
  CHECK(b.ToVector() == std::vector<float>(3, 0.0f));
  kv->Barrier();  // one process: returns at once
  CHECK_THROWS_WITH(kv->Init({"w"}, {init}), Catch::Contains("'w' initialised twice"));
  NDArray wrong(TShape({4}));
  CHECK_THROWS_AS(kv->Pull({"w"}, {&wrong}), ShapeError);
  CHECK_THROWS_WITH(kv->Pull({"nope"}, {&w}), Catch::Contains("'nope' was not initialised"));
}

TEST_CASE("KVStore types: aliases, refusals, and dist_sync without MPI", "[kvstore]") {
  CHECK(KVStore::Create("device")->type() == "device");
  CHECK(KVStore::IsDistributed("horovod"));
  CHECK(KVStore::IsDistributed("dist_sync_device"));
  CHECK_FALSE(KVStore::IsDistributed("local"));
  CHECK_THROWS_WITH(KVStore::Create("dist_async"), Catch::Contains("use 'dist_sync'"));
  CHECK_THROWS_WITH(KVStore::Create("nccl"), Catch::Contains("unknown KVStore type 'nccl'"));
  // Creating dist_sync here would start MPI in the test process, so that path is tested under
  // mpirun (tests/dist); a build without MPI must say how to get it.
  if (!Collective::Available()) {
    CHECK_THROWS_WITH(KVStore::Create("dist_sync"), Catch::Contains("libopenmpi-dev openmpi-bin"));
    CHECK_THROWS_WITH(Collective::World(), Catch::Contains("mpirun"));
  }
}

TEST_CASE("MNISTPart splits a data set into contiguous parts as MXNet does", "[kvstore][mnist]") {
  const int64_t n = 10;
  MNISTData d{NDArray(TShape({n, 1, 2})), NDArray(TShape({n}))};
  for (int64_t i = 0; i < n; ++i) d.labels.SetFlat(i, static_cast<float>(i));
  for (int parts : {1, 2, 3, 4}) {
    std::vector<float> all;
    for (int p = 0; p < parts; ++p) {
      MNISTData part = MNISTPart(d, p, parts);
      CHECK(part.images.shape()[0] == part.labels.shape()[0]);
      // MXNet: [n / parts * p, n / parts * (p + 1)) rounded down.
      CHECK(part.labels.Size() == n * (p + 1) / parts - n * p / parts);
      for (float v : part.labels.ToVector()) all.push_back(v);
    }
    std::vector<float> expect;
    for (int64_t i = 0; i < n; ++i) expect.push_back(static_cast<float>(i));
    CHECK(all == expect);  // every sample in exactly one part, in order
  }
  CHECK_THROWS_WITH(MNISTPart(d, -1, 2), Catch::Contains("part_index"));
  CHECK_THROWS_WITH(MNISTPart(d, 0, 11), Catch::Contains("cannot split 10 samples into 11 parts"));
}

TEST_CASE("compat: CSVIter part_index / num_parts", "[kvstore][compat]") {
  using namespace mxnet::cpp;
  const std::string path = "/tmp/symbind_kvstore_parts_" + std::to_string(std::random_device{}()) + ".csv";
  {
    std::ofstream f(path);
    for (int r = 0; r < 7; ++r) f << r << "," << 10 * r << "\n";
  }
  std::vector<std::vector<mx_float>> seen;
  for (int part = 0; part < 2; ++part) {
    auto iter = MXDataIter("CSVIter").SetParam("data_csv", path).SetParam("data_shape", Shape(2))
                    .SetParam("batch_size", 10).SetParam("round_batch", 0).SetParam("num_parts", 2)
                    .SetParam("part_index", part).CreateDataIter();
    auto small = MXDataIter("CSVIter").SetParam("data_csv", path).SetParam("data_shape", Shape(2))
                     .SetParam("batch_size", 1).SetParam("num_parts", 2).SetParam("part_index", part)
                     .CreateDataIter();
    std::vector<mx_float> rows;
    while (small.Next()) {
      std::vector<mx_float> v(2);
      small.GetData().SyncCopyToCPU(v.data(), 2);
      rows.push_back(v[0]);
    }
    seen.push_back(rows);
    // 3 or 4 rows in a batch of 10: with round_batch=0 returned padded, as MXNet's CSVIter does.
    REQUIRE(iter.Next());
    CHECK(iter.GetPadNum() == 10 - static_cast<int>(rows.size()));
    CHECK_FALSE(iter.Next());
  }
  CHECK(seen[0] == std::vector<mx_float>{0, 1, 2});
  CHECK(seen[1] == std::vector<mx_float>{3, 4, 5, 6});
  std::remove(path.c_str());
}
