// Network configs and checkpoint files: round trips, and every kind of bad file refused with a
// message that says what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "games/game.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/folded_net.h"
#include "util/file_io.h"
#include "model/net_config.h"
#include "tests/model_test_util.h"

namespace oppidum::model {
namespace {

using test_util::TempDir;

NetConfig small_config(bool pooling = false) {
  NetConfig c = NetConfig::sized(2, 8);
  c.policy_channels = 3;
  c.value_channels = 2;
  c.value_hidden = 16;
  c.global_pooling = pooling;
  return c;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The message of the CheckpointError that loading `path` throws ("" if none).
std::string load_error(const std::string& path, const Game& game,
                       const NetConfig* expected = nullptr) {
  try {
    load_checkpoint(path, game, expected);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST(NetConfig, ValidateNamesEveryBadField) {
  NetConfig c;
  c.filters = 0;
  c.value_hidden = -3;
  try {
    c.validate();
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("filters = 0"), std::string::npos) << what;
    EXPECT_NE(what.find("value_hidden = -3"), std::string::npos) << what;
    EXPECT_EQ(what.find("blocks"), std::string::npos) << what;
  }
}

TEST(NetConfig, ParseSize) {
  const NetConfig c = NetConfig::parse_size("10x128");
  EXPECT_EQ(c.blocks, 10);
  EXPECT_EQ(c.filters, 128);
  EXPECT_EQ(c.value_hidden, 256);
  EXPECT_THROW(NetConfig::parse_size("10x"), std::invalid_argument);
  EXPECT_THROW(NetConfig::parse_size("axb"), std::invalid_argument);
  EXPECT_THROW(NetConfig::parse_size("6x64x1"), std::invalid_argument);
}

TEST(NetConfig, TensorSpecsCoverPoolingBlocks) {
  const Game& mg = game_by_name("mg");
  const auto plain = network_tensor_specs(small_config(false), mg.input_shape(), mg.num_actions());
  const auto pooled = network_tensor_specs(small_config(true), mg.input_shape(), mg.num_actions());
  EXPECT_EQ(pooled.size(), plain.size() + 2);  // block 1 of 2 carries pool.weight and pool.bias
  bool found = false;
  for (const TensorSpec& s : pooled)
    if (s.name == "blocks.1.pool.weight") {
      found = true;
      EXPECT_EQ(s.shape, (std::vector<std::int64_t>{8, 16}));
    }
  EXPECT_TRUE(found);
}

TEST(NetConfig, ScoreHeadAddsTwoTensorsAndAFlag) {
  const Game& dvonn = game_by_name("dvonn");
  NetConfig with = small_config(false);
  with.score_head = true;
  const auto plain =
      network_tensor_specs(small_config(false), dvonn.input_shape(), dvonn.num_actions());
  const auto scored = network_tensor_specs(with, dvonn.input_shape(), dvonn.num_actions());
  ASSERT_EQ(scored.size(), plain.size() + 2);
  EXPECT_EQ(scored[scored.size() - 2].name, "value.score.weight");
  EXPECT_EQ(scored[scored.size() - 2].shape, (std::vector<std::int64_t>{1, with.value_hidden}));
  EXPECT_EQ(scored.back().name, "value.score.bias");
  EXPECT_NE(with.to_string().find(" score"), std::string::npos) << with.to_string();
  EXPECT_NE(with, small_config(false));
  // The flag survives a save and a load, and the loaded network is the same architecture.
  TempDir dir("ckpt");
  const Checkpoint c = random_checkpoint(dvonn, with, 4);
  save_checkpoint(c, dir.file("s.ckpt"));
  const Checkpoint back = load_checkpoint(dir.file("s.ckpt"), dvonn);
  EXPECT_TRUE(back.config.score_head);
  EXPECT_EQ(back.config, with);
  EXPECT_EQ(back.tensors.size(), scored.size());
  // Asking for the architecture without the head is a clear error.
  const NetConfig without = small_config(false);
  EXPECT_THROW(load_checkpoint(dir.file("s.ckpt"), dvonn, &without), CheckpointError);
}

TEST(Checkpoint, Crc32KnownValue) {
  EXPECT_EQ(util::crc32("123456789", 9), 0xCBF43926u);  // the standard check value
}

TEST(Checkpoint, SaveLoadRoundTripGivesIdenticalOutputs) {
  TempDir dir("ckpt");
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    Checkpoint c = random_checkpoint(game, small_config(true), 11);
    c.step = 123456789012LL;
    c.metadata = "run x, generation 3";
    const std::string path = dir.file(std::string(name) + ".ckpt");
    save_checkpoint(c, path);
    EXPECT_FALSE(std::ifstream(path + ".tmp").good()) << "the temporary file was left behind";
    const Checkpoint back = load_checkpoint(path, game, &c.config);
    EXPECT_EQ(back.game, name);
    EXPECT_EQ(back.encoding_version, game.encoding_version());
    EXPECT_EQ(back.step, c.step);
    EXPECT_EQ(back.metadata, c.metadata);
    EXPECT_EQ(back.config, c.config);
    ASSERT_EQ(back.tensors.size(), c.tensors.size());
    for (std::size_t i = 0; i < c.tensors.size(); ++i) {
      EXPECT_EQ(back.tensors[i].name, c.tensors[i].name);
      EXPECT_EQ(back.tensors[i].shape, c.tensors[i].shape);
      EXPECT_EQ(back.tensors[i].data, c.tensors[i].data);
    }
    // Same weights, same function: outputs agree bit for bit.
    const int n = 5;
    const std::vector<float> planes = test_util::random_planes(game, n, 3);
    std::vector<float> l1(n * game.num_actions()), l2(l1.size()), v1(n), v2(n);
    make_backend(c, {})->forward(planes.data(), n, l1.data(), v1.data());
    make_backend(back, {})->forward(planes.data(), n, l2.data(), v2.data());
    EXPECT_EQ(l1, l2);
    EXPECT_EQ(v1, v2);
  }
}

TEST(Checkpoint, TheMostBytesOfANetworkAreThoseOfItsLongestNameAndMetadata) {
  constexpr std::size_t kLongest = std::size_t{1} << 20;  // a name's or the metadata's (the header)
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    for (bool pooling : {false, true}) {
      NetConfig config = small_config(pooling);
      config.score_head = pooling;
      Checkpoint c = random_checkpoint(game, config, 5);
      const std::uint64_t most =
          max_checkpoint_bytes(config, game.input_shape(), game.num_actions());
      EXPECT_EQ(serialize_checkpoint(c).size() + (kLongest - c.game.size()) +
                    (kLongest - c.metadata.size()),
                most)
          << name << (pooling ? " with pooling and the score head" : "");
      // Metadata at its longest is read, and the checkpoint then is exactly the bound less the
      // game's name it does not use; a byte more of metadata is refused.
      c.metadata.assign(kLongest, 'm');
      const std::string bytes = serialize_checkpoint(c);
      EXPECT_EQ(bytes.size() + (kLongest - c.game.size()), most);
      EXPECT_EQ(parse_checkpoint(bytes.data(), bytes.size(), "longest").metadata.size(), kLongest);
      c.metadata += 'm';
      const std::string over = serialize_checkpoint(c);
      EXPECT_THROW(parse_checkpoint(over.data(), over.size(), "over"), CheckpointError);
      // A block more needs more.
      NetConfig deeper = config;
      ++deeper.blocks;
      EXPECT_LT(most, max_checkpoint_bytes(deeper, game.input_shape(), game.num_actions()));
    }
  }
}

TEST(Checkpoint, SavingOverwritesAtomically) {
  TempDir dir("ckpt");
  const Game& mg = game_by_name("mg");
  const std::string path = dir.file("best.ckpt");
  save_checkpoint(random_checkpoint(mg, small_config(), 1), path);
  Checkpoint second = random_checkpoint(mg, small_config(), 2);
  second.step = 2;
  save_checkpoint(second, path);
  EXPECT_EQ(load_checkpoint(path).step, 2);
}

// A batch norm that cannot fold into finite numbers (a variance below 0, written by a program that
// did not check, with a right CRC) is refused when the file is read, naming it, not later by
// whoever builds a backend from it; a game name from the file is quoted with its bytes escaped.
TEST(Checkpoint, WhatCannotFoldIsRefusedByNameAndForeignNamesAreQuoted) {
  TempDir dir("ckpt_fold");
  const Game& mg = game_by_name("mg");
  const std::string path = dir.file("negvar.ckpt");
  Checkpoint c = random_checkpoint(mg, small_config(), 5);
  for (NamedTensor& t : c.tensors)
    if (t.name == "stem.bn.running_var") t.data[0] = -1.0f;
  const std::string bytes = serialize_checkpoint(c);
  util::write_file_atomically(path, bytes.data(), bytes.size());
  try {
    load_checkpoint(path);
    FAIL() << "no exception";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint " + path + ": stem.bn cannot be folded into "
                                         "stem.conv: running_var[0] is -1"),
              std::string::npos)
        << e.what();
  }
  Checkpoint foreign = random_checkpoint(mg, small_config(), 5);
  foreign.game = "mg\x1b[31m\nsecond line";
  const std::string escaped = dir.file("escape.ckpt");
  const std::string foreign_bytes = serialize_checkpoint(foreign);
  util::write_file_atomically(escaped, foreign_bytes.data(), foreign_bytes.size());
  try {
    load_checkpoint(escaped, mg);
    FAIL() << "no exception";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("was trained for \"mg\\x1b[31m\\nsecond line\", not mg"),
              std::string::npos) << what;
    EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// No checkpoint with a NaN or an infinite value is ever written or loaded, even one whose CRC is
// right (written by a program that did not check).
TEST(Checkpoint, NonFiniteWeightsAreNeverWrittenOrLoaded) {
  TempDir dir("ckpt_nan");
  const Game& mg = game_by_name("mg");
  const std::string path = dir.file("nan.ckpt");
  Checkpoint c = random_checkpoint(mg, small_config(), 3);
  c.tensors[2].data[7] = std::numeric_limits<float>::quiet_NaN();
  try {
    save_checkpoint(c, path);
    FAIL() << "a NaN weight was written";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  // The same bytes with the infinity put in after the check, and the CRC made right again.
  c.tensors[2].data[7] = 0.5f;
  std::string bytes = serialize_checkpoint(c);
  const float half = 0.5f, infinite = std::numeric_limits<float>::infinity();
  std::size_t found = 0, at = 0;
  for (std::size_t i = 0; i + 4 <= bytes.size(); ++i)
    if (std::memcmp(bytes.data() + i, &half, 4) == 0) ++found, at = i;
  ASSERT_EQ(found, 1u) << "the marked weight is not unique in the file";
  std::memcpy(bytes.data() + at, &infinite, 4);
  const std::uint32_t crc = util::crc32(bytes.data(), bytes.size() - 4);
  for (int k = 0; k < 4; ++k) bytes[bytes.size() - 4 + k] = static_cast<char>((crc >> (8 * k)) & 0xFF);
  write_file(path, bytes);
  const std::string error = load_error(path, mg);
  EXPECT_NE(error.find("non-finite value (inf)"), std::string::npos) << error;
}

// A step no training reaches, in a file whose CRC holds (before: a trainer.ckpt at step -20 was
// loaded, and the resume trimmed the run's tables to it).
TEST(Checkpoint, ATrainingStepBelowZeroIsRefused) {
  TempDir dir("ckpt_step");
  const Game& mg = game_by_name("mg");
  const std::string path = dir.file("negative.ckpt");
  Checkpoint c = random_checkpoint(mg, small_config(), 3);
  c.step = -20;
  write_file(path, serialize_checkpoint(c));
  const std::string error = load_error(path, mg);
  EXPECT_NE(error.find("training step -20 is not 0..2^53"), std::string::npos) << error;
}

// Input shapes and action counts beyond any game are refused before the tensor shapes are made
// from them (found by fuzzing: a 91-byte file with a valid CRC overflowed 3 x 3 x the cells in
// signed arithmetic), and a tensor of no elements reads without copying from nowhere.
TEST(Checkpoint, ShapesBeyondAnyGameAreRefusedBeforeTheirProducts) {
  TempDir dir("ckpt_shape");
  const Game& mg = game_by_name("mg");
  const std::string path = dir.file("huge.ckpt");
  for (const auto& [planes, side, actions] :
       std::vector<std::array<int, 3>>{{3, 2000000000, 10}, {5000, 8, 10}, {3, 8, 1 << 30}}) {
    // Written as the writer would, then the four header fields after the 20-byte header, the
    // game's name and the encoding version patched, and the CRC made right again.
    std::string bytes = serialize_checkpoint(random_checkpoint(mg, small_config(), 3));
    std::size_t at = 20 + 4 + mg.name().size() + 4;
    for (const int v : {planes, side, side, actions}) {
      for (int k = 0; k < 4; ++k)
        bytes[at + static_cast<std::size_t>(k)] =
            static_cast<char>((static_cast<std::uint32_t>(v) >> (8 * k)) & 0xFF);
      at += 4;
    }
    const std::uint32_t crc = util::crc32(bytes.data(), bytes.size() - 4);
    for (int k = 0; k < 4; ++k) bytes[bytes.size() - 4 + k] = static_cast<char>((crc >> (8 * k)) & 0xFF);
    write_file(path, bytes);
    const std::string error = load_error(path, mg);
    EXPECT_NE(error.find("invalid input shape " + std::to_string(planes) + "x" +
                         std::to_string(side) + "x" + std::to_string(side) +
                         " or action count " + std::to_string(actions)),
              std::string::npos)
        << error;
  }
}

// Finite stored values can still fold into NaN or infinity (a negative running variance, a scale
// beyond float's range): every backend and the ONNX export fold first, and refuse such a network
// by its layer (before: it loaded, played the same move everywhere and exported with 1,400 NaNs).
TEST(Checkpoint, ANetworkThatFoldsIntoNonFiniteWeightsIsRefused) {
  const Game& mg = game_by_name("mg");
  for (const std::string damage : {"negative variance", "huge scale"}) {
    Checkpoint c = random_checkpoint(mg, small_config(), 3);
    for (NamedTensor& t : c.tensors) {
      if (damage == "negative variance" && t.name == "stem.bn.running_var")
        for (float& v : t.data) v = -1.0f;
      if (damage == "huge scale" && t.name == "stem.bn.weight")
        for (float& v : t.data) v = 3e38f;
      if (damage == "huge scale" && t.name == "stem.bn.running_var")
        for (float& v : t.data) v = 0.0f;
    }
    for (const BackendKind kind : {BackendKind::kEigen, BackendKind::kTorch}) {
      BackendOptions o;
      o.kind = kind;
      try {
        make_backend(c, o);
        ADD_FAILURE() << damage << ": made a backend";
      } catch (const CheckpointError& e) {
        EXPECT_NE(std::string(e.what()).find("stem.bn cannot be folded into stem.conv"),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

// Subnormal weights fold to 0 (arithmetic on them is up to 100 times slower on x86: a network of
// weights scaled by 1e-38 played 30 times slower); every other weight is kept.
TEST(Checkpoint, SubnormalWeightsFoldToZero) {
  const Game& mg = game_by_name("mg");
  Checkpoint c = random_checkpoint(mg, small_config(), 4);
  for (NamedTensor& t : c.tensors)
    if (t.name == "policy.fc.weight") {
      t.data[0] = 1e-39f;
      t.data[1] = -3e-42f;
      t.data[2] = 2e-38f;  // normal
    }
  const FoldedNet net = fold_batch_norm(c);
  EXPECT_EQ(net.policy_fc.weight[0], 0.0f);
  EXPECT_EQ(net.policy_fc.weight[1], 0.0f);
  EXPECT_EQ(net.policy_fc.weight[2], 2e-38f);
  const auto subnormal = [](const std::vector<float>& v) {
    return std::any_of(v.begin(), v.end(),
                       [](float x) { return std::fpclassify(x) == FP_SUBNORMAL; });
  };
  EXPECT_FALSE(subnormal(net.policy_fc.weight));
  for (NamedTensor& t : c.tensors)  // a whole network scaled into subnormals folds to zeros
    if (t.name.find("running") == std::string::npos)
      for (float& x : t.data) x *= 1e-39f;
  const FoldedNet tiny = fold_batch_norm(c);
  EXPECT_FALSE(subnormal(tiny.stem.weight) || subnormal(tiny.stem.bias) ||
               subnormal(tiny.value_fc1.weight) || subnormal(tiny.value_fc2.bias));
}

class DamagedCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("damaged.ckpt");
    save_checkpoint(random_checkpoint(mg_, small_config(), 5), path_);
    bytes_ = read_file(path_);
    ASSERT_GT(bytes_.size(), 1000u);
  }
  std::string error_after_writing(const std::string& bytes) {
    write_file(path_, bytes);
    return load_error(path_, mg_);
  }
  TempDir dir_{"damaged"};
  const Game& mg_ = game_by_name("mg");
  std::string path_;
  std::string bytes_;
};

TEST_F(DamagedCheckpoint, FlippedByteAnywhereIsRefused) {
  // Every region: header, config, names, tensor data, the CRC itself.
  for (std::size_t at : {std::size_t{30}, std::size_t{60}, bytes_.size() / 3, bytes_.size() / 2,
                         bytes_.size() - 20, bytes_.size() - 2}) {
    std::string bad = bytes_;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    const std::string what = error_after_writing(bad);
    EXPECT_NE(what.find(path_), std::string::npos) << "byte " << at << ": " << what;
    EXPECT_NE(what.find("damaged"), std::string::npos) << "byte " << at << ": " << what;
  }
}

TEST_F(DamagedCheckpoint, TruncatedFileIsRefused) {
  for (std::size_t keep : {std::size_t{0}, std::size_t{5}, std::size_t{19}, std::size_t{100},
                           bytes_.size() / 2, bytes_.size() - 1}) {
    const std::string what =
        error_after_writing(std::string(bytes_.begin(), bytes_.begin() + keep));
    EXPECT_NE(what.find(path_), std::string::npos) << keep << ": " << what;
    EXPECT_FALSE(what.empty());
  }
  const std::string what =
      error_after_writing(std::string(bytes_.begin(), bytes_.end() - 100));
  EXPECT_NE(what.find("truncated"), std::string::npos) << what;
}

TEST_F(DamagedCheckpoint, WrongMagicIsRefused) {
  std::string bad = bytes_;
  bad[0] = 'X';
  const std::string what = error_after_writing(bad);
  EXPECT_NE(what.find("not an oppidum checkpoint"), std::string::npos) << what;
}

TEST_F(DamagedCheckpoint, OtherFormatVersionIsRefused) {
  std::string bad = bytes_;
  bad[8] = 9;
  const std::string what = error_after_writing(bad);
  EXPECT_NE(what.find("format version 9"), std::string::npos) << what;
}

TEST_F(DamagedCheckpoint, MissingFileIsRefused) {
  const std::string what = load_error(dir_.file("nope.ckpt"), mg_);
  EXPECT_NE(what.find("nope.ckpt"), std::string::npos) << what;
}

TEST(Checkpoint, WrongGameIsRefused) {
  TempDir dir("ckpt");
  const std::string path = dir.file("x.ckpt");
  save_checkpoint(random_checkpoint(game_by_name("dvonn"), small_config(), 1), path);
  const std::string what = load_error(path, game_by_name("mg"));
  EXPECT_NE(what.find("checkpoint " + path + " was trained for \"dvonn\", not mg"), std::string::npos)
      << what;
}

TEST(Checkpoint, WrongArchitectureIsRefused) {
  TempDir dir("ckpt");
  const Game& mg = game_by_name("mg");
  const std::string path = dir.file("x.ckpt");
  save_checkpoint(random_checkpoint(mg, small_config(), 1), path);
  const NetConfig expected = NetConfig::sized(6, 64);
  const std::string what = load_error(path, mg, &expected);
  EXPECT_NE(what.find("network 2x8"), std::string::npos) << what;
  EXPECT_NE(what.find("expected 6x64"), std::string::npos) << what;
}

TEST(Checkpoint, WrongEncodingVersionIsRefused) {
  const Game& mg = game_by_name("mg");
  Checkpoint c = random_checkpoint(mg, small_config(), 1);
  c.encoding_version = mg.encoding_version() + 1;
  try {
    check_compatible(c, mg, "old.ckpt");
    FAIL() << "no exception";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("encoding version"), std::string::npos) << e.what();
  }
}

TEST(Checkpoint, TensorsMustMatchTheConfig) {
  const Game& mg = game_by_name("mg");
  Checkpoint c = random_checkpoint(mg, small_config(), 1);
  c.tensors.pop_back();
  EXPECT_THROW(serialize_checkpoint(c), CheckpointError);
  c = random_checkpoint(mg, small_config(), 1);
  c.tensors[0].shape[1] += 1;
  try {
    serialize_checkpoint(c);
    FAIL() << "no exception";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("stem.conv.weight"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace oppidum::model
