// Run configs: every file in configs/ loads; unknown keys, bad types and out-of-range values are
// errors that name the key; the effective config written out reads back identically.
#include <filesystem>
#include <fstream>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/game.h"
#include "model/inference_server.h"
#include "selfplay/resignation.h"
#include "selfplay/selfplay.h"
#include "trainer/config.h"
#include "trainer/settings.h"

namespace oppidum::config {
namespace {

std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(yaml, "test.yaml", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Config, EveryShippedConfigLoads) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(OPPIDUM_CONFIG_DIR)) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    SCOPED_TRACE(entry.path().string());
    const RunConfig c = load_config(entry.path().string());
    const std::string name = entry.path().stem().string();
    EXPECT_EQ(name.rfind(c.run.game, 0), 0u) << "a config's name starts with its game's";
  }
  EXPECT_GE(count, 4);
}

TEST(Config, DefaultsWhenEmpty) {
  const RunConfig c = parse_config("", "empty");
  EXPECT_EQ(c.run.game, "mg");
  EXPECT_EQ(c.net.blocks, 4);
  EXPECT_EQ(c.training.optimizer, "sgd");
}

TEST(Config, ValuesAreRead) {
  const RunConfig c = parse_config(
      "run: {game: dvonn, seed: 18446744073709551615}\nnet:\n  filters: 64\n"
      "training:\n  learning_rate: 1e-3\n",
      "x");
  EXPECT_EQ(c.run.game, "dvonn");
  EXPECT_EQ(c.run.seed, 18446744073709551615ULL);
  EXPECT_EQ(c.net.filters, 64);
  EXPECT_DOUBLE_EQ(c.training.learning_rate, 1e-3);
}

TEST(Config, ErrorsNameTheKey) {
  EXPECT_NE(error_of("training:\n  batch_sise: 3\n").find("training.batch_sise: unknown key"), std::string::npos);
  EXPECT_NE(error_of("training:\n  batch_sise: 3\n").find("batch_size"), std::string::npos)
      << "the message lists the valid keys";
  EXPECT_NE(error_of("trainin:\n  batch_size: 3\n").find("unknown section"), std::string::npos);
  EXPECT_NE(error_of("selfplay:\n  simulations: 0\n").find("selfplay.simulations: 0 is out of range 1..1000000"), std::string::npos)
      << error_of("selfplay:\n  simulations: 0\n");
  EXPECT_NE(error_of("net:\n  blocks: four\n").find("net.blocks: expected a whole number"), std::string::npos);
  EXPECT_NE(error_of("net:\n  blocks: 4.5\n").find("net.blocks"), std::string::npos);
  EXPECT_NE(error_of("net:\n  global_pooling: maybe\n").find("net.global_pooling: expected true or false"), std::string::npos);
  EXPECT_NE(error_of("run:\n  game: chess\n").find("run.game: \"chess\" is not one of " + game_names()), std::string::npos);
  EXPECT_NE(error_of("run:\n  seed: -1\n").find("run.seed"), std::string::npos);
  // The gate's test is checked as the gate checks it, before a run is made (alpha 0.5 was taken
  // by the key's range, and the first gate then failed the run for good).
  EXPECT_NE(error_of("arena:\n  alpha: 0.5\n").find("arena: sprt: alpha must be in (0, 0.5)"),
            std::string::npos)
      << error_of("arena:\n  alpha: 0.5\n");
  EXPECT_NE(error_of("arena:\n  elo0: 5\n  elo1: 5\n").find("elo0 must be below elo1"),
            std::string::npos);
  // A space before the sign (which strtoull skips) is no way round it (before: 2^64 - 1).
  EXPECT_NE(error_of("run:\n  seed: \" -1\"\n").find("run.seed: expected a whole number"),
            std::string::npos);
  EXPECT_NE(error_of("run:\n  stop_after_positions: \" -5\"\n").find("expected a whole number"),
            std::string::npos);
  EXPECT_NE(error_of("selfplay: {root: alphazero}").find("selfplay.root: \"alphazero\" is not one of puct|gumbel"),
            std::string::npos);
  EXPECT_NE(error_of("net: [1, 2]\n").find("net: expected a map"), std::string::npos);
  EXPECT_NE(error_of("net:\n  blocks: [1]\n").find("net.blocks: expected a single value"), std::string::npos);
  EXPECT_NE(error_of("net: {blocks: 4\n").find("not valid YAML"), std::string::npos);
  EXPECT_NE(error_of("training: {window_min: 10, window_max: 5}\n").find("window_min"), std::string::npos);
  EXPECT_NE(error_of("arena: {max_games: 7}\n").find("even"), std::string::npos);
  EXPECT_NE(error_of("", {"net.blocks"}).find("expected section.key=value"), std::string::npos);
  EXPECT_NE(error_of("", {"net.blocks=99"}).find("net.blocks: 99 is out of range"), std::string::npos);
  EXPECT_NE(error_of("", {"nett.blocks=9"}).find("unknown section"), std::string::npos);
  EXPECT_NE(error_of("net: {blocks: 99}").find("test.yaml: net.blocks"), std::string::npos)
      << "errors name the file";
}

