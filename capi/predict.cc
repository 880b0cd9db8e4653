// MXNet's C predict API (mxnet/c_predict_api.h) over symbind's executor.
#include <mxnet/c_predict_api.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/core/symbol.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/internal_outputs.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

// Parameters loaded once and shared, read-only, by every predictor made from them (and by
// the predictors MXPredReshape derives).
struct SharedParams {
  std::map<std::string, NDArray> args, aux;
};

struct Predictor {
  static constexpr HandleKind kKind = HandleKind::kPredictor;
  Symbol symbol;  // with the requested outputs
  std::shared_ptr<const SharedParams> params;
  std::map<std::string, DType> input_types;  // every input key
  std::map<std::string, NDArray> inputs;     // input key -> bound array
  std::unique_ptr<Executor> exec;
  std::vector<uint32_t> shape_buffer;  // what MXPredGetOutputShape points to
  PredMonitorCallback monitor = nullptr;
  void* monitor_handle = nullptr;
  bool monitor_all = false;
};

struct NDList {
  static constexpr HandleKind kKind = HandleKind::kNDList;
  std::vector<std::string> keys;
  std::vector<std::vector<float>> data;
  std::vector<std::vector<uint32_t>> shapes;
};

// Binds `p->symbol` for inference: inputs of the given shapes (allocated per predictor),
// parameters shared, no gradients (so the executor plans memory). Arguments that are neither
// inputs nor parameters (e.g. labels) get zero arrays of their inferred shape.
// The one place a predictor is bound.
void BindForInference(Predictor* p, const std::map<std::string, TShape>& input_shapes) {
  std::vector<std::string> arg_names = p->symbol.ListArguments();
  std::vector<std::string> aux_names = p->symbol.ListAuxiliaryStates();
  std::set<std::string> arg_set(arg_names.begin(), arg_names.end());
  for (auto& kv : input_shapes) {
    if (!arg_set.count(kv.first))
      throw Error(StrCat("input '", kv.first, "' is not an argument of the symbol (arguments: ",
                         JoinNames(arg_names), ")"));
    if (!kv.second.is_known())
      throw Error(StrCat("input '", kv.first, "' has an incomplete shape ", kv.second.ToString()));
  }
  std::map<std::string, TShape> known = input_shapes;
  std::map<std::string, DType> known_types = p->input_types;
  for (auto& kv : p->params->args)
    if (arg_set.count(kv.first) && !input_shapes.count(kv.first)) {
      known[kv.first] = kv.second.shape();
      known_types[kv.first] = kv.second.dtype();
    }
  for (auto& kv : p->params->aux) {
    known[kv.first] = kv.second.shape();
    known_types[kv.first] = kv.second.dtype();
  }
  ShapeInferResult shapes = InferShape(p->symbol, known);
  TypeInferResult types = InferType(p->symbol, known_types);

  std::vector<NDArray> args, grads, aux;
  std::vector<OpReq> reqs(arg_names.size(), OpReq::kNull);
  std::map<std::string, NDArray> inputs;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    const std::string& name = arg_names[i];
    auto param = p->params->args.find(name);
    if (!input_shapes.count(name) && param != p->params->args.end()) {
      args.push_back(param->second);
    } else {
      args.emplace_back(shapes.arg_shapes[i], types.arg_types[i]);
      if (input_shapes.count(name)) inputs[name] = args.back();
    }
    grads.emplace_back();
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    auto param = p->params->aux.find(aux_names[i]);
    if (param != p->params->aux.end()) aux.push_back(param->second);
    else aux.emplace_back(shapes.aux_shapes[i], types.aux_types[i]);
  }
  p->exec = Bind(p->symbol, Context::CPU(), args, grads, reqs, aux);
  p->inputs = std::move(inputs);
}

std::map<std::string, TShape> InputShapes(uint32_t num_input_nodes, const char** input_keys,
                                          const uint32_t* indptr, const uint32_t* shape_data) {
  std::vector<std::string> keys = CStrings(num_input_nodes, input_keys, "input_keys");
  std::map<std::string, TShape> shapes;
  if (num_input_nodes == 0) return shapes;
  NotNull(indptr, "input_shape_indptr");
  if (indptr[0] != 0)
    throw Error(StrCat("input_shape_indptr[0] must be 0, got ", indptr[0]));
  if (indptr[num_input_nodes] > 0) NotNull(shape_data, "input_shape_data");
  for (uint32_t i = 0; i < num_input_nodes; ++i) {
    if (indptr[i + 1] < indptr[i])
      throw Error(StrCat("input_shape_indptr decreases at ", i + 1, ": ", indptr[i], " then ",
                         indptr[i + 1]));
    std::vector<int64_t> dims(shape_data + indptr[i], shape_data + indptr[i + 1]);
    if (!shapes.emplace(keys[i], TShape(dims)).second)
      throw Error(StrCat("input '", keys[i], "' is given twice"));
  }
  return shapes;
}

