// AlexNet (reduced width, 28x28 input) on Fashion-MNIST, in the style of
// cpp-package/example/alexnet.cpp. Trains for a bounded number of batches.
// Usage: mxnet-cpp-alexnet [fashion-mnist dir]
#include "utils.h"

Symbol ConvReLU(const std::string& name, Symbol data, int num_filter, Shape kernel, Shape pad) {
  Symbol conv = Convolution(name, data, Symbol(name + "_weight"), Symbol(name + "_bias"), kernel,
                            num_filter, Shape(1, 1), Shape(1, 1), pad);
  return Activation("relu_" + name, conv, ActivationActType::kRelu);
}

Symbol AlexnetSymbol(int num_classes) {
  Symbol data = Symbol::Variable("data");
  Symbol label = Symbol::Variable("data_label");
  // stage 1
  Symbol relu1 = ConvReLU("conv1", data, 32, Shape(3, 3), Shape(1, 1));
  Symbol lrn1 = LRN("lrn1", relu1, 5, 0.0001f, 0.75f, 2);
  Symbol pool1 = Pooling("pool1", lrn1, Shape(2, 2), PoolingPoolType::kMax, false, false,
                         PoolingPoolingConvention::kValid, Shape(2, 2));
  // stage 2
  Symbol relu2 = ConvReLU("conv2", pool1, 64, Shape(3, 3), Shape(1, 1));
  Symbol lrn2 = LRN("lrn2", relu2, 5, 0.0001f, 0.75f, 2);
  Symbol pool2 = Pooling("pool2", lrn2, Shape(2, 2), PoolingPoolType::kMax, false, false,
                         PoolingPoolingConvention::kValid, Shape(2, 2));
  // stage 3
  Symbol relu3 = ConvReLU("conv3", pool2, 96, Shape(3, 3), Shape(1, 1));
  Symbol relu4 = ConvReLU("conv4", relu3, 96, Shape(3, 3), Shape(1, 1));
  Symbol relu5 = ConvReLU("conv5", relu4, 64, Shape(3, 3), Shape(1, 1));
  Symbol pool3 = Pooling("pool3", relu5, Shape(3, 3), PoolingPoolType::kMax, false, false,
                         PoolingPoolingConvention::kValid, Shape(2, 2));
  // stage 4
  Symbol flatten = Flatten("flatten", pool3);
  Symbol fc1 = FullyConnected("fc1", flatten, Symbol("fc1_weight"), Symbol("fc1_bias"), 256);
  Symbol relu6 = Activation("relu6", fc1, ActivationActType::kRelu);
  Symbol dropout1 = Dropout("dropout1", relu6, 0.5);
  // stage 5
  Symbol fc2 = FullyConnected("fc2", dropout1, Symbol("fc2_weight"), Symbol("fc2_bias"), 256);
  Symbol relu7 = Activation("relu7", fc2, ActivationActType::kRelu);
  Symbol dropout2 = Dropout("dropout2", relu7, 0.5);
  // stage 6
  Symbol fc3 = FullyConnected("fc3", dropout2, Symbol("fc3_weight"), Symbol("fc3_bias"), num_classes);
  return SoftmaxOutput("softmax", fc3, label);
}

int main(int argc, char** argv) { return TrainBounded(AlexnetSymbol(10), argc, argv, 300, 0.001f); }
