// Inception-BN (reduced width, 28x28 input) on Fashion-MNIST, in the style of
// cpp-package/example/inception_bn.cpp. Trains for a bounded number of batches.
// Usage: mxnet-cpp-inception_bn [fashion-mnist dir]
#include "utils.h"

Symbol ConvFactoryBN(Symbol data, int num_filter, Shape kernel, Shape stride, Shape pad,
                     const std::string& name, const std::string& suffix = "") {
  Symbol conv_w("conv_" + name + suffix + "_weight"), conv_b("conv_" + name + suffix + "_bias");
  Symbol conv = Convolution("conv_" + name + suffix, data, conv_w, conv_b, kernel, num_filter,
                            stride, Shape(1, 1), pad);
  std::string name_suffix = name + suffix;
  Symbol gamma(name_suffix + "_gamma"), beta(name_suffix + "_beta");
  Symbol mmean(name_suffix + "_moving_mean"), mvar(name_suffix + "_moving_var");
  Symbol bn = BatchNorm("bn_" + name + suffix, conv, gamma, beta, mmean, mvar);
  return Activation("relu_" + name + suffix, bn, "relu");
}

Symbol InceptionFactoryA(Symbol data, int num_1x1, int num_3x3red, int num_3x3, int num_d3x3red,
                         int num_d3x3, PoolingPoolType pool, int proj, const std::string& name) {
  Symbol c1x1 = ConvFactoryBN(data, num_1x1, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "1x1");
  Symbol c3x3r = ConvFactoryBN(data, num_3x3red, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "_3x3r");
  Symbol c3x3 = ConvFactoryBN(c3x3r, num_3x3, Shape(3, 3), Shape(1, 1), Shape(1, 1), name + "_3x3");
  Symbol cd3x3r = ConvFactoryBN(data, num_d3x3red, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "_double_3x3r");
  Symbol cd3x3 = ConvFactoryBN(cd3x3r, num_d3x3, Shape(3, 3), Shape(1, 1), Shape(1, 1), name + "_double_3x3_0");
  cd3x3 = ConvFactoryBN(cd3x3, num_d3x3, Shape(3, 3), Shape(1, 1), Shape(1, 1), name + "_double_3x3_1");
  Symbol pooling = Pooling(name + "_pool", data, Shape(3, 3), pool, false, false,
                           PoolingPoolingConvention::kValid, Shape(1, 1), Shape(1, 1));
  Symbol cproj = ConvFactoryBN(pooling, proj, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "_proj");
  std::vector<Symbol> lst{c1x1, c3x3, cd3x3, cproj};
  return Concat("ch_concat_" + name + "_chconcat", lst, lst.size());
}

// The grid-reduction module: stride-2 branches and a max pool, concatenated.
Symbol InceptionFactoryB(Symbol data, int num_3x3red, int num_3x3, int num_d3x3red, int num_d3x3,
                         const std::string& name) {
  Symbol c3x3r = ConvFactoryBN(data, num_3x3red, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "_3x3r");
  Symbol c3x3 = ConvFactoryBN(c3x3r, num_3x3, Shape(3, 3), Shape(2, 2), Shape(1, 1), name + "_3x3");
  Symbol cd3x3r = ConvFactoryBN(data, num_d3x3red, Shape(1, 1), Shape(1, 1), Shape(0, 0), name + "_double_3x3r");
  Symbol cd3x3 = ConvFactoryBN(cd3x3r, num_d3x3, Shape(3, 3), Shape(1, 1), Shape(1, 1), name + "_double_3x3_0");
  cd3x3 = ConvFactoryBN(cd3x3, num_d3x3, Shape(3, 3), Shape(2, 2), Shape(1, 1), name + "_double_3x3_1");
  Symbol pooling = Pooling("max_pool_" + name + "_pool", data, Shape(3, 3), PoolingPoolType::kMax,
                           false, false, PoolingPoolingConvention::kValid, Shape(2, 2), Shape(1, 1));
  std::vector<Symbol> lst{c3x3, cd3x3, pooling};
  return Concat("ch_concat_" + name + "_chconcat", lst, lst.size());
}

Symbol InceptionSymbol(int num_classes) {
  Symbol data = Symbol::Variable("data");
  Symbol data_label = Symbol::Variable("data_label");
  Symbol conv1 = ConvFactoryBN(data, 24, Shape(3, 3), Shape(1, 1), Shape(1, 1), "conv1");  // 28x28
  Symbol in3a = InceptionFactoryA(conv1, 16, 16, 16, 16, 24, PoolingPoolType::kAvg, 8, "3a");
  Symbol in3c = InceptionFactoryB(in3a, 32, 40, 16, 24, "3c");                             // 14x14
  Symbol in4a = InceptionFactoryA(in3c, 48, 16, 24, 24, 32, PoolingPoolType::kAvg, 32, "4a");
  Symbol in4e = InceptionFactoryB(in4a, 32, 48, 48, 64, "4e");                             // 7x7
  Symbol avg = Pooling("global_pool", in4e, Shape(7, 7), PoolingPoolType::kAvg, true);
  Symbol flatten = Flatten("flatten", avg);
  Symbol fc1 = FullyConnected("fc1", flatten, Symbol("fc1_weight"), Symbol("fc1_bias"), num_classes);
  return SoftmaxOutput("softmax", fc1, data_label);
}

int main(int argc, char** argv) { return TrainBounded(InceptionSymbol(10), argc, argv, 200, 0.002f); }
