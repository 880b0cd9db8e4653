// Executor functions of MXNet's C API as its Python frontend (Symbol.simple_bind, Module)
// calls them: SimpleBindEx with grad_req as one string, a list or a dict, parameters shared
// with another executor, data buffers shared through a dict; BackwardEx; ReshapeEx.
#include <mxnet/c_api.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

OpReq ParseGradReq(const std::string& s, const std::string& arg) {
  if (s == "null") return OpReq::kNull;
  if (s == "write") return OpReq::kWrite;
  if (s == "inplace") return OpReq::kWriteInplace;
  if (s == "add") return OpReq::kAdd;
  throw ParamError(StrCat("grad_req '", s, "' for argument '", arg, "': expected null, write, add or inplace"));
}

// MXNet's three forms: one string for every argument (list length 0), a list in argument
// order (names null), or names with their requests.
std::vector<OpReq> GradReqs(const std::vector<std::string>& args, uint32_t list_len, const char** names,
                            const char** types) {
  std::vector<OpReq> reqs(args.size(), OpReq::kWrite);
  if (!types) return reqs;
  if (list_len == 0) {
    const std::string all = CString(types[0], "provided_grad_req_types");
    for (size_t i = 0; i < args.size(); ++i) reqs[i] = ParseGradReq(all, args[i]);
    return reqs;
  }
  std::vector<std::string> t = CStrings(list_len, types, "provided_grad_req_types");
  if (!names) {
    if (list_len != args.size())
      throw Error(StrCat("grad_req list has ", list_len, " entries for ", args.size(), " arguments"));
    for (size_t i = 0; i < args.size(); ++i) reqs[i] = ParseGradReq(t[i], args[i]);
    return reqs;
  }
  std::vector<std::string> n = CStrings(list_len, names, "provided_grad_req_names");
  // Names that are no argument are skipped, as MXNet's executor skips them (Python code passes one
  // dict to several symbols, e.g. a fused and an unfused RNN); their requests are still checked.
  std::map<std::string, OpReq> by_name;
  for (uint32_t i = 0; i < list_len; ++i) by_name[n[i]] = ParseGradReq(t[i], n[i]);
  // MXNet: arguments the dict leaves out take no gradient.
  for (size_t i = 0; i < args.size(); ++i) {
    auto it = by_name.find(args[i]);
    reqs[i] = it == by_name.end() ? OpReq::kNull : it->second;
  }
  return reqs;
}

template <typename Dim>
std::map<std::string, TShape> ProvidedShapes(uint32_t n, const char** names, const Dim* data, const uint32_t* idx) {
  std::map<std::string, TShape> shapes;
  if (n == 0) return shapes;
  std::vector<std::string> k = CStrings(n, names, "provided_arg_shape_names");
  NotNull(idx, "provided_arg_shape_idx");
  if (idx[n] > idx[0]) NotNull(data, "provided_arg_shape_data");
  for (uint32_t i = 0; i < n; ++i) {
    if (idx[i + 1] < idx[i]) throw Error(StrCat("provided_arg_shape_idx decreases at ", i));
    std::vector<int64_t> dims(data + idx[i], data + idx[i + 1]);
    for (int64_t d : dims)
      if (d < 0) throw ShapeError(StrCat("shape of '", k[i], "' has a negative dimension (", d, ")"));
    shapes[k[i]] = TShape(dims);
  }
  return shapes;
}

