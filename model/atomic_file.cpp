#include "model/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace oppidum::model {

void write_file_atomically(const std::string& path, const void* data, std::size_t size) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  const bool written =
      std::fwrite(data, 1, size, f) == size && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  const int write_errno = errno;
  if (std::fclose(f) != 0 || !written) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(write_errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
}

}  // namespace oppidum::model
