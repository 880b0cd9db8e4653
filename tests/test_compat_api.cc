// MXNet cpp-package compatibility: NDArray, Operator, Symbol, generated op functions,
// Executor and a build-save-reload round trip, written against mxnet-cpp/MxNetCpp.h only.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compat_internal.h"
#include "compat_test_util.h"
#include "mxnet-cpp/MxNetCpp.h"

using namespace mxnet::cpp;
using symbind::test::Values;

namespace {
std::string TempPath(const std::string& name) {
  static const std::string tag = std::to_string(std::random_device{}());
  return "/tmp/symbind_compat_" + tag + "_" + name;
}
}  // namespace

TEST_CASE("compat: basic types", "[compat]") {
  Shape s(2, 3, 4);
  CHECK(s.ndim() == 3);
  CHECK(s.Size() == 24);
  CHECK(s[1] == 3);
  std::ostringstream os;
  os << Shape(2, 3) << Shape(5) << Shape(-1, 784);
  CHECK(os.str() == "(2,3)(5,)(-1,784)");
  Context ctx = Context::cpu();
  CHECK(ctx.GetDeviceType() == DeviceType::kCPU);
  CHECK(ctx.GetDeviceId() == 0);
  int gpus = -1;  // the global C function of mxnet/c_api.h, not an mxnet::cpp one
  CHECK(MXGetGPUCount(&gpus) == 0);
  CHECK(gpus == 0);
  // Constructible, as MXNet programs expect; it computes on the CPU.
  CHECK(Context::gpu().GetDeviceType() == kGPU);
  CHECK(mxnet::cpp::compat::Native(Context::gpu(1)) == symbind::Context::CPU(1));
  dmlc::optional<int> none, three(3);
  CHECK(!none);
  CHECK(three.value() == 3);
  MXNotifyShutdown();
}

TEST_CASE("compat: NDArray construction, access and copies", "[compat]") {
  Context ctx = Context::cpu();
  NDArray a(std::vector<mx_float>{1, 2, 3, 4, 5, 6}, Shape(2, 3), ctx);
  CHECK(a.GetShape() == std::vector<mx_uint>{2, 3});
  CHECK(a.Size() == 6);
  CHECK(a.GetDType() == 0);
  CHECK(a.At(1, 2) == 6);
  CHECK(a.GetData()[4] == 5);
  CHECK(Values(a.At(1)) == std::vector<mx_float>{4, 5, 6});

  NDArray z(Shape(2, 3), ctx, false);
  CHECK(Values(z) == std::vector<mx_float>(6, 0.0f));
  z = 7.0f;
  CHECK(Values(z) == std::vector<mx_float>(6, 7.0f));

  NDArray slice = a.Slice(1, 2);  // shares storage
  CHECK(slice.GetShape() == std::vector<mx_uint>{1, 3});
  slice += 10.0f;
  CHECK(a.At(1, 0) == 14);
  NDArray r = a.Reshape(Shape(3, 2));
  CHECK(r.At(2, 1) == 16);

  NDArray c = a.Copy();
  c = 0.0f;
  CHECK(a.At(0, 0) == 1);
  NDArray dst(Shape(2, 3), ctx);
  a.CopyTo(&dst);
  CHECK(Values(dst) == Values(a));
  a.WaitToRead();
  NDArray::WaitAll();

  mx_float raw[3] = {1, 2, 3};
  NDArray from_ptr(raw, 3);
  CHECK(from_ptr.GetShape() == std::vector<mx_uint>{3});
  NDArray from_ptr2(raw, Shape(3, 1), ctx);
  CHECK(from_ptr2.At(2, 0) == 3);
  std::vector<mx_float> back(3);
  from_ptr.SyncCopyToCPU(back.data(), 3);
  CHECK(back == std::vector<mx_float>{1, 2, 3});
  from_ptr.SyncCopyFromCPU(std::vector<mx_float>{4, 5, 6});
  CHECK(Values(from_ptr) == std::vector<mx_float>{4, 5, 6});
  std::ostringstream os;
  os << from_ptr;
  CHECK(os.str().find("4,5,6") != std::string::npos);
}