// New handles for an executor's arguments, gradients (null where an argument has none) and
// aux states in the per-thread store, and the out-pointers into it. Room for `extra` handles
// the caller appends after them is reserved first, so these pointers stay valid.
void ExecutorArraysOut(const ExecutorBox& box, size_t extra, uint32_t* num_in_args, NDArrayHandle** in_args,
                       NDArrayHandle** arg_grads, uint32_t* num_aux_states, NDArrayHandle** aux_states) {
  const Executor& e = *box.exec;
  const size_t n_args = e.arg_arrays().size(), n_aux = e.aux_arrays().size();
  auto stype = [](const std::vector<int>& stypes, size_t i) { return i < stypes.size() ? stypes[i] : kDefaultStorage; };
  std::vector<void*>& h = Ret().handles;
  h.clear();
  h.reserve(2 * n_args + n_aux + extra);
  for (size_t i = 0; i < n_args; ++i) h.push_back(NewArray(e.arg_arrays()[i], stype(box.arg_stypes, i)));
  for (size_t i = 0; i < n_args; ++i) {
    const NDArray& g = e.grad_arrays()[i];
    h.push_back(g.is_none() ? nullptr : NewArray(g, stype(box.grad_stypes, i)));
  }
  for (size_t i = 0; i < n_aux; ++i) h.push_back(NewArray(e.aux_arrays()[i], stype(box.aux_stypes, i)));
  *num_in_args = static_cast<uint32_t>(n_args);
  *in_args = h.data();
  *arg_grads = h.data() + n_args;
  *num_aux_states = static_cast<uint32_t>(n_aux);
  *aux_states = h.data() + 2 * n_args;
}

