// GoogLeNet (reduced width, 28x28 input) on Fashion-MNIST, in the style of
// cpp-package/example/googlenet.cpp. Trains for a bounded number of batches.
// Usage: mxnet-cpp-googlenet [fashion-mnist dir]
#include "utils.h"

Symbol ConvFactory(Symbol data, int num_filter, Shape kernel, Shape stride = Shape(1, 1),
                   Shape pad = Shape(0, 0), const std::string& name = "",
                   const std::string& suffix = "") {
  Symbol conv_w("conv_" + name + suffix + "_w"), conv_b("conv_" + name + suffix + "_b");
  Symbol conv = Convolution("conv_" + name + suffix, data, conv_w, conv_b, kernel, num_filter,
                            stride, Shape(1, 1), pad);
  return Activation("relu_" + name + suffix, conv, "relu");
}

Symbol InceptionFactory(Symbol data, int num_1x1, int num_3x3red, int num_3x3, int num_d5x5red,
                        int num_d5x5, PoolingPoolType pool, int proj, const std::string& name) {
  Symbol c1x1 = ConvFactory(data, num_1x1, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "_1x1");
  Symbol c3x3r = ConvFactory(data, num_3x3red, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "_3x3", "_reduce");
  Symbol c3x3 = ConvFactory(c3x3r, num_3x3, Shape(3, 3), Shape(1, 1), Shape(1, 1), name + "_3x3");
  Symbol cd5x5r = ConvFactory(data, num_d5x5red, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "_5x5", "_reduce");
  Symbol cd5x5 = ConvFactory(cd5x5r, num_d5x5, Shape(5, 5), Shape(1, 1), Shape(2, 2), name + "_5x5");
  Symbol pooling = Pooling(name + "_pool", data, Shape(3, 3), pool, false, false,
                           PoolingPoolingConvention::kValid, Shape(1, 1), Shape(1, 1));
  Symbol cproj = ConvFactory(pooling, proj, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "_proj");
  std::vector<Symbol> lst{c1x1, c3x3, cd5x5, cproj};
  return Concat("ch_concat_" + name + "_chconcat", lst, lst.size());
}

Symbol GoogleNetSymbol(int num_classes) {
  Symbol data = Symbol::Variable("data");
  Symbol data_label = Symbol::Variable("data_label");
  Symbol conv1 = ConvFactory(data, 16, Shape(3, 3), Shape(1, 1), Shape(1, 1), "conv1");
  Symbol pool1 = Pooling("pool1", conv1, Shape(2, 2), PoolingPoolType::kMax, false, false,
                         PoolingPoolingConvention::kValid, Shape(2, 2));           // 14x14
  Symbol conv2 = ConvFactory(pool1, 32, Shape(3, 3), Shape(1, 1), Shape(1, 1), "conv2");
  Symbol in3a = InceptionFactory(conv2, 16, 16, 24, 4, 8, PoolingPoolType::kMax, 8, "in3a");
  Symbol in3b = InceptionFactory(in3a, 24, 24, 32, 8, 16, PoolingPoolType::kMax, 16, "in3b");
  Symbol pool3 = Pooling("pool3", in3b, Shape(2, 2), PoolingPoolType::kMax, false, false,
                         PoolingPoolingConvention::kValid, Shape(2, 2));           // 7x7
  Symbol in4a = InceptionFactory(pool3, 32, 24, 40, 4, 12, PoolingPoolType::kMax, 16, "in4a");
  Symbol pool4 = Pooling("global_pool", in4a, Shape(7, 7), PoolingPoolType::kAvg, true);
  Symbol flatten = Flatten("flatten", pool4);
  Symbol fc1 = FullyConnected("fc1", flatten, Symbol("fc1_w"), Symbol("fc1_b"), num_classes);
  return SoftmaxOutput("softmax", fc1, data_label);
}

int main(int argc, char** argv) { return TrainBounded(GoogleNetSymbol(10), argc, argv, 300, 0.002f); }