TEST_CASE("compat: NDArray arithmetic", "[compat]") {
  Context ctx = Context::cpu();
  NDArray a(std::vector<mx_float>{1, 2, 3, 4}, Shape(4), ctx);
  NDArray b(std::vector<mx_float>{2, 2, 2, 2}, Shape(4), ctx);
  CHECK(Values(a + b) == std::vector<mx_float>{3, 4, 5, 6});
  CHECK(Values(a - b) == std::vector<mx_float>{-1, 0, 1, 2});
  CHECK(Values(a * b) == std::vector<mx_float>{2, 4, 6, 8});
  CHECK(Values(a / b) == std::vector<mx_float>{0.5, 1, 1.5, 2});
  CHECK(Values(a % b) == std::vector<mx_float>{1, 0, 1, 0});
  CHECK(Values(a + 1.0f) == std::vector<mx_float>{2, 3, 4, 5});
  CHECK(Values(a * 3.0f) == std::vector<mx_float>{3, 6, 9, 12});
  NDArray c = a.Copy();
  c *= 2.0f;
  c -= b;
  c /= 2.0f;
  CHECK(Values(c) == std::vector<mx_float>{0, 1, 2, 3});
  c += a;
  CHECK(Values(c) == std::vector<mx_float>{1, 3, 5, 7});
  NDArray m(std::vector<mx_float>{0.1f, 0.9f, 0.8f, 0.2f}, Shape(2, 2), ctx);
  CHECK(Values(m.ArgmaxChannel()) == std::vector<mx_float>{1, 0});
  CHECK_THROWS(a + NDArray(Shape(3), ctx));
}

TEST_CASE("compat: NDArray random sampling and save/load", "[compat]") {
  Context ctx = Context::cpu();
  MXRandomSeed(7);
  NDArray u(Shape(1000), ctx);
  NDArray::SampleUniform(-0.5f, 0.5f, &u);
  auto v = Values(u);
  double mean = 0;
  for (float x : v) {
    CHECK(x >= -0.5f);
    CHECK(x <= 0.5f);
    mean += x;
  }
  CHECK(std::abs(mean / v.size()) < 0.05);
  NDArray g(Shape(2000), ctx);
  NDArray::SampleGaussian(3.0f, 2.0f, &g);
  double s = 0, s2 = 0;
  for (float x : Values(g)) {
    s += x;
    s2 += x * x;
  }
  double m = s / 2000, sd = std::sqrt(s2 / 2000 - m * m);
  CHECK(m == Approx(3.0).margin(0.15));
  CHECK(sd == Approx(2.0).margin(0.15));

  std::string path = TempPath("arrays.params");
  std::map<std::string, NDArray> saved{{"arg:w", u}, {"aux:m", g}};
  NDArray::Save(path, saved);
  auto loaded = NDArray::LoadToMap(path);
  REQUIRE(loaded.size() == 2);
  CHECK(Values(loaded["arg:w"]) == Values(u));
  CHECK(Values(loaded["aux:m"]) == Values(g));
  NDArray::Save(path, std::vector<NDArray>{u});
  auto list = NDArray::LoadToList(path);
  REQUIRE(list.size() == 1);
  CHECK(Values(list[0]) == Values(u));
  std::vector<NDArray> list2;
  NDArray::Load(path, &list2);
  CHECK(list2.size() == 1);
  std::remove(path.c_str());
}

