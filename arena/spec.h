// Player specs: the short strings that name a player on the command line, in results files and in
// game records, e.g. `random`, `uct:sims=1000,cpuct=2`, `alphabeta:depth=3`.
//
// Grammar: NAME [':' KEY '=' VALUE (',' KEY '=' VALUE)*]. Names and keys are lower case. A value
// either runs to the next comma (so it holds no comma, no whitespace) or is quoted: `"..."` holds
// any text, spaces and commas included, with `\"` for a quote and `\\` for a backslash (other
// backslashes stand for themselves), e.g. `external:cmd="./engine --depth 3",timeout_ms=5000`.
// Whitespace appears nowhere else. Canonical specs (a player's name in the space-separated
// results and record files) never hold whitespace.
//
// Bad specs throw PlayerSpecError with a message that names the player, the key and the rule.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oppidum::arena {

class PlayerSpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct PlayerSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;  // in the order written
};

// Splits a spec into its name and key=value pairs (quotes removed from quoted values); throws
// PlayerSpecError for an empty spec, a missing '=', an empty key or value, a repeated key,
// whitespace outside quotes, or a quoted value without its closing quote or followed by text.
PlayerSpec parse_player_spec(std::string_view text);

// Reads the values of one spec: each getter consumes its key, finish() rejects the keys nobody
// asked for (naming them and the keys the player knows).
class SpecReader {
 public:
  SpecReader(PlayerSpec spec, std::vector<std::string> known_keys);

  bool has(const std::string& key) const;
  const std::string& name() const { return spec_.name; }
  // Throws PlayerSpecError when the key is missing (naming an example), not an integer, or outside
  // [min, max].
  std::int64_t get_int(const std::string& key, std::int64_t min, std::int64_t max,
                       const std::string& example);
  std::int64_t get_int_or(const std::string& key, std::int64_t min, std::int64_t max,
                          std::int64_t fallback);
  double get_double_or(const std::string& key, double min, double max, double fallback);
  std::string get_string(const std::string& key, const std::string& example);
  // Throws PlayerSpecError naming the first key the player does not know, else the first key that
  // no getter read.
  void finish() const;

 private:
  // Throws PlayerSpecError naming the first key the player does not know (a misspelt one): asked
  // before a required key is said to be missing, so that `uct:simz=100` names simz.
  void refuse_unknown_keys() const;
  const std::string* find(const std::string& key) const;
  std::int64_t to_int(const std::string& key, const std::string& value, std::int64_t min,
                      std::int64_t max) const;
  // The player's name as its errors quote it (shortened, printable).
  std::string quoted_name() const;

  PlayerSpec spec_;
  std::vector<std::string> known_keys_;
  std::vector<std::string> used_;
};

// A double printed the short way ("1.5", "2", "0.25") for canonical specs: the fewest digits,
// six at least, that read back as the same double.
std::string format_number(double value);

}  // namespace oppidum::arena
