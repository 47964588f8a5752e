// The whitespace rule every game's notation reads by (docs/RULES.md): the fields of a position are
// separated by blanks (spaces, tabs, line ends), and blanks around a position or a move are
// ignored. Header-only, std only.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace oppidum {

inline bool is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

// `text` without the blanks at its ends.
inline std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

// The blank-separated fields of `text`, none of them empty.
inline std::vector<std::string_view> blank_fields(std::string_view text) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_blank(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !is_blank(text[i])) ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

}  // namespace oppidum