template <typename Dim>
int SimpleBindImpl(const char* call, SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_g2c_keys,
                   const char** g2c_keys, const int* g2c_dev_types, const int* g2c_dev_ids, uint32_t grad_req_len, const char** grad_req_names, const char** grad_req_types,
                   uint32_t num_shapes, const char** shape_names, const Dim* shape_data, const uint32_t* shape_idx,
                   uint32_t num_dtypes, const char** dtype_names, const int* dtypes, uint32_t num_stypes,
                   const char** stype_names, const int* stypes, uint32_t num_shared_arg_names,
                   const char** shared_arg_name_list, int* shared_buffer_len, const char** shared_buffer_names,
                   NDArrayHandle* shared_buffer_handles, const char*** updated_shared_buffer_names,
                   NDArrayHandle** updated_shared_buffer_handles, uint32_t* num_in_args, NDArrayHandle** in_args,
                   NDArrayHandle** arg_grads, uint32_t* num_aux_states, NDArrayHandle** aux_states,
                   ExecutorHandle shared_exec_handle, ExecutorHandle* out) {
  return Guarded(call, [&] {
    const Symbol& s = SymbolOf(symbol_handle, "symbol_handle");
    NotNull(out, "out");
    NotNull(num_in_args, "num_in_args");
    NotNull(in_args, "in_args");
    NotNull(arg_grads, "arg_grads");
    NotNull(num_aux_states, "num_aux_states");
    NotNull(aux_states, "aux_states");
    const Context ctx = DeviceContext(dev_type, dev_id);
    const auto groups = GroupContexts(num_g2c_keys, g2c_keys, g2c_dev_types, g2c_dev_ids);
    // Sparse arguments are dense arrays tagged with their storage type (c_api_sparse.cc).
    std::map<std::string, int> stype_of;
    const std::vector<std::string> stype_keys = CStrings(num_stypes, stype_names, "provided_arg_stype_names");
    for (uint32_t i = 0; i < num_stypes; ++i) {
      NotNull(stypes, "provided_arg_stypes");
      if (stypes[i] < kDefaultStorage || stypes[i] > kCSRStorage)
        throw Error(StrCat("storage type ", stypes[i], " for '", stype_keys[i],
                           "' is not one of 0 default, 1 row_sparse, 2 csr"));
      stype_of[stype_keys[i]] = stypes[i];
    }
    const Graph graph(s);
    const std::vector<std::string> arg_names = graph.ListArguments(), aux_names = graph.ListAuxiliaryStates();
    const ShapeInferResult shapes = InferShape(graph, ProvidedShapes(num_shapes, shape_names, shape_data, shape_idx));
    const std::vector<Context> arg_ctx = ArgumentContexts(graph, groups, ctx);
    std::map<std::string, DType> known_types;
    std::vector<std::string> tn = CStrings(num_dtypes, dtype_names, "provided_arg_dtype_names");
    for (uint32_t i = 0; i < num_dtypes; ++i) {
      NotNull(dtypes, "provided_arg_dtypes");
      DType t = static_cast<DType>(dtypes[i]);
      DTypeSize(t);
      known_types[tn[i]] = t;
    }
    const TypeInferResult types = InferType(graph, known_types);
    const std::vector<OpReq> reqs = GradReqs(arg_names, grad_req_len, grad_req_names, grad_req_types);

    const Executor* shared_exec = shared_exec_handle ? FromHandle<ExecutorBox>(shared_exec_handle,
                                                                                "shared_exec_handle")->exec.get()
                                                     : nullptr;
    std::set<std::string> shared_names;
    for (const std::string& n : CStrings(num_shared_arg_names, shared_arg_name_list, "shared_arg_name_list"))
      shared_names.insert(n);
    // The data buffers shared between executors (Module's buckets), by name.
    const bool use_buffer = shared_buffer_len && *shared_buffer_len >= 0;
    std::map<std::string, NDArray> buffer;
    if (use_buffer) {
      std::vector<std::string> bn =
          CStrings(static_cast<uint32_t>(*shared_buffer_len), shared_buffer_names, "shared_buffer_name_list");
      for (int i = 0; i < *shared_buffer_len; ++i)
        buffer[bn[i]] = ArrayOf(NotNull(shared_buffer_handles, "shared_buffer_handle_list")[i],
                                "shared_buffer_handle_list");
    }
    auto from_buffer = [&](const std::string& name, const TShape& shape, DType dtype, Context ctx) {
      auto it = buffer.find(name);
      if (it != buffer.end() && it->second.dtype() == dtype && it->second.Size() >= shape.Size())
        return it->second.Size() == shape.Size() ? it->second.Reshape(shape)
                                                 : it->second.Reshape(TShape({it->second.Size()}))
                                                       .Slice(0, shape.Size())
                                                       .Reshape(shape);
      NDArray a(shape, dtype, ctx);
      buffer[name] = a;
      return a;
    };

    std::map<std::string, NDArray> shared_args, shared_grads, shared_aux;
    if (shared_exec) {
      shared_args = shared_exec->arg_dict();
      shared_grads = shared_exec->grad_dict();
      shared_aux = shared_exec->aux_dict();
    }
    std::vector<NDArray> args, grads, aux;
    for (size_t i = 0; i < arg_names.size(); ++i) {
      const std::string& name = arg_names[i];
      const TShape& shape = shapes.arg_shapes[i];
      const DType dtype = types.arg_types[i];
      NDArray a, g;
      if (shared_exec && shared_names.count(name)) {
        auto it = shared_args.find(name);
        if (it == shared_args.end())
          throw Error(StrCat("shared argument '", name, "' is not an argument of the shared executor"));
        if (it->second.shape() != shape)
          throw ShapeError(StrCat("shared argument '", name, "' has shape ", it->second.shape().ToString(),
                                  " in the shared executor, this graph needs ", shape.ToString()));
        a = it->second;
        auto git = shared_grads.find(name);
        if (reqs[i] != OpReq::kNull) g = git != shared_grads.end() && !git->second.is_none() ? git->second : NDArray(shape, dtype, arg_ctx[i]);
      } else {
        a = use_buffer && !shared_names.count(name) ? from_buffer(name, shape, dtype, arg_ctx[i]) : NDArray(shape, dtype, arg_ctx[i]);
        if (reqs[i] != OpReq::kNull) g = NDArray(shape, dtype, arg_ctx[i]);
      }
      args.push_back(a);
      grads.push_back(g);
    }
    for (size_t i = 0; i < aux_names.size(); ++i) {
      auto it = shared_aux.find(aux_names[i]);
      aux.push_back(it != shared_aux.end() && it->second.shape() == shapes.aux_shapes[i]
                        ? it->second
                        : NDArray(shapes.aux_shapes[i], types.aux_types[i], ctx));
    }
    std::vector<OpReq> bound_reqs = reqs;
    ExecutorBox* box = NewHandle<ExecutorBox>();
    try {
      box->exec = Bind(s, ctx, args, grads, bound_reqs, aux);
    } catch (...) {
      FreeHandle<ExecutorBox>(box);
      throw;
    }

    // Without a provided type, a variable's __storage_type__ attribute (mx.sym.var(stype=...)).
    for (uint32_t id : graph.arg_nodes()) {
      const auto& attrs = graph.node(id).node->user_attrs;
      auto attr = attrs.find("__storage_type__");
      const std::string& name = graph.node(id).node->name();
      if (attr != attrs.end() && !stype_of.count(name) &&
          (attr->second == "1" || attr->second == "2" || attr->second == "0"))
        stype_of[name] = std::stoi(attr->second);
    }
    for (const std::string& name : arg_names) {
      auto it = stype_of.find(name);
      const int stype = it == stype_of.end() ? kDefaultStorage : it->second;
      box->arg_stypes.push_back(stype);
      // A row_sparse weight's gradient is row_sparse, as MXNet infers it for sparse updates.
      box->grad_stypes.push_back(stype == kRowSparseStorage ? kRowSparseStorage : kDefaultStorage);
    }
    ExecutorArraysOut(*box, buffer.size(), num_in_args, in_args, arg_grads, num_aux_states, aux_states);
    std::vector<void*>& handles = Ret().handles;
    const size_t buffer_start = handles.size();
    std::vector<std::string> buffer_names;
    for (auto& kv : buffer) {
      buffer_names.push_back(kv.first);
      handles.push_back(NewArray(kv.second));
    }
    if (use_buffer) {
      NotNull(updated_shared_buffer_names, "updated_shared_buffer_name_list");
      NotNull(updated_shared_buffer_handles, "updated_shared_buffer_handle_list");
      uint32_t count = 0;
      *updated_shared_buffer_names = StringsOut(buffer_names, &count);
      *updated_shared_buffer_handles = handles.data() + buffer_start;
      *shared_buffer_len = static_cast<int>(count);
    }
    *out = box;
  });
}

}  // namespace
}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

