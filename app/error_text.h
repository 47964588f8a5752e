// The text of an error that reached main: what() for the program's own errors, which name the file
// and say what is wrong; the two library errors whose what() does neither said in words.
//   std::bad_alloc                  "out of memory (... needed more than this machine gives it)"
//   LibTorch's errors               their message without the C++ backtrace after it; an
//                                   allocation that failed as std::bad_alloc's
//   std::filesystem::filesystem_error "PATH: cannot create directories: Not a directory" instead
//                                   of "filesystem error: cannot create directories: Not a
//                                   directory [PATH]"
#pragma once

#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include "games/quote.h"
#include "model/backend.h"

namespace oppidum::app {

// A warning on standard error: one line, printable (a path, a file's content or a record's field
// in it cannot send the terminal commands), at most 4 KiB.
inline void warn(const std::string& message) {
  std::cerr << "warning: " << printable_line(message, 4096) << '\n';
}

inline std::string error_text(const std::exception& e, const std::string& command) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr)
    return "out of memory: " + command +
           " needed more memory than this machine (or its limit) gives it";
  if (const auto* fs_error = dynamic_cast<const std::filesystem::filesystem_error*>(&e)) {
    // libstdc++ says "filesystem error: <operation>: <reason> [<path1>] [<path2>]".
    std::string operation = fs_error->what();
    const std::string prefix = "filesystem error: ";
    if (operation.compare(0, prefix.size(), prefix) == 0) operation.erase(0, prefix.size());
    const std::string reason = fs_error->code().message();
    const auto at = operation.find(": " + reason);
    if (at != std::string::npos) operation.resize(at);
    std::string text = fs_error->path1().string();
    if (!fs_error->path2().empty()) text += " -> " + fs_error->path2().string();
    return (text.empty() ? "" : text + ": ") + operation + ": " + reason;
  }
  std::string text = e.what();
  // LibTorch's errors carry a C++ backtrace after their message: not for users.
  const auto trace = text.find("\nException raised from ");
  if (trace != std::string::npos) text.resize(trace);
  if (model::is_torch_out_of_memory(text) && text.rfind("out of memory: ", 0) != 0)
    return "out of memory: " + command +
           " needed more memory than this machine (or its limit) gives it (" +
           text.substr(0, text.find('\n')) + ")";
  return text;
}

}  // namespace oppidum::app
