// A one-line progress bar on stderr for the sample apps.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <string>

namespace symbind::apps {

class ProgressBar {
 public:
  ProgressBar(std::string label, int total) : label_(std::move(label)), total_(total) {}
  // Redraws when the shown percentage changes; off a terminal only every 25%.
  void Update(int done, const std::string& suffix = "") {
    int pct = total_ > 0 ? done * 100 / total_ : 100;
    bool tty = isatty(fileno(stderr));
    if (pct == last_pct_ || (!tty && pct % 25 != 0)) return;
    last_pct_ = pct;
    const int width = 30;
    int filled = pct * width / 100;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(width - filled), '.');
    std::fprintf(stderr, "%s%s [%s] %3d%% %s%s", tty ? "\r" : "", label_.c_str(), bar.c_str(), pct,
                 suffix.c_str(), tty ? "" : "\n");
    if (tty && done >= total_) std::fprintf(stderr, "\r%*s\r", width + 40 + static_cast<int>(label_.size()), "");
    std::fflush(stderr);
  }

 private:
  std::string label_;
  int total_;
  int last_pct_ = -1;
};

}  // namespace symbind::apps
