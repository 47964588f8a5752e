#include "trainer/config.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "arena/elo.h"
#include "games/game.h"
#include "games/quote.h"
#include "util/file_io.h"
#include "util/text.h"

namespace oppidum::config {
namespace {

// How one field is read, written and described, generated from the field lists.
template <class S>
struct Field {
  const char* name;
  const char* doc;
  bool resumable;  // may change when a run continues (config::may_change_on_resume)
  std::string default_text;
  std::function<void(S&, const std::string& value, const std::string& key)> read;
  std::function<std::string(const S&)> write;
};

// The shortest text that reads back as exactly `v` (0.1, not 0.10000000000000001).
std::string number_text(double v) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}

template <class T>
std::string value_text(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) return v;
  else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
  else if constexpr (std::is_floating_point_v<T>) return number_text(v);
  else return std::to_string(v);
}

template <class S, class T, class Lo, class Hi>
Field<S> make_field(const char* name, const char* doc, bool resumable, T S::*member, const T& def,
                    Lo lo, Hi hi) {
  Field<S> f{name, doc, resumable, value_text(def), nullptr, nullptr};
  f.write = [member](const S& s) { return value_text(s.*member); };
  if constexpr (std::is_same_v<T, std::string>) {
    // Double-quoted, so that a value like "1e3" or "yes" reads back as the string it is, with
    // YAML's escapes for the quote and the backslash (a player spec such as
    // external:cmd="prog" has both: written bare, the run's config.yaml was no YAML).
    f.write = [member](const S& s) {
      std::string text = "\"";
      for (const char c : s.*member) {
        if (c == '"' || c == '\\') text += '\\';
        text += c;
      }
      return text + "\"";
    };
    const std::string allowed = lo;
    (void)hi;
    f.read = [member, allowed](S& s, const std::string& value, const std::string& key) {
      if (!allowed.empty() && ("|" + allowed + "|").find("|" + value + "|") == std::string::npos)
        throw ConfigError(key + ": \"" + quote_input(value) + "\" is not one of " + allowed);
      // No value is a line of text: a newline in one would split the log lines that show it.
      for (const char c : value)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          throw ConfigError(key + ": \"" + quote_input(value) +
                            "\" holds a control character (a newline, a tab, ...)");
      s.*member = value;
    };
  } else if constexpr (std::is_same_v<T, bool>) {
    (void)lo;
    (void)hi;
    f.read = [member](S& s, const std::string& value, const std::string& key) {
      if (value == "true") s.*member = true;
      else if (value == "false") s.*member = false;
      else throw ConfigError(key + ": expected true or false, got \"" + quote_input(value) + "\"");
    };
  } else {
    const T low = static_cast<T>(lo), high = static_cast<T>(hi);
    f.read = [member, low, high](S& s, const std::string& value, const std::string& key) {
      T v{};
      bool out_of_range = false;
      if (!util::parse_decimal(value, v, out_of_range)) {
        if (out_of_range)
          throw ConfigError(key + ": " + quote_input(value, 40) + " is out of range " +
                            value_text(low) + ".." + value_text(high));
        throw ConfigError(key + ": expected " +
                          (std::is_floating_point_v<T> ? "a number" : "a whole number") +
                          " (decimal), got \"" + quote_input(value) + "\"");
      }
      if (!(v >= low && v <= high))
        throw ConfigError(key + ": " + value_text(v) + " is out of range " + value_text(low) +
                          ".." + value_text(high));
      s.*member = v;
    };
  }
  return f;
}

