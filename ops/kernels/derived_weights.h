// Forms a kernel derives from one weight array (GEMM-packed panels, Winograd-transformed
// filters), held by the node's state (OpState) for as long as the node is bound:
//
//   op.set_create_state(CreateDerivedWeightsState(1));           // at registration
//   DerivedWeights* weights = NodeDerivedWeights(ctx, 0, in[1]);  // in the forward kernel
//   auto packed = DerivedForm<PackedConvWeights>(weights, w, {tiling, groups},
//                                                [&](const float* w) { return Pack(w); });
//
// A form is made again only when the call reads another array or a write moved the array's
// storage version (Storage::version): no values compared, no lock on the way (a node's kernel
// runs on one thread at a time), no table shared between nodes. Forms of read-only arrays are
// also kept by their storage (Storage::SharedDerivedForm), so that predictors sharing the
// weights (Reshape, the C predict API's threads) share one copy of each form.
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <typeindex>
#include <utility>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>
#include <symbind/ops/kernels/gemm.h>

namespace symbind {

// A form's key in its storage (Storage::SharedDerivedForm): the array's offset into the storage,
// its rank and dims, then the layout the kernel asked for. A .symbind stores it without the
// offset (StoredForm::key), which the loader puts back.
inline int64_t OffsetInStorage(const NDArray& array) {
  return static_cast<const char*>(array.address()) - static_cast<const char*>(array.storage()->address());
}
inline std::vector<int64_t> FormKeyStart(int64_t offset, const TShape& shape) {
  std::vector<int64_t> key{offset, static_cast<int64_t>(shape.ndim())};
  key.insert(key.end(), shape.dims().begin(), shape.dims().end());
  return key;
}
// Whether key[at..] starts with `shape`'s rank and dims.
inline bool KeyHasShapeAt(const std::vector<int64_t>& key, size_t at, const TShape& shape) {
  const std::vector<int64_t>& dims = shape.dims();
  return key.size() >= at + 1 + dims.size() && key[at] == static_cast<int64_t>(dims.size()) &&
         std::equal(dims.begin(), dims.end(), key.begin() + static_cast<std::ptrdiff_t>(at) + 1);
}

// Which array, at which version of its storage, a value was derived from: the value is current
// while Matches(the array the call reads) holds (no values compared).
struct ArrayStamp {
  std::weak_ptr<Storage> storage;
  const void* data = nullptr;
  TShape shape;
  uint64_t version = 0;
  static ArrayStamp Of(const NDArray& a) {
    const std::shared_ptr<Storage>& st = a.storage();
    return ArrayStamp{st, st ? a.address() : nullptr, a.shape(), st ? st->version() : 0};
  }
  bool Matches(const NDArray& a) const {
    const std::shared_ptr<Storage>& st = a.storage();
    return st && !storage.owner_before(st) && !st.owner_before(storage) && data == a.address() &&
           shape == a.shape() && version == st->version();
  }
};

class DerivedWeights {
 public:
  // The array this call reads; forms made from another array or version are dropped.
  void Use(const NDArray& weights) {
    if (stamp_.Matches(weights)) return;
    forms_.clear();
    stamp_ = ArrayStamp::Of(weights);
    const bool bound = weights.storage() != nullptr;
    offset_ = bound ? OffsetInStorage(weights) : 0;
    bytes_ = bound ? weights.bytes() : 0;
    read_only_ = weights.read_only();
  }
  // Whether the array cannot change (memory-mapped, a ReadOnlyView): kernels may then choose
  // paths whose derived forms cost more to make, as they are made once.
  bool read_only() const { return read_only_; }
  // Whether the node keeps no form larger than the array (OpContext::compact_weights).
  bool compact() const { return compact_; }
  void set_compact(bool compact) { compact_ = compact; }
  // The form of type T laid out as `layout` says (a tiling, a tile size, the filter geometry:
  // whatever the form depends on besides the array), made by make(weights' floats) when this
  // array and version have none yet (arrays of another type: make casts the pointer back).
  template <typename T, typename Make>
  std::shared_ptr<const T> Get(std::initializer_list<int64_t> layout, const Make& make) {
    const std::type_index type(typeid(T));
    for (const Form& f : forms_)
      if (f.type == type && std::equal(f.layout.begin(), f.layout.end(), layout.begin(), layout.end()))
        return std::static_pointer_cast<const T>(f.value);
    const std::shared_ptr<Storage> st = stamp_.storage.lock();
    const auto build = [&] {
      std::shared_ptr<const void> value;
      const auto read = [&](const void* data) { value = std::make_shared<const T>(make(static_cast<const float*>(data))); };
      // Deferred bytes (a folded weight) are computed for this read only: the form replaces them.
      if (st) st->ReadOnce([&](const void* base) { read(static_cast<const char*>(base) + offset_); });
      else read(stamp_.data);
      return value;
    };
    std::shared_ptr<const void> value;
    if (read_only_ && st) {
      std::vector<int64_t> key = FormKeyStart(offset_, stamp_.shape);
      key.insert(key.end(), layout.begin(), layout.end());
      value = st->SharedDerivedForm(type, key, build);
      // Mapped from a model file: its pages leave memory until something reads them again.
      st->ReleaseResidentPages(stamp_.data, bytes_);
    } else {
      value = build();
    }
    forms_.push_back(Form{type, std::vector<int64_t>(layout), value});
    return std::static_pointer_cast<const T>(value);
  }
  // How many forms this node holds (tests).
  size_t num_forms() const { return forms_.size(); }
  // The array's floats, for a kernel that reads them directly rather than through a form
  // (Deferred bytes are computed now and kept).
  const float* raw() const {
    const std::shared_ptr<Storage> st = stamp_.storage.lock();
    if (!st) return static_cast<const float*>(stamp_.data);
    return reinterpret_cast<const float*>(static_cast<const char*>(st->data()) + offset_);
  }

