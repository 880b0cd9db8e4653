// MXNet's C API (capi/, libmxnet.so): operator metadata in dmlc's wording, symbols, NDArrays,
// imperative invocation, executors, the local KVStore and the error convention.
#include <catch2/catch.hpp>

#include <mxnet/c_api.h>
#include <nnvm/c_api.h>
#include <symbind/core/op.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

AtomicSymbolCreator Creator(const std::string& name) {
  OpHandle h = nullptr;
  REQUIRE(NNGetOpHandle(name.c_str(), &h) == 0);
  return h;
}

// name -> type string of each argument MXSymbolGetAtomicSymbolInfo lists (and, into `docs`,
// name -> description).
std::map<std::string, std::string> ArgTypes(const std::string& op,
                                            std::map<std::string, std::string>* docs = nullptr) {
  const char *name, *desc, *key_var;
  uint32_t n = 0;
  const char **names, **types, **descs;
  REQUIRE(MXSymbolGetAtomicSymbolInfo(Creator(op), &name, &desc, &n, &names, &types, &descs,
                                      &key_var) == 0);
  CHECK(std::string(name) == op);
  std::map<std::string, std::string> out;
  for (uint32_t i = 0; i < n; ++i) {
    out[names[i]] = types[i];
    if (docs) (*docs)[names[i]] = descs[i];
  }
  return out;
}

NDArrayHandle Array(const std::vector<uint32_t>& shape, const std::vector<float>& values) {
  NDArrayHandle h = nullptr;
  REQUIRE(MXNDArrayCreateEx(shape.data(), static_cast<uint32_t>(shape.size()), 1, 0, 0, 0, &h) == 0);
  REQUIRE(MXNDArraySyncCopyFromCPU(h, values.data(), values.size()) == 0);
  return h;
}

std::vector<float> Values(NDArrayHandle h, size_t n) {
  std::vector<float> v(n);
  REQUIRE(MXNDArraySyncCopyToCPU(h, v.data(), n) == 0);
  return v;
}

std::vector<int> Shape(NDArrayHandle h) {
  int ndim = 0;
  const int* dims = nullptr;
  REQUIRE(MXNDArrayGetShapeEx(h, &ndim, &dims) == 0);
  return std::vector<int>(dims, dims + ndim);
}

}  // namespace

// MXNet lists every input an operator can take, in its order: MXNet's op.h generator writes
// RNN(data, parameters, state, state_cell, sequence_length, ...) from this list.
TEST_CASE("C API operator info lists RNN's five inputs in MXNet's order", "[capi]") {
  const char *name, *desc, *key_var;
  uint32_t n = 0;
  const char **names, **types, **descs;
  REQUIRE(MXSymbolGetAtomicSymbolInfo(Creator("RNN"), &name, &desc, &n, &names, &types, &descs,
                                      &key_var) == 0);
  std::vector<std::string> inputs;
  for (uint32_t i = 0; i < n; ++i)
    if (std::string(types[i]) == "NDArray-or-Symbol") inputs.push_back(names[i]);
  CHECK(inputs == std::vector<std::string>{"data", "parameters", "state", "state_cell", "sequence_length"});
  REQUIRE(n > 5);
  CHECK(std::string(names[5]) == "state_size");
}

TEST_CASE("C API operator info gives MXNet's type strings", "[capi]") {
  auto pooling = ArgTypes("Pooling");
  CHECK(pooling.at("data") == "NDArray-or-Symbol");
  CHECK(pooling.at("pool_type").rfind("{'avg', 'lp', 'max', 'sum'},optional, default='max'", 0) == 0);
  CHECK(pooling.at("kernel").rfind("Shape(tuple), optional", 0) == 0);
  std::map<std::string, std::string> conv_docs;
  auto conv = ArgTypes("Convolution", &conv_docs);
  CHECK(conv.at("kernel") == "Shape(tuple), required");
  // Inputs carry the op's add_argument_doc text, which MXNet's op.h generator prints.
  CHECK(conv_docs.at("weight") == symbind::OpRegistry::Global().Get("Convolution").ArgumentDoc("weight"));
  CHECK(conv_docs.at("weight").rfind("Weight matrix", 0) == 0);
  CHECK(conv.at("num_group") == "int, >= 1, optional, default='1'");
  CHECK(conv.at("no_bias") == "boolean, optional, default=0");
  CHECK(conv.count("weight") == 1);
  CHECK(conv.count("bias") == 1);
  auto concat = ArgTypes("Concat");
  CHECK(concat.at("data") == "NDArray-or-Symbol[]");
}

