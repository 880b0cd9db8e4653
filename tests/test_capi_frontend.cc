// MXNet's C API as its Python frontend calls it: the lists read at import, autograd, cached
// ops, 64-bit and partial inference, attributes, SimpleBindEx, NDArray views and bytes.
#include <catch2/catch.hpp>

#include <mxnet/c_api.h>
#include <nnvm/c_api.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

AtomicSymbolCreator Creator(const std::string& name) {
  OpHandle h = nullptr;
  REQUIRE(NNGetOpHandle(name.c_str(), &h) == 0);
  return h;
}

NDArrayHandle Array(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  NDArrayHandle h = nullptr;
  REQUIRE(MXNDArrayCreateEx64(shape.data(), static_cast<int>(shape.size()), 1, 0, 0, 0, &h) == 0);
  REQUIRE(MXNDArraySyncCopyFromCPU(h, values.data(), values.size()) == 0);
  return h;
}

std::vector<float> Values(NDArrayHandle h) {
  int ndim = 0;
  const int64_t* dims = nullptr;
  REQUIRE(MXNDArrayGetShapeEx64(h, &ndim, &dims) == 0);
  size_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= static_cast<size_t>(dims[i]);
  std::vector<float> v(n);
  REQUIRE(MXNDArraySyncCopyToCPU(h, v.data(), n) == 0);
  return v;
}

std::vector<int64_t> Shape(NDArrayHandle h) {
  int ndim = 0;
  const int64_t* dims = nullptr;
  REQUIRE(MXNDArrayGetShapeEx64(h, &ndim, &dims) == 0);
  return std::vector<int64_t>(dims, dims + ndim);
}

// One imperative call with new outputs; `out_stypes` takes their storage types (else all
// must be dense).
std::vector<NDArrayHandle> Call(const std::string& op, std::vector<NDArrayHandle> in,
                                const std::map<std::string, std::string>& params = {},
                                std::vector<int>* out_stypes = nullptr) {
  std::vector<const char*> keys, vals;
  for (auto& kv : params) {
    keys.push_back(kv.first.c_str());
    vals.push_back(kv.second.c_str());
  }
  int n = 0;
  NDArrayHandle* out = nullptr;
  const int* stypes = nullptr;
  REQUIRE(MXImperativeInvokeEx(Creator(op), static_cast<int>(in.size()), in.data(), &n, &out,
                               static_cast<int>(keys.size()), keys.data(), vals.data(), &stypes) == 0);
  if (out_stypes) out_stypes->assign(stypes, stypes + n);
  for (int i = 0; i < n && !out_stypes; ++i) CHECK(stypes[i] == 0);
  return std::vector<NDArrayHandle>(out, out + n);
}

std::string LastError() { return MXGetLastError(); }

// Records `body` with autograd on (training mode), restoring both flags after.
template <typename Body>
void Recorded(Body body) {
  int was_recording = 0, was_training = 0;
  REQUIRE(MXAutogradSetIsRecording(1, &was_recording) == 0);
  REQUIRE(MXAutogradSetIsTraining(1, &was_training) == 0);
  body();
  REQUIRE(MXAutogradSetIsRecording(was_recording, nullptr) == 0);
  REQUIRE(MXAutogradSetIsTraining(was_training, nullptr) == 0);
}

SymbolHandle Variable(const char* name) {
  SymbolHandle s = nullptr;
  REQUIRE(MXSymbolCreateVariable(name, &s) == 0);
  return s;
}

// op(name, inputs by keyword, params).
SymbolHandle Compose(const std::string& op, const char* name, std::vector<const char*> in_keys,
                     std::vector<SymbolHandle> in, const std::map<std::string, std::string>& params = {}) {
  std::vector<const char*> keys, vals;
  for (auto& kv : params) {
    keys.push_back(kv.first.c_str());
    vals.push_back(kv.second.c_str());
  }
  SymbolHandle s = nullptr;
  REQUIRE(MXSymbolCreateAtomicSymbol(Creator(op), static_cast<uint32_t>(keys.size()), keys.data(), vals.data(),
                                     &s) == 0);
  REQUIRE(MXSymbolCompose(s, name, static_cast<uint32_t>(in.size()), in_keys.data(), in.data()) == 0);
  return s;
}

void Free(const std::vector<NDArrayHandle>& hs) {
  for (NDArrayHandle h : hs) REQUIRE(MXNDArrayFree(h) == 0);
}

}  // namespace

TEST_CASE("C API lists what MXNet's Python package reads at import", "[capi][python]") {
  uint32_t n = 0;
  const char** names = nullptr;
  REQUIRE(MXListAllOpNames(&n, &names) == 0);
  std::set<std::string> all(names, names + n);
  CHECK(all.count("FullyConnected"));
  CHECK(all.count("_np_sum"));  // a placeholder: listed, refused when used
  int fn = -1;
  const char** fnames = nullptr;
  REQUIRE(MXNetFuncListGlobalNames(&fn, &fnames) == 0);
  CHECK(fn == 0);
  uint32_t legacy = 7;
  FunctionHandle* funcs = nullptr;
  REQUIRE(MXListFunctions(&legacy, &funcs) == 0);
  CHECK(legacy == 0);

  const LibFeature* features = nullptr;
  size_t count = 0;
  REQUIRE(MXLibInfoFeatures(&features, &count) == 0);
  std::map<std::string, bool> table;
  for (size_t i = 0; i < count; ++i) table[features[i].name] = features[i].enabled;
  CHECK(count == 32);
  CHECK_FALSE(table.at("CUDA"));
  CHECK(table.at("INT64_TENSOR_SIZE"));
  CHECK(table.at("CPU_SSE2") == (__builtin_cpu_supports("sse2") != 0));
  CHECK(table.at("CPU_AVX2") == (__builtin_cpu_supports("avx2") != 0));

  // A placeholder describes itself, and using it names the reason.
  const char *name, *desc, *key_var;
  uint32_t nargs = 0;
  const char **arg_names, **arg_types, **arg_docs;
  REQUIRE(MXSymbolGetAtomicSymbolInfo(Creator("_np_sum"), &name, &desc, &nargs, &arg_names, &arg_types, &arg_docs,
                                      &key_var) == 0);
  CHECK(std::string(name) == "_np_sum");
  // An operator without inputs lists none, even when equal dummy values of its required parameters
  // would break a constraint (randint's low < high): MXNet's Python generates its signature from
  // this list, and an input listed here would be a required NDArray argument.
  REQUIRE(MXSymbolGetAtomicSymbolInfo(Creator("_random_randint"), &name, &desc, &nargs, &arg_names, &arg_types,
                                      &arg_docs, &key_var) == 0);
  for (uint32_t i = 0; i < nargs; ++i) CHECK(std::string(arg_types[i]).find("NDArray") == std::string::npos);
  CHECK(std::string(arg_names[0]) == "low");
  NDArrayHandle x = Array({2}, {1, 2});
  int out_n = 0;
  NDArrayHandle* out = nullptr;
  CHECK(MXImperativeInvokeEx(Creator("_np_sum"), 1, &x, &out_n, &out, 0, nullptr, nullptr, nullptr) == -1);
  CHECK(LastError().find("'_np_sum' is not supported by symbind") != std::string::npos);
  SymbolHandle s = nullptr;
  CHECK(MXSymbolCreateAtomicSymbol(Creator("_np_sum"), 0, nullptr, nullptr, &s) == -1);
  Free({x});

  // Custom op registrations are accepted (MXNet's Python makes them at import).
  CHECK(MXCustomOpRegister("my_op", reinterpret_cast<CustomOpPropCreator>(reinterpret_cast<void (*)()>(&Values))) == 0);
  CHECK(MXCustomOpRegister(nullptr, reinterpret_cast<CustomOpPropCreator>(reinterpret_cast<void (*)()>(&Values))) == -1);
}

