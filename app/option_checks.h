// Checks of option values that CLI11's own validators do not make: a number in a range with its
// bounds printed shortly (CLI::NonNegativeNumber prints DBL_MAX as 309 digits, CLI::Range of
// doubles prints 0.000000) and NaN refused (CLI::Range lets NaN through); a seed that is a whole
// number of 64 bits written in digits ("-1" would wrap to 2^64-1); a value that may not be empty.
// Each returns a CLI::Validator for Option::check; CLI11 prefixes its message with the option.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "games/quote.h"
#include "util/text.h"

namespace oppidum::app {
namespace option_checks_detail {

// The number in `text`, written in decimal in full (util::parse_decimal: no '+', spaces or
// hexadecimal, which strtod takes), or NaN when it is not one.
inline double parse_number(const std::string& text) {
  double v = 0;
  bool out_of_range = false;
  return util::parse_decimal(text, v, out_of_range) ? v : std::nan("");
}

inline std::string short_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

// The value as the user gave it, cut short and printable (games/quote.h).
inline std::string quoted(const std::string& text) { return "\"" + quote_input(text, 40) + "\""; }

}  // namespace option_checks_detail

// A finite number in [lo, hi], or also 0 (none) with `or_zero`.
inline CLI::Validator number_in(double lo, double hi, bool or_zero = false) {
  namespace d = option_checks_detail;
  const std::string range = std::string(or_zero ? "0 or " : "") + "a number in " +
                            d::short_number(lo) + ".." + d::short_number(hi);
  return CLI::Validator(
      [lo, hi, or_zero, range](std::string& text) -> std::string {
        const double v = d::parse_number(text);
        if (or_zero && v == 0) return "";
        if (std::isnan(v) || v < lo || v > hi) return d::quoted(text) + " is not " + range;
        return "";
      },
      (or_zero ? "0 or NUMBER in " : "NUMBER in ") + d::short_number(lo) + ".." +
          d::short_number(hi));
}
inline CLI::Validator zero_or_number_in(double lo, double hi) { return number_in(lo, hi, true); }

// A finite number of at least 0 (at_least_zero) or above 0.
inline CLI::Validator finite_number(bool at_least_zero) {
  namespace d = option_checks_detail;
  const std::string what = at_least_zero ? "0 or more" : "above 0";
  return CLI::Validator(
      [at_least_zero, what](std::string& text) -> std::string {
        const double v = d::parse_number(text);
        if (!std::isfinite(v) || v < 0 || (!at_least_zero && v == 0))
          return d::quoted(text) + " is not a number " + what;
        return "";
      },
      "NUMBER " + what);
}
inline CLI::Validator non_negative_number() { return finite_number(true); }
inline CLI::Validator positive_number() { return finite_number(false); }

// A whole number 0..2^64-1 in decimal digits (no sign).
inline CLI::Validator unsigned_whole_number() {
  namespace d = option_checks_detail;
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits =
            !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        bool fits = false;
        if (digits) {
          errno = 0;
          std::strtoull(text.c_str(), nullptr, 10);
          fits = errno != ERANGE;
        }
        if (!fits) return d::quoted(text) + " is not a whole number 0..18446744073709551615";
        return "";
      },
      "UINT64");
}

// Any value but the empty one; `hint` says what to do instead.
inline CLI::Validator non_empty(const std::string& hint) {
  return CLI::Validator(
      [hint](std::string& text) -> std::string { return text.empty() ? "empty; " + hint : ""; },
      "");
}

// A whole number written in decimal: digits, a '-' before them where `may_be_negative`, no
// leading 0. CLI11 reads integers with strtoll's base 0, so "010" would be 8, "0x50" 80 and " 5"
// 5, and an unsigned option took "-1" as 2^64-1; this check refuses all of them.
inline CLI::Validator decimal_whole_number(bool may_be_negative) {
  namespace d = option_checks_detail;
  return CLI::Validator(
      [may_be_negative](std::string& text) -> std::string {
        const std::size_t start = may_be_negative && !text.empty() && text[0] == '-' ? 1 : 0;
        const std::string digits = text.substr(start);
        const bool ok = !digits.empty() &&
                        digits.find_first_not_of("0123456789") == std::string::npos &&
                        (digits.size() == 1 || digits[0] != '0');
        if (ok) return "";
        return d::quoted(text) + " is not a whole number in decimal digits" +
               (may_be_negative ? "" : " (no sign)") + " without a leading 0";
      },
      "");
}

// Puts decimal_whole_number on every integer option of `app` and its subcommands (the options
// CLI11 names INT or UINT, alone or in a list), so no integer option is read in octal or hex.
inline void require_decimal_integers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    const std::string base = type.substr(0, type.find(':'));
    if (base == "INT" || base == "UINT") option->check(decimal_whole_number(base == "INT"));
  }
  for (CLI::App* sub : app.get_subcommands(std::function<bool(CLI::App*)>{}))
    require_decimal_integers(*sub);
}

}  // namespace oppidum::app