 private:
  struct Form {
    std::type_index type;
    std::vector<int64_t> layout;
    std::shared_ptr<const void> value;
  };
  ArrayStamp stamp_;
  int64_t offset_ = 0;  // bytes from the storage's start
  size_t bytes_ = 0;
  bool read_only_ = false;
  bool compact_ = false;
  std::vector<Form> forms_;
};

// The form of type T for `layout` from `weights` when the caller has a node's DerivedWeights
// (already pointed at the array by Use), else made for this call only.
template <typename T, typename Make>
std::shared_ptr<const T> DerivedForm(DerivedWeights* weights, const float* w, std::initializer_list<int64_t> layout,
                                     const Make& make) {
  if (!weights) return std::make_shared<const T>(make(w));
  return weights->Get<T>(layout, make);
}

// How a form type is written into a .symbind file and read back in place (symbind convert
// --prepack): its integers and float arrays. Each form type registers one codec beside its kernel
// (FormCodecRegistrar); forms of a type without one are made at run time as before.
struct FloatSpan {
  const float* data;
  int64_t size;
};
struct SavedForm {
  std::vector<int64_t> header;
  std::vector<FloatSpan> arrays;  // views into the form
};
struct FormCodec {
  const char* name;  // in the file
  std::type_index type;
  SavedForm (*save)(const void* form);
  // The form over `arrays`, which `keep` keeps alive (no copy). Null when the form was made for
  // another instruction set; throws Error when header and arrays do not describe a form.
  std::shared_ptr<const void> (*load)(const std::vector<int64_t>& header, const std::vector<FloatSpan>& arrays,
                                      const std::shared_ptr<const void>& keep);
};
const FormCodec* FindFormCodec(std::type_index type);
const FormCodec* FindFormCodec(const std::string& name);
struct FormCodecRegistrar {
  explicit FormCodecRegistrar(const FormCodec& codec);
};

// The codec helpers of forms made of packed GEMM panels: header {count, then M, K, mr, tiling of
// each}, one array each.
SavedForm SavePackedPanels(const std::vector<PackedGemmA>& parts);
// Null when any part was packed for another instruction set.
std::unique_ptr<std::vector<PackedGemmA>> LoadPackedPanels(const std::vector<int64_t>& header,
                                                           const std::vector<FloatSpan>& arrays,
                                                           const std::shared_ptr<const void>& keep);

// The codec of a form type T holding its panels in T::*kParts.
template <typename T, std::vector<PackedGemmA> T::*kParts>
FormCodec PackedPanelsCodec(const char* name) {
  return FormCodec{
      name, typeid(T), [](const void* form) { return SavePackedPanels(static_cast<const T*>(form)->*kParts); },
      [](const std::vector<int64_t>& header, const std::vector<FloatSpan>& arrays,
         const std::shared_ptr<const void>& keep) -> std::shared_ptr<const void> {
        auto parts = LoadPackedPanels(header, arrays, keep);
        if (!parts) return nullptr;
        auto form = std::make_shared<T>();
        form.get()->*kParts = std::move(*parts);
        return form;
      }};
}

// Throws Error unless `parts` are `count` panels of rows x depth with `tiling`: a form read from a
// file is checked where its kernel knows what it must be.
void CheckPackedPanels(const std::vector<PackedGemmA>& parts, size_t count, int64_t rows, int64_t depth,
                       GemmTiling tiling, const char* what);

// The state of a node whose kernel derives forms from some of its weight arrays.
struct DerivedWeightsState : OpState {
  explicit DerivedWeightsState(size_t count) : weights(count) {}
  std::vector<DerivedWeights> weights;
};
inline CreateStateFn CreateDerivedWeightsState(size_t count) {
  return [count](const NodeAttrs&, const std::vector<TShape>&, const std::vector<TShape>&) {
    return std::make_unique<DerivedWeightsState>(count);
  };
}
// `array`'s floats as a kernel hands them on beside `weights` (NodeDerivedWeights of that array):
// their address only, so that a Deferred array (a folded weight) is not computed for kernels that
// read it through forms; kernels that read it directly take weights->raw() (RawWeights).
inline const float* WeightsFor(const NDArray& array, const DerivedWeights* weights) {
  if (!weights || array.dtype() != DType::kFloat32) return array.fdata();
  return static_cast<const float*>(array.address());
}
inline const float* RawWeights(const float* w, const DerivedWeights* weights) { return weights ? weights->raw() : w; }

// The node's DerivedWeights number `index`, pointed at `array`, for an inference call that has
// the node's state; null otherwise: a training call (the weights change every step, so their
// forms are made per call) or a call without an executor.
inline DerivedWeights* NodeDerivedWeights(const OpContext& ctx, size_t index, const NDArray& array) {
  auto* state = dynamic_cast<DerivedWeightsState*>(ctx.state);
  if (ctx.is_train || !state || index >= state->weights.size()) return nullptr;
  DerivedWeights* weights = &state->weights[index];
  weights->Use(array);
  weights->set_compact(ctx.compact_weights);
  return weights;
}

}  // namespace symbind
