// MXNet's C API data iterators (MXListDataIters ... MXDataIterFree) over CSV files the tests
// write: values read back equal what was written, and the batching follows MXNet 1.9.1's
// CSVIter documentation (round_batch on and off, across a Reset).
#include <catch2/catch.hpp>

#include <mxnet/c_api.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

std::string TempCSV(const std::string& name, const std::vector<std::vector<float>>& rows) {
  static const std::string tag = std::to_string(std::random_device{}());
  const std::string path = "/tmp/symbind_capi_iter_" + tag + "_" + name;
  std::ofstream out(path);
  for (auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%.9g", row[i]);  // reads back as the same float
      out << (i ? ", " : "") << cell;
    }
    out << "\n";
  }
  return path;
}

DataIterCreator FindCreator(const std::string& wanted) {
  uint32_t n = 0;
  DataIterCreator* creators = nullptr;
  REQUIRE(MXListDataIters(&n, &creators) == 0);
  for (uint32_t i = 0; i < n; ++i) {
    const char *name, *desc;
    uint32_t num_args = 0;
    const char **arg_names, **arg_types, **arg_docs;
    REQUIRE(MXDataIterGetIterInfo(creators[i], &name, &desc, &num_args, &arg_names, &arg_types,
                                  &arg_docs) == 0);
    if (wanted == name) return creators[i];
  }
  FAIL("no data iterator named " << wanted);
  return nullptr;
}

DataIterHandle Create(const std::map<std::string, std::string>& params) {
  std::vector<const char*> keys, vals;
  for (auto& kv : params) {
    keys.push_back(kv.first.c_str());
    vals.push_back(kv.second.c_str());
  }
  DataIterHandle it = nullptr;
  REQUIRE(MXDataIterCreateIter(FindCreator("CSVIter"), static_cast<uint32_t>(keys.size()), keys.data(),
                               vals.data(), &it) == 0);
  return it;
}

struct Batch {
  std::vector<int> data_shape, label_shape;
  std::vector<float> data, label;
  int pad = -1;
  std::vector<uint64_t> index;
};

std::vector<int> ShapeOf(NDArrayHandle h) {
  int ndim = 0;
  const int* dims = nullptr;
  REQUIRE(MXNDArrayGetShapeEx(h, &ndim, &dims) == 0);
  return std::vector<int>(dims, dims + ndim);
}

std::vector<float> ValuesOf(NDArrayHandle h) {
  size_t n = 1;
  for (int d : ShapeOf(h)) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  REQUIRE(MXNDArraySyncCopyToCPU(h, v.data(), n) == 0);
  return v;
}

// Every batch until Next says the epoch is over.
std::vector<Batch> Epoch(DataIterHandle it) {
  std::vector<Batch> batches;
  int more = 0;
  while (MXDataIterNext(it, &more) == 0 && more) {
    Batch b;
    NDArrayHandle data = nullptr, label = nullptr;
    REQUIRE(MXDataIterGetData(it, &data) == 0);
    REQUIRE(MXDataIterGetLabel(it, &label) == 0);
    b.data_shape = ShapeOf(data);
    b.label_shape = ShapeOf(label);
    b.data = ValuesOf(data);
    b.label = ValuesOf(label);
    REQUIRE(MXDataIterGetPadNum(it, &b.pad) == 0);
    uint64_t* index = nullptr;
    uint64_t size = 0;
    REQUIRE(MXDataIterGetIndex(it, &index, &size) == 0);
    b.index.assign(index, index + size);
    CHECK(MXNDArrayFree(data) == 0);
    CHECK(MXNDArrayFree(label) == 0);
    batches.push_back(b);
  }
  REQUIRE(MXGetLastError() != nullptr);
  return batches;
}

std::vector<float> Concat(const std::vector<std::vector<float>>& rows, const std::vector<int>& which) {
  std::vector<float> out;
  for (int r : which) out.insert(out.end(), rows[static_cast<size_t>(r)].begin(), rows[static_cast<size_t>(r)].end());
  return out;
}

}  // namespace

TEST_CASE("C API lists MNISTIter and CSVIter with MXNet's parameter names", "[capi]") {
  DataIterCreator csv = FindCreator("CSVIter");
  FindCreator("MNISTIter");
  const char *name, *desc;
  uint32_t n = 0;
  const char **names, **types, **docs;
  REQUIRE(MXDataIterGetIterInfo(csv, &name, &desc, &n, &names, &types, &docs) == 0);
  std::map<std::string, std::string> args;
  for (uint32_t i = 0; i < n; ++i) args[names[i]] = types[i];
  for (const char* expected : {"data_csv", "data_shape", "label_csv", "label_shape", "batch_size", "round_batch"})
    CHECK(args.count(expected) == 1);
  CHECK(args["data_csv"] == "string, required");
  CHECK(args["label_csv"] == "string, optional, default='NULL'");
}

