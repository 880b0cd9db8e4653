// Executor::Reshape (MXNet's semantics): a new executor for new input shapes that shares the
// arrays whose shapes do not change.
#include <algorithm>

#include "bind_memory.h"
#include "executor.h"

namespace symbind {

namespace {
// What Reshape knows about one input (argument or aux state) of the old executor.
struct ReshapeRules {
  const std::map<std::string, TShape>* requested;
  bool partial_shaping;
  bool allow_up_sizing;
};

// Whether the new executor needs a new array for an input whose old array is `old` and whose
// shape in the new graph is `shape` (after MXNet's checks); otherwise it shares `old`.
bool NeedsNewArray(const NDArray& old, const TShape& shape, const std::string& name,
                   const ReshapeRules& rules) {
  if (old.is_none() || shape == old.shape()) return false;
  if (!rules.partial_shaping && !rules.requested->count(name))
    throw ShapeError(StrCat("Reshape: the shape of '", name, "' would change from ", old.shape(),
                            " to ", shape, " although it was not given; the new executor would "
                            "then not share it. Give its shape or pass partial_shaping=true"));
  if (shape.Size() > old.shape().Size() && !rules.allow_up_sizing)
    throw ShapeError(StrCat("Reshape: '", name, "' would grow from ", old.shape(), " to ", shape,
                            "; pass allow_up_sizing=true to allocate larger arrays"));
  return true;
}
}  // namespace

std::unique_ptr<Executor> Executor::Reshape(const std::map<std::string, TShape>& new_arg_shapes,
                                            bool partial_shaping, bool allow_up_sizing) const {
  const auto arg_names = symbol().ListArguments();
  const auto aux_names = symbol().ListAuxiliaryStates();
  for (auto& kv : new_arg_shapes)
    if (std::find(arg_names.begin(), arg_names.end(), kv.first) == arg_names.end() &&
        std::find(aux_names.begin(), aux_names.end(), kv.first) == aux_names.end())
      throw Error(StrCat("Reshape: '", kv.first, "' is not an input of the symbol; inputs: ",
                         JoinNames(arg_names), aux_names.empty() ? "" : ", ",
                         JoinNames(aux_names)));

  // Only the given shapes constrain inference, as in MXNet; an input whose shape they do not
  // determine keeps its old shape (the new executor's own inference then checks consistency).
  ShapeInferResult inferred = InferShapePartial(graph_, new_arg_shapes);
  for (auto& kv : new_arg_shapes) {
    auto arg = std::find(arg_names.begin(), arg_names.end(), kv.first);
    const TShape& got =
        arg != arg_names.end()
            ? inferred.arg_shapes[static_cast<size_t>(arg - arg_names.begin())]
            : inferred.aux_shapes[static_cast<size_t>(
                  std::find(aux_names.begin(), aux_names.end(), kv.first) - aux_names.begin())];
    if (!got.is_known())
      throw ShapeError(StrCat("Reshape: the shape given for '", kv.first, "' is incomplete: ",
                              kv.second, " (nothing else determines its unknown dims)"));
  }
  auto new_shape = [](const TShape& inferred_shape, const NDArray& old) {
    return inferred_shape.is_known() ? inferred_shape : old.shape();
  };

  const ReshapeRules rules{&new_arg_shapes, partial_shaping, allow_up_sizing};
  // (old array, new shape, name) of every input; new arrays are checked against the bind
  // memory limit, with the new op outputs, before any is allocated.
  struct Input {
    const NDArray* old;
    TShape shape;
    const std::string* name;
    std::vector<NDArray>* into;
  };
  std::vector<NDArray> args, grads, aux;
  std::vector<Input> inputs;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    const TShape shape = new_shape(inferred.arg_shapes[i], arg_arrays_[i]);
    inputs.push_back({&arg_arrays_[i], shape, &arg_names[i], &args});
    inputs.push_back({&grad_arrays_[i], shape, &arg_names[i], &grads});
  }
  for (size_t i = 0; i < aux_names.size(); ++i)
    inputs.push_back({&aux_arrays_[i], new_shape(inferred.aux_shapes[i], aux_arrays_[i]),
                      &aux_names[i], &aux});
  std::vector<PlannedArray> planned = PlannedOpOutputs(graph_, inferred.entry_shapes, {});
  std::vector<PlannedArray> new_inputs;
  std::vector<bool> fresh;
  for (const Input& in : inputs) {
    fresh.push_back(NeedsNewArray(*in.old, in.shape, *in.name, rules));
    if (fresh.back()) new_inputs.push_back({*in.name, {}, in.shape, in.old->dtype()});
  }
  planned.insert(planned.end(), new_inputs.begin(), new_inputs.end());
  // Checked whole before anything is allocated; the new executor reserves its op outputs itself.
  ReserveBindMemory(planned, "Reshape");
  BindMemoryReservation inputs_reservation = ReserveBindMemory(new_inputs, "Reshape");
  for (size_t k = 0; k < inputs.size(); ++k)
    inputs[k].into->push_back(fresh[k] ? NDArray(inputs[k].shape, inputs[k].old->dtype(), inputs[k].old->ctx())
                                       : *inputs[k].old);
  // Not in this executor's workspace: old and new executor may run at the same time.
  auto exec = std::make_unique<Executor>(graph_, ctx_, std::move(args), std::move(grads), grad_reqs_,
                                         std::move(aux), seed_, std::vector<TShape>{}, std::vector<int>{},
                                         nullptr, sharing_);
  exec->HoldBindMemory(std::move(inputs_reservation));
  return exec;
}

}  // namespace symbind
