// MXNet's sparse NDArrays (row_sparse, csr) at the C API. symbind computes on dense arrays
// only: a sparse handle holds the dense array of its logical shape, tagged with its storage
// type. Its parts (csr: values, indptr, indices; row_sparse: rows, indices) are derived from
// the non-zeros when a frontend asks for them, and parts given one by one are scattered into
// the dense array once all are there. Memory is that of the dense shape.
#include <cstring>
#include <string>
#include <vector>

#include <symbind/core/param.h>
#include <symbind/executor/invoke.h>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

int NumAux(int stype) { return stype == kCSRStorage ? 2 : stype == kRowSparseStorage ? 1 : 0; }

const char* StorageName(int stype) {
  return stype == kCSRStorage ? "csr" : stype == kRowSparseStorage ? "row_sparse" : "default";
}

NDArrayBox* SparseBox(NDArrayHandle handle, const char* what) {
  NDArrayBox* box = FromHandle<NDArrayBox>(handle);
  if (box->stype != kCSRStorage && box->stype != kRowSparseStorage)
    throw Error(StrCat(what, ": the array's storage type is ", StorageName(box->stype),
                       "; only row_sparse and csr arrays have aux arrays"));
  return box;
}

int64_t AuxIndex(const NDArrayBox& box, int64_t i) {
  if (i < 0 || i >= NumAux(box.stype))
    throw Error(StrCat("aux index ", i, " is out of range: a ", StorageName(box.stype), " array has ",
                       NumAux(box.stype), (NumAux(box.stype) == 1 ? " aux array" : " aux arrays")));
  return i;
}

DType AuxType(const NDArrayBox& box, int64_t i) {
  return static_cast<size_t>(i) < box.aux_types.size() ? box.aux_types[static_cast<size_t>(i)] : DType::kInt64;
}

std::vector<double> AsDoubles(const NDArray& a) {
  std::vector<double> v(static_cast<size_t>(a.Size()));
  ConvertElements(a.raw_data(), a.dtype(), v.data(), DType::kFloat64, v.size());
  return v;
}

NDArray IndexArray(const std::vector<int64_t>& v, DType type) {
  NDArray a(TShape({static_cast<int64_t>(v.size())}), type);
  ConvertElements(v.data(), DType::kInt64, a.raw_data(), type, v.size());
  return a;
}

// The rows of `dense` holding a non-zero, as MXNet's cast_storage to row_sparse keeps them.
std::vector<int64_t> NonZeroRows(const NDArray& dense) {
  const std::vector<double> v = AsDoubles(dense);
  const int64_t rows = dense.shape().ndim() > 0 ? dense.shape()[0] : 0;
  const int64_t width = rows > 0 ? dense.Size() / rows : 0;
  std::vector<int64_t> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < width; ++k)
      if (v[static_cast<size_t>(r * width + k)] != 0.0) {
        out.push_back(r);
        break;
      }
  return out;
}

// The parts of a sparse array derived from its dense values: values, then aux arrays in
// MXNet's order (csr: indptr, indices; row_sparse: indices).
SparseParts DeriveParts(const NDArrayBox& box) {
  const NDArray& dense = box.array;
  SparseParts parts;
  if (box.stype == kRowSparseStorage) {
    const std::vector<int64_t> rows = NonZeroRows(dense);
    parts.data = GatherRows(dense, rows);
    parts.aux.push_back(IndexArray(rows, AuxType(box, 0)));
    return parts;
  }
  const int64_t rows = dense.shape()[0], cols = dense.shape()[1];
  const std::vector<double> v = AsDoubles(dense);
  std::vector<int64_t> indptr{0}, indices, positions;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      if (v[static_cast<size_t>(r * cols + c)] != 0.0) {
        indices.push_back(c);
        positions.push_back(r * cols + c);
      }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  parts.data = GatherRows(dense.Reshape(TShape({rows * cols})), positions);  // the elements, in order
  parts.aux.push_back(IndexArray(indptr, AuxType(box, 0)));
  parts.aux.push_back(IndexArray(indices, AuxType(box, 1)));
  return parts;
}

