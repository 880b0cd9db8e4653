// LeNet on Fashion-MNIST, in the style of cpp-package/example/lenet.cpp.
// Usage: mxnet-cpp-lenet [fashion-mnist dir]
#include "utils.h"

Symbol LeNetSymbol() {
  Symbol data = Symbol::Variable("data");
  Symbol data_label = Symbol::Variable("data_label");
  Symbol conv1_w("conv1_w"), conv1_b("conv1_b");
  Symbol conv2_w("conv2_w"), conv2_b("conv2_b");
  Symbol fc1_w("fc1_w"), fc1_b("fc1_b");
  Symbol fc2_w("fc2_w"), fc2_b("fc2_b");

  Symbol conv1 = Convolution("conv1", data, conv1_w, conv1_b, Shape(5, 5), 20);
  Symbol relu1 = Activation("relu1", conv1, ActivationActType::kRelu);
  Symbol pool1 = Pooling("pool1", relu1, Shape(2, 2), PoolingPoolType::kMax, false, false,
                         PoolingPoolingConvention::kValid, Shape(2, 2));
  Symbol conv2 = Convolution("conv2", pool1, conv2_w, conv2_b, Shape(5, 5), 50);
  Symbol relu2 = Activation("relu2", conv2, ActivationActType::kRelu);
  Symbol pool2 = Pooling("pool2", relu2, Shape(2, 2), PoolingPoolType::kMax, false, false,
                         PoolingPoolingConvention::kValid, Shape(2, 2));
  Symbol flatten = Flatten("flatten", pool2);
  Symbol fc1 = FullyConnected("fc1", flatten, fc1_w, fc1_b, 500);
  Symbol relu3 = Activation("relu3", fc1, ActivationActType::kRelu);
  Symbol fc2 = FullyConnected("fc2", relu3, fc2_w, fc2_b, 10);
  return SoftmaxOutput("softmax", fc2, data_label);
}

int main(int argc, char** argv) {
  TrainConfig cfg;
  cfg.epochs = 3;
  cfg.batch_size = 64;
  cfg.optimizer = "adam";
  cfg.learning_rate = 0.001f;
  float acc = TrainAndTest(LeNetSymbol(), FashionMNISTDir(argc, argv), cfg);
  return acc > 0 ? 0 : 1;
}