TEST_CASE("C API symbols compose, list, infer shapes and round-trip JSON", "[capi]") {
  SymbolHandle data = nullptr, fc = nullptr;
  REQUIRE(MXSymbolCreateVariable("data", &data) == 0);
  const char* keys[] = {"num_hidden"};
  const char* vals[] = {"4"};
  REQUIRE(MXSymbolCreateAtomicSymbol(Creator("FullyConnected"), 1, keys, vals, &fc) == 0);
  uint32_t n = 0;
  const char** names = nullptr;
  CHECK(MXSymbolListArguments(fc, &n, &names) == -1);  // no inputs yet
  CHECK(std::string(MXGetLastError()).find("MXSymbolListArguments") == 0);
  const char* input_keys[] = {"data"};
  REQUIRE(MXSymbolCompose(fc, "fc1", 1, input_keys, &data) == 0);
  REQUIRE(MXSymbolListArguments(fc, &n, &names) == 0);
  REQUIRE(n == 3);
  CHECK(std::string(names[1]) == "fc1_weight");
  REQUIRE(NNSymbolListInputNames(fc, 0, &n, &names) == 0);
  CHECK(n == 3);

  const uint32_t indptr[] = {0, 2};
  const int shape[] = {5, 7};
  uint32_t in_n, out_n, aux_n;
  const int *in_ndim, *out_ndim, *aux_ndim;
  const int **in_data, **out_data, **aux_data;
  int complete = 0;
  REQUIRE(MXSymbolInferShapeEx(fc, 1, input_keys, indptr, shape, &in_n, &in_ndim, &in_data, &out_n,
                               &out_ndim, &out_data, &aux_n, &aux_ndim, &aux_data, &complete) == 0);
  CHECK(complete == 1);
  REQUIRE(in_n == 3);
  CHECK(in_data[1][0] == 4);
  CHECK(in_data[1][1] == 7);
  CHECK(out_data[0][0] == 5);
  CHECK(out_data[0][1] == 4);

  const char* json = nullptr;
  REQUIRE(MXSymbolSaveToJSON(fc, &json) == 0);
  std::string text = std::string(json) + "\ntrailing bytes {";
  SymbolHandle loaded = nullptr;
  REQUIRE(MXSymbolCreateFromJSON(text.c_str(), &loaded) == 0);
  REQUIRE(MXSymbolListOutputs(loaded, &n, &names) == 0);
  CHECK(std::string(names[0]) == "fc1_output");
  CHECK(MXSymbolFree(loaded) == 0);
  CHECK(MXSymbolFree(loaded) == -1);
  CHECK(std::string(MXGetLastError()).find("not a live SymbolHandle") != std::string::npos);
  CHECK(MXSymbolFree(fc) == 0);
  CHECK(MXSymbolFree(data) == 0);
}

TEST_CASE("C API NDArray reshape keeps 0 and infers -1, slices share storage", "[capi]") {
  NDArrayHandle a = Array({2, 3, 4}, std::vector<float>(24, 1.f));
  int dims[] = {0, -1};
  NDArrayHandle r = nullptr;
  REQUIRE(MXNDArrayReshape(a, 2, dims, &r) == 0);
  CHECK(Shape(r) == std::vector<int>{2, 12});
  int bad[] = {-1, -1};
  CHECK(MXNDArrayReshape(a, 2, bad, &r) == -1);
  CHECK(std::string(MXGetLastError()).find("one and only one dim can be inferred") != std::string::npos);
  NDArrayHandle s = nullptr;
  REQUIRE(MXNDArraySlice(a, 1, 2, &s) == 0);
  CHECK(Shape(s) == std::vector<int>{1, 3, 4});
  std::vector<float> too_few(3);
  CHECK(MXNDArraySyncCopyToCPU(a, too_few.data(), too_few.size()) == -1);
  for (NDArrayHandle h : {a, r, s}) CHECK(MXNDArrayFree(h) == 0);
}