std::vector<int64_t> Indices(const NDArray& a, const char* what) {
  std::vector<int64_t> out;
  for (double d : AsDoubles(a)) {
    if (d != static_cast<double>(static_cast<int64_t>(d)))
      throw Error(StrCat("invalid sparse format: ", what, " holds ", d, ", not an integer"));
    out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

// Scatters complete parts into the dense array; throws Error naming what is malformed.
void Assemble(NDArrayBox* box, const SparseParts& parts) {
  NDArray& dense = box->array;
  const TShape& shape = dense.shape();
  const NDArray data = parts.data.dtype() == dense.dtype() ? parts.data : parts.data.AsType(dense.dtype());
  NDArray filled(shape, dense.dtype());
  if (box->stype == kRowSparseStorage) {
    const std::vector<int64_t> idx = Indices(parts.aux[0], "indices");
    const int64_t width = shape[0] > 0 ? dense.Size() / shape[0] : 0;
    if (data.Size() != static_cast<int64_t>(idx.size()) * width)
      throw ShapeError(StrCat("invalid row_sparse format: ", idx.size(), " indices for values of shape ",
                              data.shape(), " (array shape ", shape, ")"));
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= shape[0])
        throw Error(StrCat("invalid row_sparse format: index ", idx[i], " is out of range for ", shape[0], " rows"));
      if (i > 0 && idx[i] <= idx[i - 1])
        throw Error("invalid row_sparse format: indices must be sorted in ascending order and unique");
    }
    ScatterRows(data, idx, &filled);
  } else {
    const std::vector<int64_t> indptr = Indices(parts.aux[0], "indptr"), indices = Indices(parts.aux[1], "indices");
    const int64_t rows = shape[0], cols = shape[1], nnz = data.Size();
    if (static_cast<int64_t>(indptr.size()) != rows + 1)
      throw ShapeError(StrCat("invalid csr format: indptr has ", indptr.size(), " entries for ", rows, " rows"));
    if (static_cast<int64_t>(indices.size()) != nnz)
      throw ShapeError(StrCat("invalid csr format: ", indices.size(), " indices for ", nnz, " values"));
    if (indptr[0] != 0 || indptr[static_cast<size_t>(rows)] != nnz)
      throw Error(StrCat("invalid csr format: indptr must start at 0 and end at the value count ", nnz));
    std::vector<int64_t> positions;  // of the values in the dense array, row-major
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t b = indptr[static_cast<size_t>(r)], e = indptr[static_cast<size_t>(r) + 1];
      if (e < b) throw Error("invalid csr format: indptr must not decrease");
      for (int64_t k = b; k < e; ++k) {
        const int64_t c = indices[static_cast<size_t>(k)];
        if (c < 0 || c >= cols)
          throw Error(StrCat("invalid csr format: column index ", c, " is out of range for ", cols, " columns"));
        if (k > b && c <= indices[static_cast<size_t>(k) - 1])
          throw Error("invalid csr format: column indices must be sorted in ascending order and unique per row");
        positions.push_back(r * cols + c);
      }
    }
    NDArray elements = filled.Reshape(TShape({rows * cols}));
    ScatterRows(data, positions, &elements);
  }
  filled.CopyTo(&dense);
}

NDArrayHandle NewSparse(int stype, const TShape& shape, int dev_type, int dev_id, int dtype,
                        const std::vector<DType>& aux_types) {
  if (stype != kCSRStorage && stype != kRowSparseStorage)
    throw Error(StrCat("storage type ", stype, " is not a sparse type (1 row_sparse, 2 csr)"));
  if (stype == kCSRStorage && shape.ndim() != 2)
    throw ShapeError(StrCat("a csr array must be 2-dimensional, got shape ", shape));
  if (stype == kRowSparseStorage && shape.ndim() < 1)
    throw ShapeError("a row_sparse array needs at least one dimension");
  for (DType t : aux_types) {
    DTypeSize(t);
    if (t != DType::kInt32 && t != DType::kInt64 && t != DType::kUint8 && t != DType::kInt8)
      throw TypeError(StrCat("sparse index type ", DTypeName(t), " is not an integer type"));
  }
  auto* box = static_cast<NDArrayBox*>(NewArray(NewDense(shape, dev_type, dev_id, dtype), stype));
  box->aux_types = aux_types;
  return box;
}

