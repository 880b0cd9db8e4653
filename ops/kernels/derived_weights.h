// Forms a kernel derives from one weight array (GEMM-packed panels, Winograd-transformed
// filters), held by the node's state (OpState) for as long as the node is bound:
//
//   op.set_create_state(CreateDerivedWeightsState(1));           // at registration
//   DerivedWeights* weights = NodeDerivedWeights(ctx, 0, in[1]);  // in the forward kernel
//   auto packed = DerivedForm<PackedConvWeights>(weights, w, tiling, [&](const float* w) { return Pack(w); });
//
// A form is made again only when the call reads another array or a write moved the array's
// storage version (Storage::version): no values compared, no lock (a node's kernel runs on one
// thread at a time), no table shared between nodes.
#pragma once
#include <cstdint>
#include <memory>
#include <typeindex>
#include <utility>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>

namespace symbind {

class DerivedWeights {
 public:
  // The array this call reads; forms made from another array or version are dropped.
  void Use(const NDArray& weights) {
    const std::shared_ptr<Storage>& st = weights.storage();
    const uint64_t version = st ? st->version() : 0;
    const bool same = st && !storage_.owner_before(st) && !st.owner_before(storage_) && !storage_.expired() &&
                      data_ == weights.raw_data() && version_ == version;
    if (!same) forms_.clear();
    storage_ = st;
    data_ = st ? weights.raw_data() : nullptr;
    version_ = version;
    read_only_ = weights.read_only();
  }
  // Whether the array cannot change (memory-mapped, a ReadOnlyView): kernels may then choose
  // paths whose derived forms cost more to make, as they are made once.
  bool read_only() const { return read_only_; }
  // The form of type T for `variant` (a tiling, a tile size), made by make(weights' floats) when
  // this array and version have none.
  template <typename T, typename Make>
  std::shared_ptr<const T> Get(int64_t variant, const Make& make) {
    const std::type_index type(typeid(T));
    for (const Form& f : forms_)
      if (f.type == type && f.variant == variant) return std::static_pointer_cast<const T>(f.value);
    auto value = std::make_shared<const T>(make(static_cast<const float*>(data_)));
    forms_.push_back(Form{type, variant, value});
    return value;
  }
  // How many forms are held (tests).
  size_t num_forms() const { return forms_.size(); }

 private:
  struct Form {
    std::type_index type;
    int64_t variant;
    std::shared_ptr<const void> value;
  };
  std::weak_ptr<Storage> storage_;
  const void* data_ = nullptr;
  uint64_t version_ = 0;
  bool read_only_ = false;
  std::vector<Form> forms_;
};

// The form of type T for `variant` from `weights` when the caller has a node's DerivedWeights
// (already pointed at the array by Use), else made for this call only.
template <typename T, typename Make>
std::shared_ptr<const T> DerivedForm(DerivedWeights* weights, const float* w, int64_t variant, const Make& make) {
  if (!weights) return std::make_shared<const T>(make(w));
  return weights->Get<T>(variant, make);
}

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
// The node's DerivedWeights number `index`, pointed at `array`, for an inference call that has
// the node's state; null otherwise: a training call (the weights change every step, so their
// forms are made per call) or a call without an executor.
inline DerivedWeights* NodeDerivedWeights(const OpContext& ctx, size_t index, const NDArray& array) {
  auto* state = dynamic_cast<DerivedWeightsState*>(ctx.state);
  if (ctx.is_train || !state || index >= state->weights.size()) return nullptr;
  DerivedWeights* weights = &state->weights[index];
  weights->Use(array);
  return weights;
}

}  // namespace symbind