TEST_CASE("C API imperative sgd_mom_update matches the formula and updates mom", "[capi]") {
  std::vector<float> w0{1, -2, 3}, g{0.5f, 4, -1}, m0{0.1f, 0, -0.2f};
  NDArrayHandle w = Array({3}, w0), grad = Array({3}, g), mom = Array({3}, m0);
  const char* keys[] = {"lr", "momentum", "wd", "rescale_grad", "clip_gradient"};
  const char* vals[] = {"0.1", "0.9", "0.01", "0.5", "1.5"};
  NDArrayHandle inputs[] = {w, grad, mom};
  NDArrayHandle out_handles[] = {w};
  NDArrayHandle* outputs = out_handles;
  int num_outputs = 1;
  errno = ENOENT;
  REQUIRE(MXImperativeInvoke(Creator("sgd_mom_update"), 3, inputs, &num_outputs, &outputs, 5, keys,
                             vals) == 0);
  CHECK(errno == 0);
  std::vector<float> w1 = Values(w, 3), m1 = Values(mom, 3);
  for (int i = 0; i < 3; ++i) {
    float gi = std::fmax(-1.5f, std::fmin(1.5f, 0.5f * g[i]));
    float m = 0.9f * m0[i] - 0.1f * 0.01f * w0[i] - 0.1f * gi;
    CHECK(m1[i] == Approx(m));
    CHECK(w1[i] == Approx(w0[i] + m));
  }
  for (NDArrayHandle h : {w, grad, mom}) CHECK(MXNDArrayFree(h) == 0);
}

TEST_CASE("C API executor binds, runs forward and backward", "[capi]") {
  SymbolHandle x = nullptr, y = nullptr;
  REQUIRE(MXSymbolCreateVariable("x", &x) == 0);
  REQUIRE(MXSymbolCreateAtomicSymbol(Creator("square"), 0, nullptr, nullptr, &y) == 0);
  REQUIRE(MXSymbolCompose(y, "sq", 1, nullptr, &x) == 0);
  NDArrayHandle in = Array({2}, {3, -4}), grad = Array({2}, {0, 0}), head = Array({2}, {1, 1});
  uint32_t req = 1;
  ExecutorHandle exec = nullptr;
  REQUIRE(MXExecutorBindEX(y, 1, 0, 0, nullptr, nullptr, nullptr, 1, &in, &grad, &req, 0, nullptr,
                           nullptr, &exec) == 0);
  REQUIRE(MXExecutorForward(exec, 1) == 0);
  uint32_t n = 0;
  NDArrayHandle* outs = nullptr;
  REQUIRE(MXExecutorOutputs(exec, &n, &outs) == 0);
  REQUIRE(n == 1);
  CHECK(Values(outs[0], 2) == std::vector<float>{9, 16});
  REQUIRE(MXExecutorBackward(exec, 1, &head) == 0);
  CHECK(Values(grad, 2) == std::vector<float>{6, -8});
  CHECK(MXNDArrayFree(outs[0]) == 0);
  CHECK(MXExecutorFree(exec) == 0);
  CHECK(MXExecutorForward(exec, 0) == -1);
  for (NDArrayHandle h : {in, grad, head}) CHECK(MXNDArrayFree(h) == 0);
  CHECK(MXSymbolFree(y) == 0);
  CHECK(MXSymbolFree(x) == 0);
}