// Dropping fast-search positions when every move is a fast search would leave the replay window
// empty for good; the config is refused, naming both keys, before any run folder exists.
TEST(Config, DroppingFastSearchRowsNeedsSomeFullSearches) {
  const std::string message = error_of(
      "", {"selfplay.full_search_fraction=0", "training.fast_search_rows=drop"});
  EXPECT_NE(message.find("training.fast_search_rows"), std::string::npos) << message;
  EXPECT_NE(message.find("selfplay.full_search_fraction"), std::string::npos) << message;
  EXPECT_EQ(error_of("", {"selfplay.full_search_fraction=0.01", "training.fast_search_rows=drop"}),
            "");
  EXPECT_EQ(error_of("", {"selfplay.full_search_fraction=0", "training.fast_search_rows=value"}),
            "")
      << "value-only rows still fill the window";
}

// A config means what it says: nothing in it is silently overridden or ignored.
TEST(Config, KeysAndSectionsGivenTwiceAreErrorsWithTheirLines) {
  EXPECT_EQ(error_of("run:\n  seed: 1\ntraining:\n  batch_size: 8\n  warmup_steps: 1\n\n"
                     "  batch_size: 16\n"),
            "test.yaml: line 7: training.batch_size is given twice (first at line 4)");
  EXPECT_EQ(error_of("training: {batch_size: 8, batch_size: 8}\n"),
            "test.yaml: line 1: training.batch_size is given twice (first at line 1)");
  EXPECT_EQ(error_of("net:\n  blocks: 2\nrun:\n  seed: 1\nnet:\n  filters: 8\n"),
            "test.yaml: line 5: section net is given twice (first at line 1)");
  EXPECT_EQ(error_of("# a comment\nrun:\nrun:\n"),
            "test.yaml: line 3: section run is given twice (first at line 2)");
  // The same key in two sections is two keys.
  EXPECT_EQ(error_of("selfplay: {simulations: 50}\narena: {simulations: 50}\n"), "");
  // An unknown section is refused even when it is empty.
  EXPECT_NE(error_of("trainin:\n").find("test.yaml: trainin: unknown section"), std::string::npos)
      << error_of("trainin:\n");
}

TEST(Config, ASecondYamlDocumentIsAnError) {
  EXPECT_EQ(error_of("net: {blocks: 2}\n---\nnet: {blocks: 3}\n"),
            "test.yaml: line 2: a second YAML document; a config is one document");
  EXPECT_EQ(error_of("---\nnet: {blocks: 2}\n# the end\n---\n"),
            "test.yaml: line 4: a second YAML document; a config is one document");
  EXPECT_EQ(error_of("net:\n  blocks: 2\n--- 3\n"),
            "test.yaml: line 3: a second YAML document; a config is one document");
  // One document, with its optional markers, is fine.
  EXPECT_EQ(parse_config("---\nnet: {blocks: 2}\n...\n", "x").net.blocks, 2);
  // Texts on which yaml-cpp's LoadAll never ends, allocating 400 MB a second (found by fuzzing;
  // a config file, a served run's config.yaml or a Redis store's config reach it).
  for (const char* text : {",", ",0,\x07", "run: {seed: 1}\n---\n,"}) {
    const std::string error = error_of(text);
    EXPECT_TRUE(error.find("not valid YAML") != std::string::npos ||
                error.find("a second YAML document") != std::string::npos)
        << text << ": " << error;
  }
}

