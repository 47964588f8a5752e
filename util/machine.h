// What this machine has, for the checks that refuse a config no machine of its size could run
// (trainer::check_run_memory, selfplay::check_search_memory) before anything is made.
#pragma once

#include <unistd.h>

namespace oppidum::util {

// The machine's physical memory in bytes; 0 when the system does not say.
inline double machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

}  // namespace oppidum::util