int MXExecutorSimpleBindEx(SymbolHandle symbol_handle, int dev_type, int dev_id, const uint32_t num_g2c_keys,
                           const char** g2c_keys, const int* g2c_dev_types, const int* g2c_dev_ids, const uint32_t provided_grad_req_list_len,
                           const char** provided_grad_req_names, const char** provided_grad_req_types,
                           const uint32_t num_provided_arg_shapes, const char** provided_arg_shape_names,
                           const int* provided_arg_shape_data, const uint32_t* provided_arg_shape_idx,
                           const uint32_t num_provided_arg_dtypes, const char** provided_arg_dtype_names,
                           const int* provided_arg_dtypes, const uint32_t num_provided_arg_stypes,
                           const char** provided_arg_stype_names, const int* provided_arg_stypes,
                           const uint32_t num_shared_arg_names, const char** shared_arg_name_list,
                           int* shared_buffer_len, const char** shared_buffer_name_list,
                           NDArrayHandle* shared_buffer_handle_list, const char*** updated_shared_buffer_name_list,
                           NDArrayHandle** updated_shared_buffer_handle_list, uint32_t* num_in_args,
                           NDArrayHandle** in_args, NDArrayHandle** arg_grads, uint32_t* num_aux_states,
                           NDArrayHandle** aux_states, ExecutorHandle shared_exec_handle, ExecutorHandle* out) {
  return SimpleBindImpl(__func__, symbol_handle, dev_type, dev_id, num_g2c_keys, g2c_keys, g2c_dev_types,
                        g2c_dev_ids, provided_grad_req_list_len,
                        provided_grad_req_names, provided_grad_req_types, num_provided_arg_shapes,
                        provided_arg_shape_names, provided_arg_shape_data, provided_arg_shape_idx,
                        num_provided_arg_dtypes, provided_arg_dtype_names, provided_arg_dtypes,
                        num_provided_arg_stypes, provided_arg_stype_names, provided_arg_stypes, num_shared_arg_names,
                        shared_arg_name_list, shared_buffer_len, shared_buffer_name_list, shared_buffer_handle_list,
                        updated_shared_buffer_name_list, updated_shared_buffer_handle_list, num_in_args, in_args,
                        arg_grads, num_aux_states, aux_states, shared_exec_handle, out);
}

