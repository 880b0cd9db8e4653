#include "lenet_report.h"

#include <chrono>
#include <cstdio>

#include <symbind/executor/executor.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/image.h>

namespace symbind::apps {

namespace {
void WritePredictionGrid(const std::string& path, const MNISTData& data, const Evaluation& ev,
                         int count) {
  // Each cell: the 28x28 image scaled 3x, with the predicted class below it.
  const int scale = 3, cell_w = 28 * scale + 40, cell_h = 28 * scale + 22, cols = 8;
  const int rows = (count + cols - 1) / cols;
  Image grid;
  grid.width = cols * cell_w;
  grid.height = rows * cell_h;
  grid.channels = 3;
  grid.pixels.assign(static_cast<size_t>(grid.width) * grid.height * 3, 255);
  const float* pixels = data.images.fdata();
  for (int i = 0; i < count && i < static_cast<int>(ev.predicted.size()); ++i) {
    int x0 = (i % cols) * cell_w + 20, y0 = (i / cols) * cell_h + 4;
    for (int y = 0; y < 28 * scale; ++y)
      for (int x = 0; x < 28 * scale; ++x) {
        auto v = static_cast<uint8_t>(255.0f - 255.0f * pixels[i * 784 + (y / scale) * 28 + x / scale]);
        uint8_t* p = grid.at(x0 + x, y0 + y);
        p[0] = p[1] = p[2] = v;
      }
    bool right = ev.predicted[i] == static_cast<int>(data.labels.GetFlat(i));
    DrawText(&grid, x0 - 16, y0 + 28 * scale + 3, kFashionClasses[ev.predicted[i]], right ? 0 : 200, 0, 0, 1);
  }
  SavePNG(path, grid);
}

}  // namespace

int RunDemo(const std::string& prefix, int epoch, const std::string& data_dir,
            const std::string& png, int samples) {
  auto t0 = std::chrono::steady_clock::now();
  Symbol net;
  std::map<std::string, NDArray> args, aux;
  LoadCheckpoint(prefix, epoch, &net, &args, &aux);
  MNISTData test = LoadFashionMNIST(false, data_dir);
  Evaluation ev = Evaluate(net, args, aux, test, 500);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("symbind-lenet: pretrained LeNet from %s-%04d.params\n", prefix.c_str(), epoch);
  std::printf("test_accuracy %.4f on %zu Fashion-MNIST test images (%.2f s)\n\n", ev.accuracy,
              ev.predicted.size(), secs);
  std::printf("confusion matrix (rows: true class, columns: predicted)\n%-12s", "");
  for (int c = 0; c < 10; ++c) std::printf(" %5d", c);
  std::printf("\n");
  for (int t = 0; t < 10; ++t) {
    std::printf("%d %-10s", t, kFashionClasses[t]);
    for (int c = 0; c < 10; ++c) std::printf(" %5d", ev.confusion[t][c]);
    std::printf("\n");
  }
  std::printf("\nsample predictions\n");
  for (int i = 0; i < samples && i < static_cast<int>(ev.predicted.size()); ++i) {
    int truth = static_cast<int>(test.labels.GetFlat(i));
    std::printf("  image %4d: %-11s (%.1f%%)  true %-11s %s\n", i, kFashionClasses[ev.predicted[i]],
                100.0f * ev.confidence[i], kFashionClasses[truth], ev.predicted[i] == truth ? "" : "<- wrong");
  }
  if (!png.empty()) {
    WritePredictionGrid(png, test, ev, samples);
    std::printf("\nwrote %s (%d test images with predicted labels; red = wrong)\n", png.c_str(), samples);
  }
  return 0;
}

}  // namespace symbind::apps