TEST_CASE("compat: Operator Invoke runs registered ops on NDArrays", "[compat]") {
  Context ctx = Context::cpu();
  NDArray x(std::vector<mx_float>{1, -2, 3, -4, 5, -6}, Shape(2, 3), ctx);
  NDArray w(std::vector<mx_float>{1, 0, 1, 0, 1, 0}, Shape(2, 3), ctx);
  NDArray b(std::vector<mx_float>{0.5f, -1}, Shape(2), ctx);
  auto out = Operator("FullyConnected")
                 .SetParam("num_hidden", 2)
                 .SetInput("data", x)
                 .SetInput("weight", w)
                 .SetInput("bias", b)
                 .Invoke();
  REQUIRE(out.size() == 1);
  CHECK(out[0].GetShape() == std::vector<mx_uint>{2, 2});
  // row0: (1+3)+0.5, (-2)-1 ; row1: (-4-6)+0.5, 5-1
  CHECK(Values(out[0]) == std::vector<mx_float>{4.5f, -3, -9.5f, 4});

  auto relu = Operator("Activation").SetParam("act_type", "relu")(x).Invoke();
  CHECK(Values(relu[0]) == std::vector<mx_float>{1, 0, 3, 0, 5, 0});
  // The cached executor gives the same answer for new values of the same shape.
  NDArray x2 = x * -1.0f;
  auto relu2 = Operator("Activation").SetParam("act_type", "relu")(x2).Invoke();
  CHECK(Values(relu2[0]) == std::vector<mx_float>{0, 2, 0, 4, 0, 6});

  // In place: output is also the input.
  NDArray y = x.Copy();
  Operator("_mul_scalar").SetParam("scalar", 2.0f)(y).Invoke(y);
  CHECK(Values(y) == std::vector<mx_float>{2, -4, 6, -8, 10, -12});
  NDArray sum;
  Operator("elemwise_add")(x, y).Invoke(sum);
  CHECK(Values(sum) == std::vector<mx_float>{3, -6, 9, -12, 15, -18});

  CHECK_THROWS_WITH(Operator("FullyConnected").SetParam("num_hidden", 2).SetInput("data", x).Invoke(),
                    Catch::Contains("weight"));
  CHECK_THROWS_WITH(Operator("NoSuchOp"), Catch::Contains("NoSuchOp"));
}

TEST_CASE("compat: generated op functions have MXNet's signatures", "[compat]") {
  Symbol data = Symbol::Variable("data");
  Symbol w("fc1_w"), b("fc1_b");
  Symbol fc1 = FullyConnected("fc1", data, w, b, 10);
  CHECK(fc1.GetName() == "fc1");
  CHECK(fc1.ListArguments() == std::vector<std::string>{"data", "fc1_w", "fc1_b"});
  Symbol act = Activation(fc1, ActivationActType::kRelu);
  CHECK(act.ListArguments() == fc1.ListArguments());
  Symbol act2 = Activation("act2", act, ActivationActType::kTanh);
  CHECK(act2.ListAttributes().at("act_type") == "tanh");
  Symbol act3 = Activation("act3", act2, "sigmoid");  // op_suppl.h string form
  CHECK(act3.ListAttributes().at("act_type") == "sigmoid");
  Symbol nb = FullyConnected("nb", act3, Symbol("nb_w"), Symbol(), 4, true);
  CHECK(nb.ListArguments().back() == "nb_w");
  Symbol lrelu = LeakyReLU("lrelu", nb, Symbol("gamma"), LeakyReLUActType::kPrelu);
  CHECK(lrelu.ListAttributes().at("act_type") == "prelu");
  Symbol sm = SoftmaxOutput("softmax", lrelu, Symbol("label"), 1, -1, false, false, false,
                            SoftmaxOutputNormalization::kBatch);
  CHECK(sm.ListAttributes().at("normalization") == "batch");
  CHECK(sm.ListArguments().back() == "label");

  Symbol img = Symbol::Variable("img");
  Symbol conv = Convolution("conv1", img, Symbol("conv1_w"), Symbol("conv1_b"), Shape(5, 5), 8);
  Symbol pool = Pooling("pool1", conv, Shape(2, 2), PoolingPoolType::kMax, false, false,
                        PoolingPoolingConvention::kFull, Shape(2, 2));
  std::vector<std::vector<mx_uint>> in, aux, out;
  pool.InferShape({{"img", {4, 1, 28, 28}}}, &in, &aux, &out);
  REQUIRE(out.size() == 1);
  CHECK(out[0] == std::vector<mx_uint>{4, 8, 12, 12});
  CHECK(in[1] == std::vector<mx_uint>{8, 1, 5, 5});
  Symbol bn = BatchNorm("bn1", conv, Symbol("g"), Symbol("be"), Symbol("mm"), Symbol("mv"));
  CHECK(bn.ListAuxiliaryStates() == std::vector<std::string>{"mm", "mv"});
  Symbol flat = Flatten("flat", pool);
  CHECK(flat.GetName() == "flat");
}