#define OPPIDUM_FIELD(type, name, def, lo, hi, resumable, doc) \
  make_field<S, type>(#name, doc, resumable, &S::name, type(def), lo, hi),

template <class S>
const std::vector<Field<S>>& fields();

#define OPPIDUM_SECTION_FIELDS(Section, LIST)           \
  template <>                                           \
  const std::vector<Field<Section>>& fields<Section>() { \
    using S = Section;                                  \
    static const std::vector<Field<S>> list = {LIST(OPPIDUM_FIELD)}; \
    return list;                                        \
  }

OPPIDUM_SECTION_FIELDS(RunSection, OPPIDUM_RUN_FIELDS)
OPPIDUM_SECTION_FIELDS(NetSection, OPPIDUM_NET_FIELDS)
OPPIDUM_SECTION_FIELDS(SelfplaySection, OPPIDUM_SELFPLAY_FIELDS)
OPPIDUM_SECTION_FIELDS(TrainingSection, OPPIDUM_TRAINING_FIELDS)
OPPIDUM_SECTION_FIELDS(ArenaSection, OPPIDUM_ARENA_FIELDS)
OPPIDUM_SECTION_FIELDS(InferenceSection, OPPIDUM_INFERENCE_FIELDS)

#undef OPPIDUM_SECTION_FIELDS
#undef OPPIDUM_FIELD

// Calls f(section_name, section) for every section of the config, in file order.
template <class C, class F>
void for_each_section(C& c, F&& f) {
  f("run", c.run);
  f("net", c.net);
  f("selfplay", c.selfplay);
  f("training", c.training);
  f("arena", c.arena);
  f("inference", c.inference);
}

template <class S>
void set_field(S& section, const std::string& section_name, const std::string& key,
               const std::string& value, const std::string& where) {
  for (const auto& f : fields<S>()) {
    if (key == f.name) {
      f.read(section, value, where + section_name + "." + key);
      return;
    }
  }
  std::string keys;
  for (const auto& f : fields<S>()) keys += std::string(keys.empty() ? "" : ", ") + f.name;
  throw ConfigError(where + section_name + "." + quote_input(key) + ": unknown key; the keys of " +
                    section_name + " are " + keys);
}

bool is_section(const std::string& section_name) {
  static const RunConfig defaults;
  bool found = false;
  for_each_section(defaults, [&](const char* name, const auto&) {
    if (section_name == name) found = true;
  });
  return found;
}

// Sets section.key to value in `config`; false if there is no such section.
bool set_key(RunConfig& config, const std::string& section_name, const std::string& key,
             const std::string& value, const std::string& where) {
  bool found = false;
  for_each_section(config, [&](const char* name, auto& section) {
    if (section_name == name) {
      set_field(section, section_name, key, value, where);
      found = true;
    }
  });
  return found;
}

void check_cross_field_rules(const RunConfig& c, const std::string& where) {
  bool registered = false;
  for (const Game* g : all_games()) registered = registered || g->name() == c.run.game;
  if (!registered) {
    throw ConfigError(where + "run.game: \"" + quote_input(c.run.game) + "\" is not one of " +
                      game_names());
  }
  if (c.training.window_min > c.training.window_max)
    throw ConfigError(where + "training.window_min (" + std::to_string(c.training.window_min) +
                      ") is larger than training.window_max (" +
                      std::to_string(c.training.window_max) + ")");
  // Dropping every fast-search position when no move gets a full search leaves the window empty
  // for good: the run would wait for training rows that never come.
  if (c.training.fast_search_rows == "drop" && c.selfplay.full_search_fraction <= 0)
    throw ConfigError(where + "training.fast_search_rows drop needs selfplay.full_search_fraction "
                              "above 0 (with 0 every move is a fast search, so the window would "
                              "hold no position to train on)");
  if (c.selfplay.fast_simulations > c.selfplay.simulations)
    throw ConfigError(where + "selfplay.fast_simulations must not exceed selfplay.simulations");
  // The gate's test as the gate will check it (elo1 above elo0, alpha and beta below 0.5).
  try {
    arena::SprtConfig{c.arena.elo0, c.arena.elo1, c.arena.alpha, c.arena.beta}.validate();
  } catch (const std::invalid_argument& e) {
    throw ConfigError(where + "arena: " + e.what());
  }
  if (c.selfplay.threads == 0 && c.run.store.empty())
    throw ConfigError(where + "selfplay.threads 0 needs run.store: a run without self-play of its "
                              "own gets its games from self-play nodes through a Redis store");
  if (c.run.store.find('@') != std::string::npos &&
      c.run.store.find(':', c.run.store.find("//") + 2) < c.run.store.find('@'))
    throw ConfigError(where + "run.store: a password does not belong in a config (configs are "
                              "copied into the run folder); put it in OPPIDUM_REDIS_PASSWORD");
  if (c.arena.max_games % 2 != 0)
    throw ConfigError(where + "arena.max_games must be even (games are played in pairs)");
  if (c.inference.backend == "eigen" && c.inference.device == "cuda")
    throw ConfigError(where + "inference.device cuda needs inference.backend torch (the eigen "
                              "backend runs on the cpu only)");
  if (c.inference.precision != "fp32" &&
      (c.inference.backend != "torch" || c.inference.device != "cuda"))
    throw ConfigError(where + "inference.precision " + c.inference.precision +
                      " needs inference.backend torch and inference.device cuda (this config has "
                      "backend " + c.inference.backend + ", device " + c.inference.device + ")");
  try {
    if (!parse_cuda_devices(c.inference.cuda_devices).empty() && c.inference.device != "cuda")
      throw ConfigError("inference.cuda_devices: GPU indices need inference.device cuda");
    const std::string device = training_device(c);
    if (c.training.precision != "fp32" && device == "cpu")
      throw ConfigError("training.precision " + c.training.precision +
                        " needs training on cuda (training.device, or inference.device when "
                        "that is empty)");
  } catch (const ConfigError& e) {
    throw ConfigError(where + e.what());
  }
}

// Rules added after runs were started with configs that break them: checked for a config that
// starts a run (not for a run's own config.yaml, which must keep loading).
void check_new_config_rules(const RunConfig& c, const std::string& where) {
  // Nothing left to tell one game from another: a thread's concurrent games would all be the same
  // game, and the window would hold copies. Root noise comes with full searches only.
  const SelfplaySection& sp = c.selfplay;
  const bool no_temperature = (sp.temperature_plies == 0 || sp.temperature < 1e-3) &&
                              sp.final_temperature < 1e-3;
  const bool no_noise = sp.dirichlet_weight == 0 || sp.full_search_fraction == 0;
  const bool one_kind_of_search = sp.full_search_fraction == 0 || sp.full_search_fraction == 1 ||
                                  sp.simulations == sp.fast_simulations;
  if (sp.root == "puct" && no_temperature && no_noise && one_kind_of_search)
    throw ConfigError(where + "every self-play game would be the same game: selfplay.temperature "
                              "(or temperature_plies) and final_temperature are 0, there is no "
                              "root noise (selfplay.dirichlet_weight 0, or no full search) and "
                              "every search has the same size; give one of them a value");
  if (c.arena.anchor_games % 2 != 0)
    throw ConfigError(where + "arena.anchor_games must be even (games are played in pairs)");
  if (c.selfplay.resign_below <= -1.0)
    throw ConfigError(where + "selfplay.resign_below must be above -1 (a root value is never "
                              "below -1, so it would never resign; 0: never resign)");
  check_forward_threads(c, where);
}

// Keys renamed since runs were first written: a frozen config.yaml from then still loads.
// inference.half (a boolean) became inference.precision.
bool read_renamed_key(RunConfig& config, const std::string& section, const std::string& key,
                      const std::string& value, const std::string& where) {
  if (section != "inference" || key != "half") return false;
  if (value != "true" && value != "false")
    throw ConfigError(where + "inference.half: expected true or false, got \"" +
                      quote_input(value) + "\" (inference.half is now inference.precision)");
  config.inference.precision = value == "true" ? "fp16" : "fp32";
  return true;
}

}  // namespace

