// Image inputs of the `symbind` subcommands that read pictures (run --image, quantize --calib DIR):
// the preprocessing options and the batch they make.
//
//   ImageOptions image;  AddImageOptions(sub, &image);          // --mean --scale --size --bgr
//   NDArray batch = LoadImageBatch(image, files, ImageChannels(model, "data", n, hw), "--image data");
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <symbind/core/ndarray.h>
#include <symbind/io/model_file.h>

namespace symbind_tool {

struct ImageOptions {
  std::string mean = "0,0,0", size;
  float scale = 1.0f;
  bool bgr = false;
};
void AddImageOptions(CLI::App* sub, ImageOptions* options);

// --size as (H, W); ParamError naming `what` when it is missing or out of range.
symbind::TShape ImageSize(const ImageOptions& options, const std::string& what);

// The channels the model reads from image input `name`: what shape inference gives from the
// parameters (a first convolution's weight), 3 when they do not say.
int64_t ImageChannels(const symbind::Model& model, const std::string& name, int64_t batch, const symbind::TShape& hw);

// `files` decoded, resized to --size, normalised ((pixel - mean) * scale) and stacked into
// (N, channels, H, W); `what` names them in errors.
symbind::NDArray LoadImageBatch(const ImageOptions& options, const std::vector<std::string>& files, int64_t channels,
                                const std::string& what);

// The image files (by extension: jpg, jpeg, png, bmp, pgm, ppm, tga, gif) in `dir`, sorted by name.
std::vector<std::string> ImageFilesIn(const std::string& dir);

}  // namespace symbind_tool
