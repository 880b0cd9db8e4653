// An MXNet cpp-package client, C++11, built by mxnet_client_test.sh exactly as MXNet users build
// theirs (g++ -std=c++11 prog.cpp -I<prefix>/include -L<prefix>/lib -lmxnet): a 784-128-64-10
// perceptron trained on Fashion-MNIST with MNISTIter, SimpleBind and the registered "sgd"
// optimizer, then scored on the test set.
// Usage: mlp_fashion_mnist <fashion-mnist dir> <epochs> <minimum test accuracy>
// Prints "test accuracy A" and exits 1 when A is below the minimum.
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "mxnet-cpp/MxNetCpp.h"

using namespace mxnet::cpp;

namespace {

const int kBatch = 100;

MXDataIter FashionMNIST(const std::string& dir, const std::string& part, bool shuffle) {
  MXDataIter iter("MNISTIter");
  iter.SetParam("image", dir + "/" + part + "-images-idx3-ubyte.gz")
      .SetParam("label", dir + "/" + part + "-labels-idx1-ubyte.gz")
      .SetParam("batch_size", kBatch)
      .SetParam("flat", 1)
      .SetParam("shuffle", shuffle ? 1 : 0)
      .SetParam("seed", 7);
  return iter.CreateDataIter();
}

Symbol Perceptron() {
  Symbol data = Symbol::Variable("data");
  Symbol label = Symbol::Variable("label");
  Symbol h1 = Activation("relu1", FullyConnected("fc1", data, Symbol::Variable("fc1_weight"),
                                                 Symbol::Variable("fc1_bias"), 128),
                         ActivationActType::kRelu);
  Symbol h2 = Activation("relu2", FullyConnected("fc2", h1, Symbol::Variable("fc2_weight"),
                                                 Symbol::Variable("fc2_bias"), 64),
                         ActivationActType::kRelu);
  Symbol scores = FullyConnected("fc3", h2, Symbol::Variable("fc3_weight"), Symbol::Variable("fc3_bias"), 10);
  return SoftmaxOutput("softmax", scores, label);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " <fashion-mnist dir> <epochs> <minimum test accuracy>\n";
    return 2;
  }
  const std::string dir = argv[1];
  const int epochs = std::atoi(argv[2]);
  const float minimum = static_cast<float>(std::atof(argv[3]));
  try {
    Context ctx = Context::cpu();
    MXDataIter train = FashionMNIST(dir, "train", true);
    MXDataIter test = FashionMNIST(dir, "t10k", false);
    Symbol net = Perceptron();

    std::map<std::string, NDArray> args;
    args["data"] = NDArray(Shape(kBatch, 784), ctx);
    args["label"] = NDArray(Shape(kBatch), ctx);
    net.InferArgsMap(ctx, &args, args);
    MXRandomSeed(3);
    Xavier init(Xavier::uniform, Xavier::avg, 3);
    for (std::map<std::string, NDArray>::iterator it = args.begin(); it != args.end(); ++it)
      if (it->first != "data" && it->first != "label") init(it->first, &it->second);

    Executor* exec = net.SimpleBind(ctx, args);
    const std::vector<std::string> names = net.ListArguments();
    Optimizer* sgd = OptimizerRegistry::Find("sgd");
    sgd->SetParam("lr", 0.1f)->SetParam("momentum", 0.9f)->SetParam("wd", 1e-4f)
        ->SetParam("rescale_grad", 1.0f / kBatch);

    for (int epoch = 1; epoch <= epochs; ++epoch) {
      Accuracy train_accuracy;
      train.Reset();
      while (train.Next()) {
        DataBatch batch = train.GetDataBatch();
        batch.data.CopyTo(&args["data"]);
        batch.label.CopyTo(&args["label"]);
        exec->Forward(true);
        exec->Backward();
        for (size_t i = 0; i < names.size(); ++i)
          if (names[i] != "data" && names[i] != "label")
            sgd->Update(static_cast<int>(i), exec->arg_arrays[i], exec->grad_arrays[i]);
        train_accuracy.Update(batch.label, exec->outputs[0]);
      }
      std::cout << "epoch " << epoch << " train accuracy " << train_accuracy.Get() << std::endl;
    }

    Accuracy test_accuracy;
    test.Reset();
    while (test.Next()) {
      DataBatch batch = test.GetDataBatch();
      batch.data.CopyTo(&args["data"]);
      exec->Forward(false);
      test_accuracy.Update(batch.label, exec->outputs[0]);
    }
    std::cout << "test accuracy " << test_accuracy.Get() << std::endl;
    delete exec;
    delete sgd;
    MXNotifyShutdown();
    if (test_accuracy.Get() < minimum) {
      std::cerr << "test accuracy below " << minimum << "\n";
      return 1;
    }
    return 0;
  } catch (const dmlc::Error& e) {
    std::cerr << "error: " << MXGetLastError() << "\n";
    return 1;
  }
}
