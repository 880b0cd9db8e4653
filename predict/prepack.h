// Prepacking: the forms a model's kernels derive from its weights (GEMM-packed panels,
// Winograd-transformed filters), made once and stored in its .symbind file, so that every
// process running the file maps them instead of making a private copy:
//
//   Model model = LoadModelFiles("resnet-50-symbol.json", "resnet-50-0000.params");
//   PrepackReport report = PrepackModel(&model, {{"data", TShape({1, 3, 224, 224})}});
//   SaveModel("resnet-50.symbind", model);  // or: symbind convert ... --prepack
//
// The forms are for this process's instruction set (GemmIsa()); a process on another one
// ignores them and packs at its first run, as for any model.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <symbind/core/tshape.h>
#include <symbind/io/model_file.h>

namespace symbind {

struct PrepackReport {
  size_t folded = 0;            // BatchNorm nodes folded into the layer before them
  size_t forms = 0;             // forms stored
  size_t form_bytes = 0;
  size_t without_codec = 0;     // forms of a type that cannot be stored (made at run time)
};

// Folds `model`'s BatchNorms into the layers before them as predictors do at bind (FoldBatchNorm),
// in its graph and arrays; stored forms of the weights the fold replaced go with them. The model
// is then for inference only. Returns the BatchNorm nodes folded away.
std::vector<std::string> FoldModelBatchNorms(Model* model);

// Folds `model`'s BatchNorms (FoldModelBatchNorms), runs it once on zeros for `input_shapes` (added to its stored ones) and keeps in
// model->forms what the kernels derived from its float32 parameters, for model->forms_isa.
// Throws what a Predictor throws for missing or wrong shapes. `compact_weights`: the forms of
// PredictorOptions::compact_weights (what predictors with that option then find).
PrepackReport PrepackModel(Model* model, const std::map<std::string, TShape>& input_shapes,
                           bool compact_weights = false);

}  // namespace symbind