std::shared_ptr<const SharedParams> LoadParams(const void* bytes, int size) {
  auto params = std::make_shared<SharedParams>();
  if (size < 0) throw Error(StrCat("param_size is negative (", size, ")"));
  if (size == 0) return params;
  NotNull(bytes, "param_bytes");
  NDArrayFile file = LoadNDArrayBuffer(bytes, static_cast<size_t>(size));
  // MXNet's predictor reads "arg:" and "aux:" keys and ignores others.
  for (size_t i = 0; i < file.names.size(); ++i) {
    const std::string& key = file.names[i];
    if (key.compare(0, 4, "arg:") == 0) params->args[key.substr(4)] = file.arrays[i];
    else if (key.compare(0, 4, "aux:") == 0) params->aux[key.substr(4)] = file.arrays[i];
  }
  return params;
}

// The symbol restricted to `output_keys` (internal outputs named "<node>" or "<node>_output").
Symbol SelectOutputs(const Symbol& symbol, const std::vector<std::string>& output_keys) {
  if (output_keys.empty()) return symbol;
  Symbol internals = symbol.GetInternals();
  std::vector<std::string> names = internals.ListOutputs();
  std::vector<Symbol> picked;
  for (auto& key : output_keys) {
    size_t found = names.size();
    for (size_t j = 0; j < names.size() && found == names.size(); ++j)
      if (names[j] == key || names[j] == key + "_output") found = j;
    if (found == names.size())
      throw Error(StrCat("output '", key, "' is not a node output of the symbol (outputs: ",
                         JoinNames(names), ")"));
    picked.push_back(internals[found]);
  }
  return picked.size() == 1 ? picked[0] : Symbol::Group(picked);
}

struct CreateRequest {
  const char* json;
  const void* param_bytes;
  int param_size;
  int dev_type, dev_id;
  uint32_t num_inputs;
  const char** input_keys;
  const uint32_t* indptr;
  const uint32_t* shape_data;
  std::map<std::string, DType> dtypes;
  std::vector<std::string> output_keys;
};

// Creates `count` predictors over one copy of the parameters into out[0..count).
void CreatePredictors(const CreateRequest& r, int count, PredictorHandle* out) {
  NotNull(out, "out");
  DeviceContext(r.dev_type, r.dev_id);
  Symbol symbol = SelectOutputs(LoadSymbolJSON(FirstJSONValue(r.json)), r.output_keys);
  std::map<std::string, TShape> shapes =
      InputShapes(r.num_inputs, r.input_keys, r.indptr, r.shape_data);
  auto params = LoadParams(r.param_bytes, r.param_size);
  std::map<std::string, DType> input_types;
  for (auto& kv : shapes) {
    auto t = r.dtypes.find(kv.first);
    input_types[kv.first] = t == r.dtypes.end() ? DType::kFloat32 : t->second;
  }
  std::vector<std::unique_ptr<Predictor>> made;
  for (int i = 0; i < count; ++i) {
    auto p = std::make_unique<Predictor>();
    p->symbol = symbol;
    p->params = params;
    p->input_types = input_types;
    BindForInference(p.get(), shapes);
    made.push_back(std::move(p));
  }
  for (int i = 0; i < count; ++i) {
    out[i] = made[i].release();
    RegisterHandle(out[i], HandleKind::kPredictor);
  }
}

const NDArray& OutputAt(Predictor* p, uint32_t index) {
  const auto& outs = p->exec->outputs();
  if (index >= outs.size())
    throw Error(StrCat("output index ", index, " out of range: the predictor has ", outs.size(),
                       " output(s)"));
  return outs[index];
}

void RunForward(Predictor* p) {
  p->exec->Forward(false);
  if (!p->monitor) return;
  ReportInternalOutputs(*p->exec, p->monitor_all, p->monitor, p->monitor_handle);
}

}  // namespace
}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

const char* MXGetLastError() { return capi::LastError(); }

int MXPredCreate(const char* symbol_json_str, const void* param_bytes, int param_size,
                 int dev_type, int dev_id, uint32_t num_input_nodes, const char** input_keys,
                 const uint32_t* input_shape_indptr, const uint32_t* input_shape_data,
                 PredictorHandle* out) {
  return Guarded(__func__, [&] {
    CreatePredictors({symbol_json_str, param_bytes, param_size, dev_type, dev_id, num_input_nodes,
                      input_keys, input_shape_indptr, input_shape_data, {}, {}},
                     1, out);
  });
}

