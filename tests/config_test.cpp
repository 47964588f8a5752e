// Run configs: every file in configs/ loads; unknown keys, bad types and out-of-range values are
// errors that name the key; the effective config written out reads back identically.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "trainer/config.h"

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
    EXPECT_EQ(c.run.game, name.rfind("dvonn", 0) == 0 ? "dvonn" : "mg");
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
  EXPECT_NE(error_of("run:\n  game: chess\n").find("run.game: \"chess\" is not one of mg|dvonn"), std::string::npos);
  EXPECT_NE(error_of("run:\n  seed: -1\n").find("run.seed"), std::string::npos);
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

TEST(Config, OverridesApplyAfterTheFile) {
  const RunConfig c = parse_config("net: {blocks: 2}", "x", {"net.blocks=6", "run.game=dvonn"});
  EXPECT_EQ(c.net.blocks, 6);
  EXPECT_EQ(c.run.game, "dvonn");
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

}  // namespace
}  // namespace oppidum::config