TEST_CASE("compat: Symbol API", "[compat]") {
  Symbol data = Symbol::Variable("data");
  Symbol fc1 = Operator("FullyConnected").SetParam("num_hidden", 3).SetInput("data", data).CreateSymbol("fc1");
  Symbol relu = Operator("Activation").SetParam("act_type", "relu")(fc1).CreateSymbol("relu1");
  Symbol fc2 = FullyConnected("fc2", relu, Symbol("fc2_weight"), Symbol("fc2_bias"), 2);
  Symbol net = SoftmaxOutput("softmax", fc2, Symbol("softmax_label"));
  CHECK(net.ListArguments() == std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "fc2_weight",
                                                        "fc2_bias", "softmax_label"});
  CHECK(net.ListOutputs() == std::vector<std::string>{"softmax_output"});
  CHECK(net.ListAuxiliaryStates().empty());
  Symbol internals = net.GetInternals();
  auto outs = internals.ListOutputs();
  CHECK(std::find(outs.begin(), outs.end(), "relu1_output") != outs.end());
  Symbol r = internals["relu1_output"];
  CHECK(r.GetName() == "relu1");
  CHECK(r.GetChildren().ListOutputs() == std::vector<std::string>{"fc1_output"});
  Symbol group = Symbol::Group({fc1, fc2});
  CHECK(group.ListOutputs() == std::vector<std::string>{"fc1_output", "fc2_output"});
  CHECK(group[1].GetName() == "fc2");

  std::string json = net.ToJSON();
  Symbol back = Symbol::LoadJSON(json);
  CHECK(back.ListArguments() == net.ListArguments());
  CHECK(back.ToJSON() == json);

  std::vector<std::vector<mx_uint>> in, aux, out;
  net.InferShape({{"data", {5, 7}}}, &in, &aux, &out);
  CHECK(in[1] == std::vector<mx_uint>{3, 7});
  CHECK(in[5] == std::vector<mx_uint>{5});
  CHECK(out[0] == std::vector<mx_uint>{5, 2});
  std::map<std::string, NDArray> args{{"data", NDArray(Shape(5, 7), Context::cpu())}};
  net.InferArgsMap(Context::cpu(), &args, args);
  CHECK(args.size() == 6);
  CHECK(args["fc2_weight"].GetShape() == std::vector<mx_uint>{2, 3});
}

TEST_CASE("compat: symbol arithmetic evaluates through the executor", "[compat]") {
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  Symbol e = (a + b) * 2.0f - a / b + 1.0f;
  Symbol f = 10.0f - a;
  Symbol g = 8.0f / b;
  Symbol all = Symbol::Group({e, f, g, _Plus(a, b), _MulScalar(a, 3)});
  Context ctx = Context::cpu();
  std::map<std::string, NDArray> args{{"a", NDArray(std::vector<mx_float>{2, 6}, Shape(2), ctx)},
                                      {"b", NDArray(std::vector<mx_float>{4, 3}, Shape(2), ctx)}};
  Executor* exec = all.SimpleBind(ctx, args);
  exec->Forward(false);
  REQUIRE(exec->outputs.size() == 5);
  CHECK(Values(exec->outputs[0]) == std::vector<mx_float>{12.5f, 17});
  CHECK(Values(exec->outputs[1]) == std::vector<mx_float>{8, 4});
  CHECK(Values(exec->outputs[2]) == std::vector<mx_float>{2, 8.0f / 3});
  CHECK(Values(exec->outputs[3]) == std::vector<mx_float>{6, 9});
  CHECK(Values(exec->outputs[4]) == std::vector<mx_float>{6, 18});
  delete exec;
}

