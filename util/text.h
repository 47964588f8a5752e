// Small text helpers: blanks (the games' notation and the line-based readers: the engine protocol,
// results files, the terminal player, `perft --positions -`), numbers written with fixed
// decimals, and numbers read in decimal.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace oppidum::util {

// The blanks: spaces, tabs, carriage returns and newlines. Every game's notation (docs/RULES.md:
// a position's fields are separated by blanks, and blanks around a position or a move are
// ignored) and the line-based readers go by them.
inline bool is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

// `text` without the blanks at its ends.
inline std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

// The same, as a string of its own.
inline std::string trim(std::string_view text) { return std::string(trim_blanks(text)); }

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

// The strings of `items` (a vector, a set) in their order, `separator` between two ("a, b, c").
template <class Items>
std::string join(const Items& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// `v` with `digits` decimals ("%.*f"): the run folder's numbers and the trainer's log lines.
inline std::string fixed(double v, int digits) {
  // Sized first: a large value whole (1e300 has 301 digits before the point; a buffer of 64 cut
  // it to its first 63).
  const int n = std::snprintf(nullptr, 0, "%.*f", digits, v);
  std::string out(static_cast<std::size_t>(n < 0 ? 0 : n), '\0');
  std::snprintf(out.data(), out.size() + 1, "%.*f", digits, v);  // (its NUL on out's own)
  return out;
}

// Reads all of `text` as a T written in decimal: an optional '-' where T is signed, digits, and for
// floating point a fraction and an exponent; no '+', spaces or hexadecimal (which strtod and
// strtoll take). False when it is not such a number; `out_of_range` is then set when it is one
// that T cannot hold. The configs' values and the command line's numbers alike.
template <class T>
bool parse_decimal(std::string_view text, T& value, bool& out_of_range) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  std::from_chars_result r{};
  if constexpr (std::is_floating_point_v<T>)
    r = std::from_chars(begin, end, value, std::chars_format::general);
  else
    r = std::from_chars(begin, end, value, 10);
  out_of_range = r.ec == std::errc::result_out_of_range && r.ptr == end;
  return !text.empty() && r.ec == std::errc() && r.ptr == end;
}

// A Redis stream entry id: "<ms>-<seq>", or "<ms>" alone (the sequence left out: 0, and
// `has_sequence` false), each part decimal digits below 2^64.
struct StreamId {
  std::uint64_t ms = 0, sequence = 0;
  bool has_sequence = false;
};
// False when `text` is no such id; `out_of_range` is then set when a part is digits past 2^64.
bool parse_stream_id(std::string_view text, StreamId& id, bool& out_of_range);

// A line longer than read_line's limit.
class LineTooLong : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The longest line the line protocols accept (the engine protocol, `perft --positions -`, the
// terminal player): far above any real line (a whole DVONN game is under 2 KB).
inline constexpr std::size_t kMaxLineBytes = 1 << 16;

// std::getline with a bound: reads the next line of `in` (without its newline) into `line`;
// false at the end of the input with nothing read. A line of more than `max_bytes` throws
// LineTooLong after reading at most max_bytes + 1 bytes of it, so that a peer that never sends a
// newline cannot fill the memory; std::cin that cannot be read throws std::runtime_error.
bool read_line(std::istream& in, std::string& line, std::size_t max_bytes = kMaxLineBytes);

}  // namespace oppidum::util
