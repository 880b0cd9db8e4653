// A multi-layer perceptron on Fashion-MNIST, in the style of cpp-package/example/mlp_cpu.cpp.
// Usage: mxnet-cpp-mlp [fashion-mnist dir [epochs, default 10]]
#include "utils.h"

Symbol mlp(const std::vector<int>& layers) {
  auto x = Symbol::Variable("data");
  auto label = Symbol::Variable("data_label");
  std::vector<Symbol> weights(layers.size()), biases(layers.size()), outputs(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    weights[i] = Symbol::Variable("w" + std::to_string(i));
    biases[i] = Symbol::Variable("b" + std::to_string(i));
    Symbol fc = FullyConnected(i == 0 ? x : outputs[i - 1], weights[i], biases[i], layers[i]);
    outputs[i] = i == layers.size() - 1 ? fc : Activation(fc, ActivationActType::kRelu);
  }
  return SoftmaxOutput(outputs.back(), label);
}

int main(int argc, char** argv) {
  TrainConfig cfg;
  cfg.flat = true;
  cfg.epochs = argc > 2 ? std::atoi(argv[2]) : 10;
  if (cfg.epochs < 1) {
    std::cerr << "usage: mxnet-cpp-mlp [fashion-mnist dir [epochs >= 1]]" << std::endl;
    return 2;
  }
  cfg.learning_rate = 0.1f;
  float acc = TrainAndTest(mlp({128, 64, 10}), FashionMNISTDir(argc, argv), cfg);
  return acc > 0 ? 0 : 1;
}