std::vector<DType> AuxTypes(uint32_t num_aux, const int* aux_type) {
  std::vector<DType> types;
  if (num_aux > 0) NotNull(aux_type, "aux_type");
  for (uint32_t i = 0; i < num_aux; ++i) types.push_back(static_cast<DType>(aux_type[i]));
  return types;
}

// The ops MXNet 1.9 also names _sparse_<name> (MXNET_ADD_SPARSE_OP_ALIAS and its unary
// registrations), from which its Python package builds mx.nd.sparse and mx.sym.sparse.
const char* const kSparseAliased[] = {
    "ElementWiseSum", "Embedding", "FullyConnected", "adam_update", "add_n", "arccos", "arccosh", "broadcast_add",
    "broadcast_div", "broadcast_minus", "broadcast_mul", "broadcast_plus", "broadcast_sub", "cast_storage", "clip",
    "concat", "cos", "cosh", "dot", "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub", "exp",
    "ftrl_update", "gamma", "gammaln", "log", "log10", "log2", "make_loss", "mean", "norm", "rsqrt",
    "sgd_mom_update", "sgd_update", "sigmoid", "slice", "stop_gradient", "sum", "where", "zeros_like", "relu",
    "negative", "abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "log1p", "expm1", "square",
    "sqrt", "cbrt", "sin", "tan", "arcsin", "arctan", "degrees", "radians", "sinh", "tanh", "arcsinh", "arctanh"};
constexpr const char* kSparsePrefix = "_sparse_";

}  // namespace

NDArray GatherRows(const NDArray& a, const std::vector<int64_t>& rows) {
  std::vector<int64_t> shape = a.shape().dims();
  const size_t row_bytes = shape[0] > 0 ? a.bytes() / static_cast<size_t>(shape[0]) : 0;
  shape[0] = static_cast<int64_t>(rows.size());
  NDArray out(TShape(shape), a.dtype());
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(static_cast<char*>(out.raw_data()) + i * row_bytes,
                static_cast<const char*>(a.raw_data()) + static_cast<size_t>(rows[i]) * row_bytes, row_bytes);
  return out;
}

void ScatterRows(const NDArray& compact, const std::vector<int64_t>& rows, NDArray* a) {
  const size_t row_bytes = a->shape()[0] > 0 ? a->bytes() / static_cast<size_t>(a->shape()[0]) : 0;
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(static_cast<char*>(a->raw_data()) + static_cast<size_t>(rows[i]) * row_bytes,
                static_cast<const char*>(compact.raw_data()) + i * row_bytes, row_bytes);
}

bool LazyRowUpdate(const std::string& op_name, const KwArgs& params, const std::vector<NDArrayBox*>& in,
                   const std::vector<NDArrayBox*>& given, uint64_t seed, std::vector<NDArray>* results) {
  // ftrl and adagrad are always lazy with a row_sparse gradient; the others by lazy_update.
  static const char* const kAlwaysLazy[] = {"ftrl_update", "_sparse_adagrad_update"};
  static const char* const kLazyByParam[] = {"sgd_update", "sgd_mom_update", "mp_sgd_update",
                                             "mp_sgd_mom_update", "adam_update"};
  bool always = false, by_param = false;
  for (const char* n : kAlwaysLazy) always = always || op_name == n;
  for (const char* n : kLazyByParam) by_param = by_param || op_name == n;
  if (!(always || by_param) || in.size() < 2 || in[1]->stype != kRowSparseStorage || given.size() > 1) return false;
  if (by_param) {
    auto it = params.find("lazy_update");
    bool lazy = true;
    if (it != params.end() && ParamValue<bool>::Parse(it->second, &lazy) && !lazy) return false;
  }
  const NDArray& weight = in[0]->array;
  if (weight.shape().ndim() < 1) return false;
  for (const NDArrayBox* b : in)
    if (b->array.shape() != weight.shape()) return false;  // the op reports the mismatch
  const std::vector<int64_t> rows = NonZeroRows(in[1]->array);
  std::vector<NDArray> compact;
  for (const NDArrayBox* b : in) compact.push_back(GatherRows(b->array, rows));
  InvokeInputs inputs;
  inputs.positional = compact;
  InvokeOptions options;
  options.seed = seed;
  const std::vector<NDArray> updated = Invoke(op_name, params, inputs, {}, options);
  NDArray target = given.empty() ? weight.Copy() : given[0]->array;
  if (target.shape() != weight.shape())
    throw ShapeError(StrCat(op_name, ": the output has shape ", target.shape(), ", the weight ", weight.shape()));
  ScatterRows(updated[0], rows, &target);
  // States (momentum, mean, variance, ...) are updated in place on their compact copies.
  for (size_t i = 2; i < in.size(); ++i) ScatterRows(compact[i], rows, &in[i]->array);
  *results = {target};
  return true;
}

