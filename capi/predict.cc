// MXNet's C predict API (mxnet/c_predict_api.h) over symbind's Predictor.
#include <mxnet/c_predict_api.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/symbol.h>
#include <symbind/executor/internal_outputs.h>
#include <symbind/io/model_file.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>
#include <symbind/predict/predictor.h>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

// A predictor handle: the native PredictorBox (predict/predictor.h) plus what the C calls keep.
// Predictors made by one MXPredCreateMultiThread call, and by MXPredReshape, share the
// Predictor's parameter arrays (one copy of the weights).
struct PredictorBox {
  static constexpr HandleKind kKind = HandleKind::kPredictor;
  explicit PredictorBox(symbind::Predictor p) : native(std::move(p)) {}
  symbind::Predictor native;
  std::map<std::string, NDArray> inputs;  // every input key given -> its bound array
  std::vector<uint32_t> shape_buffer;     // what MXPredGetOutputShape points to
  PredMonitorCallback monitor = nullptr;
  void* monitor_handle = nullptr;
  bool monitor_all = false;
};

struct NDList {
  static constexpr HandleKind kKind = HandleKind::kNDList;
  std::vector<std::string> keys;
  std::vector<NDArray> arrays;  // float32: the loaded arrays themselves, others converted once
  std::vector<std::vector<uint32_t>> shapes;
};

// The bound array of every key in `shapes`: the data inputs, and labels a client may also
// give (bound as placeholders that inference never reads).
std::map<std::string, NDArray> BoundInputs(const symbind::Predictor& native,
                                           const std::map<std::string, TShape>& shapes) {
  std::map<std::string, NDArray> args = native.executor().arg_dict();
  std::map<std::string, NDArray> inputs;
  for (auto& kv : shapes) inputs[kv.first] = args.at(kv.first);
  return inputs;
}

std::unique_ptr<PredictorBox> MakePredictor(symbind::Predictor native,
                                         const std::map<std::string, TShape>& shapes) {
  auto p = std::make_unique<PredictorBox>(std::move(native));
  p->inputs = BoundInputs(p->native, shapes);
  return p;
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
    if (!shapes[keys[i]].is_known())
      throw Error(StrCat("input '", keys[i], "' has an incomplete shape ", shapes[keys[i]].ToString()));
  }
  return shapes;
}

// The model of an MXPredCreate* call: the symbol JSON and an MXNet .params image, or a
// .symbind model image in the params buffer (its size is known there; the symbol buffer has
// no size) with symbol_json_str null, empty or pointing at the same bytes.
Model LoadPredictModel(const char* json, const void* param_bytes, int param_size) {
  if (param_size < 0) throw Error(StrCat("param_size is negative (", param_size, ")"));
  if (param_size > 0) NotNull(param_bytes, "param_bytes");
  const size_t size = static_cast<size_t>(param_size);
  if (IsModelBuffer(param_bytes, size)) {
    if (json != nullptr && json != param_bytes && json[0] != '\0')
      throw Error("param_bytes is a .symbind model, which holds its graph: pass symbol_json_str as "
                  "null, \"\" or the same buffer, not a symbol JSON as well");
    return LoadModelBuffer(param_bytes, size, "param_bytes (a .symbind model)");
  }
  Model model;
  std::string text;
  try {
    text = FirstJSONValue(json);
  } catch (const Error& e) {
    if (size > 0 || json == nullptr) throw;
    size_t i = 0;
    while (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' || json[i] == '\r') ++i;
    if (json[i] == '{') throw;
    throw Error(StrCat(e.what(), " (a .symbind model goes in param_bytes with its size in "
                                 "param_size, since the symbol buffer has no size)"));
  }
  model.symbol = LoadSymbolJSON(text);
  if (size == 0) return model;
  // The rule every loader follows (MXNet's predictor ignored keys without "arg:" / "aux:" and
  // let a repeated key win silently; both are errors here, naming the key).
  SplitArgAux(NamedArrays(LoadNDArrayBuffer(param_bytes, size), "param_bytes"), &model.args, &model.aux);
  return model;
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
  std::vector<std::string> output_keys;
};

// Creates `count` predictors over one copy of the parameters into out[0..count).
void CreatePredictors(const CreateRequest& r, int count, PredictorHandle* out) {
  NotNull(out, "out");
  DeviceContext(r.dev_type, r.dev_id);
  Model model = LoadPredictModel(r.json, r.param_bytes, r.param_size);
  std::map<std::string, TShape> shapes =
      InputShapes(r.num_inputs, r.input_keys, r.indptr, r.shape_data);
  PredictorOptions options;
  options.outputs = r.output_keys;
  std::vector<std::unique_ptr<PredictorBox>> made;
  made.push_back(MakePredictor(
      symbind::Predictor(model.symbol, symbind::ReadOnlyViews(model.args), symbind::ReadOnlyViews(model.aux), shapes,
                         options),
      shapes));
  // The others share the first one's parameter arrays (as converted once).
  for (int i = 1; i < count; ++i) made.push_back(MakePredictor(made[0]->native.Reshape(shapes), shapes));
  for (int i = 0; i < count; ++i) {
    out[i] = made[i].release();
    RegisterHandle(out[i], HandleKind::kPredictor);
  }
}

const NDArray& OutputAt(PredictorBox* p, uint32_t index) {
  const auto& outs = p->native.Outputs();
  if (index >= outs.size())
    throw Error(StrCat("output index ", index, " out of range: the predictor has ", outs.size(),
                       " output(s)"));
  return outs[index];
}

void ReportToMonitor(PredictorBox* p) {
  if (!p->monitor) return;
  ReportInternalOutputs(p->native.executor(), p->monitor_all, p->monitor, p->monitor_handle);
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
                      input_keys, input_shape_indptr, input_shape_data, {}},
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
    // Type flags are checked; symbind computes in float32, so inputs and outputs are float32.
    for (uint32_t i = 0; i < num_provided_arg_dtypes; ++i)
      DTypeSize(static_cast<DType>(provided_arg_dtypes[i]));  // throws on an unknown flag
    CreatePredictors({symbol_json_str, param_bytes, param_size, dev_type, dev_id, num_input_nodes,
                      input_keys, input_shape_indptr, input_shape_data, {}},
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
                      input_keys, input_shape_indptr, input_shape_data,
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
    // Each predictor is an executor with its own buffers: a count beyond any machine's threads
    // would only exhaust memory and time.
    if (num_threads < 1 || num_threads > MXPRED_MAX_THREADS)
      throw Error(StrCat("num_threads must be 1 to ", MXPRED_MAX_THREADS, " (MXPRED_MAX_THREADS), got ", num_threads));
    CreatePredictors({symbol_json_str, param_bytes, param_size, dev_type, dev_id, num_input_nodes,
                      input_keys, input_shape_indptr, input_shape_data, {}},
                     num_threads, out);
  });
}

