// Writing a file so that readers never see half of it: the bytes go to `<path>.tmp`, are flushed
// to disk, and the temporary file is renamed over `path`. On any failure the temporary file is
// removed and an existing file at `path` is left as it was.
#pragma once

#include <cstddef>
#include <string>

namespace oppidum::model {

// Throws std::runtime_error naming the file and the system's reason.
void write_file_atomically(const std::string& path, const void* data, std::size_t size);

inline void write_file_atomically(const std::string& path, const std::string& bytes) {
  write_file_atomically(path, bytes.data(), bytes.size());
}

}  // namespace oppidum::model