std::vector<std::string> SparseAliases(const Op& op) {
  std::vector<std::string> out;
  for (const char* name : kSparseAliased)
    if (OpRegistry::Global().Find(name) == &op && !OpRegistry::Global().Find(StrCat(kSparsePrefix, name)))
      out.push_back(StrCat(kSparsePrefix, name));
  return out;
}

const Op* FindSparseAlias(const std::string& name) {
  const std::string prefix = kSparsePrefix;
  if (name.compare(0, prefix.size(), prefix) != 0) return nullptr;
  const std::string base = name.substr(prefix.size());
  for (const char* aliased : kSparseAliased)
    if (base == aliased) return OpRegistry::Global().Find(base);
  return nullptr;
}

int ParseStorageType(const std::string& name) {
  if (name == "default") return kDefaultStorage;
  if (name == "row_sparse") return kRowSparseStorage;
  if (name == "csr") return kCSRStorage;
  throw Error(StrCat("unknown storage type '", name, "' (expected default, row_sparse or csr)"));
}

int ResultStorageType(const std::string& op_name, const KwArgs& params, const std::vector<int>& in) {
  if (op_name == "cast_storage") {
    auto it = params.find("stype");
    return it == params.end() ? kDefaultStorage : ParseStorageType(it->second);
  }
  if (in.empty()) return kDefaultStorage;
  // Zero stays zero: one sparse input keeps its storage type.
  static const char* const kZeroPreserving[] = {
      "_copy", "_copyto", "zeros_like", "identity", "BlockGrad", "stop_gradient", "negative", "abs", "sign",
      "round", "rint", "ceil", "floor", "trunc", "fix", "square", "sqrt", "cbrt", "sin", "tan", "arcsin",
      "arctan", "sinh", "tanh", "arcsinh", "arctanh", "expm1", "log1p", "relu", "degrees", "radians",
      "_mul_scalar", "_div_scalar", "_square_sum"};
  if (in.size() == 1) {
    for (const char* name : kZeroPreserving)
      if (op_name == name) return in[0];
    return kDefaultStorage;
  }
  if (in.size() == 2) {
    const bool add = op_name == "elemwise_add" || op_name == "_plus" || op_name == "_add" ||
                     op_name == "elemwise_sub" || op_name == "_minus" || op_name == "_sub" || op_name == "_grad_add";
    if (add && in[0] == in[1]) return in[0];
    if (op_name == "elemwise_mul" || op_name == "_mul") {
      if (in[0] == in[1]) return in[0];
      if (in[0] == kDefaultStorage) return in[1];
      if (in[1] == kDefaultStorage) return in[0];
    }
    if (op_name == "_sparse_retain" || op_name == "sparse_retain") return kRowSparseStorage;
  }
  return kDefaultStorage;
}

}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

int MXNDArrayCreateSparseEx(int storage_type, const uint32_t* shape, uint32_t ndim, int dev_type, int dev_id,
                            int, int dtype, uint32_t num_aux, int* aux_type, uint32_t*, const uint32_t*,
                            NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewSparse(storage_type, ShapeFromC(shape, ndim), dev_type, dev_id, dtype,
                     AuxTypes(num_aux, aux_type));
  });
}