int MXPredReshape(uint32_t num_input_nodes, const char** input_keys,
                  const uint32_t* input_shape_indptr, const uint32_t* input_shape_data,
                  PredictorHandle handle, PredictorHandle* out) {
  return Guarded(__func__, [&] {
    PredictorBox* old = FromHandle<PredictorBox>(handle);
    NotNull(out, "out");
    std::map<std::string, TShape> shapes =
        InputShapes(num_input_nodes, input_keys, input_shape_indptr, input_shape_data);
    for (auto& kv : shapes)
      if (!old->inputs.count(kv.first))
        throw Error(StrCat("'", kv.first, "' is not an input of the predictor (inputs: ",
                           JoinNames(old->native.input_names()), ")"));
    // Inputs not mentioned keep their current shape.
    for (auto& kv : old->inputs) shapes.emplace(kv.first, kv.second.shape());
    std::unique_ptr<PredictorBox> p = MakePredictor(old->native.Reshape(shapes), shapes);
    p->monitor = old->monitor;
    p->monitor_handle = old->monitor_handle;
    p->monitor_all = old->monitor_all;
    *out = p.release();
    RegisterHandle(*out, HandleKind::kPredictor);
  });
}

int MXPredGetOutputShape(PredictorHandle handle, uint32_t index, uint32_t** shape_data,
                         uint32_t* shape_ndim) {
  return Guarded(__func__, [&] {
    PredictorBox* p = FromHandle<PredictorBox>(handle);
    NotNull(shape_data, "shape_data");
    NotNull(shape_ndim, "shape_ndim");
    p->shape_buffer = ShapeToUint32(OutputAt(p, index).shape());
    *shape_data = p->shape_buffer.data();
    *shape_ndim = static_cast<uint32_t>(p->shape_buffer.size());
  });
}

int MXPredGetOutputType(PredictorHandle handle, uint32_t out_index, int* out_dtype) {
  return Guarded(__func__, [&] {
    PredictorBox* p = FromHandle<PredictorBox>(handle);
    NotNull(out_dtype, "out_dtype");
    *out_dtype = static_cast<int>(OutputAt(p, out_index).dtype());
  });
}

int MXPredSetInput(PredictorHandle handle, const char* key, const float* data, uint32_t size) {
  return Guarded(__func__, [&] {
    PredictorBox* p = FromHandle<PredictorBox>(handle);
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
    dst.SyncCopyFromCPU(data, size);  // a Predictor's inputs are float32
  });
}

int MXPredForward(PredictorHandle handle) {
  return Guarded(__func__, [&] {
    PredictorBox* p = FromHandle<PredictorBox>(handle);
    p->native.Forward();
    ReportToMonitor(p);
  });
}

// One op node per step, in topological order, as MXNet's executor runs it; a monitor callback
// sees the node outputs after the last step.
int MXPredPartialForward(PredictorHandle handle, int step, int* step_left) {
  return Guarded(__func__, [&] {
    PredictorBox* p = FromHandle<PredictorBox>(handle);
    NotNull(step_left, "step_left");
    if (step < 0) throw Error(StrCat("step must be non-negative, got ", step));
    const size_t left = p->native.executor().PartialForward(false, static_cast<size_t>(step));
    if (left == 0 && static_cast<size_t>(step) < p->native.executor().num_forward_steps())
      ReportToMonitor(p);
    *step_left = static_cast<int>(left);
  });
}

int MXPredGetOutput(PredictorHandle handle, uint32_t index, float* data, uint32_t size) {
  return Guarded(__func__, [&] {
    PredictorBox* p = FromHandle<PredictorBox>(handle);
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
  return Guarded(__func__, [&] { FreeHandle<PredictorBox>(handle); });
}

int MXPredSetMonitorCallback(PredictorHandle handle, PredMonitorCallback callback,
                             void* callback_handle, bool monitor_all) {
  return Guarded(__func__, [&] {
    PredictorBox* p = FromHandle<PredictorBox>(handle);
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
      NDArray& a = file.arrays[i];
      list->keys.push_back(file.names.empty() ? std::string() : file.names[i]);
      list->shapes.push_back(ShapeToUint32(a.shape()));
      list->arrays.push_back(a.is_none() || a.dtype() == DType::kFloat32 ? std::move(a) : a.AsType(DType::kFloat32));
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
    const NDArray& a = list->arrays[index];
    *out_data = a.is_none() ? nullptr : a.fdata();
    *out_shape = list->shapes[index].data();
    *out_ndim = static_cast<uint32_t>(list->shapes[index].size());
  });
}

int MXNDListFree(NDListHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<NDList>(handle); });
}