TEST_CASE("compat: SimpleBind, Forward, Backward and dictionaries", "[compat]") {
  Context ctx = Context::cpu();
  Symbol data = Symbol::Variable("data");
  Symbol label = Symbol::Variable("label");
  Symbol fc = FullyConnected("fc", data, Symbol("fc_weight"), Symbol("fc_bias"), 2);
  Symbol net = LinearRegressionOutput("out", fc, label);
  std::map<std::string, NDArray> args;
  args["data"] = NDArray(std::vector<mx_float>{1, 2, 3, 4}, Shape(2, 2), ctx);
  args["label"] = NDArray(std::vector<mx_float>{0, 0, 0, 0}, Shape(2, 2), ctx);
  net.InferArgsMap(ctx, &args, args);
  args["fc_weight"] = 0.5f;
  args["fc_bias"] = 0.0f;
  Executor* exec = net.SimpleBind(ctx, args);
  exec->Forward(true);
  CHECK(Values(exec->outputs[0]) == std::vector<mx_float>{1.5f, 1.5f, 3.5f, 3.5f});
  exec->Backward();
  auto grads = exec->grad_dict();
  // MXNet's LinearRegressionOutput: d out = (out - label) / (outputs per sample = 2).
  CHECK(Values(grads["fc_bias"]) == std::vector<mx_float>{2.5f, 2.5f});
  CHECK(Values(grads["fc_weight"]) == std::vector<mx_float>{6, 8.5f, 6, 8.5f});
  // The args map shares storage with the executor.
  NDArray(std::vector<mx_float>{0, 0, 0, 0}, Shape(2, 2), ctx).CopyTo(&args["data"]);
  exec->Forward(false);
  CHECK(Values(exec->outputs[0]) == std::vector<mx_float>{0, 0, 0, 0});
  CHECK(exec->arg_dict().size() == 4);
  CHECK(exec->aux_dict().empty());
  CHECK(exec->arg_arrays.size() == 4);
  CHECK(exec->grad_arrays.size() == 4);
  CHECK(exec->DebugStr().find("FullyConnected") != std::string::npos);

  std::vector<std::string> seen;
  exec->SetMonitorCallback([&](const std::string& name, const NDArray&) { seen.push_back(name); });
  exec->Forward(false);
  CHECK(std::find(seen.begin(), seen.end(), "fc_output") != seen.end());

  Executor* bigger = exec->Reshape({{"data", {3, 2}}, {"label", {3, 2}}});
  bigger->Forward(false);
  CHECK(bigger->outputs[0].GetShape() == std::vector<mx_uint>{3, 2});
  delete bigger;
  delete exec;
}