int MXPredCreateEx(const char* symbol_json_str, const void* param_bytes, int param_size,
                   int dev_type, int dev_id, const uint32_t num_input_nodes,
                   const char** input_keys, const uint32_t* input_shape_indptr,
                   const uint32_t* input_shape_data, const uint32_t num_provided_arg_dtypes,
                   const char** provided_arg_dtype_names, const int* provided_arg_dtypes,
                   PredictorHandle* out) {
  return Guarded(__func__, [&] {
    std::vector<std::string> names =
        CStrings(num_provided_arg_dtypes, provided_arg_dtype_names, "provided_arg_dtype_names");
    if (num_provided_arg_dtypes > 0) NotNull(provided_arg_dtypes, "provided_arg_dtypes");
    std::map<std::string, DType> dtypes;
    for (uint32_t i = 0; i < num_provided_arg_dtypes; ++i) {
      DType t = static_cast<DType>(provided_arg_dtypes[i]);
      DTypeSize(t);  // throws on an unknown type flag
      dtypes[names[i]] = t;
    }
    CreatePredictors({symbol_json_str, param_bytes, param_size, dev_type, dev_id, num_input_nodes,
                      input_keys, input_shape_indptr, input_shape_data, dtypes, {}},
                     1, out);
  });
}

int MXPredCreatePartialOut(const char* symbol_json_str, const void* param_bytes, int param_size,
                           int dev_type, int dev_id, uint32_t num_input_nodes,
                           const char** input_keys, const uint32_t* input_shape_indptr,
                           const uint32_t* input_shape_data, uint32_t num_output_nodes,
                           const char** output_keys, PredictorHandle* out) {
  return Guarded(__func__, [&] {
    CreatePredictors({symbol_json_str, param_bytes, param_size, dev_type, dev_id, num_input_nodes,
                      input_keys, input_shape_indptr, input_shape_data, {},
                      CStrings(num_output_nodes, output_keys, "output_keys")},
                     1, out);
  });
}

int MXPredCreateMultiThread(const char* symbol_json_str, const void* param_bytes, int param_size,
                            int dev_type, int dev_id, uint32_t num_input_nodes,
                            const char** input_keys, const uint32_t* input_shape_indptr,
                            const uint32_t* input_shape_data, int num_threads,
                            PredictorHandle* out) {
  return Guarded(__func__, [&] {
    if (num_threads < 1) throw Error(StrCat("num_threads must be at least 1, got ", num_threads));
    CreatePredictors({symbol_json_str, param_bytes, param_size, dev_type, dev_id, num_input_nodes,
                      input_keys, input_shape_indptr, input_shape_data, {}, {}},
                     num_threads, out);
  });
}

int MXPredReshape(uint32_t num_input_nodes, const char** input_keys,
                  const uint32_t* input_shape_indptr, const uint32_t* input_shape_data,
                  PredictorHandle handle, PredictorHandle* out) {
  return Guarded(__func__, [&] {
    Predictor* old = FromHandle<Predictor>(handle);
    NotNull(out, "out");
    std::map<std::string, TShape> shapes =
        InputShapes(num_input_nodes, input_keys, input_shape_indptr, input_shape_data);
    // Inputs not mentioned keep their current shape.
    for (auto& kv : old->inputs) shapes.emplace(kv.first, kv.second.shape());
    for (auto& kv : shapes)
      if (!old->input_types.count(kv.first))
        throw Error(StrCat("'", kv.first, "' is not an input of the predictor"));
    auto p = std::make_unique<Predictor>();
    p->symbol = old->symbol;
    p->params = old->params;
    p->input_types = old->input_types;
    p->monitor = old->monitor;
    p->monitor_handle = old->monitor_handle;
    p->monitor_all = old->monitor_all;
    BindForInference(p.get(), shapes);
    *out = p.release();
    RegisterHandle(*out, HandleKind::kPredictor);
  });
}

int MXPredGetOutputShape(PredictorHandle handle, uint32_t index, uint32_t** shape_data,
                         uint32_t* shape_ndim) {
  return Guarded(__func__, [&] {
    Predictor* p = FromHandle<Predictor>(handle);
    NotNull(shape_data, "shape_data");
    NotNull(shape_ndim, "shape_ndim");
    p->shape_buffer = ShapeToUint32(OutputAt(p, index).shape());
    *shape_data = p->shape_buffer.data();
    *shape_ndim = static_cast<uint32_t>(p->shape_buffer.size());
  });
}

int MXPredGetOutputType(PredictorHandle handle, uint32_t out_index, int* out_dtype) {
  return Guarded(__func__, [&] {
    Predictor* p = FromHandle<Predictor>(handle);
    NotNull(out_dtype, "out_dtype");
    *out_dtype = static_cast<int>(OutputAt(p, out_index).dtype());
  });
}