int MXExecutorSimpleBindEx64(SymbolHandle symbol_handle, int dev_type, int dev_id, const uint32_t num_g2c_keys,
                             const char** g2c_keys, const int* g2c_dev_types, const int* g2c_dev_ids, const uint32_t provided_grad_req_list_len,
                             const char** provided_grad_req_names, const char** provided_grad_req_types,
                             const uint32_t num_provided_arg_shapes, const char** provided_arg_shape_names,
                             const int64_t* provided_arg_shape_data, const uint32_t* provided_arg_shape_idx,
                             const uint32_t num_provided_arg_dtypes, const char** provided_arg_dtype_names,
                             const int* provided_arg_dtypes, const uint32_t num_provided_arg_stypes,
                             const char** provided_arg_stype_names, const int* provided_arg_stypes,
                             const uint32_t num_shared_arg_names, const char** shared_arg_name_list,
                             int* shared_buffer_len, const char** shared_buffer_name_list,
                             NDArrayHandle* shared_buffer_handle_list,
                             const char*** updated_shared_buffer_name_list,
                             NDArrayHandle** updated_shared_buffer_handle_list, uint32_t* num_in_args,
                             NDArrayHandle** in_args, NDArrayHandle** arg_grads, uint32_t* num_aux_states,
                             NDArrayHandle** aux_states, ExecutorHandle shared_exec_handle, ExecutorHandle* out) {
  return SimpleBindImpl(__func__, symbol_handle, dev_type, dev_id, num_g2c_keys, g2c_keys, g2c_dev_types,
                        g2c_dev_ids, provided_grad_req_list_len,
                        provided_grad_req_names, provided_grad_req_types, num_provided_arg_shapes,
                        provided_arg_shape_names, provided_arg_shape_data, provided_arg_shape_idx,
                        num_provided_arg_dtypes, provided_arg_dtype_names, provided_arg_dtypes,
                        num_provided_arg_stypes, provided_arg_stype_names, provided_arg_stypes, num_shared_arg_names,
                        shared_arg_name_list, shared_buffer_len, shared_buffer_name_list, shared_buffer_handle_list,
                        updated_shared_buffer_name_list, updated_shared_buffer_handle_list, num_in_args, in_args,
                        arg_grads, num_aux_states, aux_states, shared_exec_handle, out);
}

int MXExecutorBackwardEx(ExecutorHandle handle, uint32_t len, NDArrayHandle* head_grads, int) {
  return MXExecutorBackward(handle, len, head_grads);
}

int MXExecutorReshapeEx(int partial_shaping, int allow_up_sizing, int dev_type, int dev_id, uint32_t num_map_keys,
                        const char** map_keys, const int* map_dev_types, const int* map_dev_ids, const uint32_t num_provided_arg_shapes,
                        const char** provided_arg_shape_names, const int* provided_arg_shape_data,
                        const uint32_t* provided_arg_shape_idx, uint32_t* num_in_args, NDArrayHandle** in_args,
                        NDArrayHandle** arg_grads, uint32_t* num_aux_states, NDArrayHandle** aux_states,
                        ExecutorHandle shared_exec, ExecutorHandle* out) {
  return Guarded(__func__, [&] {
    DeviceContext(dev_type, dev_id);
    GroupContexts(num_map_keys, map_keys, map_dev_types, map_dev_ids);
    ExecutorBox* old = FromHandle<ExecutorBox>(shared_exec, "shared_exec");
    NotNull(out, "out");
    NotNull(num_in_args, "num_in_args");
    NotNull(in_args, "in_args");
    NotNull(arg_grads, "arg_grads");
    NotNull(num_aux_states, "num_aux_states");
    NotNull(aux_states, "aux_states");
    std::map<std::string, TShape> shapes =
        ProvidedShapes(num_provided_arg_shapes, provided_arg_shape_names, provided_arg_shape_data,
                       provided_arg_shape_idx);
    ExecutorBox* box = NewHandle<ExecutorBox>();
    try {
      box->exec = old->exec->Reshape(shapes, partial_shaping != 0, allow_up_sizing != 0);
    } catch (...) {
      FreeHandle<ExecutorBox>(box);
      throw;
    }
    box->arg_stypes = old->arg_stypes;
    box->grad_stypes = old->grad_stypes;
    box->aux_stypes = old->aux_stypes;
    ExecutorArraysOut(*box, 0, num_in_args, in_args, arg_grads, num_aux_states, aux_states);
    *out = box;
  });
}

int MXExecutorGetOptimizedSymbol(ExecutorHandle handle, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    ExecutorBox* box = FromHandle<ExecutorBox>(handle);
    *NotNull(out, "out") = NewSymbol(box->exec->symbol());
  });
}