TEST_CASE("C API CSVIter returns the values written, in batches with labels", "[capi]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1000, 1000);
  std::vector<std::vector<float>> rows(5, std::vector<float>(6)), labels(5, std::vector<float>(1));
  for (auto& r : rows)
    for (auto& v : r) v = value(rng);
  for (size_t i = 0; i < labels.size(); ++i) labels[i][0] = static_cast<float>(i % 3);
  const std::string data_path = TempCSV("data.csv", rows), label_path = TempCSV("label.csv", labels);

  // "flat" and "shuffle" are not CSVIter parameters: ignored, as MXNet ignores them.
  DataIterHandle it = Create({{"data_csv", data_path}, {"data_shape", "(2,3)"}, {"label_csv", label_path},
                              {"batch_size", "2"}, {"flat", "1"}, {"shuffle", "0"}});
  std::vector<Batch> batches = Epoch(it);
  REQUIRE(batches.size() == 3);
  CHECK(batches[0].data_shape == std::vector<int>{2, 2, 3});
  CHECK(batches[0].label_shape == std::vector<int>{2});  // label_shape (1,): one label per row
  CHECK(batches[0].data == Concat(rows, {0, 1}));
  CHECK(batches[1].data == Concat(rows, {2, 3}));
  CHECK(batches[1].label == Concat(labels, {2, 3}));
  // round_batch (default): the last batch wraps to row 0 and says so.
  CHECK(batches[2].data == Concat(rows, {4, 0}));
  CHECK(batches[2].label == Concat(labels, {4, 0}));
  CHECK(batches[2].pad == 1);
  CHECK(batches[2].index == std::vector<uint64_t>{4, 0});
  CHECK(batches[0].pad == 0);
  CHECK(MXDataIterFree(it) == 0);

  // Without label_csv every label is 0; label_shape (2,) keeps its axis.
  it = Create({{"data_csv", data_path}, {"data_shape", "(6,)"}, {"label_shape", "(2,)"}, {"batch_size", "5"}});
  batches = Epoch(it);
  REQUIRE(batches.size() == 1);
  CHECK(batches[0].data_shape == std::vector<int>{5, 6});
  CHECK(batches[0].label_shape == std::vector<int>{5, 2});
  CHECK(batches[0].label == std::vector<float>(10, 0.0f));
  CHECK(MXDataIterFree(it) == 0);
  std::remove(data_path.c_str());
  std::remove(label_path.c_str());
}

TEST_CASE("C API CSVIter batches as MXNet's CSVIter documentation shows", "[capi]") {
  // The example of MXNet 1.9.1's CSVIter docs: four rows, batch_size 3.
  const std::vector<std::vector<float>> rows{{1, 2, 3}, {2, 3, 4}, {3, 4, 5}, {4, 5, 6}};
  const std::string path = TempCSV("doc.csv", rows);

  // round_batch=True: the second batch takes rows 1 and 2 again; after reset the next epoch
  // goes on from there: [[3,4,5],[4,5,6],[1,2,3]].
  DataIterHandle it = Create({{"data_csv", path}, {"data_shape", "(3,)"}, {"batch_size", "3"}});
  std::vector<Batch> first = Epoch(it);
  REQUIRE(first.size() == 2);
  CHECK(first[0].data == Concat(rows, {0, 1, 2}));
  CHECK(first[1].data == Concat(rows, {3, 0, 1}));
  CHECK(first[1].pad == 2);
  REQUIRE(MXDataIterBeforeFirst(it) == 0);
  std::vector<Batch> second = Epoch(it);
  REQUIRE(second.size() == 1);
  CHECK(second[0].data == Concat(rows, {2, 3, 0}));
  CHECK(second[0].pad == 1);
  CHECK(MXDataIterFree(it) == 0);

  // round_batch=False: the last batch is padded with what the previous batch held there,
  // [[4,5,6],[2,3,4],[3,4,5]], in both passes.
  it = Create({{"data_csv", path}, {"data_shape", "(3,)"}, {"batch_size", "3"}, {"round_batch", "0"}});
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<Batch> batches = Epoch(it);
    REQUIRE(batches.size() == 2);
    CHECK(batches[0].data == Concat(rows, {0, 1, 2}));
    CHECK(batches[1].data == Concat(rows, {3, 1, 2}));
    CHECK(batches[1].pad == 2);
    REQUIRE(MXDataIterBeforeFirst(it) == 0);
  }
  CHECK(MXDataIterFree(it) == 0);
  std::remove(path.c_str());
}