TEST_CASE("C API local KVStore sums pushes and pulls the result", "[capi]") {
  KVStoreHandle kv = nullptr;
  REQUIRE(MXKVStoreCreate("local", &kv) == 0);
  NDArrayHandle a = Array({2}, {1, 2}), b = Array({2}, {10, 20}), out = Array({2}, {0, 0});
  const int key = 3;
  REQUIRE(MXKVStoreInit(kv, 1, &key, &a) == 0);
  const int keys[] = {3, 3};
  NDArrayHandle vals[] = {a, b};
  REQUIRE(MXKVStorePush(kv, 2, keys, vals, 0) == 0);
  REQUIRE(MXKVStorePull(kv, 1, &key, &out, 0) == 0);
  CHECK(Values(out, 2) == std::vector<float>{11, 22});
  const int missing = 9;
  CHECK(MXKVStorePull(kv, 1, &missing, &out, 0) == -1);
  CHECK(std::string(MXGetLastError()).find("KVStore::Pull: key '9' was not initialised") != std::string::npos);
  // One store takes int keys or string keys, as MXNet's: "3" would name key 3's value here.
  const char* string_key = "3";
  CHECK(MXKVStoreInitEx(kv, 1, &string_key, &a) == -1);
  CHECK(std::string(MXGetLastError()).find("Mixed key types are not allowed: this store has int keys") !=
        std::string::npos);
  int gpus = -1;
  CHECK(MXGetGPUCount(&gpus) == 0);
  CHECK(gpus == 0);
  for (NDArrayHandle h : {a, b, out}) CHECK(MXNDArrayFree(h) == 0);
  CHECK(MXKVStoreFree(kv) == 0);
}

namespace {
// `dense` as a row_sparse array (MXNet's cast_storage).
NDArrayHandle RowSparse(NDArrayHandle dense) {
  const char* keys[] = {"stype"};
  const char* vals[] = {"row_sparse"};
  int n = 0;
  NDArrayHandle* out = nullptr;
  const int* stypes = nullptr;
  REQUIRE(MXImperativeInvokeEx(Creator("cast_storage"), 1, &dense, &n, &out, 1, keys, vals, &stypes) == 0);
  REQUIRE(n == 1);
  REQUIRE(stypes[0] == 1);  // row_sparse
  return out[0];
}
}  // namespace

TEST_CASE("C API MXImperativeInvoke is MXImperativeInvokeEx without the storage types", "[capi]") {
  NDArrayHandle dense = Array({3, 2}, {0, 0, 1, 2, 0, 0});
  const char* keys[] = {"stype"};
  const char* vals[] = {"row_sparse"};
  int n = 0;
  NDArrayHandle* out = nullptr;
  REQUIRE(MXImperativeInvoke(Creator("cast_storage"), 1, &dense, &n, &out, 1, keys, vals) == 0);
  REQUIRE(n == 1);
  NDArrayHandle sparse = out[0];
  int stype = -1;
  REQUIRE(MXNDArrayGetStorageType(sparse, &stype) == 0);
  CHECK(stype == 1);  // row_sparse, as MXImperativeInvokeEx gives it
  CHECK(Values(sparse, 6) == std::vector<float>{0, 0, 1, 2, 0, 0});
  // Errors name the call the user made.
  const char* bad_vals[] = {"no_such_stype"};
  out = nullptr;
  CHECK(MXImperativeInvoke(Creator("cast_storage"), 1, &dense, &n, &out, 1, keys, bad_vals) == -1);
  CHECK(std::string(MXGetLastError()).find("MXImperativeInvoke:") != std::string::npos);
  for (NDArrayHandle h : {dense, sparse}) CHECK(MXNDArrayFree(h) == 0);
}