TEST_CASE("compat: build, save, reload and bind give identical outputs", "[compat]") {
  Context ctx = Context::cpu();
  Symbol data = Symbol::Variable("data");
  Symbol conv = Convolution("conv1", data, Symbol("conv1_weight"), Symbol("conv1_bias"), Shape(3, 3), 4);
  Symbol bn = BatchNorm("bn1", conv, Symbol("bn1_gamma"), Symbol("bn1_beta"), Symbol("bn1_moving_mean"),
                        Symbol("bn1_moving_var"));
  Symbol act = Activation("relu1", bn, ActivationActType::kRelu);
  Symbol pool = Pooling("pool1", act, Shape(2, 2), PoolingPoolType::kMax, false, false,
                        PoolingPoolingConvention::kValid, Shape(2, 2));
  Symbol fc = FullyConnected("fc1", Flatten("flat", pool), Symbol("fc1_weight"), Symbol("fc1_bias"), 5);
  Symbol net = SoftmaxOutput("softmax", fc, Symbol("softmax_label"));

  std::map<std::string, NDArray> args;
  args["data"] = NDArray(Shape(2, 1, 8, 8), ctx);
  NDArray::SampleUniform(0, 1, &args["data"]);
  args["softmax_label"] = NDArray(std::vector<mx_float>{1, 3}, Shape(2), ctx);
  net.InferArgsMap(ctx, &args, args);
  Xavier init(Xavier::gaussian, Xavier::in, 2.0f);
  for (auto& kv : args)
    if (kv.first != "data" && kv.first != "softmax_label") init(kv.first, &kv.second);
  Executor* exec = net.SimpleBind(ctx, args);
  for (auto& kv : exec->aux_dict()) init(kv.first, &kv.second);
  exec->Forward(false);
  std::vector<mx_float> expected = Values(exec->outputs[0]);

  std::string sym_path = TempPath("net-symbol.json"), params_path = TempPath("net-0001.params");
  net.Save(sym_path);
  std::map<std::string, NDArray> params;
  for (auto& kv : exec->arg_dict())
    if (kv.first != "data" && kv.first != "softmax_label") params["arg:" + kv.first] = kv.second;
  for (auto& kv : exec->aux_dict()) params["aux:" + kv.first] = kv.second;
  NDArray::Save(params_path, params);

  Symbol net2 = Symbol::Load(sym_path);
  CHECK(net2.ListArguments() == net.ListArguments());
  std::map<std::string, NDArray> args2, aux2;
  for (auto& kv : NDArray::LoadToMap(params_path)) {
    if (kv.first.rfind("arg:", 0) == 0) args2[kv.first.substr(4)] = kv.second;
    else aux2[kv.first.substr(4)] = kv.second;
  }
  args2["data"] = args["data"].Copy();
  args2["softmax_label"] = args["softmax_label"].Copy();
  Executor* exec2 = net2.SimpleBind(ctx, args2, std::map<std::string, NDArray>(),
                                    std::map<std::string, OpReqType>(), aux2);
  exec2->Forward(false);
  CHECK(Values(exec2->outputs[0]) == expected);
  delete exec;
  delete exec2;
  std::remove(sym_path.c_str());
  std::remove(params_path.c_str());
}

TEST_CASE("compat: NDArray::Reshape takes MXNet's 0 (keep) and -1 (infer)", "[compat]") {
  NDArray a(std::vector<mx_float>(24, 1.f), Shape(2, 3, 4), Context::cpu());
  CHECK(a.Reshape(Shape(0, -1)).GetShape() == std::vector<mx_uint>{2, 12});
  CHECK(a.Reshape(Shape(-1, 4)).GetShape() == std::vector<mx_uint>{6, 4});
  CHECK_THROWS_WITH(a.Reshape(Shape(-1, -1)), Catch::Contains("one and only one dim can be inferred"));
  CHECK_THROWS_WITH(a.Reshape(Shape(5, 5)), Catch::Contains("(5,5) has 25 elements but the input (2,3,4) has 24"));
}

TEST_CASE("compat: Symbol::GetNumOutputs counts a group's outputs", "[compat]") {
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  CHECK(a.GetNumOutputs() == 1);
  CHECK(Symbol::Group({a, b}).GetNumOutputs() == 2);
}

TEST_CASE("compat: catch dmlc::Error catches errors from symbind's own mxnet-cpp layer", "[compat]") {
  Context ctx = Context::cpu();
  Symbol net = FullyConnected("fc", Symbol::Variable("data"), Symbol::Variable("fc_weight"),
                              Symbol::Variable("fc_bias"), 3);
  // fc_weight must be (3, 4) for data (2, 4): binding a (3, 5) weight fails in the library.
  std::vector<NDArray> args{NDArray(Shape(2, 4), ctx), NDArray(Shape(3, 5), ctx), NDArray(Shape(3), ctx)};
  std::vector<NDArray> grads(3);
  std::vector<OpReqType> reqs(3, kNullOp);
  std::string message;
  try {
    Executor exec(net, ctx, args, grads, reqs, {});
  } catch (const dmlc::Error& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Contains("fc_weight"));
  // The same type both ways: what dmlc's CHECK throws is a symbind::Error.
  CHECK_THROWS_AS(throw dmlc::Error("x"), symbind::Error);
  CHECK_THROWS_AS(NDArray(Shape(2, 3), ctx).Reshape(Shape(5, 5)), dmlc::Error);
}

