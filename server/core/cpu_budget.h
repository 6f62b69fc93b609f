// The server's engine-thread budget when none is given: the CPUs this process may run on
// (sched_getaffinity), capped by the cgroup v2 CPU quota (cpu.max), at least 1.
#pragma once

#include <string>

namespace osprey::server {

// cgroup v2 `cpu.max` text ("max 100000" or "200000 100000") -> CPUs, rounded up; 0 = no quota
// or unreadable.
int parse_cgroup_cpu_max(const std::string& text);
int default_thread_budget();

}  // namespace osprey::server