TEST_CASE("C API row_sparse pull gives the rows asked for and zeros elsewhere", "[capi]") {
  KVStoreHandle kv = nullptr;
  REQUIRE(MXKVStoreCreate("local", &kv) == 0);
  NDArrayHandle weight = Array({3, 2}, {1, 2, 3, 4, 5, 6}), nines = Array({3, 2}, std::vector<float>(6, 9));
  NDArrayHandle out = RowSparse(nines);
  NDArrayHandle rows = Array({2}, {2, 0});
  const int key = 4;
  REQUIRE(MXKVStoreInit(kv, 1, &key, &weight) == 0);
  REQUIRE(MXKVStorePullRowSparse(kv, 1, &key, &out, &rows, 0) == 0);
  CHECK(Values(out, 6) == std::vector<float>{1, 2, 0, 0, 5, 6});
  NDArrayHandle far = Array({1}, {3});
  CHECK(MXKVStorePullRowSparse(kv, 1, &key, &out, &far, 0) == -1);
  CHECK(std::string(MXGetLastError()).find("row_sparse pull of key '4': row id 3 is not a row of (3,2)") !=
        std::string::npos);
  // As MXNet: row_sparse_pull writes row_sparse arrays only, and a plain pull leaves them alone
  // unless told not to ignore them.
  CHECK(MXKVStorePullRowSparse(kv, 1, &key, &nines, &rows, 0) == -1);
  CHECK(std::string(MXGetLastError()).find("output 0 is not a row_sparse array") != std::string::npos);
  NDArrayHandle dense_twos = Array({3, 2}, std::vector<float>(6, 2));
  NDArrayHandle twos = RowSparse(dense_twos);
  REQUIRE(MXKVStorePull(kv, 1, &key, &twos, 0) == 0);
  CHECK(Values(twos, 6) == std::vector<float>(6, 2));
  REQUIRE(MXKVStorePullWithSparse(kv, 1, &key, &twos, 0, false) == 0);
  CHECK(Values(twos, 6) == std::vector<float>{1, 2, 3, 4, 5, 6});
  for (NDArrayHandle h : {weight, nines, out, rows, far, dense_twos, twos}) CHECK(MXNDArrayFree(h) == 0);
  CHECK(MXKVStoreFree(kv) == 0);
}

namespace {
// An int-key updater: stored += 2 * pushed.
void AddTwice(int, NDArrayHandle recv, NDArrayHandle local, void* calls) {
  float r[2], l[2];
  REQUIRE(MXNDArraySyncCopyToCPU(recv, r, 2) == 0);
  REQUIRE(MXNDArraySyncCopyToCPU(local, l, 2) == 0);
  for (int i = 0; i < 2; ++i) l[i] += 2 * r[i];
  REQUIRE(MXNDArraySyncCopyFromCPU(local, l, 2) == 0);
  ++*static_cast<int*>(calls);
  // The handles are the updater's, as in MXNet.
  REQUIRE(MXNDArrayFree(recv) == 0);
  REQUIRE(MXNDArrayFree(local) == 0);
}
}  // namespace

TEST_CASE("C API dist_sync KVStore is the native one: one worker without an MPI launcher", "[capi]") {
#ifdef SYMBIND_SANITIZER_BUILD
  // MPI_Init's own allocations would be reported as leaks; the dist tests run in Release
  // builds only (docs/ci.md).
  WARN("skipped in sanitizer builds: it initialises MPI");
  return;
#endif
  KVStoreHandle kv = nullptr;
  if (MXKVStoreCreate("dist_sync", &kv) != 0) {
    // A build without MPI says how to get it.
    CHECK_THAT(MXGetLastError(), Catch::Contains("KVStore dist_sync needs MPI"));
    return;
  }
  const char* type = nullptr;
  int rank = -1, size = -1;
  REQUIRE(MXKVStoreGetType(kv, &type) == 0);
  CHECK(std::string(type) == "dist_sync");
  REQUIRE(MXKVStoreGetRank(kv, &rank) == 0);
  REQUIRE(MXKVStoreGetGroupSize(kv, &size) == 0);
  CHECK(rank == 0);
  CHECK(size == 1);
  int calls = 0;
  REQUIRE(MXKVStoreSetUpdater(kv, AddTwice, &calls) == 0);
  NDArrayHandle w = Array({2}, {1, 2}), g = Array({2}, {0.5f, -1}), out = Array({2}, {0, 0});
  const int key = 7;
  REQUIRE(MXKVStoreInit(kv, 1, &key, &w) == 0);
  REQUIRE(MXKVStorePush(kv, 1, &key, &g, 0) == 0);
  REQUIRE(MXKVStoreBarrier(kv) == 0);
  REQUIRE(MXKVStorePull(kv, 1, &key, &out, 0) == 0);
  CHECK(calls == 1);
  CHECK(Values(out, 2) == std::vector<float>{2, 0});
  const uint32_t wrong[] = {3};
  NDArrayHandle bad = nullptr;
  REQUIRE(MXNDArrayCreateEx(wrong, 1, 1, 0, 0, 0, &bad) == 0);
  CHECK(MXKVStorePush(kv, 1, &key, &bad, 0) == -1);
  CHECK_THAT(MXGetLastError(), Catch::Contains("MXKVStorePush: KVStore::Push: key '7' holds (2,) but the pushed value is (3,)"));
  for (NDArrayHandle h : {w, g, out, bad}) CHECK(MXNDArrayFree(h) == 0);
  CHECK(MXKVStoreFree(kv) == 0);
}

