// Quoting bad user input in error messages. A position string, a move list, a config value or key
// can be any size (a 100 MB line on standard input); an error message quotes at most `max_bytes`
// of it, so that it stays one readable line. `quote_input` is the one place that does this: the
// rules code (games/) and the config code (trainer/config.cpp) put user input into exception
// messages only through it. Header-only (std only), so libraries that do not link the games can
// use it.
#pragma once

#include <algorithm>
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

// The length of the well-formed UTF-8 sequence at the start of `text` (1 to 4 bytes) that is not
// a control character, or 0. Control characters: C0, DEL, C1 (U+0080 to U+009F, which terminals
// act on as they do on ESC), the bidirectional controls (U+061C, U+200E, U+200F, U+202A to
// U+202E, U+2066 to U+2069: they reorder what follows them, so that a line shows other text than
// it holds) and the line and paragraph separators U+2028, U+2029 (a line break to some readers).
inline std::size_t printable_sequence(std::string_view text) {
  if (text.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(text[0]);
  if (b0 >= 32 && b0 < 127) return 1;
  std::size_t n = 0;
  char32_t code = 0, least = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) n = 2, code = b0 & 0x1f, least = 0x80;
  else if (b0 >= 0xe0 && b0 <= 0xef) n = 3, code = b0 & 0x0f, least = 0x800;
  else if (b0 >= 0xf0 && b0 <= 0xf4) n = 4, code = b0 & 0x07, least = 0x10000;
  else return 0;
  if (text.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if ((b & 0xc0) != 0x80) return 0;
    code = (code << 6) | (b & 0x3f);
  }
  if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  const bool control = (code >= 0x80 && code <= 0x9f) || code == 0x61c || code == 0x200e ||
                       code == 0x200f || (code >= 0x2028 && code <= 0x202e) ||
                       (code >= 0x2066 && code <= 0x2069);
  return control ? 0 : n;
}

namespace quote_detail {

// printable_text and printable_line: `lines` keeps newlines and tabs.
inline std::string printable(std::string_view text, bool lines) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = printable_sequence(text.substr(i));
    if (n > 0 || (lines && (text[i] == '\n' || text[i] == '\t'))) {
      out.append(text.substr(i, std::max<std::size_t>(n, 1)));
      i += std::max<std::size_t>(n, 1);
      continue;
    }
    const auto u = static_cast<unsigned char>(text[i++]);
    out += {'\\', 'x', kHex[u >> 4], kHex[u & 15]};
  }
  return out;
}

// `out` (made from `text`) cut to at most `max_bytes` bytes, never inside a character or an
// escape, and followed by "... (<size of text> bytes)" when it does not fit.
inline std::string cut(std::string out, std::string_view text, std::size_t max_bytes) {
  if (out.size() <= max_bytes) return out;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) --cut;
  for (std::size_t back = 1; back <= 3 && back <= cut; ++back)
    if (out[cut - back] == '\\' && cut - back + 1 < out.size() && out[cut - back + 1] == 'x') {
      cut -= back;
      break;
    }
  out.resize(cut);
  return out + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace quote_detail

// `text` safe for a terminal, whole: well-formed UTF-8 stays as it is (names in any script),
// newlines and tabs too (a message may have lines); control characters (those of
// printable_sequence) and bytes that are not UTF-8 become \xNN. For the errors main prints, which
// quote user input in many places: no byte of it can reach the terminal as a command.
inline std::string printable_text(std::string_view text) {
  return quote_detail::printable(text, true);
}

// printable_text(text) cut to at most `max_bytes` bytes (never inside a character or an escape)
// and followed by "... (<size of text> bytes)" when it does not fit: a long message keeps its
// lines and its letters, where quote_input would escape them.
inline std::string printable_text(std::string_view text, std::size_t max_bytes) {
  return quote_detail::cut(quote_detail::printable(text, true), text, max_bytes);
}

// printable_text(text, max_bytes) for a message of one line (CLI11's, which quote arguments
// whole): newlines and tabs are escaped too, so that no argument can start a line of its own.
inline std::string printable_line(std::string_view text, std::size_t max_bytes) {
  return quote_detail::cut(quote_detail::printable(text, false), text, max_bytes);
}

}  // namespace oppidum
