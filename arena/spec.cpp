#include "arena/spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "games/quote.h"
#include "util/text.h"

namespace oppidum::arena {

PlayerSpec parse_player_spec(std::string_view text) {
  // Input is quoted shortened and printable (a 60 KB spec once came back whole in its error).
  const std::string quoted = "player spec '" + quote_input(text, 200) + "'";
  const std::string no_spaces =
      quoted + ": no spaces allowed (quote a value that needs them: key=\"...\")";
  auto has_space = [](std::string_view part) {
    return std::any_of(part.begin(), part.end(),
                       [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
  };
  if (text.empty()) throw PlayerSpecError("empty player spec");
  // A spec names a player in tables, logs, results and records: no control character (an escape
  // sequence, a newline, a C1 or bidirectional control) nor a byte that is not UTF-8, even quoted.
  if (printable_line(text, text.size() + 1) != text)
    throw PlayerSpecError(quoted + ": holds a control character (an escape, a newline, a tab, a "
                          "bidirectional control) or a byte that is not UTF-8");
  PlayerSpec spec;
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  if (has_space(name)) throw PlayerSpecError(no_spaces);
  spec.name = std::string(name);
  if (spec.name.empty()) throw PlayerSpecError(quoted + ": the player name is missing");
  if (colon == std::string_view::npos) return spec;
  const std::string_view rest = text.substr(colon + 1);
  if (rest.empty()) throw PlayerSpecError(quoted + ": nothing after ':' (expected key=value)");
  std::size_t at = 0;  // the start of the next key=value
  while (true) {
    const auto eq = rest.find_first_of("=,", at);
    if (eq == std::string_view::npos || rest[eq] != '=') {
      const std::string_view item = rest.substr(at, eq == std::string_view::npos ? eq : eq - at);
      if (has_space(item)) throw PlayerSpecError(no_spaces);
      throw PlayerSpecError(quoted + ": '" + quote_input(item, 60) + "' is not key=value");
    }
    std::string key(rest.substr(at, eq - at));
    if (has_space(key)) throw PlayerSpecError(no_spaces);
    if (key.empty()) throw PlayerSpecError(quoted + ": a key is missing before '='");
    at = eq + 1;
    std::string value;
    if (at < rest.size() && rest[at] == '"') {
      bool closed = false;
      for (++at; at < rest.size();) {
        char c = rest[at++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && at < rest.size() && (rest[at] == '"' || rest[at] == '\\')) c = rest[at++];
        value += c;
      }
      if (!closed)
        throw PlayerSpecError(quoted + ": the quoted value of " + quote_input(key, 40) +
                              " has no closing '\"'");
      if (at < rest.size() && rest[at] != ',')
        throw PlayerSpecError(quoted + ": expected ',' after the quoted value of " +
                              quote_input(key, 40));
    } else {
      const auto comma = rest.find(',', at);
      const std::string_view item = rest.substr(at, comma == std::string_view::npos ? comma : comma - at);
      if (has_space(item)) throw PlayerSpecError(no_spaces);
      value = std::string(item);
      at = comma == std::string_view::npos ? rest.size() : comma;
    }
    if (value.empty())
      throw PlayerSpecError(quoted + ": " + quote_input(key, 40) + " has no value");
    for (const auto& [k, v] : spec.params)
      if (k == key) throw PlayerSpecError(quoted + ": " + quote_input(key, 40) + " is given twice");
    spec.params.emplace_back(std::move(key), std::move(value));
    if (at >= rest.size()) break;
    ++at;  // the comma
  }
  return spec;
}

SpecReader::SpecReader(PlayerSpec spec, std::vector<std::string> known_keys)
    : spec_(std::move(spec)), known_keys_(std::move(known_keys)) {}

const std::string* SpecReader::find(const std::string& key) const {
  for (const auto& [k, v] : spec_.params)
    if (k == key) return &v;
  return nullptr;
}

bool SpecReader::has(const std::string& key) const { return find(key) != nullptr; }

std::string SpecReader::quoted_name() const { return quote_input(spec_.name, 40); }

std::int64_t SpecReader::to_int(const std::string& key, const std::string& value, std::int64_t min,
                                std::int64_t max) const {
  std::int64_t parsed = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && ptr == end &&
                                               (parsed < min || parsed > max)))
    throw PlayerSpecError(quoted_name() + ": " + key + " must be " + range + ", got " +
                          quote_input(value, 60));
  if (ec != std::errc() || ptr != end)
    throw PlayerSpecError(quoted_name() + ": " + key + " must be an integer " + range +
                          ", got '" + quote_input(value, 60) + "'");
  return parsed;
}

std::int64_t SpecReader::get_int(const std::string& key, std::int64_t min, std::int64_t max,
                                 const std::string& example) {
  const std::string* value = find(key);
  if (value == nullptr) {
    refuse_unknown_keys();  // a misspelt key is named, not only the key it stood for
    throw PlayerSpecError(quoted_name() + ": " + key + " is required (e.g. " + example + ")");
  }
  used_.push_back(key);
  return to_int(key, *value, min, max);
}

std::int64_t SpecReader::get_int_or(const std::string& key, std::int64_t min, std::int64_t max,
                                    std::int64_t fallback) {
  const std::string* value = find(key);
  if (value == nullptr) return fallback;
  used_.push_back(key);
  return to_int(key, *value, min, max);
}

double SpecReader::get_double_or(const std::string& key, double min, double max,
                                 double fallback) {
  const std::string* value = find(key);
  if (value == nullptr) return fallback;
  used_.push_back(key);
  // Decimal as every other number oppidum reads (no '+', blanks or hexadecimal).
  double parsed = 0;
  bool out_of_range = false;
  const std::string range = format_number(min) + ".." + format_number(max);
  if (!util::parse_decimal(*value, parsed, out_of_range) || !std::isfinite(parsed))
    throw PlayerSpecError(quoted_name() + ": " + key + " must be a number " + range +
                          ", got '" + quote_input(*value, 60) + "'");
  if (parsed < min || parsed > max)
    throw PlayerSpecError(quoted_name() + ": " + key + " must be " + range + ", got " +
                          quote_input(*value, 60));
  return parsed;
}

std::string SpecReader::get_string(const std::string& key, const std::string& example) {
  const std::string* value = find(key);
  if (value == nullptr) {
    refuse_unknown_keys();
    throw PlayerSpecError(quoted_name() + ": " + key + " is required (e.g. " + example + ")");
  }
  used_.push_back(key);
  return *value;
}

void SpecReader::refuse_unknown_keys() const {
  for (const auto& [key, value] : spec_.params) {
    if (std::find(known_keys_.begin(), known_keys_.end(), key) != known_keys_.end()) continue;
    if (known_keys_.empty())
      throw PlayerSpecError(quoted_name() + ": unknown key '" + quote_input(key, 40) + "'; " +
                            quoted_name() + " takes no keys");
    throw PlayerSpecError(quoted_name() + ": unknown key '" + quote_input(key, 40) +
                          "'; keys: " + util::join(known_keys_, ", "));
  }
}

void SpecReader::finish() const {
  refuse_unknown_keys();
  for (const auto& [key, value] : spec_.params)
    if (std::find(used_.begin(), used_.end(), key) == used_.end())
      throw PlayerSpecError(quoted_name() + ": unused key '" + quote_input(key, 40) +
                            "'; keys: " + util::join(known_keys_, ", "));
}

std::string format_number(double value) {
  // The fewest digits (six at least) that read back as the same number: a spec or an SPRT echoed
  // as what is used (cpuct=1.2345678 was named and played as cpuct=1.23457's namesake).
  char buffer[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

}  // namespace oppidum::arena