class ConfigFile : public ::testing::Test {
 protected:
  // Writes `text` to a file of its own and returns the error of loading it ("" if none).
  std::string load_error(const std::string& text) {
    const std::string path = ::testing::TempDir() + "config_test_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                             "_" + std::to_string(files_.size()) + ".yaml";
    std::ofstream(path, std::ios::binary) << text;
    files_.push_back(path);
    return load_error_of_path(path);
  }
  static std::string load_error_of_path(const std::string& path) {
    try {
      load_config(path);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
  void TearDown() override {
    for (const std::string& f : files_) std::filesystem::remove(f);
  }
  std::vector<std::string> files_;
};

TEST_F(ConfigFile, EmptyFilesAndDirectoriesAreErrorsNotDefaultRuns) {
  for (const std::string text : {"", "\n\n", "# only\n  # comments\n", "~\n", "{}\n"}) {
    const std::string message = load_error(text);
    EXPECT_EQ(message, files_.back() + ": the file is empty (no sections)") << "text: " << text;
  }
  std::string dir = ::testing::TempDir();
  EXPECT_EQ(load_error_of_path(dir), dir + ": a directory, not a config file");
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  EXPECT_EQ(load_error_of_path(dir), dir + ": a directory, not a config file");
  EXPECT_NE(load_error_of_path(dir + "/no-such-config.yaml").find("cannot open"),
            std::string::npos);
  EXPECT_EQ(load_error("run:\n  seed: 5\n"), "") << "one section is a config";
  EXPECT_EQ(load_config(files_.back()).run.seed, 5u);
  const std::string twice = load_error("run:\n  seed: 5\nrun:\n  seed: 6\n");
  EXPECT_EQ(twice, files_.back() + ": line 3: section run is given twice (first at line 1)");
  const std::string second = load_error("run:\n  seed: 5\n---\nrun:\n  seed: 6\n");
  EXPECT_EQ(second, files_.back() + ": line 3: a second YAML document; a config is one document");
}

// Bad input is quoted in at most about 100 bytes: a 1 MB value, key or --set gives a short
// message that still says what is wrong.
// Numbers are read the same way in a file and in --set: decimal only, without '+', spaces or
// hexadecimal (strtod took "0x1p-3" and " 0.01" from --set); one too large or too small for its
// type says so with the range, not "expected a number".
TEST(Config, NumbersAreDecimalAndOutOfRangeSaysSo) {
  for (const std::string bad : {"+8", " 8", "8 ", "0x10", "1e2", "8.0", "", "8k"}) {
    SCOPED_TRACE(bad);
    EXPECT_NE(error_of("", {"training.batch_size=" + bad}).find("expected a whole number"),
              std::string::npos);
  }
  for (const std::string bad : {"0x1p-3", " 0.01", "+0.01", "0.01 ", "nan", "1,5"}) {
    SCOPED_TRACE(bad);
    const std::string message = error_of("", {"training.learning_rate=" + bad});
    EXPECT_TRUE(message.find("expected a number") != std::string::npos ||
                message.find("out of range") != std::string::npos) << message;
  }
  EXPECT_NE(error_of("", {"training.batch_size=2147483648"}).find("is out of range"),
            std::string::npos);
  EXPECT_NE(error_of("", {"training.learning_rate=1e-400"}).find("is out of range"),
            std::string::npos);
  EXPECT_NE(error_of("training:\n  learning_rate: 0x1p-3\n", {}).find("expected a number"),
            std::string::npos);
  // yaml-cpp says "bad file" past its nesting guard, and misreads a NUL byte.
  EXPECT_NE(error_of("run: " + std::string(3000, '[') + std::string(3000, ']') + "\n")
                .find("test.yaml: not valid YAML: line 1: nested more than"),
            std::string::npos) << error_of("run: " + std::string(3000, '[') + std::string(3000, ']'));
  EXPECT_NE(error_of(std::string("run:\n  game: m\0g\n", 15)).find("test.yaml: line 2: a NUL byte"),
            std::string::npos) << error_of(std::string("run:\n  game: m\0g\n", 15));
}

// Values each in range but meaningless: refused at the start, naming the keys, not played or
// ignored later (an odd anchor match was silently played as one more game, resign_below -1 never
// resigned, 64 x 256 forward threads crashed inside OpenMP).
TEST(Config, ValuesThatCouldNeverMeanWhatTheySayAreRefused) {
  EXPECT_NE(error_of("", {"arena.anchor_games=3"}).find("arena.anchor_games must be even"),
            std::string::npos);
  EXPECT_NE(error_of("", {"selfplay.resign_below=-1"}).find("selfplay.resign_below must be above -1"),
            std::string::npos);
  EXPECT_EQ(error_of("", {"selfplay.resign_below=-0.99"}), "");
  EXPECT_NE(error_of("", {"inference.workers=64", "inference.threads=16"})
                .find("inference.workers x inference.threads is 64 x 16; at most 256"),
            std::string::npos);
  EXPECT_EQ(error_of("", {"inference.workers=16", "inference.threads=16"}), "");
  // Nothing random left in self-play: every game of a thread the same.
  const std::vector<std::string> same = {"selfplay.temperature=0", "selfplay.dirichlet_weight=0",
                                         "selfplay.full_search_fraction=1"};
  EXPECT_NE(error_of("", same).find("every self-play game would be the same game"),
            std::string::npos);
  std::vector<std::string> gumbel = same;
  gumbel.push_back("selfplay.root=gumbel");  // Gumbel noise tells the games apart
  EXPECT_EQ(error_of("", gumbel), "");
  std::vector<std::string> mixed = same;
  mixed.back() = "selfplay.full_search_fraction=0.5";  // so does the draw of full or fast searches
  EXPECT_EQ(error_of("", mixed), "");
  // Root noise comes with full searches only: none of them, no noise.
  EXPECT_NE(error_of("", {"selfplay.temperature=0", "selfplay.full_search_fraction=0"})
                .find("every self-play game would be the same game"),
            std::string::npos);
  // inference.threads are the Eigen backend's: with torch they do not exist.
  EXPECT_EQ(error_of("", {"inference.backend=torch", "inference.workers=64",
                          "inference.threads=16"}),
            "");
  // A run's own config.yaml (it holds every key) that breaks these rules, written before them,
  // still loads: only configs that start a run are held to them.
  const std::string saved = to_yaml(parse_config("", "x", {"arena.anchor_games=2"}));
  std::string old = saved;
  old.replace(old.find("anchor_games: 2"), 15, "anchor_games: 3");
  EXPECT_EQ(error_of(old), "");
  EXPECT_NE(error_of(old.substr(old.find('\n') + 1)).find("arena.anchor_games must be even"),
            std::string::npos) << "without its first line it is a config that starts a run";
}

TEST(Config, HugeBadInputIsQuotedShort) {
  const std::string huge(1 << 20, '9');
  struct Case {
    std::string yaml;
    std::vector<std::string> overrides;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"run:\n  game: x" + huge + "\n", {}, "test.yaml: run.game: \"x999"},
      {"net:\n  blocks: " + huge + "\n", {}, "test.yaml: net.blocks: 9999"},
      {"training:\n  learning_rate: x" + huge + "\n", {},
       "training.learning_rate: expected a number"},
      {"net:\n  global_pooling: " + huge + "\n", {}, "net.global_pooling: expected true or false"},
      // Plain keys are at most 1024 characters in YAML; explicit keys (`? key`) have no limit.
      {"net:\n  ? k" + huge + "\n  : 1\n", {}, "unknown key; the keys of net are blocks"},
      {"? s" + huge + "\n: {k: 1}\n", {}, "unknown section"},
      {"net: {k" + std::string(1000, '9') + ": 1}\n", {}, "unknown key"},
      {"", {"net.blocks=" + huge}, "--set net.blocks: 9999"},
      {"", {"net.blocks" + huge}, "expected section.key=value"},
      {"", {"n" + huge + ".blocks=1"}, "unknown section"},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.yaml, c.overrides);
    EXPECT_LT(message.size(), 400u) << message.substr(0, 600);
    EXPECT_NE(message.find(c.expected), std::string::npos) << message.substr(0, 600);
    EXPECT_NE(message.find(" bytes)"), std::string::npos) << message.substr(0, 600);
  }
}

