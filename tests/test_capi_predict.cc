// MXNet's C predict API over symbind's Predictor: .symbind model buffers, one copy of the
// weights across MXPredCreateMultiThread predictors, MXPredPartialForward step by step.
// (tests/capi_predict_test.c drives every function from C.)
#include <catch2/catch.hpp>

#include <mxnet/c_api.h>
#include <mxnet/c_predict_api.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <symbind/executor/executor.h>
#include <symbind/io/model_file.h>
#include <symbind/io/ndarray_file.h>

#include "model_test_util.h"
#include "shared_dir.h"

using namespace symbind;
using namespace symbind::test;

namespace {

const uint32_t kShape[] = {1, 3, 48, 48};
const uint32_t kIndptr[] = {0, 4};
const char* kInputKeys[] = {"data"};
constexpr uint32_t kInputSize = 3 * 48 * 48;

std::string Det3(const std::string& file) {
  return ReadFileToString(symbind_test::SharedDir() + "/models/mtcnn/" + file);
}

std::vector<float> Input(int seed) {
  std::vector<float> x(kInputSize);
  uint32_t s = 2654435761u * static_cast<uint32_t>(seed + 1);
  for (float& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
  }
  return x;
}

// Every output of `p` after a forward pass on `input`, concatenated.
std::vector<float> Run(PredictorHandle p, const std::vector<float>& input) {
  REQUIRE(MXPredSetInput(p, "data", input.data(), kInputSize) == 0);
  REQUIRE(MXPredForward(p) == 0);
  std::vector<float> all;
  uint32_t* shape;
  uint32_t ndim;
  for (uint32_t o = 0; MXPredGetOutputShape(p, o, &shape, &ndim) == 0; ++o) {
    uint32_t n = 1;
    for (uint32_t d = 0; d < ndim; ++d) n *= shape[d];
    std::vector<float> out(n);
    REQUIRE(MXPredGetOutput(p, o, out.data(), n) == 0);
    all.insert(all.end(), out.begin(), out.end());
  }
  return all;
}

PredictorHandle Create(const char* json, const std::string& params) {
  PredictorHandle p = nullptr;
  const int rc = MXPredCreate(json, params.data(), static_cast<int>(params.size()), 1, 0, 1,
                              kInputKeys, kIndptr, kShape, &p);
  INFO(MXGetLastError());
  REQUIRE(rc == 0);
  return p;
}

// Monitor callback: the data pointer of every array named "conv1_weight".
void RecordWeight(const char* name, NDArrayHandle array, void* user) {
  if (std::strcmp(name, "conv1_weight") != 0) return;
  void* data = nullptr;
  REQUIRE(MXNDArrayGetData(array, &data) == 0);
  static_cast<std::vector<void*>*>(user)->push_back(data);
}

}  // namespace

TEST_CASE("MXPredCreate takes a .symbind model in the params buffer, with bit-identical results", "[capi][predict][shared]") {
  const std::string json = Det3("det3-symbol.json"), params = Det3("det3-0001.params");
  PredictorHandle reference = Create(json.c_str(), params);
  const std::vector<float> input = Input(3), want = Run(reference, input);
  REQUIRE(want.size() == 2 + 4 + 10);

  SharedModel m = LoadMtcnnModel("det3");
  Model model;
  model.symbol = m.symbol;
  model.args = m.params;
  model.aux = m.aux;
  const std::string image = SaveModelToString(model);
  // The symbol buffer has no size, so the model goes where its size is given; the symbol
  // argument is null, empty or the same bytes.
  for (const char* symbol : {static_cast<const char*>(nullptr), "", image.data()}) {
    PredictorHandle p = Create(symbol, image);
    CHECK(Run(p, input) == want);
    REQUIRE(MXPredFree(p) == 0);
  }

  PredictorHandle p = nullptr;
  CHECK(MXPredCreate(json.c_str(), image.data(), static_cast<int>(image.size()), 1, 0, 1, kInputKeys,
                     kIndptr, kShape, &p) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("param_bytes is a .symbind model, which holds its graph"));
  CHECK(MXPredCreate(image.data(), nullptr, 0, 1, 0, 1, kInputKeys, kIndptr, kShape, &p) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("a .symbind model goes in param_bytes with its size"));
  CHECK(MXPredCreate(nullptr, nullptr, 0, 1, 0, 1, kInputKeys, kIndptr, kShape, &p) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("argument 'symbol_json_str' is null"));
  std::string cut = image.substr(0, image.size() / 2);
  CHECK(MXPredCreate(nullptr, cut.data(), static_cast<int>(cut.size()), 1, 0, 1, kInputKeys, kIndptr,
                     kShape, &p) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("MXPredCreate: param_bytes (a .symbind model)"));
  REQUIRE(MXPredFree(reference) == 0);
}