TEST_CASE("C API data iterator calls fail with -1 and name the call and the cause", "[capi]") {
  const std::string path = TempCSV("bad.csv", {{1, 2, 3}, {4, 5}});
  DataIterCreator csv = FindCreator("CSVIter");
  auto fails_with = [](int rc, const std::string& text) {
    CHECK(rc == -1);
    CHECK_THAT(MXGetLastError(), Catch::Contains(text));
  };
  DataIterHandle it = nullptr;
  const char* keys[] = {"data_csv", "data_shape", "batch_size"};
  const char* vals[] = {path.c_str(), "(3,)", "2"};
  fails_with(MXDataIterCreateIter(csv, 3, keys, vals, &it), "MXDataIterCreateIter: " + path + " line 2: 2 values, expected 3");
  CHECK(it == nullptr);
  const char* bad_batch[] = {path.c_str(), "(3,)", "two"};
  fails_with(MXDataIterCreateIter(csv, 3, keys, bad_batch, &it), "CSVIter: Invalid Parameter format for batch_size");
  fails_with(MXDataIterCreateIter(csv, 1, keys + 1, vals + 1, &it), "Required parameter data_csv");
  fails_with(MXDataIterCreateIter(nullptr, 0, nullptr, nullptr, &it), "MXDataIterCreateIter: argument 'creator' is null");
  fails_with(MXDataIterCreateIter(csv, 3, nullptr, vals, &it), "argument 'keys' is null");
  fails_with(MXDataIterCreateIter(csv, 3, keys, vals, nullptr), "argument 'out' is null");
  int out = 0;
  fails_with(MXDataIterNext(nullptr, &out), "MXDataIterNext: argument 'handle' is a null DataIterHandle");
  fails_with(MXDataIterGetPadNum(nullptr, &out), "MXDataIterGetPadNum: argument 'handle' is a null DataIterHandle");
  fails_with(MXListDataIters(nullptr, nullptr), "MXListDataIters: argument 'out_size' is null");

  const std::string good = TempCSV("good.csv", {{1, 2, 3}});
  const char* good_vals[] = {good.c_str(), "(3,)", "3"};
  REQUIRE(MXDataIterCreateIter(csv, 3, keys, good_vals, &it) == 0);
  NDArrayHandle data = nullptr;
  fails_with(MXDataIterGetData(it, &data), "MXDataIterGetData: CSVIter::data: no current batch");
  // One row cannot fill a batch of 3 by wrapping once, as in MXNet.
  fails_with(MXDataIterNext(it, &out), "round_batch cannot complete the last batch");
  fails_with(MXDataIterNext(it, nullptr), "MXDataIterNext: argument 'out' is null");
  CHECK(MXDataIterFree(it) == 0);
  fails_with(MXDataIterFree(it), "MXDataIterFree: argument 'handle' is not a live DataIterHandle");
  std::remove(path.c_str());
  std::remove(good.c_str());
}

TEST_CASE("C API CSVIter reads int32 and int64 values exactly, in that dtype", "[capi]") {
  static const std::string tag = std::to_string(std::random_device{}());
  const std::string path = "/tmp/symbind_capi_iter_" + tag + "_ints.csv";
  for (const auto& dtype_value : {std::pair<std::string, std::string>{"int32", "200000001"},
                                  std::pair<std::string, std::string>{"int64", "2147483648"}}) {
    INFO(dtype_value.first);
    { std::ofstream(path) << dtype_value.second << "," << dtype_value.second << "\n-3,4\n"; }
    DataIterHandle it = Create({{"data_csv", path}, {"data_shape", "(2,)"}, {"batch_size", "2"},
                                {"dtype", dtype_value.first}});
    int has = 0;
    REQUIRE(MXDataIterNext(it, &has) == 0);
    REQUIRE(has == 1);
    NDArrayHandle data = nullptr;
    REQUIRE(MXDataIterGetData(it, &data) == 0);
    int dtype = -1;
    REQUIRE(MXNDArrayGetDType(data, &dtype) == 0);
    const int64_t big = std::stoll(dtype_value.second);
    if (dtype_value.first == "int32") {
      CHECK(dtype == 4);
      std::vector<int32_t> v(4);
      REQUIRE(MXNDArraySyncCopyToCPU(data, v.data(), v.size()) == 0);
      CHECK(v == std::vector<int32_t>{static_cast<int32_t>(big), static_cast<int32_t>(big), -3, 4});
    } else {
      CHECK(dtype == 6);
      std::vector<int64_t> v(4);
      REQUIRE(MXNDArraySyncCopyToCPU(data, v.data(), v.size()) == 0);
      CHECK(v == std::vector<int64_t>{big, big, -3, 4});
    }
    MXNDArrayFree(data);
    REQUIRE(MXDataIterFree(it) == 0);
  }
  // A fraction is no integer, 2^31 no int32; float64 is no CSVIter dtype.
  for (const auto& bad : {std::pair<std::string, std::string>{"int32", "1.5"}, {"int32", "2147483648"}}) {
    { std::ofstream(path) << bad.second << "\n"; }
    const char* keys[] = {"data_csv", "data_shape", "batch_size", "dtype"};
    const char* vals[] = {path.c_str(), "(1,)", "1", bad.first.c_str()};
    DataIterHandle it = nullptr;
    CHECK(MXDataIterCreateIter(FindCreator("CSVIter"), 4, keys, vals, &it) == -1);
    CHECK(std::string(MXGetLastError()).find("is not an int32 integer") != std::string::npos);
  }
  const char* keys[] = {"data_csv", "data_shape", "batch_size", "dtype"};
  const char* vals[] = {path.c_str(), "(1,)", "1", "float64"};
  DataIterHandle it = nullptr;
  CHECK(MXDataIterCreateIter(FindCreator("CSVIter"), 4, keys, vals, &it) == -1);
  CHECK(std::string(MXGetLastError()).find("one of float32, int32, int64") != std::string::npos);
  std::remove(path.c_str());
}