// Self-play and the gates search with the run's settings; gates without noise or temperature.
TEST(Config, SearchSettingsComeFromTheRunConfig) {
  const RunConfig c = parse_config(
      "selfplay: {root: gumbel, cpuct: 2.5, cpuct_base: 19652, fpu_reduction: 0.5, "
      "gumbel_considered: 8, gumbel_c_visit: 40, gumbel_c_scale: 0.5, dirichlet_weight: 0.3}",
      "test.yaml");
  const auto selfplay = trainer::selfplay_settings(c, 0).search;
  EXPECT_EQ(selfplay.root, mcts::RootPolicy::kGumbel);
  EXPECT_FLOAT_EQ(selfplay.cpuct, 2.5f);
  EXPECT_FLOAT_EQ(selfplay.cpuct_base, 19652.0f);
  EXPECT_FLOAT_EQ(selfplay.fpu_reduction, 0.5f);
  EXPECT_EQ(selfplay.gumbel_considered, 8);
  EXPECT_FLOAT_EQ(selfplay.gumbel_c_visit, 40.0f);
  EXPECT_FLOAT_EQ(selfplay.gumbel_c_scale, 0.5f);
  EXPECT_TRUE(selfplay.gumbel_noise);
  EXPECT_FLOAT_EQ(selfplay.dirichlet_weight, 0.3f);
  const auto gate = trainer::search_config(c, 32);
  EXPECT_EQ(gate.simulations, 32);
  EXPECT_EQ(gate.root, mcts::RootPolicy::kGumbel);
  EXPECT_FLOAT_EQ(gate.cpuct_base, 19652.0f);
  EXPECT_FLOAT_EQ(gate.fpu_reduction, 0.5f);
  EXPECT_FALSE(gate.gumbel_noise);
  EXPECT_FLOAT_EQ(gate.dirichlet_weight, 0.0f);
  EXPECT_FLOAT_EQ(gate.temperature, 0.0f);
}