void check_forward_threads(const RunConfig& c, const std::string& where) {
  if (c.inference.backend == "eigen" &&
      c.inference.workers * c.inference.threads > kMaxForwardThreads)
    throw ConfigError(where + "inference.workers x inference.threads is " +
                      std::to_string(c.inference.workers) + " x " +
                      std::to_string(c.inference.threads) + "; at most " +
                      std::to_string(kMaxForwardThreads) + " forward threads in all");
}

std::vector<int> parse_cuda_devices(std::string_view text) {
  std::vector<int> devices;
  if (text.empty()) return devices;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    int value = 0;
    bool ok = !item.empty() && item.size() <= 2;
    for (char ch : item) {
      ok = ok && ch >= '0' && ch <= '9';
      if (ok) value = value * 10 + (ch - '0');  // at most two digits: never overflows
    }
    if (!ok || value > kMaxGpuIndex)
      throw ConfigError("inference.cuda_devices: \"" + quote_input(std::string(text)) +
                        "\" is not a list of GPU indices 0.." + std::to_string(kMaxGpuIndex) +
                        " such as \"0,1\"");
    devices.push_back(value);
    if (comma == text.size()) break;
    at = comma + 1;
  }
  return devices;
}

std::string training_device(const RunConfig& c) {
  const std::string& d = c.training.device.empty() ? c.inference.device : c.training.device;
  if (d == "cpu") return d;
  if (d == "cuda") {
    const std::vector<int> gpus = parse_cuda_devices(c.inference.cuda_devices);
    return "cuda:" + std::to_string(gpus.empty() ? 0 : gpus.front());
  }
  int index = -1;
  if (d.size() > 5 && d.size() <= 7 && d.compare(0, 5, "cuda:") == 0) {
    index = 0;
    for (std::size_t i = 5; i < d.size(); ++i)
      index = d[i] >= '0' && d[i] <= '9' && index >= 0 ? index * 10 + (d[i] - '0') : -1;
  }
  if (index < 0 || index > kMaxGpuIndex)
    throw ConfigError("training.device: \"" + quote_input(d) +
                      "\" is not cpu, cuda or cuda:N (N a GPU index 0.." +
                      std::to_string(kMaxGpuIndex) + "), or empty for inference.device");
  return "cuda:" + std::to_string(index);
}

