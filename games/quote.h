// Quoting bad user input in error messages. A position string, a move list, a config value or key
// can be any size (a 100 MB line on standard input); an error message quotes at most `max_bytes`
// of it, so that it stays one readable line. `quote_input` is the one place that does this: the
// rules code (games/) and the config code (trainer/config.cpp) put user input into exception
// messages only through it. Header-only (std only), so libraries that do not link the games can
// use it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace oppidum {

// `text` made printable and cut to at most `max_bytes` bytes: printable ASCII stays as it is,
// newline, carriage return and tab become \n, \r and \t, every other byte (control characters,
// bytes of UTF-8 sequences) becomes \xNN. When the text does not fit, what fits is followed by
// "... (<size of text> bytes)". Adds no quotation marks: the caller's message places them.
inline std::string quote_input(std::string_view text, std::size_t max_bytes = 100) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::size_t i = 0;
  for (; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    char piece[4];
    std::size_t n = 0;
    if (u >= 32 && u < 127) {
      piece[n++] = static_cast<char>(u);
    } else if (u == '\n' || u == '\r' || u == '\t') {
      piece[n++] = '\\';
      piece[n++] = u == '\n' ? 'n' : u == '\r' ? 'r' : 't';
    } else {
      piece[n++] = '\\';
      piece[n++] = 'x';
      piece[n++] = kHex[u >> 4];
      piece[n++] = kHex[u & 15];
    }
    if (out.size() + n > max_bytes) break;
    out.append(piece, n);
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace oppidum
