// Small text helpers shared by the line-based readers (the engine protocol, results files, the
// terminal player).
#pragma once

#include <string>
#include <string_view>

namespace oppidum::util {

// `text` without leading and trailing spaces, tabs, carriage returns and newlines.
inline std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

}  // namespace oppidum::util
