#include "util/text.h"

#include <cstdio>
#include <iostream>

namespace oppidum::util {

bool read_line(std::istream& in, std::string& line, std::size_t max_bytes) {
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
      // The standard input (read through stdio) ends on a read error as at its end: told apart,
      // so that a directory or a closed descriptor given as input is no empty input.
      if (buffer == std::cin.rdbuf() && std::ferror(stdin))
        throw std::runtime_error("the standard input cannot be read (a directory, or closed?)");
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

bool parse_stream_id(std::string_view text, StreamId& id, bool& out_of_range) {
  out_of_range = false;
  const auto part = [&](std::string_view digits, std::uint64_t& value) {
    bool over = false;
    const bool ok = digits.find_first_not_of("0123456789") == std::string_view::npos &&
                    parse_decimal(digits, value, over);
    out_of_range = out_of_range || over;
    return ok;
  };
  const std::size_t dash = text.find('-');
  id = StreamId{};
  if (dash == std::string_view::npos) return part(text, id.ms);
  id.has_sequence = true;
  return part(text.substr(0, dash), id.ms) && part(text.substr(dash + 1), id.sequence);
}

}  // namespace oppidum::util
