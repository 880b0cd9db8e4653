// A model loaded once and run at any input shape, as the face models are: one Predictor per
// input shape seen (bound on first use, then reused with its buffers), all sharing the
// parameter arrays.
//
//   Network net(LoadModelSpec("../shared/models/retinaface/retina16,0"));
//   NDArray input = net.Input(TShape({1, 3, 480, 640}));  // the bound input: write into it
//   FillPixels(input.fdata());
//   const std::vector<NDArray>& outputs = net.Forward();
//
// LoadModelSpec reads the ways a model is named on the command line:
//   "PREFIX,EPOCH"        an MXNet checkpoint: PREFIX-symbol.json and PREFIX-%04d(EPOCH).params
//   "SYMBOL.json,PARAMS"  a symbol JSON file and an MXNet .params file
//   "MODEL.symbind"       a one-file model (`symbind convert`)
#pragma once
#include <symbind/io/model_file.h>
#include <symbind/predict/predictor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace symbind {
namespace vision {

// Loads a model named as above. Throws symbind::Error (IOError for missing or malformed
// files) naming the spec.
Model LoadModelSpec(const std::string& spec);

struct NetworkOptions {
  // Outputs to compute by name (PredictorOptions::outputs); empty: the model's own outputs.
  std::vector<std::string> outputs;
  // Intermediate buffers shared with networks that run one at a time (PredictorOptions).
  std::shared_ptr<Workspace> workspace;
  // Input arrays shared with networks run one at a time (PredictorOptions::input_workspace).
  // Null: the network makes one for its own predictors, which are written and run one at a
  // time through Input() and Forward() (an input bound earlier is valid until the next Input()).
  std::shared_ptr<Workspace> input_workspace;
};

class Network {
 public:
  Network() = default;
  // `what` names the network in errors ("RetinaFace", "MTCNN det2", ...). The model must have
  // exactly one data input.
  Network(Model model, const std::string& what, NetworkOptions options = {});
  bool loaded() const { return loaded_; }
  const std::string& what() const { return what_; }
  const std::string& input_name() const { return input_name_; }
  const Symbol& symbol() const { return model_.symbol; }

  // The bound input array for `shape`, binding a predictor for a shape not seen before; write
  // into it, then Forward(). Inputs of all shapes share one array (NetworkOptions::
  // input_workspace): an array returned earlier holds its values only until the next Input().
  NDArray Input(const TShape& shape);
  // Runs the predictor of the last Input().
  const std::vector<NDArray>& Forward();
  // Copies `data` into the input of its shape, then runs.
  const std::vector<NDArray>& Forward(const NDArray& data);
  // Outputs of the last Forward(), by name ("prob1_output", ...) and their names.
  const NDArray& Output(const std::string& name) const;
  const std::vector<NDArray>& Outputs() const;
  const std::vector<std::string>& output_names() const;
  size_t num_predictors() const { return predictors_.size(); }

 private:
  Predictor& Current() const;

  bool loaded_ = false;
  std::string what_;
  Model model_;
  NetworkOptions options_;
  std::string input_name_;
  std::map<std::vector<int64_t>, Predictor> predictors_;
  Predictor* current_ = nullptr;
};

}  // namespace vision
}  // namespace symbind