const std::vector<std::string>& resumable_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    const RunConfig defaults;
    for_each_section(defaults, [&](const char* section, const auto& s) {
      using S = std::decay_t<decltype(s)>;
      for (const auto& f : fields<S>())
        if (f.resumable) k.push_back(std::string(section) + "." + f.name);
    });
    return k;
  }();
  return keys;
}

bool may_change_on_resume(const std::string& section, const std::string& key) {
  const std::vector<std::string>& keys = resumable_keys();
  return std::find(keys.begin(), keys.end(), section + "." + key) != keys.end();
}

namespace {

std::string line_of(const YAML::Node& node) {
  return "line " + std::to_string(node.Mark().line + 1);
}

// Where the documents of a YAML text start: the first event of each (its root node's mark), up to
// two documents. yaml-cpp 0.7's LoadAll never ends on some malformed texts (a lone ",": every
// document it reads starts where the last one did, and it allocates as it goes; yaml-cpp issue
// 1040), so the documents are counted by the parser's events, stopping at the second, and a
// document that starts where the one before started is an error.
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;  // where each document starts
  std::vector<YAML::Mark> roots;   // its root node's mark (a null mark when it has none)

  void OnDocumentStart(const YAML::Mark& m) override {
    starts.push_back(m);
    roots.emplace_back(YAML::Mark::null_mark());
    root_seen_ = false;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& m) {
    if (!root_seen_ && !roots.empty()) roots.back() = m;
    root_seen_ = true;
  }
  bool root_seen_ = false;
};

// yaml-cpp's message, except where it says too little: nesting past its depth guard is "bad file".
std::string yaml_error(const YAML::Exception& e) {
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e))
    return "line " + std::to_string(e.mark.line + 1) + ": nested more than " +
           std::to_string(deep->depth() - 1) + " levels deep";
  return e.what();
}

// The root marks of the first documents of `text` (at most two); ConfigError (`where` first) when
// it is not valid YAML.
std::vector<YAML::Mark> document_roots(std::string_view text, const std::string& where) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  DocumentStarts documents;
  try {
    for (int read = 0; read < 2 && parser.HandleNextDocument(documents); ++read) {
    }
  } catch (const YAML::Exception& e) {
    throw ConfigError(where + "not valid YAML: " + yaml_error(e));
  }
  const std::vector<YAML::Mark>& s = documents.starts;
  if (s.size() >= 2 && s[1].pos <= s[0].pos)
    throw ConfigError(where + "not valid YAML: line " + std::to_string(s[0].line + 1) +
                      ": a document that does not end");
  documents.roots.resize(std::min<std::size_t>(documents.roots.size(), 2));
  return documents.roots;
}

}  // namespace