// The training-target switches reach self-play, the window and the optimiser; bad values name
// the key and the choices.
TEST(Config, TrainingTargetSettingsComeFromTheRunConfig) {
  const RunConfig defaults = parse_config("", "test.yaml");
  EXPECT_FALSE(trainer::selfplay_settings(defaults, 0).target_this_search_only);
  EXPECT_EQ(defaults.training.fast_search_rows, "value");
  EXPECT_EQ(defaults.training.value_q_weight, 0.0);
  EXPECT_EQ(trainer::trainer_settings(defaults).weight_decay_on, "all");
  const RunConfig c = parse_config(
      "selfplay: {target_visits: search}\n"
      "training: {value_q_weight: 0.25, fast_search_rows: drop, weight_decay_on: weights, "
      "window_min: 7, window_max: 9, window_growth: 0.125}",
      "test.yaml");
  EXPECT_TRUE(trainer::selfplay_settings(c, 0).target_this_search_only);
  const trainer::WindowSettings& w = c.training;
  EXPECT_EQ(w.value_q_weight, 0.25);
  EXPECT_EQ(w.fast_search_rows, "drop");
  EXPECT_EQ(w.window_min, 7);
  EXPECT_EQ(w.window_max, 9);
  EXPECT_EQ(w.window_growth, 0.125);
  EXPECT_EQ(trainer::trainer_settings(c).weight_decay_on, "weights");
  EXPECT_NE(error_of("training: {fast_search_rows: skip}").find("training.fast_search_rows"),
            std::string::npos);
  EXPECT_NE(error_of("training: {value_q_weight: 1.5}").find("training.value_q_weight"),
            std::string::npos);
  EXPECT_NE(error_of("selfplay: {target_visits: both}").find("tree|search"), std::string::npos);
  EXPECT_NE(error_of("training: {weight_decay_on: bn}").find("all|weights"), std::string::npos);
}

// inference.workers, threads, cuda_devices and precision: read into the server and backend
// options, refused out of range or where they cannot apply, with the key named.
TEST(Config, InferenceWorkersDevicesAndPrecision) {
  const RunConfig defaults = parse_config("", "x");
  EXPECT_EQ(defaults.inference.workers, 1);
  EXPECT_EQ(defaults.inference.threads, 1);
  EXPECT_EQ(defaults.inference.precision, "fp32");
  EXPECT_EQ(trainer::backend_options(defaults.inference).precision, model::Precision::kFloat32);
  EXPECT_EQ(trainer::server_options(defaults.inference).workers, 1);
  EXPECT_TRUE(trainer::server_options(defaults.inference).cuda_devices.empty());

  const RunConfig c = parse_config(
      "inference: {backend: torch, device: cuda, workers: 4, threads: 2, cuda_devices: \"0,2\", "
      "precision: bf16}",
      "x");
  const model::InferenceServerOptions so = trainer::server_options(c.inference);
  EXPECT_EQ(so.workers, 4);
  EXPECT_EQ(so.cuda_devices, (std::vector<int>{0, 2}));
  const model::BackendOptions bo = trainer::backend_options(c.inference);
  EXPECT_EQ(bo.threads, 2);
  EXPECT_EQ(bo.precision, model::Precision::kBFloat16);
  EXPECT_EQ(bo.device, model::Device::kCuda);
  EXPECT_EQ(to_yaml(parse_config(to_yaml(c), "effective")), to_yaml(c));
  EXPECT_EQ(trainer::backend_options(
                parse_config("inference: {backend: torch, device: cuda, precision: fp16}", "x")
                    .inference)
                .precision,
            model::Precision::kFloat16);

  EXPECT_NE(error_of("inference: {workers: 0}").find("inference.workers: 0 is out of range 1..64"),
            std::string::npos) << error_of("inference: {workers: 0}");
  EXPECT_NE(error_of("inference: {workers: 65}").find("inference.workers"), std::string::npos);
  EXPECT_NE(error_of("inference: {threads: -1}").find("inference.threads"), std::string::npos);
  // Reduced precision only for torch on cuda; cuda only for torch.
  for (const char* yaml : {"inference: {precision: fp16}", "inference: {backend: torch, precision: bf16}",
                           "inference: {backend: eigen, precision: fp16}",
                           "inference: {precision: fp8}"})
    EXPECT_NE(error_of(yaml).find("inference.precision"), std::string::npos) << yaml << ": " << error_of(yaml);
  EXPECT_NE(error_of("inference: {backend: eigen, device: cuda}").find("inference.backend torch"),
            std::string::npos) << error_of("inference: {backend: eigen, device: cuda}");
  // GPU lists: well formed, and only for cuda.
  for (const char* yaml : {"inference: {backend: torch, device: cuda, cuda_devices: \"0,,1\"}",
                           "inference: {backend: torch, device: cuda, cuda_devices: \"cuda:0\"}",
                           "inference: {backend: torch, device: cuda, cuda_devices: \"64\"}",
                           "inference: {backend: torch, device: cuda, cuda_devices: \"1,\"}",
                           "inference: {cuda_devices: \"0\"}"})
    EXPECT_NE(error_of(yaml).find("inference.cuda_devices"), std::string::npos) << yaml << ": " << error_of(yaml);
  EXPECT_EQ(parse_cuda_devices("3"), std::vector<int>{3});
  EXPECT_EQ(parse_cuda_devices("1,0,1"), (std::vector<int>{1, 0, 1}));
  EXPECT_TRUE(parse_cuda_devices("").empty());
  EXPECT_NE(error_of("", {"inference.workers=2", "inference.precision=fp16"})
                .find("inference.precision"),
            std::string::npos);
}

