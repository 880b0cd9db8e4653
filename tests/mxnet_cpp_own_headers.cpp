// Compiled with g++ -std=c++11 -Wall -Werror -lmxnet against the installed tree and run by
// tests/mxnet_client/mxnet_client_test.sh: what MXNet programs rely on beyond the shipped
// examples (Shape, dmlc::Error and MXGetLastError, GetHandle, OpMap, contrib.h, model.h,
// shape.h, op_util.h, MXGetVersion). Prints "MXGetVersion N" when every check holds.
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "mxnet-cpp/MxNetCpp.h"
#include "mxnet-cpp/contrib.h"
#include "mxnet-cpp/model.h"
#include "mxnet-cpp/op_util.h"
#include "mxnet-cpp/shape.h"

using namespace mxnet::cpp;

static int failures = 0;
#define EXPECT(cond)                                                  \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "line %d: FAILED: %s\n", __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

int main() {
  // Shape: 2-5 dims convert implicitly (MXNet's convention), so a braced list reshapes.
  NDArray array(Shape(4, 512), Context::cpu());
  NDArray reshaped = array.Reshape({2, 1024});
  EXPECT(reshaped.GetShape() == (std::vector<mx_uint>{2, 1024}));
  Shape from_vector(std::vector<index_t>{3, 4, 5});
  EXPECT(from_vector.ndim() == 3 && from_vector.Size() == 60);

  // Errors thrown by the headers themselves are dmlc::Error.
  bool caught = false;
  try {
    FeedForward(FeedForwardConfig()).Fit();
  } catch (const dmlc::Error& e) {
    caught = std::string(e.what()).find("FeedForward::Fit") != std::string::npos;
  }
  EXPECT(caught);
  // ... and so are the library's: a bind with a wrong weight shape. MXGetLastError() on this
  // thread holds the message, as MXNet programs print it in their catch blocks.
  caught = false;
  try {
    Symbol bad = FullyConnected("fc", Symbol::Variable("data"), Symbol::Variable("w"), Symbol::Variable("b"), 3);
    std::vector<NDArray> bad_args{NDArray(Shape(2, 4), Context::cpu()), NDArray(Shape(3, 5), Context::cpu()),
                                  NDArray(Shape(3), Context::cpu())};
    Executor exec(bad, Context::cpu(), bad_args, std::vector<NDArray>(3), std::vector<OpReqType>(3, kNullOp),
                  std::vector<NDArray>());
  } catch (const dmlc::Error& e) {
    caught = std::string(e.what()).find("w") != std::string::npos;
    EXPECT(std::string(MXGetLastError()) == e.what());
  }
  EXPECT(caught);
  // Errors from the layer's own checks too (an NDArray of 3 values for a 2x2 shape), and from
  // another thread's calls only there.
  caught = false;
  try {
    NDArray(std::vector<mx_float>{1, 2, 3}, Shape(2, 2), Context::cpu());
  } catch (const dmlc::Error& e) {
    caught = std::string(MXGetLastError()).find("3 values given for shape") != std::string::npos;
  }
  EXPECT(caught);
  const std::string before = MXGetLastError();
  std::thread other([] {
    try {
      NDArray(std::vector<mx_float>{1}, Shape(2, 2), Context::cpu());
    } catch (const dmlc::Error&) {
    }
  });
  other.join();
  EXPECT(before == MXGetLastError());

  // GetHandle: C API handles to the same storage and graph.
  std::vector<mx_float> values{1, 2, 3, 4};
  NDArray small(values, Shape(2, 2), Context::cpu());
  NDArrayHandle h = small.GetHandle();
  EXPECT(h == small.GetHandle());
  int ndim = 0;
  const int* dims = nullptr;
  EXPECT(MXNDArrayGetShapeEx(h, &ndim, &dims) == 0 && ndim == 2 && dims[0] == 2);
  small = 9.0f;  // fills in place: the handle sees it
  mx_float back[4];
  EXPECT(MXNDArraySyncCopyToCPU(h, back, 4) == 0 && back[3] == 9.0f);

  Symbol data = Symbol::Variable("data");
  Symbol fc = FullyConnected("fc", data, Symbol::Variable("w"), Symbol::Variable("b"), 3);
  EXPECT(fc.GetNumOutputs() == 1);
  uint32_t num_args = 0;
  const char** arg_names = nullptr;
  EXPECT(MXSymbolListArguments(fc.GetHandle(), &num_args, &arg_names) == 0 && num_args == 3 &&
         std::string(arg_names[1]) == "w");

  // ... and to the same executor, operator and store.
  std::vector<NDArray> fc_args{NDArray(std::vector<mx_float>{1, 2}, Shape(1, 2), Context::cpu()),
                               NDArray(std::vector<mx_float>{1, 0, 0, 1, 1, 1}, Shape(3, 2), Context::cpu()),
                               NDArray(std::vector<mx_float>{0, 0, 0}, Shape(3), Context::cpu())};
  Executor fc_exec(fc, Context::cpu(), fc_args, std::vector<NDArray>(3), std::vector<OpReqType>(3, kNullOp),
                   std::vector<NDArray>());
  uint32_t num_outputs = 0;
  NDArrayHandle* outputs = nullptr;
  mx_float y[3] = {0, 0, 0};
  EXPECT(MXExecutorForward(fc_exec.GetHandle(), 0) == 0 &&
         MXExecutorOutputs(fc_exec.GetHandle(), &num_outputs, &outputs) == 0 && num_outputs == 1 &&
         MXNDArraySyncCopyToCPU(outputs[0], y, 3) == 0 && y[0] == 1 && y[1] == 2 && y[2] == 3);
  if (num_outputs == 1) MXNDArrayFree(outputs[0]);
  const char *op_name = nullptr, *op_desc = nullptr, *key_var = nullptr;
  const char **op_args = nullptr, **op_types = nullptr, **op_docs = nullptr;
  EXPECT(MXSymbolGetAtomicSymbolInfo(Operator("Flatten").GetHandle(), &op_name, &op_desc, &num_args, &op_args,
                                     &op_types, &op_docs, &key_var) == 0 &&
         std::string(op_name) == "Flatten");
  int rank = -1;
  EXPECT(MXKVStoreGetRank(KVStore::GetHandle(), &rank) == 0 && rank == 0);

  // OpMap: operator handles by name; an unknown name is a dmlc::Error.
  OpMap op_map;
  EXPECT(op_map.GetSymbolCreator("FullyConnected") != nullptr);
  caught = false;
  try {
    op_map.GetOpHandle("NoSuchOp");
  } catch (const dmlc::Error& e) {
    caught = std::string(e.what()).find("NoSuchOp") != std::string::npos;
  }
  EXPECT(caught);

  // contrib::InitTensorRTParams moves the parameters a subgraph node names into its
  // attributes and leaves the others.
  Symbol trt = Symbol::Variable("trt_node");
  trt.SetAttribute("subgraph_params_names", "w;missing");
  std::map<std::string, NDArray> args{{"w", small}, {"other", small}}, aux;
  contrib::InitTensorRTParams(trt, &args, &aux);
  EXPECT(args.size() == 1 && args.count("other") == 1);
  std::map<std::string, std::string> attrs = trt.ListAttributes();
  EXPECT(attrs["subgraph_params_names"] == "w");
  EXPECT(attrs.count("subgraph_param_w") == 1);

  int version = 0;
  EXPECT(MXGetVersion(&version) == 0 && version >= 10000);

  if (failures) return 1;
  std::printf("own mxnet-cpp headers: all checks passed\nMXGetVersion %d\n", version);
  return 0;
}