TEST_CASE("C API autograd: recorded calls differentiate, write and add, free the graph", "[capi][python][autograd]") {
  NDArrayHandle x = Array({3}, {1, 2, 3});
  NDArrayHandle gx = Array({3}, {0, 0, 0});
  uint32_t req = 1;  // write
  REQUIRE(MXAutogradMarkVariables(1, &x, &req, &gx) == 0);
  bool recording = true;
  REQUIRE(MXAutogradIsRecording(&recording) == 0);
  CHECK_FALSE(recording);

  NDArrayHandle loss = nullptr;
  Recorded([&] {
    NDArrayHandle y = Call("elemwise_mul", {x, x})[0];  // x^2
    loss = Call("sum", {y})[0];
    Free({y});
  });
  REQUIRE(MXAutogradBackwardEx(1, &loss, nullptr, 0, nullptr, 1, 0, 1, nullptr, nullptr) == 0);
  NDArrayHandle grad = nullptr;
  REQUIRE(MXNDArrayGetGrad(x, &grad) == 0);
  REQUIRE(grad != nullptr);
  CHECK(Values(grad) == std::vector<float>{2, 4, 6});
  int fresh = 0;
  REQUIRE(MXNDArrayGetGradState(x, &fresh) == 0);
  CHECK(fresh == 1);
  REQUIRE(MXNDArraySetGradState(x, 0) == 0);

  // The graph was retained: a head gradient of 2 doubles the result; write replaces it.
  NDArrayHandle two = Array(Shape(loss), {2});
  REQUIRE(MXAutogradBackwardEx(1, &loss, &two, 0, nullptr, 0, 0, 1, nullptr, nullptr) == 0);
  CHECK(Values(grad) == std::vector<float>{4, 8, 12});
  // Now freed: a second pass names the fix.
  CHECK(MXAutogradBackwardEx(1, &loss, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == -1);
  CHECK(LastError().find("retain_graph") != std::string::npos);

  // An array computed outside record() has no graph.
  NDArrayHandle plain = Call("elemwise_mul", {x, x})[0];
  CHECK(MXAutogradBackwardEx(1, &plain, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == -1);
  CHECK(LastError().find("not in a recorded graph") != std::string::npos);

  // grad_req add accumulates; asked-for variables get returned gradients instead.
  req = 3;
  const float zeros[] = {0, 0, 0};
  REQUIRE(MXNDArraySyncCopyFromCPU(gx, zeros, 3) == 0);
  REQUIRE(MXAutogradMarkVariables(1, &x, &req, &gx) == 0);
  for (int pass = 0; pass < 2; ++pass) {
    NDArrayHandle l = nullptr;
    Recorded([&] { l = Call("sum", {x})[0]; });
    REQUIRE(MXAutogradBackwardEx(1, &l, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == 0);
    Free({l});
  }
  CHECK(Values(gx) == std::vector<float>{2, 2, 2});
  NDArrayHandle l = nullptr;
  Recorded([&] { l = Call("_mul_scalar", {x}, {{"scalar", "3"}})[0]; });
  NDArrayHandle* grads = nullptr;
  int* stypes = nullptr;
  REQUIRE(MXAutogradBackwardEx(1, &l, nullptr, 1, &x, 0, 0, 1, &grads, &stypes) == 0);
  CHECK(Values(grads[0]) == std::vector<float>{3, 3, 3});
  CHECK(Values(gx) == std::vector<float>{2, 2, 2});  // untouched
  Free({grads[0], l, loss, two, plain, grad, x, gx});

  // Detach drops the graph; freed handles are refused.
  NDArrayHandle dead = Array({1}, {1});
  REQUIRE(MXNDArrayFree(dead) == 0);
  CHECK(MXNDArrayDetach(dead, &l) == -1);
  CHECK(LastError().find("not a live NDArrayHandle") != std::string::npos);
}

TEST_CASE("C API autograd through FullyConnected matches the analytic gradient", "[capi][python][autograd]") {
  // y = x W^T + b, loss = sum(y): dW[j,k] = sum_i x[i,k], db[j] = batch, dx[i,k] = sum_j W[j,k].
  NDArrayHandle x = Array({2, 3}, {1, 2, 3, 4, 5, 6});
  NDArrayHandle w = Array({2, 3}, {0.5f, -1, 2, 1, 1, -0.5f});
  NDArrayHandle b = Array({2}, {0.1f, 0.2f});
  NDArrayHandle gx = Array({2, 3}, std::vector<float>(6, 0)), gw = Array({2, 3}, std::vector<float>(6, 0)),
                gb = Array({2}, {0, 0});
  NDArrayHandle vars[] = {x, w, b}, gradients[] = {gx, gw, gb};
  uint32_t reqs[] = {1, 1, 1};
  REQUIRE(MXAutogradMarkVariables(3, vars, reqs, gradients) == 0);
  NDArrayHandle loss = nullptr;
  Recorded([&] {
    NDArrayHandle y = Call("FullyConnected", {x, w, b}, {{"num_hidden", "2"}})[0];
    CHECK(Values(y) == std::vector<float>{4.6f, 1.7f, 9.1f, 6.2f});
    loss = Call("sum", {y})[0];
    Free({y});
  });
  REQUIRE(MXAutogradBackwardEx(1, &loss, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == 0);
  CHECK(Values(gw) == std::vector<float>{5, 7, 9, 5, 7, 9});
  CHECK(Values(gb) == std::vector<float>{2, 2});
  CHECK(Values(gx) == std::vector<float>{1.5f, 0, 1.5f, 1.5f, 0, 1.5f});
  Free({x, w, b, gx, gw, gb, loss});
}

TEST_CASE("C API cached op runs a graph like an operator and differentiates each call",
          "[capi][python][cachedop]") {
  SymbolHandle data = Variable("data");
  SymbolHandle fc = Compose("FullyConnected", "fc", {"data"}, {data}, {{"num_hidden", "2"}});
  SymbolHandle act = Compose("Activation", "act", {"data"}, {fc}, {{"act_type", "relu"}});
  uint32_t n = 0;
  const char** inputs = nullptr;
  REQUIRE(NNSymbolListInputNames(act, 0, &n, &inputs) == 0);
  REQUIRE(n == 3);
  CHECK(std::string(inputs[0]) == "data");
  const char* flag_keys[] = {"static_alloc", "static_shape"};
  const char* flag_vals[] = {"true", "true"};
  CachedOpHandle op = nullptr;
  REQUIRE(MXCreateCachedOpEx(act, 2, flag_keys, flag_vals, &op) == 0);
  const char* bad_key[] = {"no_such_flag"};
  CachedOpHandle bad = nullptr;
  CHECK(MXCreateCachedOpEx(act, 1, bad_key, flag_vals, &bad) == -1);
  CHECK(LastError().find("unknown CachedOp flag 'no_such_flag'") != std::string::npos);

  NDArrayHandle w = Array({2, 2}, {1, -1, 2, 1});
  NDArrayHandle b = Array({2}, {0, -10});
  NDArrayHandle gw = Array({2, 2}, {0, 0, 0, 0}), gb = Array({2}, {0, 0});
  NDArrayHandle params[] = {w, b}, param_grads[] = {gw, gb};
  uint32_t reqs[] = {1, 1};
  REQUIRE(MXAutogradMarkVariables(2, params, reqs, param_grads) == 0);

  auto run = [&](NDArrayHandle x) {
    NDArrayHandle in[] = {x, w, b};
    int n_out = 0;
    NDArrayHandle* out = nullptr;
    const int* stypes = nullptr;
    REQUIRE(MXInvokeCachedOpEx(op, 3, in, &n_out, &out, &stypes) == 0);
    REQUIRE(n_out == 1);
    return out[0];
  };
  // Two calls with different data arrays, then backward through the first: its own inputs
  // are used (the executor recomputes that call), not the second call's.
  NDArrayHandle x1 = Array({1, 2}, {3, 1}), x2 = Array({1, 2}, {-5, 4});
  NDArrayHandle y1 = nullptr, y2 = nullptr, l1 = nullptr;
  Recorded([&] {
    y1 = run(x1);
    y2 = run(x2);
    l1 = Call("sum", {y1})[0];
  });
  CHECK(Values(y1) == std::vector<float>{2, 0});  // relu(3-1, 6+1-10)
  CHECK(Values(y2) == std::vector<float>{0, 0});  // relu(-9, -10+4-10)
  REQUIRE(MXAutogradBackwardEx(1, &l1, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == 0);
  CHECK(Values(gw) == std::vector<float>{3, 1, 0, 0});  // only the first unit is active
  CHECK(Values(gb) == std::vector<float>{1, 0});

  // Outside record() nothing is taped; a wrong input count names the inputs.
  NDArrayHandle y3 = run(x2);
  CHECK(MXAutogradBackwardEx(1, &y3, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == -1);
  NDArrayHandle one[] = {x1};
  int n_out = 0;
  NDArrayHandle* out = nullptr;
  CHECK(MXInvokeCachedOpEx(op, 1, one, &n_out, &out, nullptr) == -1);
  CHECK(LastError().find("takes 3 inputs (data, fc_weight, fc_bias)") != std::string::npos);
  REQUIRE(MXFreeCachedOp(op) == 0);
  CHECK(MXFreeCachedOp(op) == -1);
  Free({w, b, gw, gb, x1, x2, y1, y2, y3, l1});
  for (SymbolHandle s : {data, fc, act}) REQUIRE(MXSymbolFree(s) == 0);
}

TEST_CASE("C API cached op of a graph with a dynamic shape runs op by op on the tape",
          "[capi][python][cachedop][boolean_mask]") {
  // A hybridized block around boolean_mask (MXNet's test_dynamic_shape): no executor can be
  // bound, so each call runs the graph's ops imperatively, recorded one by one.
  SymbolHandle data = Variable("data"), index = Variable("index");
  SymbolHandle mask = Compose("_contrib_boolean_mask", "mask", {"data", "index"}, {data, index});
  SymbolHandle twice = Compose("_mul_scalar", "twice", {"data"}, {mask}, {{"scalar", "2"}});
  CachedOpHandle op = nullptr;
  REQUIRE(MXCreateCachedOpEx(twice, 0, nullptr, nullptr, &op) == 0);
  NDArrayHandle x = Array({3, 2}, {1, 2, 3, 4, 5, 6}), gx = Array({3, 2}, std::vector<float>(6, 0));
  uint32_t req = 1;
  REQUIRE(MXAutogradMarkVariables(1, &x, &req, &gx) == 0);
  auto run = [&](NDArrayHandle idx) {
    NDArrayHandle in[] = {x, idx};
    int n_out = 0;
    NDArrayHandle* out = nullptr;
    REQUIRE(MXInvokeCachedOpEx(op, 2, in, &n_out, &out, nullptr) == 0);
    REQUIRE(n_out == 1);
    return out[0];
  };
  NDArrayHandle i1 = Array({3}, {0, 1, 1}), i2 = Array({3}, {1, 0, 0});
  NDArrayHandle y1 = nullptr, y2 = nullptr, l1 = nullptr;
  Recorded([&] {
    y1 = run(i1);
    y2 = run(i2);  // another number of rows from the same cached op
    l1 = Call("sum", {y1})[0];
  });
  CHECK(Shape(y1) == std::vector<int64_t>{2, 2});
  CHECK(Values(y1) == std::vector<float>{6, 8, 10, 12});
  CHECK(Values(y2) == std::vector<float>{2, 4});
  REQUIRE(MXAutogradBackwardEx(1, &l1, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == 0);
  CHECK(Values(gx) == std::vector<float>{0, 0, 2, 2, 2, 2});
  // Binding the same graph is refused, naming the operator.
  ExecutorHandle exec = nullptr;
  NDArrayHandle args[] = {x, i1}, grads[] = {nullptr, nullptr};
  uint32_t reqs[] = {0, 0};
  CHECK(MXExecutorBindEX(twice, 1, 0, 0, nullptr, nullptr, nullptr, 2, args, grads, reqs, 0, nullptr, nullptr,
                         &exec) == -1);
  CHECK(LastError().find("mask (_contrib_boolean_mask): its output shape depends on the values of its inputs") !=
        std::string::npos);
  REQUIRE(MXFreeCachedOp(op) == 0);
  Free({x, gx, i1, i2, y1, y2, l1});
  for (SymbolHandle s : {data, index, mask, twice}) REQUIRE(MXSymbolFree(s) == 0);
}

TEST_CASE("C API partial and 64-bit shape inference, type inference as MXNet reports them",
          "[capi][python][infer]") {
  SymbolHandle data = Variable("data");
  SymbolHandle fc = Compose("FullyConnected", "fc", {"data"}, {data}, {{"num_hidden", "4"}});
  const char* keys[] = {"data"};
  const int64_t ind[] = {0, 2};
  const int64_t dims[] = {0, 10};  // batch unknown (0 without numpy shape semantics)
  size_t in_n, out_n, aux_n;
  const int *in_nd, *out_nd, *aux_nd;
  const int64_t **in_d, **out_d, **aux_d;
  int complete = -1;
  REQUIRE(MXSymbolInferShapePartialEx64(fc, 1, keys, ind, dims, &in_n, &in_nd, &in_d, &out_n, &out_nd, &out_d,
                                        &aux_n, &aux_nd, &aux_d, &complete) == 0);
  CHECK(complete == 1);
  REQUIRE(in_n == 3);
  CHECK(std::vector<int64_t>(in_d[0], in_d[0] + in_nd[0]) == std::vector<int64_t>{0, 10});
  CHECK(std::vector<int64_t>(in_d[1], in_d[1] + in_nd[1]) == std::vector<int64_t>{4, 10});
  CHECK(std::vector<int64_t>(out_d[0], out_d[0] + out_nd[0]) == std::vector<int64_t>{0, 4});
  REQUIRE(MXSymbolInferShapeEx64(fc, 1, keys, ind, dims, &in_n, &in_nd, &in_d, &out_n, &out_nd, &out_d, &aux_n,
                                 &aux_nd, &aux_d, &complete) == 0);
  CHECK(complete == 0);
  // With numpy semantics unknown is -1.
  int prev = -1;
  REQUIRE(MXSetIsNumpyShape(1, &prev) == 0);
  const int64_t np_dims[] = {-1, 10};
  REQUIRE(MXSymbolInferShapePartialEx64(fc, 1, keys, ind, np_dims, &in_n, &in_nd, &in_d, &out_n, &out_nd, &out_d,
                                        &aux_n, &aux_nd, &aux_d, &complete) == 0);
  CHECK(std::vector<int64_t>(out_d[0], out_d[0] + out_nd[0]) == std::vector<int64_t>{-1, 4});
  REQUIRE(MXSetIsNumpyShape(prev, nullptr) == 0);

  // Types: unknown stays -1 in the partial call; data float16 is reported back.
  uint32_t tin, tout, taux;
  const int *in_t, *out_t, *aux_t;
  REQUIRE(MXSymbolInferTypePartial(fc, 0, nullptr, nullptr, &tin, &in_t, &tout, &out_t, &taux, &aux_t,
                                   &complete) == 0);
  CHECK(complete == 1);
  CHECK(std::vector<int>(in_t, in_t + tin) == std::vector<int>{-1, -1, -1});
  const int f32[] = {0};
  REQUIRE(MXSymbolInferType(fc, 1, keys, f32, &tin, &in_t, &tout, &out_t, &taux, &aux_t, &complete) == 0);
  CHECK(complete == 1);
  CHECK(std::vector<int>(in_t, in_t + tin) == std::vector<int>{0, 0, 0});
  const int bad_type[] = {99};
  CHECK(MXSymbolInferType(fc, 1, keys, bad_type, &tin, &in_t, &tout, &out_t, &taux, &aux_t, &complete) == -1);
  REQUIRE(MXSymbolFree(fc) == 0);
  REQUIRE(MXSymbolFree(data) == 0);
}

TEST_CASE("C API shape inference names an unknown or repeated key and checks arg_ind_ptr", "[capi][python][infer][hostile]") {
  SymbolHandle data = Variable("data");
  SymbolHandle fc = Compose("FullyConnected", "fc", {"data"}, {data}, {{"num_hidden", "4"}});
  uint32_t in_n, out_n, aux_n;
  const int *in_nd, *out_nd, *aux_nd;
  const int **in_d, **out_d, **aux_d;
  int complete = -1;
  auto infer = [&](std::vector<const char*> keys, std::vector<uint32_t> ind, std::vector<int> dims) {
    return MXSymbolInferShapeEx(fc, static_cast<uint32_t>(keys.size()), keys.data(), ind.data(), dims.data(), &in_n,
                                &in_nd, &in_d, &out_n, &out_nd, &out_d, &aux_n, &aux_nd, &aux_d, &complete);
  };
  // A misspelt key was dropped and a repeated one overwritten, without a word.
  CHECK(infer({"dta"}, {0, 2}, {2, 3}) == -1);
  CHECK(LastError() == "MXSymbolInferShapeEx: keys: 'dta' is not an input of the symbol; inputs: data, fc_weight, fc_bias");
  CHECK(infer({"data", "data"}, {0, 2, 4}, {2, 3, 5, 3}) == -1);
  CHECK(LastError() == "MXSymbolInferShapeEx: keys: 'data' is given twice");
  // arg_ind_ptr: from 0, and no more dims than a shape can have (it bounds the reads).
  CHECK(infer({"data"}, {1, 3}, {2, 3, 4}) == -1);
  CHECK(LastError() == "MXSymbolInferShapeEx: arg_ind_ptr[0] is 1, expected 0");
  CHECK(infer({"data"}, {0, 1000000}, {2, 3}) == -1);
  CHECK(LastError() == "MXSymbolInferShapeEx: the shape of 'data' has 1000000 dims (arg_ind_ptr[1] - arg_ind_ptr[0]); "
                       "at most 32 are supported");
  REQUIRE(infer({"data"}, {0, 2}, {2, 3}) == 0);
  CHECK(complete == 1);
  REQUIRE(MXSymbolFree(fc) == 0);
  REQUIRE(MXSymbolFree(data) == 0);
}

TEST_CASE("C API MXSymbolCreateAtomicSymbol parses its parameters, as MXNet does", "[capi][python][hostile]") {
  const char* keys[] = {"num_hidden"};
  const char* bad[] = {"ten"};
  SymbolHandle s = nullptr;
  // The bad value surfaced only at MXSymbolCompose, far from the call that gave it.
  CHECK(MXSymbolCreateAtomicSymbol(Creator("FullyConnected"), 1, keys, bad, &s) == -1);
  CHECK(LastError().rfind("MXSymbolCreateAtomicSymbol: Invalid Parameter format for num_hidden expect int but "
                          "value='ten'", 0) == 0);
  CHECK(MXSymbolCreateAtomicSymbol(Creator("FullyConnected"), 0, nullptr, nullptr, &s) == -1);
  CHECK(LastError().find("Required parameter num_hidden") != std::string::npos);
  // A variadic op's input count may come with its inputs.
  REQUIRE(MXSymbolCreateAtomicSymbol(Creator("Concat"), 0, nullptr, nullptr, &s) == 0);
  REQUIRE(MXSymbolFree(s) == 0);
}

TEST_CASE("C API attributes follow MXNet's rules, and compose replaces a whole symbol's variables",
          "[capi][python][attr]") {
  SymbolHandle data = Variable("data");
  SymbolHandle fc = Compose("FullyConnected", "fc", {"data"}, {data},
                            {{"num_hidden", "3"}, {"__mood__", "calm"}, {"lr_mult", "2"}});
  const char* value = nullptr;
  int ok = 0;
  REQUIRE(MXSymbolGetAttr(fc, "lr_mult", &value, &ok) == 0);
  CHECK(ok == 1);
  CHECK(std::string(value) == "2");
  REQUIRE(MXSymbolGetAttr(fc, "num_hidden", &value, &ok) == 0);
  CHECK((ok == 1 && std::string(value) == "3"));
  REQUIRE(MXSymbolGetAttr(fc, "missing", &value, &ok) == 0);
  CHECK(ok == 0);
  uint32_t n = 0;
  const char** flat = nullptr;
  REQUIRE(MXSymbolListAttr(fc, &n, &flat) == 0);
  std::map<std::string, std::string> attrs;
  for (uint32_t i = 0; i < n; ++i) attrs[flat[2 * i]] = flat[2 * i + 1];
  CHECK(attrs["fc$__lr_mult__"] == "2");
  CHECK(attrs["fc$lr_mult"] == "2");
  CHECK(attrs["fc_weight$__mood__"] == "calm");  // the created weight inherits the attributes
  CHECK(attrs.count("data$__mood__") == 0);        // the given input does not
  CHECK(MXSymbolSetAttr(fc, "fc_lr_mult", "1") == -1);
  CHECK(LastError().find("deprecated") != std::string::npos);

  // net(data=other): data replaced; unknown names refused.
  SymbolHandle other = Variable("pixels");
  const char* key[] = {"data"};
  REQUIRE(MXSymbolCompose(fc, "", 1, key, &other) == 0);
  uint32_t na = 0;
  const char** args = nullptr;
  REQUIRE(MXSymbolListArguments(fc, &na, &args) == 0);
  CHECK(std::string(args[0]) == "pixels");
  const char* bad[] = {"nope"};
  CHECK(MXSymbolCompose(fc, "", 1, bad, &other) == -1);
  CHECK(LastError().find("no such input") != std::string::npos);

  SymbolHandle children = nullptr;
  uint32_t outs = 7;
  REQUIRE(MXSymbolGetChildren(data, &children) == 0);
  REQUIRE(MXSymbolGetNumOutputs(children, &outs) == 0);
  CHECK(outs == 0);
  for (SymbolHandle s : {data, fc, other, children}) REQUIRE(NNSymbolFree(s) == 0);
}

TEST_CASE("C API: an index out of bounds is reported as MXNet's IndexError, which its Python raises as IndexError",
          "[capi][python]") {
  NDArrayHandle data = Array({2, 3}, {0, 1, 2, 3, 4, 5});
  NDArrayHandle bad = Array({2, 3}, {0, 1, 0, 0, 1, 3});   // index 3 on an axis of size 3
  NDArrayHandle wrapped = Array({2, 3}, {0, 1, -1, 0, 1, -2});  // negative indices wrap
  // As in MXNet, the failure is reported at the next read of the output (test_gather_nd_check_bound).
  std::vector<NDArrayHandle> failed = Call("gather_nd", {data, bad});
  std::vector<float> values(3);
  CHECK(MXNDArraySyncCopyToCPU(failed[0], values.data(), values.size()) == -1);
  CHECK(LastError().rfind("IndexError: MXImperativeInvokeEx: gather_nd: index 3", 0) == 0);
  std::vector<NDArrayHandle> got = Call("gather_nd", {data, wrapped});
  CHECK(Values(got[0]) == std::vector<float>{0, 4, 4});  // (0, 0), (1, 1), (-1, -2) = (1, 1)
  // MXNet's take reports its indices out of bounds as a plain MXNetError.
  NDArrayHandle idx = Array({1}, {7});
  std::vector<NDArrayHandle> taken = Call("take", {data, idx}, {{"mode", "raise"}});
  CHECK(MXNDArrayWaitToRead(taken[0]) == -1);
  CHECK(LastError().rfind("MXImperativeInvokeEx: take: index 7 is out of bounds", 0) == 0);
  Free({data, bad, wrapped, idx, got[0], failed[0], taken[0]});
}

TEST_CASE("C API: a failure while computing is reported once, at the next read, and passes to what reads it",
          "[capi][python]") {
  const std::map<std::string, std::string> bad_scale{{"loc", "0"}, {"scale", "-1"}, {"shape", "(2, 2)"}};
  // Never read: nothing raised (MXNet's test_exc_imperative).
  std::vector<NDArrayHandle> unread = Call("_random_normal", {}, bad_scale);
  // What reads a failed array fails with it; the first read raises, later reads do not.
  std::vector<NDArrayHandle> failed = Call("_random_normal", {}, bad_scale);
  std::vector<NDArrayHandle> product = Call("dot", {failed[0], failed[0]});
  std::vector<float> values(4);
  CHECK(MXNDArraySyncCopyToCPU(product[0], values.data(), 4) == -1);
  CHECK(LastError() == "MXImperativeInvokeEx: _random_normal: scale must be positive, got -1");
  CHECK(MXNDArraySyncCopyToCPU(product[0], values.data(), 4) == 0);
  CHECK(MXNDArrayWaitToRead(failed[0]) == 0);  // the same failure, reported already
  // waitall reports a failure not yet reported, once; arrays freed unread are forgotten.
  Free({unread[0]});
  std::vector<NDArrayHandle> again = Call("_random_normal", {}, bad_scale);
  CHECK(MXNDArrayWaitAll() == -1);
  CHECK_THAT(LastError(), Catch::Contains("scale must be positive"));
  CHECK(MXNDArrayWaitAll() == 0);
  CHECK(MXNDArrayWaitToRead(again[0]) == 0);
  // A successful write clears an array's failure.
  std::vector<NDArrayHandle> overwritten = Call("_random_normal", {}, bad_scale);
  NDArrayHandle ones = Array({2, 2}, {1, 1, 1, 1});
  int n = 1;
  NDArrayHandle* out = &overwritten[0];
  REQUIRE(MXImperativeInvokeEx(Creator("_copyto"), 1, &ones, &n, &out, 0, nullptr, nullptr, nullptr) == 0);
  CHECK(Values(overwritten[0]) == std::vector<float>{1, 1, 1, 1});
  // Errors in parameters, shapes and dtypes still fail the call.
  NDArrayHandle three = Array({3}, {1, 2, 3});
  out = nullptr;
  CHECK(MXImperativeInvokeEx(Creator("dot"), 2, std::vector<NDArrayHandle>{ones, three}.data(), &n, &out, 0,
                             nullptr, nullptr, nullptr) == -1);
  Free({failed[0], product[0], again[0], overwritten[0], ones, three});
}

TEST_CASE("C API: an executor's failure while computing is reported at the next read of its outputs and gradients",
          "[capi][python]") {
  SymbolHandle data = Variable("a"), idx = Variable("indices");
  SymbolHandle taken = Compose("take", "take0", {"a", "indices"}, {data, idx}, {{"mode", "raise"}});
  NDArrayHandle a = Array({3}, {1, 2, 3}), indices = Array({1}, {5}), grad_a = Array({3}, {0, 0, 0});
  NDArrayHandle grad_idx = Array({1}, {0});
  NDArrayHandle args[] = {a, indices}, grads[] = {grad_a, grad_idx};
  uint32_t reqs[] = {1, 0};
  ExecutorHandle exec = nullptr;
  REQUIRE(MXExecutorBindEX(taken, 1, 0, 0, nullptr, nullptr, nullptr, 2, args, grads, reqs, 0, nullptr, nullptr,
                           &exec) == 0);
  CHECK(MXExecutorForward(exec, 1) == 0);  // MXNet's test_take: forward returns, the read raises
  NDArrayHandle head = Array({1}, {1});
  CHECK(MXExecutorBackward(exec, 1, &head) == 0);
  CHECK(MXNDArrayWaitToRead(grad_a) == -1);  // the gradient carries the forward's failure
  CHECK_THAT(LastError(), Catch::StartsWith("MXExecutorForward: take: index 5 is out of bounds"));
  // Good indices: the next forward succeeds and clears the outputs' failure.
  float five = 1;
  REQUIRE(MXNDArraySyncCopyFromCPU(indices, &five, 1) == 0);
  CHECK(MXExecutorForward(exec, 0) == 0);
  uint32_t n = 0;
  NDArrayHandle* outs = nullptr;
  REQUIRE(MXExecutorOutputs(exec, &n, &outs) == 0);
  CHECK(Values(outs[0]) == std::vector<float>{2});
  REQUIRE(MXExecutorFree(exec) == 0);
  Free({a, indices, grad_a, grad_idx, head, outs[0]});
  for (SymbolHandle s : {data, idx, taken}) REQUIRE(NNSymbolFree(s) == 0);
}

TEST_CASE("C API SimpleBindEx64: grad_req forms, shared parameters and data buffers", "[capi][python][bind]") {
  SymbolHandle data = Variable("data");
  SymbolHandle fc = Compose("FullyConnected", "fc", {"data"}, {data}, {{"num_hidden", "2"}});
  std::vector<NDArrayHandle> owned;  // every handle the binds return, as a frontend frees them
  auto bind = [&](int64_t batch, ExecutorHandle shared, int* buffer_len, std::vector<const char*>* buffer_names,
                  std::vector<NDArrayHandle>* buffer_arrays, NDArrayHandle** args_out, NDArrayHandle** grads_out) {
    const char* shape_names[] = {"data"};
    const int64_t shape_data[] = {batch, 3};
    const uint32_t shape_idx[] = {0, 2};
    // "parameters" is no argument of this symbol: skipped, as MXNet does for a dict shared by symbols.
    const char* req_names[] = {"fc_weight", "fc_bias", "parameters"};
    const char* req_types[] = {"write", "add", "write"};
    const char* shared_names[] = {"fc_weight", "fc_bias"};
    const char** updated_names = nullptr;
    NDArrayHandle* updated_arrays = nullptr;
    uint32_t n_args = 0, n_aux = 0;
    NDArrayHandle *args, *grads, *aux;
    ExecutorHandle exec = nullptr;
    int rc = MXExecutorSimpleBindEx64(fc, 1, 0, 0, nullptr, nullptr, nullptr, 3, req_names, req_types, 1, shape_names,
                                      shape_data, shape_idx, 0, nullptr, nullptr, 0, nullptr, nullptr,
                                      shared ? 2 : 0, shared_names, buffer_len, buffer_names->data(),
                                      buffer_arrays->data(), &updated_names, &updated_arrays, &n_args, &args, &grads,
                                      &n_aux, &aux, shared, &exec);
    if (rc != 0) return exec;
    REQUIRE(n_args == 3);
    CHECK(grads[0] == nullptr);  // data: left out of the dict, no gradient
    CHECK(grads[1] != nullptr);
    *args_out = args;
    *grads_out = grads;
    buffer_names->assign(updated_names, updated_names + *buffer_len);
    buffer_arrays->assign(updated_arrays, updated_arrays + *buffer_len);
    for (uint32_t i = 0; i < n_args; ++i) {
      owned.push_back(args[i]);
      if (grads[i]) owned.push_back(grads[i]);
    }
    for (uint32_t i = 0; i < n_aux; ++i) owned.push_back(aux[i]);
    owned.insert(owned.end(), buffer_arrays->begin(), buffer_arrays->end());
    return exec;
  };
  int buffer_len = 0;
  std::vector<const char*> names;
  std::vector<NDArrayHandle> arrays;
  NDArrayHandle *args1, *grads1;
  ExecutorHandle big = bind(4, nullptr, &buffer_len, &names, &arrays, &args1, &grads1);
  REQUIRE(big != nullptr);
  CHECK(buffer_len == 3);  // data and both parameters, by name
  void* w1 = nullptr;
  REQUIRE(MXNDArrayGetData(args1[1], &w1) == 0);
  void* d1 = nullptr;
  REQUIRE(MXNDArrayGetData(args1[0], &d1) == 0);
  NDArrayHandle *args2, *grads2;
  ExecutorHandle small = bind(2, big, &buffer_len, &names, &arrays, &args2, &grads2);
  REQUIRE(small != nullptr);
  void* w2 = nullptr;
  void* d2 = nullptr;
  REQUIRE(MXNDArrayGetData(args2[1], &w2) == 0);
  REQUIRE(MXNDArrayGetData(args2[0], &d2) == 0);
  CHECK(w1 == w2);  // fc_weight shared with the first executor
  CHECK(d1 == d2);  // data placed in the shared buffer's array
  CHECK(Shape(args2[0]) == std::vector<int64_t>{2, 3});
  const char* text = nullptr;
  REQUIRE(MXExecutorPrint(small, &text) == 0);
  CHECK(std::string(text).find("MB allocated\nTotal 0 TempSpace resource requested\n") != std::string::npos);

  // A bad grad_req and an unknown argument are named.
  const char* shape_names[] = {"data"};
  const int64_t shape_data[] = {2, 3};
  const uint32_t shape_idx[] = {0, 2};
  const char* req_all[] = {"sometimes"};
  const char** updated_names = nullptr;
  NDArrayHandle* updated_arrays = nullptr;
  uint32_t n_args = 0, n_aux = 0;
  NDArrayHandle *args, *grads, *aux;
  ExecutorHandle exec = nullptr;
  int no_buffer = -1;
  CHECK(MXExecutorSimpleBindEx64(fc, 1, 0, 0, nullptr, nullptr, nullptr, 0, nullptr, req_all, 1, shape_names,
                                 shape_data, shape_idx, 0, nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr,
                                 &no_buffer, nullptr, nullptr, &updated_names, &updated_arrays, &n_args, &args,
                                 &grads, &n_aux, &aux, nullptr, &exec) == -1);
  CHECK(LastError().find("grad_req 'sometimes'") != std::string::npos);
  Free(owned);
  REQUIRE(MXExecutorFree(big) == 0);
  REQUIRE(MXExecutorFree(small) == 0);
  REQUIRE(MXSymbolFree(fc) == 0);
  REQUIRE(MXSymbolFree(data) == 0);
}

TEST_CASE("C API NDArray views, 64-bit shapes, raw bytes and storage types", "[capi][python][ndarray]") {
  NDArrayHandle a = Array({2, 3, 4}, std::vector<float>(24, 1.5f));
  dim_t dims[] = {-1, 4};
  NDArrayHandle r = nullptr;
  REQUIRE(MXNDArrayReshape64(a, 2, dims, false, &r) == 0);
  CHECK(Shape(r) == std::vector<int64_t>{6, 4});
  dim_t rev[] = {-1, 0};  // read from the right: the last dim kept, the rest merged
  NDArrayHandle rr = nullptr;
  REQUIRE(MXNDArrayReshape64(a, 2, rev, true, &rr) == 0);
  CHECK(Shape(rr) == std::vector<int64_t>{6, 4});
  NDArrayHandle row = nullptr;
  REQUIRE(MXNDArrayAt64(a, 1, &row) == 0);
  CHECK(Shape(row) == std::vector<int64_t>{3, 4});
  CHECK(MXNDArrayAt64(a, 2, &row) == -1);
  CHECK(LastError().find("index 2 out of range for axis 0 of size 2") != std::string::npos);
  // An element of a 1-D array: shape (1,) in MXNet's legacy shapes, a scalar in numpy's.
  NDArrayHandle vec = Array({3}, {1, 2, 3}), elem = nullptr;
  REQUIRE(MXNDArrayAt64(vec, 2, &elem) == 0);
  CHECK(Shape(elem) == std::vector<int64_t>{1});
  MXNDArrayFree(elem);
  int prev = 0;
  REQUIRE(MXSetIsNumpyShape(1, &prev) == 0);
  REQUIRE(MXNDArrayAt64(vec, 2, &elem) == 0);
  REQUIRE(MXSetIsNumpyShape(prev, nullptr) == 0);
  CHECK(Shape(elem).empty());
  MXNDArrayFree(elem);
  MXNDArrayFree(vec);
  NDArrayHandle part = nullptr;
  REQUIRE(MXNDArraySlice64(a, 1, 2, &part) == 0);
  CHECK(Shape(part) == std::vector<int64_t>{1, 3, 4});
  CHECK(MXNDArraySlice64(a, 1, 5, &part) == -1);

  size_t size = 0;
  const char* bytes = nullptr;
  REQUIRE(MXNDArraySaveRawBytes(a, &size, &bytes) == 0);
  std::string copy(bytes, size);
  NDArrayHandle back = nullptr;
  REQUIRE(MXNDArrayLoadFromRawBytes(copy.data(), copy.size(), &back) == 0);
  CHECK(Values(back) == Values(a));
  CHECK(MXNDArrayLoadFromRawBytes(copy.data(), 3, &back) == -1);

  int stype = -2;
  REQUIRE(MXNDArrayGetStorageType(a, &stype) == 0);
  CHECK(stype == 0);

  NDArrayHandle shallow = nullptr;
  REQUIRE(MXShallowCopyNDArray(a, &shallow) == 0);
  NDArrayHandle ones = Array({2, 3, 4}, std::vector<float>(24, 7));
  REQUIRE(MXNDArraySyncCopyFromNDArray(shallow, ones, -1) == 0);
  CHECK(Values(a) == std::vector<float>(24, 7));
  CHECK(MXNDArraySyncCopyFromNDArray(r, ones, -1) == -1);  // shapes differ
  Free({a, r, rr, row, part, back, shallow, ones});
}

TEST_CASE("C API operator info names each input and parameter once", "[capi][python]") {
  // MXNet's Python package turns each operator's info into a function signature; a name
  // listed twice makes `import mxnet` fail with a SyntaxError.
  uint32_t n = 0;
  AtomicSymbolCreator* creators = nullptr;
  REQUIRE(MXSymbolListAtomicSymbolCreators(&n, &creators) == 0);
  std::vector<AtomicSymbolCreator> all(creators, creators + n);
  for (AtomicSymbolCreator c : all) {
    const char *name, *desc, *key_var;
    uint32_t nargs = 0;
    const char **arg_names, **arg_types, **arg_docs;
    REQUIRE(MXSymbolGetAtomicSymbolInfo(c, &name, &desc, &nargs, &arg_names, &arg_types, &arg_docs, &key_var) == 0);
    std::set<std::string> seen;
    for (uint32_t i = 0; i < nargs; ++i) {
      INFO(name << ": " << arg_names[i]);
      CHECK(seen.insert(arg_names[i]).second);
    }
  }
}

TEST_CASE("C API atomic symbol from a symbol: the head operator uncomposed, with its parameters",
          "[capi][python][symbol]") {
  SymbolHandle data = Variable("data");
  SymbolHandle fc = Compose("FullyConnected", "fc", {"data"}, {data}, {{"num_hidden", "3"}, {"__mood__", "calm"}});
  SymbolHandle atomic = nullptr;
  REQUIRE(MXGenAtomicSymbolFromSymbol(fc, &atomic) == 0);
  SymbolHandle x = Variable("x");
  REQUIRE(MXSymbolCompose(atomic, "fc2", 1, nullptr, &x) == 0);
  uint32_t n = 0;
  const char** args = nullptr;
  REQUIRE(MXSymbolListArguments(atomic, &n, &args) == 0);
  std::vector<std::string> names(args, args + n);
  CHECK(names == std::vector<std::string>{"x", "fc2_weight", "fc2_bias"});
  const char* value = nullptr;
  int ok = 0;
  REQUIRE(MXSymbolGetAttr(atomic, "num_hidden", &value, &ok) == 0);
  CHECK((ok == 1 && std::string(value) == "3"));
  REQUIRE(MXSymbolGetAttr(atomic, "__mood__", &value, &ok) == 0);
  CHECK((ok == 1 && std::string(value) == "calm"));
  // A variable or a group has no single operator to copy.
  SymbolHandle none = nullptr;
  CHECK(MXGenAtomicSymbolFromSymbol(data, &none) == -1);
  CHECK(LastError().find("is a variable") != std::string::npos);
  SymbolHandle parts[] = {fc, x}, group = nullptr;
  REQUIRE(MXSymbolCreateGroup(2, parts, &group) == 0);
  CHECK(MXGenAtomicSymbolFromSymbol(group, &none) == -1);
  CHECK(LastError().find("not a group") != std::string::npos);
  CHECK(MXGenAtomicSymbolFromSymbol(fc, nullptr) == -1);
  for (SymbolHandle s : {data, fc, atomic, x, group}) REQUIRE(NNSymbolFree(s) == 0);
}

namespace {
// A frontend's autograd.Function: its backward writes 3 * the output gradient (not the true
// derivative of the recorded y = 2x, so the test sees which backward ran).
int custom_deletes = 0;
int CustomBackward(int num_ograds, int num_igrads, void** ptrs, const int* reqs, const int, void*) {
  if (num_ograds != 1 || num_igrads != 1 || reqs[0] != 1) return 0;
  std::vector<float> g = Values(ptrs[0]);
  for (float& v : g) v *= 3;
  bool ok = MXNDArraySyncCopyFromCPU(ptrs[1], g.data(), g.size()) == 0;
  ok &= MXNDArrayFree(ptrs[0]) == 0 && MXNDArrayFree(ptrs[1]) == 0;  // the frontend owns the handles
  return ok ? 1 : 0;
}
int CustomBackwardFails(int, int, void** ptrs, const int*, const int, void*) {
  MXNDArrayFree(ptrs[0]);
  MXNDArrayFree(ptrs[1]);
  return 0;
}
int CustomDelete(void*) {
  ++custom_deletes;
  return 1;
}
}  // namespace

TEST_CASE("C API autograd.Function: the frontend's backward and delete callbacks", "[capi][python][autograd]") {
  for (bool fails : {false, true}) {
    NDArrayHandle x = Array({2}, {1, 2}), gx = Array({2}, {0, 0});
    uint32_t req = 1;
    REQUIRE(MXAutogradMarkVariables(1, &x, &req, &gx) == 0);
    // MXCallbackList holds int (*)(void); casting through void (*)() is the sanctioned route.
    auto as_callback = [](auto* f) { return reinterpret_cast<int (*)(void)>(reinterpret_cast<void (*)()>(f)); };
    int (*fns[2])(void) = {as_callback(fails ? &CustomBackwardFails : &CustomBackward), as_callback(&CustomDelete)};
    void* contexts[2] = {nullptr, nullptr};
    MXCallbackList callbacks{2, fns, contexts};
    custom_deletes = 0;
    NDArrayHandle y = Call("_mul_scalar", {x}, {{"scalar", "2"}})[0];  // computed unrecorded
    CHECK(MXCustomFunctionRecord(1, &x, 1, &y, &callbacks) == -1);      // not recording
    CHECK(LastError().find("autograd.record()") != std::string::npos);
    Recorded([&] { REQUIRE(MXCustomFunctionRecord(1, &x, 1, &y, &callbacks) == 0); });
    NDArrayHandle head = Array({2}, {1, 10});
    if (fails) {
      CHECK(MXAutogradBackwardEx(1, &y, &head, 0, nullptr, 0, 0, 1, nullptr, nullptr) == -1);
      CHECK(LastError().find("custom function") != std::string::npos);
    } else {
      REQUIRE(MXAutogradBackwardEx(1, &y, &head, 0, nullptr, 0, 0, 1, nullptr, nullptr) == 0);
      CHECK(Values(gx) == std::vector<float>{3, 30});
    }
    Free({y, head, x, gx});
    CHECK(custom_deletes == 1);  // once, when the recorded node went with its last array
  }
}

TEST_CASE("C API autograd.get_symbol: the recorded graph as a symbol", "[capi][python][autograd]") {
  NDArrayHandle x = Array({1}, {1}), gx = Array({1}, {0}), z = Array({1}, {1}), gz = Array({1}, {0});
  uint32_t reqs[] = {1, 1};
  NDArrayHandle vars[] = {x, z}, grads[] = {gx, gz};
  REQUIRE(MXAutogradMarkVariables(2, vars, reqs, grads) == 0);
  auto arguments = [](SymbolHandle s) {
    uint32_t n = 0;
    const char** names = nullptr;
    REQUIRE(MXSymbolListArguments(s, &n, &names) == 0);
    return std::vector<std::string>(names, names + n);
  };
  for (bool with_z : {false, true}) {
    NDArrayHandle y = nullptr;
    std::vector<NDArrayHandle> temps;
    Recorded([&] {  // y = x*x + 2*(x or z) - 1
      NDArrayHandle sq = Call("elemwise_mul", {x, x})[0];
      NDArrayHandle twice = Call("_mul_scalar", {with_z ? z : x}, {{"scalar", "2"}})[0];
      NDArrayHandle sum = Call("elemwise_add", {sq, twice})[0];
      y = Call("_minus_scalar", {sum}, {{"scalar", "1"}})[0];
      temps = {sq, twice, sum};
    });
    SymbolHandle s = nullptr;
    REQUIRE(MXAutogradGetSymbol(y, &s) == 0);
    CHECK(arguments(s) == (with_z ? std::vector<std::string>{"var0", "var1"} : std::vector<std::string>{"var0"}));
    const char* json = nullptr;
    REQUIRE(MXSymbolSaveToJSON(s, &json) == 0);
    CHECK(std::string(json).find("\"op\": \"_minus_scalar\"") != std::string::npos);
    REQUIRE(NNSymbolFree(s) == 0);
    temps.push_back(y);
    Free(temps);
  }
  NDArrayHandle plain = Array({1}, {1});
  SymbolHandle none = nullptr;
  CHECK(MXAutogradGetSymbol(plain, &none) == -1);
  CHECK(LastError().find("not in a recorded graph") != std::string::npos);
  Free({plain, x, gx, z, gz});
}

TEST_CASE("C API symbol JSON records numpy shape semantics as MXNet 1.6+ does", "[capi][python][symbol]") {
  SymbolHandle data = Variable("data");
  const char* json = nullptr;
  REQUIRE(MXSymbolSaveToJSON(data, &json) == 0);
  CHECK(std::string(json).find("is_np_shape") == std::string::npos);
  int prev = 0;
  REQUIRE(MXSetIsNumpyShape(1, &prev) == 0);
  REQUIRE(MXSymbolSaveToJSON(data, &json) == 0);
  REQUIRE(MXSetIsNumpyShape(prev, nullptr) == 0);
  CHECK(std::string(json).find("\"is_np_shape\"") != std::string::npos);
  SymbolHandle back = nullptr;
  REQUIRE(MXSymbolCreateFromJSON(json, &back) == 0);  // and it loads
  for (SymbolHandle s : {data, back}) REQUIRE(NNSymbolFree(s) == 0);
}

namespace {

int StorageType(NDArrayHandle h) {
  int stype = -2;
  REQUIRE(MXNDArrayGetStorageType(h, &stype) == 0);
  return stype;
}

NDArrayHandle NewSparse(int stype, std::vector<int64_t> shape) {
  int aux_types[] = {6, 6};  // int64 indices
  NDArrayHandle h = nullptr;
  REQUIRE(MXNDArrayCreateSparseEx64(stype, shape.data(), static_cast<int>(shape.size()), 1, 0, 0, 0,
                                    stype == 2 ? 2 : 1, aux_types, nullptr, nullptr, &h) == 0);
  return h;
}

// A sparse array from its parts as MXNet's Python frontend gives them: values first, then
// each aux array.
NDArrayHandle FromParts(int stype, std::vector<int64_t> shape, NDArrayHandle values, std::vector<NDArrayHandle> aux) {
  NDArrayHandle h = NewSparse(stype, shape);
  REQUIRE(MXNDArraySyncCopyFromNDArray(h, values, -1) == 0);
  for (size_t i = 0; i < aux.size(); ++i) REQUIRE(MXNDArraySyncCopyFromNDArray(h, aux[i], static_cast<int>(i)) == 0);
  return h;
}

std::vector<float> Dense(NDArrayHandle sparse) {
  std::vector<int> stypes;
  NDArrayHandle d = Call("cast_storage", {sparse}, {{"stype", "default"}}, &stypes)[0];
  CHECK(stypes == std::vector<int>{0});
  std::vector<float> v = Values(d);
  MXNDArrayFree(d);
  return v;
}

std::vector<float> Aux(NDArrayHandle sparse, uint32_t i) {
  NDArrayHandle a = nullptr;
  REQUIRE(MXNDArrayGetAuxNDArray(sparse, i, &a) == 0);
  int type = -1;
  REQUIRE(MXNDArrayGetAuxType(sparse, i, &type) == 0);
  CHECK(type == 6);
  // Read through a float copy: the indices are int64.
  std::vector<int> stypes;
  NDArrayHandle f = Call("Cast", {a}, {{"dtype", "float32"}}, &stypes)[0];
  std::vector<float> v = Values(f);
  MXNDArrayFree(f);
  MXNDArrayFree(a);
  return v;
}

std::vector<float> DataOf(NDArrayHandle sparse) {
  NDArrayHandle d = nullptr;
  REQUIRE(MXNDArrayGetDataNDArray(sparse, &d) == 0);
  std::vector<float> v = Values(d);
  MXNDArrayFree(d);
  return v;
}

}  // namespace

TEST_CASE("C API sparse arrays: built from parts, cast, read back as parts, checked", "[capi][python][sparse]") {
  // csr (3, 4): rows [7 . 8 .], [. . . .], [. 9 . .]
  NDArrayHandle values = Array({3}, {7, 8, 9}), indptr = Array({4}, {0, 2, 2, 3}), indices = Array({3}, {0, 2, 1});
  NDArrayHandle csr = FromParts(2, {3, 4}, values, {indptr, indices});
  CHECK(StorageType(csr) == 2);
  CHECK(MXNDArraySyncCheckFormat(csr, true) == 0);
  CHECK(Dense(csr) == std::vector<float>{7, 0, 8, 0, 0, 0, 0, 0, 0, 9, 0, 0});
  CHECK(Aux(csr, 0) == std::vector<float>{0, 2, 2, 3});
  CHECK(Aux(csr, 1) == std::vector<float>{0, 2, 1});
  CHECK(DataOf(csr) == std::vector<float>{7, 8, 9});
  NDArrayHandle unused = nullptr;
  CHECK(MXNDArrayGetAuxNDArray(csr, 2, &unused) == -1);
  CHECK(LastError().find("aux index 2 is out of range: a csr array has 2 aux arrays") != std::string::npos);

  // row_sparse (4, 2): rows 1 and 3 stored.
  NDArrayHandle rows = Array({2, 2}, {1, 2, 3, 4}), row_idx = Array({2}, {1, 3});
  NDArrayHandle rsp = FromParts(1, {4, 2}, rows, {row_idx});
  CHECK(StorageType(rsp) == 1);
  CHECK(Dense(rsp) == std::vector<float>{0, 0, 1, 2, 0, 0, 3, 4});
  CHECK(Aux(rsp, 0) == std::vector<float>{1, 3});
  CHECK(DataOf(rsp) == std::vector<float>{1, 2, 3, 4});

  // Malformed parts are reported by the format check and by any use, as in MXNet.
  NDArrayHandle bad_indptr = Array({4}, {0, 5, 2, 3});
  NDArrayHandle bad = FromParts(2, {3, 4}, values, {bad_indptr, indices});
  CHECK(MXNDArraySyncCheckFormat(bad, true) == -1);
  CHECK(LastError().find("invalid csr format") != std::string::npos);
  int ndim = 0;
  const int64_t* dims = nullptr;
  CHECK(MXNDArrayGetShapeEx64(bad, &ndim, &dims) == -1);
  NDArrayHandle far_row = Array({2}, {1, 4});
  NDArrayHandle bad_rsp = FromParts(1, {4, 2}, rows, {far_row});
  CHECK(MXNDArraySyncCheckFormat(bad_rsp, false) == -1);
  CHECK(LastError().find("index 4 is out of range for 4 rows") != std::string::npos);

  // A dense array cast to each sparse type keeps its values; its parts come from the non-zeros;
  // ops that keep zeros keep the storage type, others give dense arrays.
  NDArrayHandle dense = Array({2, 3}, {0, 1, 0, 0, 0, 0});
  std::vector<int> stypes;
  NDArrayHandle as_csr = Call("cast_storage", {dense}, {{"stype", "csr"}}, &stypes)[0];
  CHECK(stypes == std::vector<int>{2});
  CHECK(Aux(as_csr, 0) == std::vector<float>{0, 1, 1});
  CHECK(Aux(as_csr, 1) == std::vector<float>{1});
  NDArrayHandle as_rsp = Call("cast_storage", {dense}, {{"stype", "row_sparse"}}, &stypes)[0];
  CHECK(stypes == std::vector<int>{1});
  CHECK(Aux(as_rsp, 0) == std::vector<float>{0});
  CHECK(DataOf(as_rsp) == std::vector<float>{0, 1, 0});
  NDArrayHandle doubled = Call("_mul_scalar", {as_csr}, {{"scalar", "2"}}, &stypes)[0];
  CHECK(stypes == std::vector<int>{2});
  CHECK(Dense(doubled) == std::vector<float>{0, 2, 0, 0, 0, 0});
  NDArrayHandle shifted = Call("_plus_scalar", {as_csr}, {{"scalar", "1"}}, &stypes)[0];
  CHECK(stypes == std::vector<int>{0});
  NDArrayHandle vec = Array({3}, {1, 0, 2});
  int n = 0;
  NDArrayHandle* out = nullptr;
  const int* out_stypes = nullptr;
  const char* key[] = {"stype"};
  const char* val[] = {"csr"};
  CHECK(MXImperativeInvokeEx(Creator("cast_storage"), 1, &vec, &n, &out, 1, key, val, &out_stypes) == -1);
  CHECK(LastError().find("a csr array must be 2-dimensional") != std::string::npos);

  // Detached and shallow copies keep the storage type.
  NDArrayHandle detached = nullptr, shallow = nullptr;
  REQUIRE(MXNDArrayDetach(csr, &detached) == 0);
  REQUIRE(MXShallowCopyNDArray(rsp, &shallow) == 0);
  CHECK(StorageType(detached) == 2);
  CHECK(StorageType(shallow) == 1);
  // Dense arrays have no aux arrays; sparse shapes are checked when created.
  CHECK(MXNDArrayGetAuxNDArray(dense, 0, &unused) == -1);
  CHECK(LastError().find("only row_sparse and csr arrays have aux arrays") != std::string::npos);
  const int64_t cube[] = {2, 2, 2};
  CHECK(MXNDArrayCreateSparseEx64(2, cube, 3, 1, 0, 0, 0, 0, nullptr, nullptr, nullptr, &unused) == -1);
  CHECK(LastError().find("a csr array must be 2-dimensional") != std::string::npos);
  Free({values, indptr, indices, csr, rows, row_idx, rsp, bad_indptr, bad, far_row, bad_rsp, dense, as_csr, as_rsp,
        doubled, shifted, vec, detached, shallow});
}

namespace {
void RecordName(const char* name, NDArrayHandle array, void* names) {
  static_cast<std::vector<std::string>*>(names)->push_back(name);
  MXNDArrayFree(array);  // each handle is the callback's, as in MXNet
}
}  // namespace

TEST_CASE("C API executor monitor: node outputs after Forward, backward nodes' outputs after Backward",
          "[capi][python][monitor]") {
  SymbolHandle data = Variable("data");
  SymbolHandle fc = Compose("FullyConnected", "fc", {"data"}, {data}, {{"num_hidden", "2"}});
  std::vector<NDArrayHandle> args = {Array({1, 3}, {1, 2, 3}), Array({2, 3}, std::vector<float>(6, 0.5f)),
                                     Array({2}, {0, 0})};
  std::vector<NDArrayHandle> grads = {nullptr, Array({2, 3}, std::vector<float>(6, 0)), Array({2}, {0, 0})};
  uint32_t reqs[] = {0, 1, 1};  // data takes no gradient
  ExecutorHandle exec = nullptr;
  REQUIRE(MXExecutorBindEX(fc, 1, 0, 0, nullptr, nullptr, nullptr, 3, args.data(), grads.data(), reqs, 0, nullptr,
                           nullptr, &exec) == 0);
  std::vector<std::string> names;
  REQUIRE(MXExecutorSetMonitorCallbackEX(exec, RecordName, &names, false) == 0);
  REQUIRE(MXExecutorForward(exec, 1) == 0);
  CHECK(names == std::vector<std::string>{"fc_output"});
  names.clear();
  REQUIRE(MXExecutorBackward(exec, 0, nullptr) == 0);
  // As MXNet's backward node for fc: one output per input of fc, data's included.
  CHECK(names == std::vector<std::string>{"fc_backward_output0", "fc_backward_output1", "fc_backward_output2"});
  CHECK(Values(grads[1]) == std::vector<float>{1, 2, 3, 1, 2, 3});
  // Head gradients beyond the outputs are ignored, as MXNet does.
  REQUIRE(MXExecutorSetMonitorCallbackEX(exec, nullptr, nullptr, false) == 0);
  std::vector<NDArrayHandle> heads = {Array({1, 2}, {2, 0}), Array({3}, {9, 9, 9})};
  REQUIRE(MXExecutorBackward(exec, 2, heads.data()) == 0);
  CHECK(Values(grads[1]) == std::vector<float>{2, 4, 6, 0, 0, 0});
  REQUIRE(MXExecutorFree(exec) == 0);
  Free({args[0], args[1], args[2], grads[1], grads[2], heads[0], heads[1]});
  REQUIRE(MXSymbolFree(fc) == 0);
  REQUIRE(MXSymbolFree(data) == 0);
}

namespace {
struct Seen {
  std::vector<std::string> names;
  std::vector<float> first;  // each array's first value
};
void RecordNameAndValue(const char* name, NDArrayHandle array, void* user) {
  auto* seen = static_cast<Seen*>(user);
  seen->names.push_back(name);
  seen->first.push_back(Values(array).at(0));
  MXNDArrayFree(array);
}
}  // namespace

TEST_CASE("C API executor monitor_all: each node's inputs, then all its outputs, as MXNet names them",
          "[capi][python][monitor]") {
  SymbolHandle data = Variable("data");
  SymbolHandle fc = Compose("FullyConnected", "fc", {"data"}, {data}, {{"num_hidden", "2"}});
  SymbolHandle act = Compose("Activation", "act", {"data"}, {fc}, {{"act_type", "relu"}});
  SymbolHandle drop = Compose("Dropout", "drop", {"data"}, {act}, {{"p", "0.5"}});
  SymbolHandle add = Compose("elemwise_add", "add", {"lhs", "rhs"}, {drop, fc});
  std::vector<NDArrayHandle> args = {Array({1, 3}, {1, 2, 3}), Array({2, 3}, {0.5f, 0.5f, 0.5f, -1, -1, -1}),
                                     Array({2}, {0.25f, 0})};
  std::vector<NDArrayHandle> grads(3, nullptr);
  uint32_t reqs[] = {0, 0, 0};
  ExecutorHandle exec = nullptr;
  REQUIRE(MXExecutorBindEX(add, 1, 0, 0, nullptr, nullptr, nullptr, 3, args.data(), grads.data(), reqs, 0, nullptr,
                           nullptr, &exec) == 0);
  Seen seen;
  REQUIRE(MXExecutorSetMonitorCallbackEX(exec, RecordNameAndValue, &seen, true) == 0);
  REQUIRE(MXExecutorForward(exec, 0) == 0);
  // A variable input is shown under its own name and again as <node>_<input>; Activation has no
  // input names in MXNet (input0); Dropout's hidden mask is shown too.
  CHECK(seen.names == std::vector<std::string>{"data", "fc_data", "fc_weight", "fc_weight", "fc_bias", "fc_bias",
                                               "fc_output", "act_input0", "act_output", "drop_data", "drop_output",
                                               "drop_mask", "add_lhs", "add_rhs", "add_output"});
  // fc = [3.25, -6]: act and drop see fc's output, add sees drop's and fc's.
  CHECK(seen.first == std::vector<float>{1, 1, 0.5f, 0.5f, 0.25f, 0.25f, 3.25f, 3.25f, 3.25f, 3.25f, 3.25f,
                                         seen.first[11], 3.25f, 3.25f, 6.5f});
  // monitor_all=false: the visible node outputs only, as before.
  seen = Seen();
  REQUIRE(MXExecutorSetMonitorCallbackEX(exec, RecordNameAndValue, &seen, false) == 0);
  REQUIRE(MXExecutorForward(exec, 0) == 0);
  CHECK(seen.names == std::vector<std::string>{"fc_output", "act_output", "drop_output", "add_output"});
  REQUIRE(MXExecutorFree(exec) == 0);
  Free({args[0], args[1], args[2]});
  for (SymbolHandle s : {add, drop, act, fc, data}) REQUIRE(MXSymbolFree(s) == 0);
}
