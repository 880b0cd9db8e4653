// ResNet (reduced width and depth, 28x28 input) on Fashion-MNIST, in the style of
// cpp-package/example/resnet.cpp. Trains for a bounded number of batches.
// Usage: mxnet-cpp-resnet [fashion-mnist dir]
#include "utils.h"

Symbol ConvolutionNoBias(const std::string& symbol_name, Symbol data, Symbol weight, Shape kernel,
                         int num_filter, Shape stride = Shape(1, 1), Shape pad = Shape(0, 0)) {
  return Operator("Convolution")
      .SetParam("kernel", kernel)
      .SetParam("num_filter", num_filter)
      .SetParam("stride", stride)
      .SetParam("pad", pad)
      .SetParam("no_bias", true)
      .SetInput("data", data)
      .SetInput("weight", weight)
      .CreateSymbol(symbol_name);
}

Symbol getConv(const std::string& name, Symbol data, int num_filter, Shape kernel, Shape stride,
               Shape pad, bool with_relu, mx_float bn_momentum) {
  Symbol conv_w(name + "_w");
  Symbol conv = ConvolutionNoBias(name, data, conv_w, kernel, num_filter, stride, pad);
  Symbol gamma(name + "_gamma"), beta(name + "_beta");
  Symbol mmean(name + "_moving_mean"), mvar(name + "_moving_var");
  Symbol bn = BatchNorm(name + "_bn", conv, gamma, beta, mmean, mvar, 2e-5, bn_momentum, false);
  return with_relu ? Activation(name + "_relu", bn, "relu") : bn;
}

Symbol makeBlock(const std::string& name, Symbol data, int num_filter, bool dim_match,
                 mx_float bn_momentum) {
  Shape stride = dim_match ? Shape(1, 1) : Shape(2, 2);
  Symbol conv1 = getConv(name + "_conv1", data, num_filter, Shape(3, 3), stride, Shape(1, 1), true, bn_momentum);
  Symbol conv2 = getConv(name + "_conv2", conv1, num_filter, Shape(3, 3), Shape(1, 1), Shape(1, 1), false, bn_momentum);
  Symbol shortcut = dim_match ? data
                              : getConv(name + "_proj", data, num_filter, Shape(2, 2), Shape(2, 2),
                                        Shape(0, 0), false, bn_momentum);
  Symbol fused = shortcut + conv2;
  return Activation(name + "_relu", fused, "relu");
}

Symbol getBody(Symbol data, int num_level, int num_block, int num_filter, mx_float bn_momentum) {
  for (int level = 0; level < num_level; ++level)
    for (int block = 0; block < num_block; ++block)
      data = makeBlock("level" + std::to_string(level + 1) + "_block" + std::to_string(block + 1), data,
                       num_filter * (1 << level), level == 0 || block > 0, bn_momentum);
  return data;
}

Symbol ResNetSymbol(int num_class, int num_level = 3, int num_block = 2, int num_filter = 16,
                    mx_float bn_momentum = 0.9) {
  Symbol data = Symbol::Variable("data");
  Symbol data_label = Symbol::Variable("data_label");
  Symbol zscore = BatchNorm("zscore", data, Symbol("zscore_gamma"), Symbol("zscore_beta"),
                            Symbol("zscore_moving_mean"), Symbol("zscore_moving_var"), 0.001, bn_momentum);
  Symbol conv = getConv("conv0", zscore, num_filter, Shape(3, 3), Shape(1, 1), Shape(1, 1), true, bn_momentum);
  Symbol body = getBody(conv, num_level, num_block, num_filter, bn_momentum);
  Symbol pool = Pooling("pool", body, Shape(7, 7), PoolingPoolType::kAvg, true);
  Symbol flat = Flatten("flatten", pool);
  Symbol fc = FullyConnected("fc", flat, Symbol("fc_w"), Symbol("fc_b"), num_class);
  return SoftmaxOutput("softmax", fc, data_label);
}

int main(int argc, char** argv) { return TrainBounded(ResNetSymbol(10), argc, argv, 200, 0.002f); }