TEST_CASE("C API quantization: MXQuantizeSymbol lists the tensors to calibrate, MXSetCalibTableToQuantizedSymbol sets them",
          "[capi][quantize]") {
  SymbolHandle data = nullptr, fc = nullptr;
  REQUIRE(MXSymbolCreateVariable("data", &data) == 0);
  const char* keys[] = {"num_hidden"};
  const char* vals[] = {"4"};
  REQUIRE(MXSymbolCreateAtomicSymbol(Creator("FullyConnected"), 1, keys, vals, &fc) == 0);
  const char* input_keys[] = {"data"};
  REQUIRE(MXSymbolCompose(fc, "fc1", 1, input_keys, &data) == 0);

  const int cpu = 1;
  const char* offline[] = {"fc1_weight", "fc1_bias"};
  SymbolHandle qsym = nullptr;
  uint32_t n = 0;
  const char** calib = nullptr;
  REQUIRE(MXQuantizeSymbol(fc, &qsym, &cpu, 0, nullptr, 0, nullptr, 2, offline, "int8", true, "full", "tensor-wise",
                           &n, &calib) == 0);
  REQUIRE(n == 2);  // what the data quantize and the requantize stand for
  CHECK(std::string(calib[0]) == "data");
  CHECK(std::string(calib[1]) == "fc1_output");
  const char** args = nullptr;
  REQUIRE(MXSymbolListArguments(qsym, &n, &args) == 0);
  std::vector<std::string> arg_names(args, args + n);
  CHECK(arg_names == std::vector<std::string>{"data", "fc1_weight_quantize", "fc1_bias_quantize",
                                              "fc1_weight_quantize_min", "fc1_weight_quantize_max",
                                              "fc1_bias_quantize_min", "fc1_bias_quantize_max"});

  const char* layers[] = {"data", "fc1_output"};
  const float lo[] = {-1.0f, -6.5f}, hi[] = {1.0f, 6.5f};
  SymbolHandle calibrated = nullptr;
  REQUIRE(MXSetCalibTableToQuantizedSymbol(qsym, 2, layers, lo, hi, &calibrated) == 0);
  const char* json = nullptr;
  REQUIRE(MXSymbolSaveToJSON(calibrated, &json) == 0);
  const std::string text = json;
  CHECK(text.find("\"max_calib_range\": \"6.5\"") != std::string::npos);
  CHECK(text.find("\"min_calib_range\": \"-1\"") != std::string::npos);

  CHECK(MXQuantizeSymbol(fc, &qsym, &cpu, 0, nullptr, 0, nullptr, 0, nullptr, "int4", true, "full", "tensor-wise",
                         &n, &calib) == -1);
  CHECK(std::string(MXGetLastError()).find("quantized dtype 'int4'") != std::string::npos);
  const int gpu = 2;
  CHECK(MXQuantizeSymbol(fc, &qsym, &gpu, 0, nullptr, 0, nullptr, 0, nullptr, "int8", true, "full", "tensor-wise",
                         &n, &calib) == -1);
  for (SymbolHandle h : {calibrated, qsym, fc, data}) CHECK(MXSymbolFree(h) == 0);
}