int count_yaml_documents(std::string_view text, const std::string& where) {
  return static_cast<int>(document_roots(text, where).size());
}

namespace {

// The line (1-based) where the second YAML document of `text` starts: its "---" marker, or where
// its content starts when it has none. `first` and `second` are the documents' root marks.
int second_document_line(std::string_view text, const YAML::Mark& first,
                         const YAML::Mark& second) {
  const int after = first.line;
  const int until = second.is_null() ? INT_MAX : second.line;
  int marker = -1;
  int line = 0;
  for (std::size_t begin = 0; begin < text.size() && line <= until; ++line) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(begin, end - begin);
    if (line > after && l.substr(0, 3) == "---" &&
        (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r'))
      marker = line;
    begin = end + 1;
  }
  return (marker >= 0 ? marker : until == INT_MAX ? line - 1 : until) + 1;
}

// A key of a map, as a string; throws if it is not a plain scalar.
std::string key_name(const YAML::Node& key, const std::string& where) {
  if (!key.IsScalar())
    throw ConfigError(where + line_of(key) + ": expected a name as the key, not a list or a map");
  return key.Scalar();
}

// `refuse_empty`: a text without sections is an error (a config file), not the defaults.
RunConfig parse(std::string_view yaml_text, const std::string& source,
                const std::vector<std::string>& overrides, bool refuse_empty) {
  const std::string where = source.empty() ? "" : source + ": ";
  if (const auto nul = yaml_text.find('\0'); nul != std::string_view::npos)
    throw ConfigError(where + "line " +
                      std::to_string(1 + std::count(yaml_text.begin(), yaml_text.begin() + nul, '\n')) +
                      ": a NUL byte; a config is text");
  const std::vector<YAML::Mark> documents = document_roots(yaml_text, where);
  if (documents.size() > 1)
    throw ConfigError(where + "line " +
                      std::to_string(second_document_line(yaml_text, documents[0], documents[1])) +
                      ": a second YAML document; a config is one document");
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw ConfigError(where + "not valid YAML: " + yaml_error(e));
  }
  const bool every_key = yaml_text.substr(0, std::strlen(kEveryKeyLine)) == kEveryKeyLine;
  std::set<std::string> given;  // "section.key" of every key read
  RunConfig config;
  const bool has_sections = root && root.IsMap() && root.size() > 0;
  if (!has_sections && refuse_empty && (!root || root.IsNull() || root.IsMap()))
    throw ConfigError(where + "the file is empty (no sections)");
  if (root && !root.IsNull()) {
    if (!root.IsMap()) throw ConfigError(where + "expected a map of sections (run, net, ...)");
    std::map<std::string, int> section_lines;
    for (const auto& section : root) {
      const std::string section_name = key_name(section.first, where);
      const int section_line = section.first.Mark().line + 1;
      if (!is_section(section_name))
        throw ConfigError(where + quote_input(section_name) +
                          ": unknown section; the sections are run, net, selfplay, training, "
                          "arena, inference");
      if (const auto [it, first] = section_lines.emplace(section_name, section_line); !first)
        throw ConfigError(where + "line " + std::to_string(section_line) + ": section " +
                          section_name + " is given twice (first at line " +
                          std::to_string(it->second) + ")");
      const YAML::Node& body = section.second;
      if (body.IsNull()) continue;
      if (!body.IsMap())
        throw ConfigError(where + section_name + ": expected a map of keys (" + line_of(body) +
                          ")");
      std::map<std::string, int> key_lines;
      for (const auto& kv : body) {
        const std::string key = key_name(kv.first, where);
        if (!kv.second.IsScalar())
          throw ConfigError(where + section_name + "." + quote_input(key) +
                            ": expected a single value (" + line_of(kv.second) + ")");
        // The first time a key is seen, set_key refuses it if it is unknown; so a key given
        // twice is a known one.
        const int key_line = kv.first.Mark().line + 1;
        if (const auto [it, first] = key_lines.emplace(key, key_line); !first)
          throw ConfigError(where + "line " + std::to_string(key_line) + ": " + section_name +
                            "." + key + " is given twice (first at line " +
                            std::to_string(it->second) + ")");
        if (!read_renamed_key(config, section_name, key, kv.second.Scalar(), where))
          set_key(config, section_name, key, kv.second.Scalar(), where);
        given.insert(section_name + "." + key);
      }
    }
  }
  if (every_key)
    for_each_section(config, [&](const char* name, const auto& section) {
      using S = std::decay_t<decltype(section)>;
      for (const auto& f : fields<S>())
        if (!given.count(std::string(name) + "." + f.name))
          throw ConfigError(where + name + "." + f.name +
                            " is missing; this config holds every key (its first line says so), "
                            "so it was cut short or edited: restore it");
    });
  for (const std::string& o : overrides) {
    const auto eq = o.find('=');
    const auto dot = o.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq)
      throw ConfigError("--set " + quote_input(o) +
                        ": expected section.key=value, e.g. training.batch_size=128");
    const std::string section = o.substr(0, dot), key = o.substr(dot + 1, eq - dot - 1);
    if (!read_renamed_key(config, section, key, o.substr(eq + 1), "--set ") &&
        !set_key(config, section, key, o.substr(eq + 1), "--set "))
      throw ConfigError("--set " + quote_input(o) + ": unknown section \"" +
                        quote_input(o.substr(0, dot)) + "\"");
  }
  // The rules between keys, of the file's values and --set's together: said of both.
  const std::string rules_where =
      overrides.empty() ? where : (source.empty() ? "--set: " : source + " with --set: ");
  check_cross_field_rules(config, rules_where);
  if (!every_key) check_new_config_rules(config, rules_where);
  return config;
}

}  // namespace