TEST_CASE("MXPredCreateMultiThread and MXPredReshape predictors share one copy of the weights", "[capi][predict][shared]") {
  const std::string json = Det3("det3-symbol.json"), params = Det3("det3-0001.params");
  PredictorHandle handles[3];
  REQUIRE(MXPredCreateMultiThread(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1,
                                  kInputKeys, kIndptr, kShape, 3, handles) == 0);
  const uint32_t batch2[] = {2, 3, 48, 48};
  PredictorHandle reshaped = nullptr;
  REQUIRE(MXPredReshape(1, kInputKeys, kIndptr, batch2, handles[1], &reshaped) == 0);
  PredictorHandle separate = Create(json.c_str(), params);

  std::vector<void*> weights;
  for (PredictorHandle p : {handles[0], handles[1], handles[2], reshaped, separate}) {
    REQUIRE(MXPredSetMonitorCallback(p, RecordWeight, &weights, true) == 0);
    REQUIRE(MXPredForward(p) == 0);
  }
  // monitor_all shows conv1_weight twice per forward: as the variable and as conv1's input.
  REQUIRE(weights.size() == 10);
  for (size_t i = 0; i < 5; ++i) CHECK(weights[2 * i + 1] == weights[2 * i]);
  for (size_t i = 1; i < 4; ++i) CHECK(weights[2 * i] == weights[0]);
  CHECK(weights[8] != weights[0]);  // another MXPredCreate loads its own copy
  for (PredictorHandle p : {handles[0], handles[1], handles[2], reshaped, separate}) REQUIRE(MXPredFree(p) == 0);
}

TEST_CASE("MXPredPartialForward runs one op per step and ends with MXPredForward's outputs", "[capi][predict][shared]") {
  const std::string json = Det3("det3-symbol.json"), params = Det3("det3-0001.params");
  PredictorHandle p = Create(json.c_str(), params);
  const std::vector<float> input = Input(5), want = Run(p, input);

  std::vector<void*> weights;
  REQUIRE(MXPredSetMonitorCallback(p, RecordWeight, &weights, true) == 0);
  int step_left = -1, steps = 0;
  for (int step = 0; step_left != 0; ++step, ++steps) {
    REQUIRE(MXPredPartialForward(p, step, &step_left) == 0);
    if (step == 0) {
      CHECK(step_left > 10);  // det3 has convolutions, PReLUs, poolings, ... as steps
      CHECK(weights.empty());  // the monitor sees the outputs once the pass is complete
    }
  }
  CHECK(weights.size() == 2);  // the variable and conv1's input, once the pass is complete
  REQUIRE(MXPredSetMonitorCallback(p, nullptr, nullptr, false) == 0);
  std::vector<float> got;
  uint32_t* shape;
  uint32_t ndim;
  for (uint32_t o = 0; MXPredGetOutputShape(p, o, &shape, &ndim) == 0; ++o) {
    std::vector<float> out(shape[0] * shape[1]);
    REQUIRE(MXPredGetOutput(p, o, out.data(), static_cast<uint32_t>(out.size())) == 0);
    got.insert(got.end(), out.begin(), out.end());
  }
  CHECK(got == want);
  CHECK(MXPredPartialForward(p, steps + 3, &step_left) == 0);
  CHECK(step_left == 0);

  REQUIRE(MXPredPartialForward(p, 0, &step_left) == 0);
  CHECK(MXPredPartialForward(p, 4, &step_left) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("MXPredPartialForward: Executor::PartialForward: step 4 "
                                               "requested, but the next step is 1"));
  CHECK(MXPredPartialForward(p, -1, &step_left) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("step must be non-negative, got -1"));
  REQUIRE(MXPredFree(p) == 0);
}

