// The memory planner (executor/memory_plan.h) reuses intermediate buffers in executors that
// compute no gradient. Planned runs must equal unplanned runs bit for bit, also when the
// shared buffers start as NaN (so no kernel may rely on zeroed outputs) and when parallel
// branches run on several threads.
#include <cstdlib>

#include <symbind/executor/threading.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/symbol_json.h>

#include "op_test_util.h"

using namespace symbind;

namespace {
const std::string kShared = SYMBIND_SHARED_DIR;

struct PlanRun {
  std::vector<std::vector<float>> outputs;
  ExecutorMemory memory;
};

// Binds without gradients with buffer sharing `sharing` and runs inference twice.
PlanRun RunInference(const Symbol& sym, const std::map<std::string, NDArray>& args,
                     const std::map<std::string, NDArray>& aux, BufferSharing sharing,
                     SimpleBindOptions options = {}) {
  options.buffer_sharing = sharing;
  std::map<std::string, OpReq> no_grads;
  for (auto& n : sym.ListArguments()) no_grads[n] = OpReq::kNull;
  auto exec = SimpleBind(sym, Context::CPU(), args, {}, no_grads, aux, options);
  PlanRun r;
  for (int run = 0; run < 2; ++run) {
    exec->Forward(false);
    r.outputs.clear();
    for (auto& o : exec->outputs()) r.outputs.push_back(o.ToVector());
  }
  r.memory = exec->memory();
  return r;
}

// Same inputs and weights, planned (buffers poisoned with NaN) and unplanned.
void CheckPlannedEqualsUnplanned(const Symbol& sym, const std::map<std::string, NDArray>& args,
                                 const std::map<std::string, NDArray>& aux,
                                 const SimpleBindOptions& options = {}) {
  PlanRun plain = RunInference(sym, args, aux, BufferSharing::kOff, options);
  PlanRun planned = RunInference(sym, args, aux, BufferSharing::kOnNaNFilled, options);
  CHECK_FALSE(plain.memory.planned);
  CHECK(planned.memory.planned);
  CHECK(planned.memory.output_bytes < plain.memory.output_bytes);
  CHECK(plain.memory.output_bytes == plain.memory.unplanned_bytes);
  REQUIRE(plain.outputs.size() == planned.outputs.size());
  for (size_t i = 0; i < plain.outputs.size(); ++i) {
    INFO("output " << i);
    CHECK(plain.outputs[i] == planned.outputs[i]);
  }
}

// The zoo graph up to its softmax input, bound with Gaussian weights shared by both runs.
void CheckZooGraph(const std::string& file, const TShape& data_shape) {
  Symbol full = LoadSymbolFile(kShared + "/models/symbols/" + file);
  Symbol logits = full.GetChildren()[0];
  std::map<std::string, NDArray> args, aux;
  auto init = SimpleBind(logits, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions{{{"data", data_shape}}, 7});
  args = init->arg_dict();
  aux = init->aux_dict();
  CheckPlannedEqualsUnplanned(logits, args, aux);
}
}  // namespace

TEST_CASE("memory plan: zoo graphs equal their unplanned runs bit for bit", "[executor][memory_plan]") {
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    SetNumThreads(threads);
    CheckZooGraph("resnet-18-symbol.json", TShape({1, 3, 96, 96}));
    CheckZooGraph("squeezenet_v1.1-symbol.json", TShape({2, 3, 96, 96}));
    CheckZooGraph("caffenet-symbol.json", TShape({1, 3, 227, 227}));
    CheckZooGraph("fcn32s-symbol.json", TShape({1, 3, 64, 64}));
  }
  SetNumThreads(0);
}

TEST_CASE("memory plan: MTCNN nets with real weights equal their unplanned runs", "[executor][memory_plan]") {
  const std::pair<const char*, TShape> nets[] = {{"det1", TShape({1, 3, 120, 160})},
                                                 {"det2", TShape({8, 3, 24, 24})},
                                                 {"det3", TShape({4, 3, 48, 48})}};
  for (auto& [name, shape] : nets) {
    INFO(name);
    Symbol sym;
    std::map<std::string, NDArray> args, aux;
    LoadCheckpoint(kShared + "/models/mtcnn/" + name, 1, &sym, &args, &aux);
    args["data"] = symbind::test::RandomArray(shape, 3);
    CheckPlannedEqualsUnplanned(sym, args, aux);
  }
}

TEST_CASE("memory plan: ResNet-18 keeps a fraction of the unplanned bytes", "[executor][memory_plan]") {
  Symbol sym = LoadSymbolFile(kShared + "/models/symbols/resnet-18-symbol.json");
  SimpleBindOptions options{{{"data", TShape({1, 3, 224, 224})}}, 0};
  PlanRun planned = RunInference(sym, {}, {}, BufferSharing::kOn, options);
  // Largest activation pair: conv0's 64x112x112 output and its ReLU's, 3.2 MB each.
  const size_t largest_pair = 2 * 64 * 112 * 112 * sizeof(float);
  CHECK(planned.memory.planned);
  CHECK(planned.memory.output_bytes <= 2 * largest_pair);
  CHECK(planned.memory.unplanned_bytes > 4 * planned.memory.output_bytes);
}

TEST_CASE("memory plan: executors that compute gradients keep every buffer", "[executor][memory_plan]") {
  Symbol sym = LoadSymbolFile(kShared + "/models/symbols/squeezenet_v1.1-symbol.json");
  auto exec = SimpleBind(sym, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions{{{"data", TShape({1, 3, 64, 64})}}, 0});
  CHECK_FALSE(exec->memory().planned);
  CHECK(exec->memory().output_bytes == exec->memory().unplanned_bytes);
}