int MXNDArrayCreateSparseEx64(int storage_type, const int64_t* shape, int ndim, int dev_type, int dev_id, int,
                              int dtype, uint32_t num_aux, int* aux_type, int*, const int64_t*,
                              NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewSparse(storage_type, ShapeFrom64(shape, ndim), dev_type, dev_id, dtype,
                     AuxTypes(num_aux, aux_type));
  });
}

int MXNDArrayGetStorageType(NDArrayHandle handle, int* out_storage_type) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = FromHandle<NDArrayBox>(handle);
    *NotNull(out_storage_type, "out_storage_type") = box->array.is_none() ? kUndefinedStorage : box->stype;
  });
}

int MXNDArrayGetAuxType64(NDArrayHandle handle, int64_t i, int* out_type) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = SparseBox(handle, "MXNDArrayGetAuxType");
    *NotNull(out_type, "out_type") = static_cast<int>(AuxType(*box, AuxIndex(*box, i)));
  });
}
int MXNDArrayGetAuxType(NDArrayHandle handle, uint32_t i, int* out_type) {
  return MXNDArrayGetAuxType64(handle, i, out_type);
}

int MXNDArrayGetAuxNDArray64(NDArrayHandle handle, int64_t i, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = SparseBox(handle, "MXNDArrayGetAuxNDArray");
    const int64_t index = AuxIndex(*box, i);
    NotNull(out, "out");
    *out = NewArray(DeriveParts(*box).aux[static_cast<size_t>(index)]);
  });
}
int MXNDArrayGetAuxNDArray(NDArrayHandle handle, uint32_t i, NDArrayHandle* out) {
  return MXNDArrayGetAuxNDArray64(handle, i, out);
}

int MXNDArrayGetDataNDArray(NDArrayHandle handle, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = FromHandle<NDArrayBox>(handle);
    NotNull(out, "out");
    *out = NewArray(NumAux(box->stype) == 0 ? box->array : DeriveParts(*box).data);
  });
}

int MXNDArraySyncCheckFormat(NDArrayHandle handle, const bool) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = FromHandle<NDArrayBox>(handle);
    if (!box->format_error.empty()) throw Error(box->format_error);
  });
}

int MXNDArraySyncCopyFromNDArray(NDArrayHandle handle_dst, const NDArrayHandle handle_src, const int i) {
  return Guarded(__func__, [&] {
    NDArrayBox* dst = FromHandle<NDArrayBox>(handle_dst, "handle_dst");
    const NDArray& src = ArrayOf(const_cast<void*>(handle_src), "handle_src");
    if (dst->array.is_none()) throw Error("handle_dst: the array is empty (none)");
    if (src.is_none()) throw Error("handle_src: the array is empty (none)");
    if (NumAux(dst->stype) == 0) {
      if (i >= 0) throw Error(StrCat("aux index ", i, " given for a dense destination"));
      if (dst->array.shape() != src.shape())
        throw ShapeError(StrCat("copy from shape ", src.shape().ToString(), " into shape ",
                                dst->array.shape().ToString()));
      src.CopyTo(&dst->array);
      return;
    }
    // A sparse destination takes its values (i = -1) and aux arrays (i >= 0) one by one.
    if (i >= 0) AuxIndex(*dst, i);
    if (!dst->pending) dst->pending = std::make_shared<SparseParts>();
    SparseParts& parts = *dst->pending;
    parts.aux.resize(static_cast<size_t>(NumAux(dst->stype)));
    (i < 0 ? parts.data : parts.aux[static_cast<size_t>(i)]) = src.Copy();
    if (parts.data.is_none()) return;
    for (const NDArray& a : parts.aux)
      if (a.is_none()) return;
    const std::shared_ptr<SparseParts> complete = std::move(dst->pending);
    try {
      Assemble(dst, *complete);
      dst->format_error.clear();
    } catch (const Error& e) {
      dst->format_error = e.what();
    }
  });
}
