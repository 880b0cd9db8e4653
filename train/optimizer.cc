#include "optimizer.h"

#include <symbind/core/error.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/kernel_call.h>

namespace symbind {

namespace {

bool SameOptions(const SGDOptions& a, const SGDOptions& b) {
  return a.lr == b.lr && a.momentum == b.momentum && a.wd == b.wd &&
         a.rescale_grad == b.rescale_grad && a.clip_gradient == b.clip_gradient;
}

}  // namespace

SGD::SGD(const SGDOptions& options) : options_(options) {}

const NodeAttrs& SGD::Attrs(bool with_momentum) {
  NodeAttrs& attrs = attrs_[with_momentum];
  if (attrs.op && SameOptions(parsed_for_[with_momentum], options_)) return attrs;
  attrs.op = &OpRegistry::Global().Get(with_momentum ? "sgd_mom_update" : "sgd_update");
  attrs.name = "sgd";
  auto print = [](float v) { return ParamValue<float>::Print(v); };
  attrs.dict = {{"lr", print(options_.lr)},
                {"wd", print(options_.wd)},
                {"rescale_grad", print(options_.rescale_grad)},
                {"clip_gradient", print(options_.clip_gradient)}};
  if (with_momentum) attrs.dict["momentum"] = print(options_.momentum);
  attrs.op->ParseAttrs(&attrs);
  parsed_for_[with_momentum] = options_;
  return attrs;
}

void SGD::Update(const std::string& key, const NDArray& weight, const NDArray& grad) {
  if (weight.is_none() || grad.is_none())
    throw Error(StrCat("SGD update of '", key, "': empty weight or gradient array"));
  if (weight.Size() != grad.Size())
    throw ShapeError(StrCat("SGD update of '", key, "': weight ", weight.shape().ToString(),
                            " and gradient ", grad.shape().ToString(), " differ in size"));
  if (weight.dtype() != DType::kFloat32 || grad.dtype() != DType::kFloat32)
    throw TypeError(StrCat("SGD update of '", key, "': weight and gradient must be float32, got ",
                       DTypeName(weight.dtype()), " and ", DTypeName(grad.dtype())));
  const bool with_momentum = options_.momentum != 0.0f;
  const NodeAttrs& attrs = Attrs(with_momentum);
  // The kernels read and write element by element, so the weight is updated in place.
  std::vector<NDArray> inputs{weight, grad.Reshape(weight.shape())};
  if (with_momentum) {
    auto it = momentum_.find(key);
    if (it == momentum_.end() || it->second.shape() != weight.shape()) {
      NDArray m(weight.shape());
      m.Fill(0.0f);
      it = momentum_.insert_or_assign(key, m).first;
    }
    inputs.push_back(it->second);
  }
  CallForward(*attrs.op, OpContext{}, attrs, inputs, {OpReq::kWriteInplace}, {weight});
}

void SGD::Step(const Executor& exec) {
  const std::vector<std::string> names = exec.graph().ListArguments();
  for (size_t i = 0; i < names.size(); ++i)
    if (exec.grad_reqs()[i] != OpReq::kNull)
      Update(names[i], exec.arg_arrays()[i], exec.grad_arrays()[i]);
}

}  // namespace symbind