namespace {
struct FreeDuringForward {
  PredictorHandle predictor = nullptr;
  int free_rc = 0;
  std::string error;
};

// Monitor callback, run inside MXPredForward: another thread frees the predictor meanwhile.
void FreeFromAnotherThread(const char*, NDArrayHandle, void* user) {
  auto* s = static_cast<FreeDuringForward*>(user);
  if (s->free_rc != 0) return;
  std::thread([s] {
    s->free_rc = MXPredFree(s->predictor);
    s->error = MXGetLastError();
  }).join();
}
}  // namespace

TEST_CASE("MXPredFree of a predictor another call is using fails instead of freeing it", "[capi][predict][hostile]") {
  // MXPredFree deleted the predictor under a running MXPredForward (SIGSEGV in 2 of 3 runs).
  const std::string lenet = std::string(SYMBIND_SOURCE_DIR) + "/models/lenet-fashion-mnist/lenet";
  const std::string json = ReadFileToString(lenet + "-symbol.json"), params = ReadFileToString(lenet + "-0008.params");
  const uint32_t shape[] = {1, 1, 28, 28}, indptr[] = {0, 4};
  const char* keys[] = {"data"};
  FreeDuringForward s;
  REQUIRE(MXPredCreate(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys, indptr, shape,
                       &s.predictor) == 0);
  REQUIRE(MXPredSetMonitorCallback(s.predictor, FreeFromAnotherThread, &s, false) == 0);
  REQUIRE(MXPredForward(s.predictor) == 0);
  CHECK(s.free_rc == -1);
  CHECK(s.error == "MXPredFree: argument 'handle' is in use by a running call (in another thread, or the one whose "
                   "callback this is); free it after that call returns");
  // Once the call returned, the predictor is whole and frees.
  REQUIRE(MXPredForward(s.predictor) == 0);
  CHECK(MXPredFree(s.predictor) == 0);
}

TEST_CASE("MXPredCreate refuses absent parameters, as MXNet refuses an empty parameter buffer", "[capi][predict][hostile]") {
  // With param_size 0 every weight was guessed by graph position and drawn from N(0,1).
  const std::string lenet = std::string(SYMBIND_SOURCE_DIR) + "/models/lenet-fashion-mnist/lenet";
  const std::string json = ReadFileToString(lenet + "-symbol.json");
  const uint32_t shape[] = {1, 1, 28, 28}, indptr[] = {0, 4};
  const char* keys[] = {"data"};
  PredictorHandle p = nullptr;
  CHECK(MXPredCreate(json.c_str(), nullptr, 0, 1, 0, 1, keys, indptr, shape, &p) == -1);
  CHECK_THAT(MXGetLastError(), Catch::StartsWith("MXPredCreate: arguments not in the parameters and not given as inputs: ") &&
                                   Catch::Contains("(no parameters were given)"));
  // A parameter file without one of the weights: that weight is named.
  auto params = LoadNDArrayMap(lenet + "-0008.params");
  REQUIRE(params.erase("arg:fc2_weight") == 1);
  const std::string partial = SaveNDArraysToString(params);
  CHECK(MXPredCreate(json.c_str(), partial.data(), static_cast<int>(partial.size()), 1, 0, 1, keys, indptr, shape, &p) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("not given as inputs: fc2_weight;"));
}

