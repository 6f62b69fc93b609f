// A one-line progress bar on stderr, drawn only when stderr is a terminal (never in pipes,
// logs or tests, so it cannot mix with machine-read output).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace osprey::bench {

class ProgressBar {
 public:
  // enabled = false draws nothing; ProgressBar::for_stderr() decides by isatty(2).
  ProgressBar(size_t total, bool enabled, std::FILE* out = stderr);
  static ProgressBar for_stderr(size_t total);
  ~ProgressBar();

  void update(size_t done, const std::string& label);
  void finish();
  // The text drawn for a state, without the carriage return (pure; for tests).
  static std::string render(size_t done, size_t total, const std::string& label, size_t width);

 private:
  size_t total_;
  bool enabled_;
  std::FILE* out_;
  bool drawn_ = false;
};

}  // namespace osprey::bench
