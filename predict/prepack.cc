#include <symbind/predict/prepack.h>

#include <algorithm>
#include <cstring>

#include <symbind/ops/kernels/derived_weights.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/predict/graph_rewrites.h>
#include <symbind/predict/predictor.h>

namespace symbind {

namespace {
// The forms `views`' storages hold for each array (DerivedWeights keys them by the array's
// offset into its storage, its rank and dims, then the kernel's layout), as StoredForms.
void CollectForms(const std::map<std::string, NDArray>& views, Model* model, PrepackReport* report) {
  for (const auto& [name, view] : views) {
    if (view.is_none() || !view.storage() || view.dtype() != DType::kFloat32 || view.bytes() == 0) continue;
    const int64_t offset = OffsetInStorage(view);
    for (const Storage::HeldForm& held : view.storage()->DerivedFormsHeld()) {
      const std::vector<int64_t>& k = held.key;
      if (k.empty() || k[0] != offset || !KeyHasShapeAt(k, 1, view.shape())) continue;
      const FormCodec* codec = FindFormCodec(held.type);
      if (!codec) {
        ++report->without_codec;
        continue;
      }
      const SavedForm saved = codec->save(held.value.get());
      StoredForm s{name, codec->name, std::vector<int64_t>(k.begin() + 1, k.end()), saved.header, {}};
      for (const FloatSpan& span : saved.arrays) {
        NDArray array(TShape({span.size}));
        if (span.size) std::memcpy(array.fdata(), span.data, static_cast<size_t>(span.size) * sizeof(float));
        report->form_bytes += array.bytes();
        s.arrays.push_back(std::move(array));
      }
      model->forms.push_back(std::move(s));
      ++report->forms;
    }
  }
}
}  // namespace

std::vector<std::string> FoldModelBatchNorms(Model* model) {
  RewrittenGraph folded = FoldBatchNorm(model->symbol, model->args, model->aux);
  model->symbol = std::move(folded.symbol);
  model->args = std::move(folded.args);
  model->aux = std::move(folded.aux);
  std::vector<StoredForm> kept;
  for (StoredForm& f : model->forms)
    if (model->args.count(f.param) || model->aux.count(f.param)) kept.push_back(std::move(f));
  model->forms = std::move(kept);
  return std::move(folded.folded);
}

PrepackReport PrepackModel(Model* model, const std::map<std::string, TShape>& input_shapes, bool compact_weights) {
  PrepackReport report;
  report.folded = FoldModelBatchNorms(model).size();
  std::map<std::string, TShape> shapes = model->input_shapes;
  for (const auto& [name, shape] : input_shapes) shapes[name] = shape;

  // The forms stay with the views' storages after the predictor is gone.
  const std::map<std::string, NDArray> args = ReadOnlyViews(model->args), aux = ReadOnlyViews(model->aux);
  {
    PredictorOptions options;
    options.compact_weights = compact_weights;
    Predictor predictor(model->symbol, args, aux, shapes, options);
    predictor.Forward();  // on its zero-filled inputs
  }
  model->forms.clear();
  model->forms_isa = GemmIsa();
  CollectForms(args, model, &report);
  CollectForms(aux, model, &report);
  return report;
}

}  // namespace symbind
