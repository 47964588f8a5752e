// Small text helpers: those shared by the line-based readers (the engine protocol, results files,
// the terminal player, `perft --positions -`), numbers written with fixed decimals, and numbers
// read in decimal.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdio>
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace oppidum::util {

// `text` without leading and trailing spaces, tabs, carriage returns and newlines.
inline std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

// `v` with `digits` decimals ("%.*f"): the run folder's numbers and the trainer's log lines.
inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
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
// newline cannot fill the memory.
inline bool read_line(std::istream& in, std::string& line, std::size_t max_bytes = kMaxLineBytes) {
  line.clear();
  std::streambuf* buffer = in.rdbuf();
  if (!in.good() || buffer == nullptr) {
    in.setstate(std::ios::failbit);
    return false;
  }
  using Traits = std::istream::traits_type;
  bool any = false;
  while (true) {
    const Traits::int_type c = buffer->sbumpc();
    if (Traits::eq_int_type(c, Traits::eof())) {
      in.setstate(any ? std::ios::eofbit : std::ios::eofbit | std::ios::failbit);
      return any;
    }
    any = true;
    if (Traits::to_char_type(c) == '\n') return true;
    if (line.size() == max_bytes)
      throw LineTooLong("a line longer than " + std::to_string(max_bytes) + " bytes");
    line.push_back(Traits::to_char_type(c));
  }
}

}  // namespace oppidum::util
