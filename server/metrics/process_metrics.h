// The standard process_* metrics, read from /proc when rendered.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/registry.h"
#include "osprey/status.h"

namespace osprey::server::metrics {

struct ProcessSample {
  double cpu_seconds = 0;  // user + system
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double start_time_seconds = 0;  // since the Unix epoch
  double open_fds = 0;
  std::optional<double> max_fds;  // soft limit; absent when unlimited
};

// Parses /proc/<pid>/stat text. `ticks_per_second` = sysconf(_SC_CLK_TCK), `page_bytes` =
// sysconf(_SC_PAGESIZE), `boot_time_seconds` = the "btime" line of /proc/stat. Fills every field
// except open_fds and max_fds.
Status parse_proc_stat(const std::string& stat_text, double ticks_per_second, double page_bytes,
                       double boot_time_seconds, ProcessSample* out);
// The "btime" value of /proc/stat text.
Result<double> parse_boot_time(const std::string& proc_stat_text);
// The soft "Max open files" of /proc/<pid>/limits text; nullopt when "unlimited".
Result<std::optional<double>> parse_max_open_files(const std::string& limits_text);

// Reads this process's sample from /proc.
Result<ProcessSample> read_process_sample();

// Renders process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_start_time_seconds, process_open_fds and
// process_max_fds (when limited), reading /proc each time. If /proc cannot be read, renders a
// comment line saying why instead of samples.
class ProcessCollector final : public Collector {
 public:
  std::vector<std::string> metric_names() const override;
  void render(std::string* out) const override;
  static void render_sample(const ProcessSample& s, std::string* out);
};

}  // namespace osprey::server::metrics