TEST_CASE("C API: MXGenBackendSubgraph and MXOptimizeForBackend run MXNet's oneDNN backends and name the others in their errors",
          "[capi][quantize]") {
  // conv1 -> relu1, as sym.get_backend_symbol("MKLDNN_QUANTIZE") fuses it (predict/onednn_fusion.h).
  SymbolHandle data = nullptr, conv = nullptr, relu = nullptr;
  REQUIRE(MXSymbolCreateVariable("data", &data) == 0);
  const char* conv_keys[] = {"kernel", "num_filter"};
  const char* conv_vals[] = {"(3,3)", "4"};
  REQUIRE(MXSymbolCreateAtomicSymbol(Creator("Convolution"), 2, conv_keys, conv_vals, &conv) == 0);
  const char* input_keys[] = {"data"};
  REQUIRE(MXSymbolCompose(conv, "conv1", 1, input_keys, &data) == 0);
  const char* act_keys[] = {"act_type"};
  const char* act_vals[] = {"relu"};
  REQUIRE(MXSymbolCreateAtomicSymbol(Creator("Activation"), 1, act_keys, act_vals, &relu) == 0);
  REQUIRE(MXSymbolCompose(relu, "relu1", 1, input_keys, &conv) == 0);
  for (const char* backend : {"MKLDNN", "MKLDNN_QUANTIZE"}) {
    INFO(backend);
    SymbolHandle fused = nullptr;
    REQUIRE(MXGenBackendSubgraph(relu, backend, &fused) == 0);
    const char* json = nullptr;
    REQUIRE(MXSymbolSaveToJSON(fused, &json) == 0);
    const std::string text = json;
    CHECK(text.find("\"op\": \"_sg_mkldnn_conv\"") != std::string::npos);
    CHECK(text.find("\"with_act\": \"true\"") != std::string::npos);
    size_t activations = 0;  // relu1 lives on only in the fused node's nested graph
    for (size_t at = text.find("\"op\": \"Activation\""); at != std::string::npos;
         at = text.find("\"op\": \"Activation\"", at + 1))
      ++activations;
    CHECK(activations == 1);
    uint32_t n = 0;
    const char** outputs = nullptr;
    REQUIRE(MXSymbolListOutputs(fused, &n, &outputs) == 0);
    REQUIRE(n == 1);
    CHECK(std::string(outputs[0]) == "relu1_output");
    CHECK(MXSymbolFree(fused) == 0);
  }
  // Gluon's optimize_for: the same graph, no new arrays.
  SymbolHandle optimized = nullptr;
  int new_args = -1, new_aux = -1;
  NDArrayHandle *arg_handles = nullptr, *aux_handles = nullptr;
  char **arg_names = nullptr, **aux_names = nullptr;
  REQUIRE(MXOptimizeForBackend(relu, "MKLDNN", 1, &optimized, 0, nullptr, 0, nullptr, 0, nullptr, nullptr, 0, nullptr,
                               nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr, false, &new_args,
                               &arg_handles, &arg_names, &new_aux, &aux_handles, &aux_names) == 0);
  CHECK(new_args == 0);
  CHECK(new_aux == 0);
  const char* optimized_json = nullptr;
  REQUIRE(MXSymbolSaveToJSON(optimized, &optimized_json) == 0);
  CHECK(std::string(optimized_json).find("\"op\": \"_sg_mkldnn_conv\"") != std::string::npos);
  CHECK(MXSymbolFree(optimized) == 0);
  CHECK(MXOptimizeForBackend(relu, "TVM", 1, &optimized, 0, nullptr, 0, nullptr, 0, nullptr, nullptr, 0, nullptr,
                             nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr, false, &new_args, &arg_handles,
                             &arg_names, &new_aux, &aux_handles, &aux_names) == -1);
  CHECK(std::string(MXGetLastError()).find("subgraph backend 'TVM' is not supported by symbind") != std::string::npos);

  SymbolHandle out = nullptr;
  CHECK(MXGenBackendSubgraph(relu, "TensorRT", &out) == -1);
  CHECK(std::string(MXGetLastError()).find("subgraph backend 'TensorRT' is not supported by symbind (it has MKLDNN and MKLDNN_QUANTIZE)") !=
        std::string::npos);
  CHECK(MXGenBackendSubgraph(relu, nullptr, &out) == -1);
  CHECK(MXGenBackendSubgraph(nullptr, "MKLDNN", &out) == -1);
  CHECK(MXGenBackendSubgraph(relu, "MKLDNN", nullptr) == -1);
  for (SymbolHandle h : {relu, conv, data}) CHECK(MXSymbolFree(h) == 0);
}
