#include "metrics/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "metrics/exposition.h"

namespace osprey::server::metrics {
namespace {

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return unavailable("cannot read ", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<double> count_open_fds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return unavailable("cannot list /proc/self/fd");
  double n = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;  // the descriptor that was listing the directory
}

void gauge(std::string* out, const char* name, const char* help, double v) {
  write_header(out, name, help, "gauge");
  write_sample(out, name, {}, {}, format_value(v));
}

}  // namespace

Status parse_proc_stat(const std::string& text, double ticks_per_second, double page_bytes,
                       double boot_time_seconds, ProcessSample* out) {
  // "pid (comm) state ..."; comm may hold spaces and parentheses, so split after the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return invalid_argument("/proc stat: no ')' after the command");
  std::istringstream in(text.substr(close + 1));
  std::vector<std::string> fields;  // fields[0] is field 3 (state) of proc(5)
  for (std::string f; in >> f;) fields.push_back(f);
  if (fields.size() < 22) {
    return invalid_argument("/proc stat: ", fields.size() + 2, " fields, expected at least 24");
  }
  if (ticks_per_second <= 0) return invalid_argument("ticks_per_second must be > 0");
  try {
    const double utime = std::stod(fields[11]);      // field 14
    const double stime = std::stod(fields[12]);      // field 15
    const double starttime = std::stod(fields[19]);  // field 22, ticks after boot
    out->cpu_seconds = (utime + stime) / ticks_per_second;
    out->start_time_seconds = boot_time_seconds + starttime / ticks_per_second;
    out->virtual_bytes = std::stod(fields[20]);                // field 23, bytes
    out->resident_bytes = std::stod(fields[21]) * page_bytes;  // field 24, pages
  } catch (const std::exception&) {
    return invalid_argument("/proc stat: a numeric field is not a number");
  }
  return Status::Ok();
}

Result<double> parse_boot_time(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) {
      try {
        return std::stod(line.substr(6));
      } catch (const std::exception&) {
        return invalid_argument("/proc/stat: btime is not a number: ", line);
      }
    }
  }
  return invalid_argument("/proc/stat: no btime line");
}

Result<std::optional<double>> parse_max_open_files(const std::string& text) {
  static const std::string kKey = "Max open files";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(kKey, 0) != 0) continue;
    std::istringstream fields(line.substr(kKey.size()));
    std::string soft;
    fields >> soft;
    if (soft == "unlimited") return std::optional<double>();
    try {
      return std::optional<double>(std::stod(soft));
    } catch (const std::exception&) {
      return invalid_argument("/proc limits: bad Max open files value: ", soft);
    }
  }
  return invalid_argument("/proc limits: no Max open files line");
}

Result<ProcessSample> read_process_sample() {
  ProcessSample s;
  OSPREY_ASSIGN_OR_RETURN(std::string stat, read_text("/proc/self/stat"));
  OSPREY_ASSIGN_OR_RETURN(std::string system_stat, read_text("/proc/stat"));
  OSPREY_ASSIGN_OR_RETURN(double boot, parse_boot_time(system_stat));
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  OSPREY_RETURN_IF_ERROR(parse_proc_stat(stat, ticks, page, boot, &s));
  OSPREY_ASSIGN_OR_RETURN(s.open_fds, count_open_fds());
  OSPREY_ASSIGN_OR_RETURN(std::string limits, read_text("/proc/self/limits"));
  OSPREY_ASSIGN_OR_RETURN(s.max_fds, parse_max_open_files(limits));
  return s;
}

std::vector<std::string> ProcessCollector::metric_names() const {
  return {"process_cpu_seconds_total",
          "process_resident_memory_bytes",
          "process_virtual_memory_bytes",
          "process_start_time_seconds",
          "process_open_fds",
          "process_max_fds"};
}

void ProcessCollector::render_sample(const ProcessSample& s, std::string* out) {
  write_header(out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
               "counter");
  write_sample(out, "process_cpu_seconds_total", {}, {}, format_value(s.cpu_seconds));
  gauge(out, "process_resident_memory_bytes", "Resident memory size in bytes.", s.resident_bytes);
  gauge(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.", s.virtual_bytes);
  gauge(out, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
        s.start_time_seconds);
  gauge(out, "process_open_fds", "Number of open file descriptors.", s.open_fds);
  if (s.max_fds) {
    gauge(out, "process_max_fds", "Maximum number of open file descriptors.", *s.max_fds);
  }
}

void ProcessCollector::render(std::string* out) const {
  Result<ProcessSample> s = read_process_sample();
  if (!s.ok()) {
    *out += "# process metrics unavailable: " + escape_help(s.status().message()) + "\n";
    return;
  }
  render_sample(*s, out);
}

}  // namespace osprey::server::metrics