TEST_CASE("compat: GetHandle on Executor, Operator and KVStore gives working C API handles", "[compat][capi]") {
  Context ctx = Context::cpu();
  // y = W x + b, worked by hand: W = [[1, 2], [3, 4]], x = [1, 2], b = [0.5, -1] -> [5.5, 10].
  Symbol net = FullyConnected("fc", Symbol::Variable("data"), Symbol::Variable("fc_weight"),
                              Symbol::Variable("fc_bias"), 2);
  std::vector<NDArray> args{NDArray(std::vector<mx_float>{1, 2}, Shape(1, 2), ctx),
                            NDArray(std::vector<mx_float>{1, 2, 3, 4}, Shape(2, 2), ctx),
                            NDArray(std::vector<mx_float>{0.5f, -1}, Shape(2), ctx)};
  Executor exec(net, ctx, args, std::vector<NDArray>(3), std::vector<OpReqType>(3, kNullOp), {});
  ExecutorHandle eh = exec.GetHandle();
  CHECK(eh == exec.GetHandle());
  REQUIRE(MXExecutorForward(eh, 0) == 0);
  uint32_t num_out = 0;
  NDArrayHandle* outs = nullptr;
  REQUIRE(MXExecutorOutputs(eh, &num_out, &outs) == 0);
  REQUIRE(num_out == 1);
  mx_float y[2] = {0, 0};
  REQUIRE(MXNDArraySyncCopyToCPU(outs[0], y, 2) == 0);
  CHECK(y[0] == 5.5f);
  CHECK(y[1] == 10.0f);
  CHECK(MXNDArrayFree(outs[0]) == 0);
  // The handle runs this executor: its outputs see the forward the C API ran.
  CHECK(Values(exec.outputs[0]) == std::vector<mx_float>{5.5f, 10});

  OpHandle fc = nullptr;
  REQUIRE(NNGetOpHandle("FullyConnected", &fc) == 0);
  CHECK(Operator("FullyConnected").GetHandle() == fc);
  const char *name, *desc, *key_var;
  uint32_t n = 0;
  const char **names, **types, **docs;
  REQUIRE(MXSymbolGetAtomicSymbolInfo(Operator("Flatten").GetHandle(), &name, &desc, &n, &names, &types,
                                      &docs, &key_var) == 0);
  CHECK(std::string(name) == "Flatten");

  KVStore::SetType("local");
  KVStore::SetOptimizer(nullptr);  // pushes replace the stored value
  KVStore::Init(7, NDArray(std::vector<mx_float>{1, 2}, Shape(2), ctx));
  KVStoreHandle kh = KVStore::GetHandle();
  CHECK(kh == KVStore::GetHandle());
  int rank = -1, workers = -1;
  REQUIRE(MXKVStoreGetRank(kh, &rank) == 0);
  REQUIRE(MXKVStoreGetGroupSize(kh, &workers) == 0);
  CHECK(rank == 0);
  CHECK(workers == 1);
  // The C API and the static methods act on one store.
  NDArray pulled(Shape(2), ctx);
  NDArrayHandle ph = pulled.GetHandle();
  const int key = 7;
  REQUIRE(MXKVStorePull(kh, 1, &key, &ph, 0) == 0);
  CHECK(Values(pulled) == std::vector<mx_float>{1, 2});
  NDArray pushed(std::vector<mx_float>{8, 9}, Shape(2), ctx);
  NDArrayHandle pushed_h = pushed.GetHandle();
  REQUIRE(MXKVStorePush(kh, 1, &key, &pushed_h, 0) == 0);
  KVStore::Pull(7, &pulled);
  CHECK(Values(pulled) == std::vector<mx_float>{8, 9});
}
