#include "core/progress.h"

#include <unistd.h>

#include <algorithm>

namespace osprey::bench {

ProgressBar::ProgressBar(size_t total, bool enabled, std::FILE* out)
    : total_(total), enabled_(enabled), out_(out) {}

ProgressBar ProgressBar::for_stderr(size_t total) {
  return ProgressBar(total, isatty(2) == 1);
}

ProgressBar::~ProgressBar() {
  finish();
}

std::string ProgressBar::render(size_t done, size_t total, const std::string& label, size_t width) {
  done = std::min(done, total);
  const size_t filled = total == 0 ? width : done * width / total;
  std::string s = "[";
  s.append(filled, '#').append(width - filled, '.').append("] ");
  s.append(std::to_string(done)).append("/").append(std::to_string(total));
  if (!label.empty()) s.append(" ").append(label.size() > 50 ? label.substr(0, 47) + "..." : label);
  return s;
}

void ProgressBar::update(size_t done, const std::string& label) {
  if (!enabled_) return;
  std::fprintf(out_, "\r\033[K%s", render(done, total_, label, 30).c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace osprey::bench