int MXPredSetInput(PredictorHandle handle, const char* key, const float* data, uint32_t size) {
  return Guarded(__func__, [&] {
    Predictor* p = FromHandle<Predictor>(handle);
    std::string name = CString(key, "key");
    auto it = p->inputs.find(name);
    if (it == p->inputs.end()) {
      std::vector<std::string> names;
      for (auto& kv : p->inputs) names.push_back(kv.first);
      throw Error(StrCat("'", name, "' is not an input of the predictor (inputs: ",
                         JoinNames(names), ")"));
    }
    NDArray& dst = it->second;
    if (static_cast<int64_t>(size) != dst.Size())
      throw Error(StrCat("input '", name, "' of shape ", dst.shape().ToString(), " takes ",
                         dst.Size(), " values, got size ", size));
    if (size > 0) NotNull(data, "data");
    if (dst.dtype() == DType::kFloat32) {
      dst.SyncCopyFromCPU(data, size);
    } else {
      NDArray staged(dst.shape());
      staged.SyncCopyFromCPU(data, size);
      staged.CopyTo(&dst);
    }
  });
}

int MXPredForward(PredictorHandle handle) {
  return Guarded(__func__, [&] { RunForward(FromHandle<Predictor>(handle)); });
}

// symbind runs the graph as one task graph: step 0 runs the whole forward pass and reports no
// steps left; a later step does nothing.
int MXPredPartialForward(PredictorHandle handle, int step, int* step_left) {
  return Guarded(__func__, [&] {
    Predictor* p = FromHandle<Predictor>(handle);
    NotNull(step_left, "step_left");
    if (step < 0) throw Error(StrCat("step must be non-negative, got ", step));
    if (step == 0) RunForward(p);
    *step_left = 0;
  });
}

int MXPredGetOutput(PredictorHandle handle, uint32_t index, float* data, uint32_t size) {
  return Guarded(__func__, [&] {
    Predictor* p = FromHandle<Predictor>(handle);
    const NDArray& out = OutputAt(p, index);
    if (static_cast<int64_t>(size) != out.Size())
      throw Error(StrCat("output ", index, " of shape ", out.shape().ToString(), " has ",
                         out.Size(), " values, got size ", size));
    if (size > 0) NotNull(data, "data");
    if (out.dtype() == DType::kFloat32) {
      out.SyncCopyToCPU(data, size);
    } else {
      std::vector<float> values = out.ToVector();
      std::copy(values.begin(), values.end(), data);
    }
  });
}

int MXPredFree(PredictorHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<Predictor>(handle); });
}

int MXPredSetMonitorCallback(PredictorHandle handle, PredMonitorCallback callback,
                             void* callback_handle, bool monitor_all) {
  return Guarded(__func__, [&] {
    Predictor* p = FromHandle<Predictor>(handle);
    p->monitor = callback;
    p->monitor_handle = callback_handle;
    p->monitor_all = monitor_all;
  });
}

int MXNDListCreate(const char* nd_file_bytes, int nd_file_size, NDListHandle* out,
                   uint32_t* out_length) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    NotNull(out_length, "out_length");
    if (nd_file_size < 0) throw Error(StrCat("nd_file_size is negative (", nd_file_size, ")"));
    NotNull(nd_file_bytes, "nd_file_bytes");
    NDArrayFile file = LoadNDArrayBuffer(nd_file_bytes, static_cast<size_t>(nd_file_size));
    auto list = std::make_unique<NDList>();
    for (size_t i = 0; i < file.arrays.size(); ++i) {
      list->keys.push_back(file.names.empty() ? std::string() : file.names[i]);
      list->data.push_back(file.arrays[i].ToVector());
      list->shapes.push_back(ShapeToUint32(file.arrays[i].shape()));
    }
    *out_length = static_cast<uint32_t>(list->keys.size());
    *out = list.release();
    RegisterHandle(*out, HandleKind::kNDList);
  });
}

int MXNDListGet(NDListHandle handle, uint32_t index, const char** out_key,
                const float** out_data, const uint32_t** out_shape, uint32_t* out_ndim) {
  return Guarded(__func__, [&] {
    NDList* list = FromHandle<NDList>(handle);
    NotNull(out_key, "out_key");
    NotNull(out_data, "out_data");
    NotNull(out_shape, "out_shape");
    NotNull(out_ndim, "out_ndim");
    if (index >= list->keys.size())
      throw Error(StrCat("index ", index, " out of range: the list has ", list->keys.size(),
                         " array(s)"));
    *out_key = list->keys[index].c_str();
    *out_data = list->data[index].data();
    *out_shape = list->shapes[index].data();
    *out_ndim = static_cast<uint32_t>(list->shapes[index].size());
  });
}

int MXNDListFree(NDListHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<NDList>(handle); });
}