RunConfig parse_config(std::string_view yaml_text, const std::string& source,
                       const std::vector<std::string>& overrides) {
  return parse(yaml_text, source, overrides, /*refuse_empty=*/false);
}

RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  // The usual refusals in the config's own words; read_regular_file checks again on the open file.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      throw ConfigError(path + ": " + util::describe_file_type(st.st_mode) + ", not a config file");
    if (static_cast<std::uint64_t>(st.st_size) > kMaxConfigBytes)
      throw ConfigError(path + ": " + std::to_string(st.st_size) +
                        " bytes; a config file is at most " +
                        std::to_string(kMaxConfigBytes >> 20) + " MiB");
  }
  std::string text;
  try {
    text = util::read_regular_file(path, kMaxConfigBytes);
  } catch (const util::FileError& e) {
    throw ConfigError(e.what());
  }
  return parse(text, path, overrides, /*refuse_empty=*/true);
}

RunConfig load_config_or_defaults(const std::string& path,
                                  const std::vector<std::string>& overrides) {
  return path.empty() ? parse_config("", "", overrides) : load_config(path, overrides);
}

std::string to_yaml(const RunConfig& config) {
  std::string out = std::string(kEveryKeyLine) + "\n";
  for_each_section(config, [&](const char* name, const auto& section) {
    using S = std::decay_t<decltype(section)>;
    out += std::string(name) + ":\n";
    for (const auto& f : fields<S>()) {
      out += "  " + std::string(f.name) + ": " + f.write(section) + "\n";
    }
  });
  return out;
}

std::string identity_text(const RunConfig& config) {
  std::string out;
  for_each_section(config, [&](const char* name, const auto& section) {
    using S = std::decay_t<decltype(section)>;
    for (const auto& f : fields<S>())
      if (!f.resumable) out += std::string(name) + "." + f.name + ": " + f.write(section) + "\n";
  });
  return out;
}

std::string describe_keys() {
  std::string out;
  const RunConfig defaults;
  for_each_section(defaults, [&](const char* name, const auto& section) {
    using S = std::decay_t<decltype(section)>;
    for (const auto& f : fields<S>()) {
      std::string key = std::string(name) + "." + f.name;
      key.resize(std::max<std::size_t>(key.size() + 1, 34), ' ');
      std::string def = f.default_text;
      def.resize(std::max<std::size_t>(def.size() + 1, 9), ' ');
      out += "  " + key + def + f.doc + "\n";
    }
  });
  return out;
}

}  // namespace oppidum::config
