// Builds a small network with the installed headers and checks one forward pass, and calls
// the face library (<symbind/vision/...>, in the same library).
#include <symbind/symbind.h>
#include <symbind/vision/face_embedder.h>

#include <cstdio>

int main() {
  using namespace symbind;
  Symbol x = Symbol::Variable("data");
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 2).SetInput("data", x).CreateSymbol("fc");
  NDArray data(TShape({1, 3}), {1, 2, 3});
  NDArray w(TShape({2, 3}), {1, 0, 0, 0, 1, 1});
  NDArray b(TShape({2}), {0.5f, -1});
  auto exec = SimpleBind(fc, Context::CPU(), {{"data", data}, {"fc_weight", w}, {"fc_bias", b}});
  exec->Forward(false);
  float y0 = exec->outputs()[0].GetFlat(0), y1 = exec->outputs()[0].GetFlat(1);
  std::printf("consumer: %g %g\n", y0, y1);
  const double cosine = vision::CosineSimilarity({3, 4}, {6, 8});
  std::printf("consumer: cosine %g\n", cosine);
  return (y0 == 1.5f && y1 == 4.0f && cosine > 0.999999) ? 0 : 1;
}