// inference.half, the key before inference.precision, still reads (frozen configs of older runs
// hold it): true is fp16, false fp32, anything else an error naming it.
TEST(Config, TheOlderHalfKeyReadsAsPrecision) {
  EXPECT_EQ(parse_config("inference: {backend: torch, device: cuda, half: true}", "x")
                .inference.precision,
            "fp16");
  EXPECT_EQ(parse_config("inference: {half: false}", "x").inference.precision, "fp32");
  EXPECT_EQ(parse_config("", "x", {"inference.backend=torch", "inference.device=cuda",
                                   "inference.half=true"})
                .inference.precision,
            "fp16");
  EXPECT_NE(error_of("inference: {half: maybe}").find("inference.half"), std::string::npos);
  EXPECT_NE(error_of("inference: {half: true}").find("inference.precision fp16"), std::string::npos)
      << error_of("inference: {half: true}");
  // The effective config writes the new key only.
  EXPECT_EQ(to_yaml(parse_config("inference: {half: false}", "x")).find("half"), std::string::npos);
}

// training.device: empty follows inference.device (plain cuda: the first listed GPU), or cpu,
// cuda, cuda:N; bf16 training needs cuda.
TEST(Config, TrainingDeviceAndPrecision) {
  EXPECT_EQ(training_device(parse_config("", "x")), "cpu");
  EXPECT_EQ(training_device(parse_config("inference: {backend: torch, device: cuda}", "x")),
            "cuda:0");
  EXPECT_EQ(training_device(parse_config(
                "inference: {backend: torch, device: cuda, cuda_devices: \"2,3\"}", "x")),
            "cuda:2");
  EXPECT_EQ(training_device(parse_config(
                "inference: {backend: torch, device: cuda}\ntraining: {device: cpu}", "x")),
            "cpu");
  EXPECT_EQ(training_device(parse_config("training: {device: \"cuda:1\"}", "x")), "cuda:1");
  EXPECT_EQ(trainer::trainer_settings(parse_config("training: {device: \"cuda:1\"}", "x")).device,
            "cuda:1");
  for (const char* yaml : {"training: {device: gpu}", "training: {device: \"cuda:\"}",
                           "training: {device: \"cuda:64\"}", "training: {device: \"cuda:-1\"}",
                           "training: {device: \"cuda:1x\"}"})
    EXPECT_NE(error_of(yaml).find("training.device"), std::string::npos) << yaml << ": " << error_of(yaml);
  EXPECT_EQ(trainer::trainer_settings(parse_config("", "x")).precision, "fp32");
  EXPECT_EQ(trainer::trainer_settings(parse_config("training: {device: cuda, precision: bf16}", "x"))
                .precision,
            "bf16");
  EXPECT_NE(error_of("training: {precision: bf16}").find("training.precision"), std::string::npos);
  EXPECT_NE(error_of("training: {precision: fp16}").find("training.precision"), std::string::npos);
}

