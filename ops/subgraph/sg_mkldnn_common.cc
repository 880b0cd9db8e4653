#include <symbind/ops/subgraph/sg_mkldnn_common.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

namespace symbind {
namespace subgraph {

using json = nlohmann::json;

const InnerNode* InnerGraph::Find(const std::vector<std::string>& ops) const {
  for (const InnerNode& n : nodes)
    if (std::find(ops.begin(), ops.end(), n.op()) != ops.end()) return &n;
  return nullptr;
}

const InnerNode* InnerGraph::Producer(const InnerNode& n) const {
  if (n.inputs.empty() || n.inputs[0] < 0) return nullptr;
  return &nodes[static_cast<size_t>(n.inputs[0])];
}

InnerGraph ParseInnerGraph(const KwArgs& kwargs, const std::string& op_name) {
  auto fail = [&](const std::string& what) -> ParamError {
    return ParamError(op_name + ": the nested graph (\"subgraphs\") " + what);
  };
  auto it = kwargs.find("subgraphs");
  if (it == kwargs.end())
    throw ParamError(op_name + " needs the nested graph it stands for (\"subgraphs\" in MXNet's symbol file)");
  const json j = json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw fail("is not valid JSON");
  if (!j.is_array() || j.size() != 1 || !j[0].is_object() || !j[0].contains("nodes") || !j[0]["nodes"].is_array())
    throw fail("must be one graph with a \"nodes\" array");
  const json& nodes = j[0]["nodes"];
  InnerGraph g;
  std::vector<int> inner_index;  // file node -> operator index, -1 for a variable
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json& jn = nodes[i];
    if (!jn.is_object() || !jn.contains("op") || !jn["op"].is_string())
      throw fail("node " + std::to_string(i) + " has no \"op\" string");
    const std::string op = jn["op"].get<std::string>();
    if (op == "null") {
      inner_index.push_back(-1);
      continue;
    }
    const Op* found = OpRegistry::Global().Find(op);
    if (!found) throw fail("has unknown operator '" + op + "'");
    InnerNode n;
    n.attrs.op = found;
    n.attrs.name = jn.contains("name") && jn["name"].is_string() ? jn["name"].get<std::string>() : op;
    for (const char* field : {"param", "attr", "attrs"}) {
      if (!jn.contains(field) || !jn[field].is_object()) continue;
      for (auto a = jn[field].begin(); a != jn[field].end(); ++a) {
        const std::string& key = a.key();
        if (key.size() > 4 && key.compare(0, 2, "__") == 0) continue;  // __shape__ and other hints
        n.attrs.dict[key] = a.value().is_string() ? a.value().get<std::string>() : a.value().dump();
      }
    }
    found->ParseAttrs(&n.attrs);
    if (jn.contains("inputs") && jn["inputs"].is_array())
      for (const json& e : jn["inputs"]) {
        if (!e.is_array() || e.empty() || !e[0].is_number_unsigned() || e[0].get<size_t>() >= i)
          throw fail("node " + std::to_string(i) + " has an input that names no earlier node");
        n.inputs.push_back(inner_index[e[0].get<size_t>()]);
      }
    inner_index.push_back(static_cast<int>(g.nodes.size()));
    g.nodes.push_back(std::move(n));
  }
  return g;
}

KwArgs FlagsOf(const KwArgs& kwargs, const std::vector<std::pair<std::string, std::string>>& renames) {
  KwArgs flags;
  for (const auto& [key, value] : kwargs) {
    if (key == "subgraphs") continue;
    std::string name = key;
    for (const auto& [old_name, new_name] : renames)
      if (key == old_name) name = new_name;
    flags[name] = value;
  }
  return flags;
}

PostOp PostOp::FromNode(const InnerNode& n) {
  PostOp p;
  const std::string& op = n.op();
  if (op == "Activation") {
    const std::string type = ParsedParam<std::string>(n.attrs, "act_type");
    if (type == "relu") p.kind = kRelu;
    else if (type == "sigmoid") p.kind = kSigmoid;
    else if (type == "tanh") p.kind = kTanh;
    else if (type == "softrelu") p.kind = kSoftRelu;
    else throw ParamError("Activation act_type '" + type + "' (node '" + n.attrs.name + "') has no fused form");
  } else if (op == "LeakyReLU") {
    const std::string type = ParsedParam<std::string>(n.attrs, "act_type");
    p.alpha = ParsedParam<float>(n.attrs, "slope");
    if (type == "leaky") p.kind = kLeaky;
    else if (type == "elu") p.kind = kElu;
    else if (type == "gelu") p.kind = kGelu;
    else throw ParamError("LeakyReLU act_type '" + type + "' (node '" + n.attrs.name + "') has no fused form");
  } else if (op == "clip") {
    p.kind = kClip;
    p.alpha = ParsedParam<float>(n.attrs, "a_min");
    p.beta = ParsedParam<float>(n.attrs, "a_max");
  } else if (op == "abs") {
    p.kind = kAbs;
  } else if (op == "square") {
    p.kind = kSquare;
  } else if (op == "sqrt") {
    p.kind = kSqrt;
  } else if (op == "exp") {
    p.kind = kExp;
  } else {
    throw ParamError("operator " + op + " (node '" + n.attrs.name + "') is no activation a subgraph op can fuse");
  }
  return p;
}

float PostOp::operator()(float x) const {
  switch (kind) {
    case kNone: return x;
    case kRelu: return x > 0 ? x : 0.0f;
    case kLeaky: return x > 0 ? x : alpha * x;
    case kClip: return std::min(std::max(x, alpha), beta);
    case kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case kTanh: return std::tanh(x);
    case kSoftRelu: return x > 20.0f ? x : std::log1p(std::exp(x));
    case kElu: return x > 0 ? x : alpha * std::expm1(x);
    case kGelu: return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
    case kAbs: return std::fabs(x);
    case kSquare: return x * x;
    case kSqrt: return std::sqrt(x);
    case kExp: return std::exp(x);
  }
  return x;
}

bool PostOp::NonNegative() const {
  switch (kind) {
    case kRelu: case kSigmoid: case kSoftRelu: case kAbs: case kSquare: case kSqrt: case kExp: return true;
    case kClip: return alpha == 0.0f;
    default: return false;
  }
}

std::vector<float> WeightScales(const float* w, const float* bias, int64_t channels, int64_t per_channel,
                                float data_scale, bool per_channel_scales) {
  std::vector<float> scales(static_cast<size_t>(channels));
  if (!per_channel_scales) {
    const auto [lo, hi] = quant::MinMax(w, channels * per_channel);
    std::fill(scales.begin(), scales.end(), quant::QuantizeScale(DType::kInt8, lo, hi));
    return scales;
  }
  for (int64_t c = 0; c < channels; ++c) {
    const auto [lo, hi] = quant::MinMax(w + c * per_channel, per_channel);
    float s = quant::QuantizeScale(DType::kInt8, lo, hi);
    // The bias in the sums' units must stay within 2^30 (MXNet: INT32_MAX / 2 over the bias).
    if (bias && bias[c] != 0.0f) {
      const float limit = (bias[c] > 0 ? float(std::numeric_limits<int32_t>::max())
                                       : float(std::numeric_limits<int32_t>::min())) / 2 / bias[c] / data_scale;
      s = std::min(s, limit);
    }
    scales[static_cast<size_t>(c)] = s;
  }
  return scales;
}

void QuantizeWeights(const float* w, const float* bias, int64_t channels, int64_t per_channel,
                     const std::vector<float>& scales, float data_scale, int8_t* w8, int32_t* b32,
                     bool even_levels) {
  for (int64_t c = 0; c < channels; ++c) {
    const float s = scales[static_cast<size_t>(c)];
    for (int64_t i = 0; i < per_channel; ++i)
      w8[c * per_channel + i] =
          even_levels ? static_cast<int8_t>(2 * quant::SaturateRound<int8_t>(w[c * per_channel + i] * (s / 2)))
                      : quant::SaturateRound<int8_t>(w[c * per_channel + i] * s);
    if (b32) b32[c] = bias ? quant::SaturateRound<int32_t>(bias[c] * data_scale * s) : 0;
  }
}

bool SgWeightsState::Current(const std::vector<NDArray>& sources, float data_scale) {
  bool current = stamps.size() == sources.size() && std::memcmp(&scale, &data_scale, sizeof(float)) == 0;
  for (size_t i = 0; current && i < sources.size(); ++i) current = stamps[i].Matches(sources[i]);
  if (current) return true;
  stamps.clear();
  for (const NDArray& a : sources) stamps.push_back(ArrayStamp::Of(a));
  scale = data_scale;
  return false;
}

}  // namespace subgraph
}  // namespace symbind