TEST_CASE("MXPredCreateMultiThread bounds num_threads, and all predictors share the process-wide bind budget",
          "[capi][predict][hostile][memory]") {
  const std::string lenet = std::string(SYMBIND_SOURCE_DIR) + "/models/lenet-fashion-mnist/lenet";
  const std::string json = ReadFileToString(lenet + "-symbol.json"), params = ReadFileToString(lenet + "-0008.params");
  const uint32_t shape[] = {1, 1, 28, 28}, indptr[] = {0, 4};
  const char* keys[] = {"data"};
  // num_threads = 10^6 made 10^6 predictors.
  std::vector<PredictorHandle> handles(MXPRED_MAX_THREADS + 1);
  CHECK(MXPredCreateMultiThread(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys, indptr,
                                shape, MXPRED_MAX_THREADS + 1, handles.data()) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("num_threads must be 1 to 1024 (MXPRED_MAX_THREADS), got 1025"));
  // Under a budget that holds a few predictors, the call fails as a whole and leaks none.
  PredictorHandle one = nullptr;
  REQUIRE(MXPredCreate(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys, indptr, shape, &one) == 0);
  REQUIRE(MXPredFree(one) == 0);
  const uint64_t before = MaxBindBytes();
  SetMaxBindBytes(uint64_t{1} << 20);
  const int rc = MXPredCreateMultiThread(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys,
                                         indptr, shape, 1000, handles.data());
  const std::string error = MXGetLastError();
  SetMaxBindBytes(0);
  CHECK(before == MaxBindBytes());
  CHECK(rc == -1);
  CHECK_THAT(error, Catch::Contains("the executors alive in this process hold"));
  REQUIRE(MXPredCreateMultiThread(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys, indptr,
                                  shape, 2, handles.data()) == 0);
  for (int i = 0; i < 2; ++i) CHECK(MXPredFree(handles[i]) == 0);
}

TEST_CASE("MXNDListCreate and MXNDArrayLoad bound sparse expansion by the buffer's size", "[capi][predict][hostile][sparse]") {
  // A row_sparse (2^24, 4) float32 array with no stored rows: 256 MiB dense from about 100 bytes.
  std::string file;
  auto put = [&file](auto v) { file.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put(uint64_t{0x112}), put(uint64_t{0}), put(uint64_t{1});
  put(uint32_t{0xF993FAC9}), put(int32_t{1});
  put(int32_t{2}), put(int64_t{0}), put(int64_t{4});                 // storage shape (0, 4)
  put(int32_t{2}), put(int64_t{1} << 24), put(int64_t{4});          // shape (2^24, 4)
  put(int32_t{1}), put(int32_t{0}), put(int32_t{0});                 // cpu(0), float32
  put(int32_t{6}), put(int32_t{1}), put(int64_t{0});                 // int64 indices of shape (0,)
  put(uint64_t{1}), put(uint64_t{5});
  file += "arg:e";
  NDListHandle list = nullptr;
  uint32_t length = 0;
  CHECK(MXNDListCreate(file.data(), static_cast<int>(file.size()), &list, &length) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("sparse arrays expand to 268435456 bytes as dense arrays, more than the "
                                               "67108864 bytes allowed"));
  uint32_t n = 0, names = 0;
  NDArrayHandle* arrays = nullptr;
  const char** keys = nullptr;
  CHECK(MXNDArrayLoadFromBuffer(file.data(), file.size(), &n, &arrays, &names, &keys) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("sparse arrays expand to 268435456 bytes"));
  // A dense list still loads, its values as saved.
  const std::string dense = SaveNDArraysToString({{"arg:x", NDArray(TShape({3}), std::vector<float>{1, 2, 3})}});
  REQUIRE(MXNDListCreate(dense.data(), static_cast<int>(dense.size()), &list, &length) == 0);
  const char* key = nullptr;
  const float* data = nullptr;
  const uint32_t* dims = nullptr;
  uint32_t ndim = 0;
  REQUIRE(MXNDListGet(list, 0, &key, &data, &dims, &ndim) == 0);
  CHECK(std::string(key) == "arg:x");
  CHECK(std::vector<float>(data, data + 3) == std::vector<float>{1, 2, 3});
  CHECK(MXNDListFree(list) == 0);
}