// Where and how fast a run runs may change when it continues; what it learns may not.
TEST(Config, ResumableKeysAreDevicesThreadsAndStopConditions) {
  for (const char* key : {"stop_after_minutes", "max_generations", "store"})
    EXPECT_TRUE(may_change_on_resume("run", key)) << key;
  for (const char* key : {"device", "backend", "precision", "workers", "max_batch", "cuda_devices"})
    EXPECT_TRUE(may_change_on_resume("inference", key)) << key;
  EXPECT_TRUE(may_change_on_resume("training", "device"));
  EXPECT_TRUE(may_change_on_resume("selfplay", "threads"));
  EXPECT_FALSE(may_change_on_resume("training", "batch_size"));
  EXPECT_FALSE(may_change_on_resume("selfplay", "simulations"));
  EXPECT_FALSE(may_change_on_resume("net", "blocks"));
  EXPECT_FALSE(may_change_on_resume("run", "seed"));
  EXPECT_FALSE(may_change_on_resume("run", "game"));
  // Every listed key exists.
  const std::string yaml = to_yaml(parse_config("", "x"));
  for (const std::string& k : resumable_keys()) {
    const std::string section = k.substr(0, k.find('.')), key = k.substr(k.find('.') + 1);
    EXPECT_NE(yaml.find(section + ":\n"), std::string::npos) << k;
    EXPECT_NE(yaml.find("  " + key + ":"), std::string::npos) << k;
  }
}

TEST(Config, OverridesApplyAfterTheFile) {
  const RunConfig c = parse_config("net: {blocks: 2}", "x", {"net.blocks=6", "run.game=dvonn"});
  EXPECT_EQ(c.net.blocks, 6);
  EXPECT_EQ(c.run.game, "dvonn");
  // Of a key given twice with --set the last counts (scripts layer settings over a user's).
  EXPECT_EQ(parse_config("", "x", {"net.blocks=6", "net.blocks=3"}).net.blocks, 3);
}

TEST(Config, EffectiveConfigRoundTrips) {
  const RunConfig c = parse_config("training: {learning_rate: 0.1234567890123, optimizer: adamw}",
                                   "x", {"run.seed=42", "net.global_pooling=true"});
  const std::string yaml = to_yaml(c);
  const RunConfig back = parse_config(yaml, "effective");
  EXPECT_EQ(to_yaml(back), yaml);
  EXPECT_EQ(back.training.learning_rate, 0.1234567890123);
  EXPECT_EQ(back.training.optimizer, "adamw");
  EXPECT_EQ(back.run.seed, 42u);
  EXPECT_TRUE(back.net.global_pooling);
  EXPECT_NE(describe_keys().find("training.batch_size"), std::string::npos);
}

// A string holding YAML's own quote and backslash (an external anchor: external:cmd="prog") reads
// back as it was: written bare, the run's config.yaml was no YAML and the run never resumed.
// Control characters are refused (a newline split the gate's log line).
TEST(Config, StringsWithQuotesAndBackslashesRoundTrip) {
  const std::string anchor = R"(external:cmd="/opt/my engine\x --game mg",openings=1)";
  const RunConfig c = parse_config("", "x", {"arena.anchor=" + anchor});
  EXPECT_EQ(c.arena.anchor, anchor);
  const std::string yaml = to_yaml(c);
  const RunConfig back = parse_config(yaml, "effective");
  EXPECT_EQ(back.arena.anchor, anchor);
  EXPECT_EQ(to_yaml(back), yaml);
  for (const std::string bad : {"alphabeta:depth=2\ninjected", "random\t", "a\x1b[31m"}) {
    try {
      parse_config("", "x", {"arena.anchor=" + bad});
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("holds a control character"), std::string::npos)
          << e.what();
    }
  }
}

// A run's config.yaml (and the config a Redis store publishes) holds every key and says so in its
// first line: one cut short or edited is refused naming the missing key, never read with that
// key's default (before: a config.yaml cut after run.game resumed a run with 500 steps per
// generation instead of its 20). Without that line, missing keys take their defaults as always.
TEST(Config, AConfigThatHoldsEveryKeyMustHoldThemAll) {
  const std::string yaml =
      to_yaml(parse_config("training: {steps_per_generation: 20}", "x"));
  ASSERT_EQ(yaml.rfind(std::string(kEveryKeyLine) + "\n", 0), 0u);
  const std::size_t at = yaml.find("  steps_per_generation: 20\n");
  ASSERT_NE(at, std::string::npos);
  const std::string cut = yaml.substr(0, at);
  EXPECT_NE(error_of(cut).find("training.steps_per_generation is missing"), std::string::npos)
      << error_of(cut);
  std::string edited = yaml;
  edited.erase(at, std::strlen("  steps_per_generation: 20\n"));
  EXPECT_NE(error_of(edited).find("training.steps_per_generation is missing"), std::string::npos);
  const std::string unmarked = edited.substr(edited.find('\n') + 1);
  EXPECT_EQ(parse_config(unmarked, "x").training.steps_per_generation,
            RunConfig{}.training.steps_per_generation);
}

// Each setting is defined once: the net, training and window settings are the config's own
// sections, and the modules below the trainer (search, self-play, resignation, the inference
// server and backend) keep defaults equal to the config's, so that a module used without a config
// (the arena, the benches, tests) behaves as a default run.
// Numbers the keys' descriptions state that live in a module, not in the config: the description
// is a literal, so this keeps it with the module's constant.
TEST(Config, DescriptionsStateTheModulesNumbers) {
  const std::string keys = describe_keys();
  const auto seconds = static_cast<int>(selfplay::SelfPlaySettings{}.max_chunk_seconds);
  EXPECT_NE(keys.find("once its first game waited " + std::to_string(seconds) + " s"),
            std::string::npos);
  EXPECT_NE(keys.find("of the last " + std::to_string(selfplay::ResignControl::kRecentChecks) +
                      " checks"),
            std::string::npos);
}

// The config takes as many inference workers as the server starts, and no more.
TEST(Config, InferenceWorkersAreTheServersRange) {
  const std::string most = std::to_string(model::kMaxInferenceWorkers);
  EXPECT_EQ(error_of("inference:\n  workers: " + most), "");
  EXPECT_NE(error_of("inference:\n  workers: " + std::to_string(model::kMaxInferenceWorkers + 1))
                .find("1.." + most),
            std::string::npos);
}

TEST(Config, ModuleDefaultsAreTheConfigDefaults) {
  const RunConfig c = parse_config("", "x");
  EXPECT_EQ(c.net, model::NetConfig{});

  const selfplay::SelfPlaySettings from = trainer::selfplay_settings(c, 0);
  const selfplay::SelfPlaySettings module;
  EXPECT_EQ(from.game, module.game);
  EXPECT_EQ(from.threads, module.threads);
  EXPECT_EQ(from.concurrent_games, module.concurrent_games);
  EXPECT_EQ(from.simulations, module.simulations);
  EXPECT_EQ(from.fast_simulations, module.fast_simulations);
  EXPECT_EQ(from.full_search_fraction, module.full_search_fraction);
  EXPECT_EQ(from.target_this_search_only, module.target_this_search_only);
  EXPECT_EQ(from.max_plies, module.max_plies);
  EXPECT_EQ(from.games_per_chunk, module.games_per_chunk);
  EXPECT_EQ(from.resign.below, module.resign.below);
  EXPECT_EQ(from.resign.moves, module.resign.moves);
  EXPECT_EQ(from.resign.playout, module.resign.playout);
  EXPECT_EQ(from.resign.max_false, module.resign.max_false);

  const mcts::SearchConfig& search = from.search;
  const mcts::SearchConfig defaults;
  EXPECT_EQ(search.cpuct, defaults.cpuct);
  EXPECT_EQ(search.cpuct_base, defaults.cpuct_base);
  EXPECT_EQ(search.fpu_reduction, defaults.fpu_reduction);
  EXPECT_EQ(search.dirichlet_alpha_scale, defaults.dirichlet_alpha_scale);
  EXPECT_EQ(search.dirichlet_weight, defaults.dirichlet_weight);
  EXPECT_EQ(search.temperature_plies, defaults.temperature_plies);
  EXPECT_EQ(search.temperature, defaults.temperature);
  EXPECT_EQ(search.final_temperature, defaults.final_temperature);
  EXPECT_EQ(search.root, defaults.root);
  EXPECT_EQ(search.gumbel_considered, defaults.gumbel_considered);
  EXPECT_EQ(search.gumbel_c_visit, defaults.gumbel_c_visit);
  EXPECT_EQ(search.gumbel_c_scale, defaults.gumbel_c_scale);

  const model::InferenceServerOptions server = trainer::server_options(c.inference);
  const model::InferenceServerOptions server_module;
  EXPECT_EQ(server.max_batch, server_module.max_batch);
  EXPECT_EQ(server.max_wait, server_module.max_wait);
  EXPECT_EQ(server.workers, server_module.workers);
  EXPECT_EQ(server.cuda_devices, server_module.cuda_devices);
  const model::BackendOptions backend = trainer::backend_options(c.inference);
  const model::BackendOptions backend_module;
  EXPECT_EQ(backend.kind, backend_module.kind);
  EXPECT_EQ(backend.device, backend_module.device);
  EXPECT_EQ(backend.threads, backend_module.threads);
  EXPECT_EQ(backend.precision, backend_module.precision);
}

}  // namespace
}  // namespace oppidum::config
