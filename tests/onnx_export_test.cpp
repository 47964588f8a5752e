// ONNX export (model/onnx_export.h, `oppidum export`): the file passes ONNX's checker and carries
// the promised inputs, outputs and metadata; bad checkpoints and paths fail cleanly; and an
// independent runtime (onnxruntime-node, installed by scripts/setup.sh) computes the same outputs
// as oppidum's own forward pass, within 1e-4, on a few hundred positions from real games.
#include "model/onnx_export.h"

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "games/game.h"
#include "games/playout.h"
#include "model/checkpoint.h"
#include "model/eigen_net.h"
#include "tests/model_test_util.h"
#include "tests/process_util.h"

namespace oppidum::model {
namespace {

namespace fs = std::filesystem;
using test_util::TempDir;

using test_util::test_config;

using ::oppidum::test_util::read_file;

onnx::ModelProto parse_model(const std::string& path) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(read_file(path))) << path;
  return m;
}

std::map<std::string, std::string> metadata_of(const onnx::ModelProto& m) {
  std::map<std::string, std::string> out;
  for (const auto& p : m.metadata_props()) out[p.key()] = p.value();
  return out;
}

// [dim_param or value, ...] of a graph input or output, e.g. "batch,5,7,8".
std::string dims_of(const onnx::ValueInfoProto& v) {
  std::string out;
  for (const auto& d : v.type().tensor_type().shape().dim())
    out += (out.empty() ? "" : ",") +
           (d.has_dim_param() ? d.dim_param() : std::to_string(d.dim_value()));
  return out;
}

TEST(OnnxExport, PassesTheCheckerWithNamedInputsOutputsAndMetadata) {
  TempDir dir("onnx_meta");
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    for (bool pooling : {false, true}) {
      SCOPED_TRACE(std::string(name) + (pooling ? " pooling" : ""));
      Checkpoint c = random_checkpoint(game, test_config(2, 8, pooling), 3);
      c.step = 12345;
      c.metadata = "run test";
      const std::string path = dir.file(std::string(name) + ".onnx");
      export_onnx(c, "test checkpoint", path);
      EXPECT_NO_THROW(onnx::checker::check_model(path));
      EXPECT_FALSE(fs::exists(path + ".tmp"));

      const onnx::ModelProto m = parse_model(path);
      ASSERT_EQ(m.opset_import_size(), 1);
      EXPECT_EQ(m.opset_import(0).version(), kOnnxOpset);
      EXPECT_EQ(m.producer_name(), "oppidum");
      const onnx::GraphProto& g = m.graph();
      ASSERT_EQ(g.input_size(), 1);
      EXPECT_EQ(g.input(0).name(), "planes");
      const PlaneShape s = game.input_shape();
      EXPECT_EQ(dims_of(g.input(0)), "batch," + std::to_string(s.planes) + "," +
                                         std::to_string(s.height) + "," + std::to_string(s.width));
      ASSERT_EQ(g.output_size(), 2);
      EXPECT_EQ(g.output(0).name(), "policy_logits");
      EXPECT_EQ(dims_of(g.output(0)), "batch," + std::to_string(game.num_actions()));
      EXPECT_EQ(g.output(1).name(), "value");
      EXPECT_EQ(dims_of(g.output(1)), "batch,1");
      // Batch norm is folded away; pooling shows up as global pooling nodes.
      int pools = 0;
      for (const auto& node : g.node()) {
        EXPECT_NE(node.op_type(), "BatchNormalization");
        pools += node.op_type() == "GlobalMaxPool";
      }
      EXPECT_EQ(pools, pooling ? 1 : 0);  // two blocks: block 1 carries the pooling bias

      const auto meta = metadata_of(m);
      EXPECT_EQ(meta.at("oppidum.game"), name);
      EXPECT_EQ(meta.at("oppidum.encoding_version"), std::to_string(game.encoding_version()));
      EXPECT_EQ(meta.at("oppidum.num_actions"), std::to_string(game.num_actions()));
      EXPECT_EQ(meta.at("oppidum.input_shape"), std::to_string(s.planes) + "," +
                                                    std::to_string(s.height) + "," +
                                                    std::to_string(s.width));
      EXPECT_EQ(meta.at("oppidum.training_step"), "12345");
      EXPECT_EQ(meta.at("oppidum.checkpoint_metadata"), "run test");
      EXPECT_EQ(meta.at("oppidum.network"), c.config.to_string());
      EXPECT_NE(meta.at("oppidum.planes").find(std::to_string(s.planes) + " planes"),
                std::string::npos);
      EXPECT_NE(meta.at("oppidum.actions").find(std::to_string(game.num_actions()) + " actions"),
                std::string::npos);
      EXPECT_NE(meta.at("oppidum.value").find("side to move"), std::string::npos);
      EXPECT_NE(meta.at("oppidum.policy").find("logits"), std::string::npos);
    }
  }
}

// The exporter describes exactly the encodings the games use now; a game that bumps its encoding
// version makes this test fail until the description is updated.
TEST(OnnxExport, DescribesEveryGamesCurrentEncodingAndRefusesOthers) {
  for (const char* name : {"mg", "dvonn"}) {
    Checkpoint c = random_checkpoint(game_by_name(name), test_config(1, 4, false), 1);
    EXPECT_NO_THROW(onnx_metadata(c, "x"));
    c.encoding_version += 1;
    try {
      onnx_metadata(c, "old.ckpt");
      ADD_FAILURE() << "no exception for " << name;
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("old.ckpt"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("encoding version"), std::string::npos) << e.what();
    }
  }
}

TEST(OnnxExport, AFailedExportLeavesAnExistingFileAlone) {
  TempDir dir("onnx_keep");
  const std::string path = dir.file("best.onnx");
  std::ofstream(path) << "previous content";
  Checkpoint c = random_checkpoint(game_by_name("mg"), test_config(1, 4, false), 1);
  c.encoding_version = 99;
  EXPECT_THROW(export_onnx(c, "x", path), CheckpointError);
  c = random_checkpoint(game_by_name("mg"), test_config(1, 4, false), 1);
  c.tensors.pop_back();  // damaged: a tensor missing
  EXPECT_THROW(export_onnx(c, "x", path), CheckpointError);
  EXPECT_EQ(read_file(path), "previous content");
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  try {
    export_onnx(random_checkpoint(game_by_name("mg"), test_config(1, 4, false), 1), "x",
                dir.file("no/such/folder/best.onnx"));
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/folder/best.onnx"), std::string::npos)
        << e.what();
  }
}

// ---- The independent runtime -------------------------------------------------------------------

const std::string kScript = OPPIDUM_ONNX_SCRIPT;

// Empty when the runtime can be used, else why not.
std::string runtime_missing() {
  if (std::system("node --version > /dev/null 2>&1") != 0) return "node is not installed";
  const fs::path module = fs::path(kScript).parent_path() / "node_modules" / "onnxruntime-node";
  if (!fs::exists(module / "package.json"))
    return module.string() + " is missing (scripts/setup.sh installs it: cd scripts/onnx && " +
           "npm install --ignore-scripts)";
  return "";
}

// Positions from seeded random games of every length, the movement phase of DVONN included.
std::vector<std::unique_ptr<GameState>> game_positions(const Game& game, int count,
                                                       std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::unique_ptr<GameState>> out;
  const int longest = game.name() == "dvonn" ? 110 : 80;
  ActionList legal;
  while (static_cast<int>(out.size()) < count) {
    auto state = random_position(game, rng, longest, legal);
    if (!legal.empty()) out.push_back(std::move(state));  // not terminal (games/game.h)
  }
  return out;
}

void write_floats(const std::string& path, const std::vector<float>& v) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()),
            static_cast<std::streamsize>(v.size() * sizeof(float)));
}

std::vector<float> read_floats(const std::string& path) {
  const std::string bytes = read_file(path);
  std::vector<float> v(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(v.size() * sizeof(float)),
            reinterpret_cast<char*>(v.data()));
  return v;
}

float max_abs_diff(const float* a, const float* b, std::size_t n) {
  float d = 0.0f;
  for (std::size_t i = 0; i < n; ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

TEST(OnnxRuntime, MatchesOppidumsForwardPassOnRealPositions) {
  const std::string missing = runtime_missing();
  if (!missing.empty()) GTEST_SKIP() << "onnxruntime-node not available: " << missing;
  TempDir dir("onnx_runtime");
  const int n = 300;
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    for (bool pooling : {false, true}) {
      SCOPED_TRACE(std::string(name) + (pooling ? " pooling" : ""));
      const Checkpoint c = random_checkpoint(game, test_config(3, 16, pooling), pooling ? 21 : 22);
      const std::string model = dir.file(std::string(name) + ".onnx");
      export_onnx(c, "test", model);

      const PlaneShape s = game.input_shape();
      const auto positions = game_positions(game, n, pooling ? 5 : 6);
      std::vector<float> planes(static_cast<std::size_t>(n) * s.size());
      for (int i = 0; i < n; ++i)
        positions[i]->encode(&planes[static_cast<std::size_t>(i) * s.size()]);
      const std::size_t a = static_cast<std::size_t>(game.num_actions());
      std::vector<float> logits(n * a), values(n);
      EigenNet(c, 1).forward(planes.data(), n, logits.data(), values.data());

      const std::string planes_file = dir.file("planes.f32");
      write_floats(planes_file, planes);
      // All positions in one batch, then in batches of 7 (the dynamic batch dimension).
      for (int batch : {n, 7}) {
        SCOPED_TRACE("batch " + std::to_string(batch));
        const std::string out_file = dir.file("out.f32");
        fs::remove(out_file);
        const std::string cmd = "node " + kScript + " " + model + " " + planes_file + " " +
                                std::to_string(s.planes) + "," + std::to_string(s.height) + "," +
                                std::to_string(s.width) + " " + out_file + " " +
                                std::to_string(batch);
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
        const std::vector<float> got = read_floats(out_file);
        ASSERT_EQ(got.size(), n * a + n);
        const float logit_diff = max_abs_diff(got.data(), logits.data(), n * a);
        const float value_diff = max_abs_diff(got.data() + n * a, values.data(), n);
        std::cout << name << (pooling ? " pooling" : "") << ", batches of " << batch
                  << ": largest difference " << logit_diff << " (logits), " << value_diff
                  << " (values)\n";
        EXPECT_LT(logit_diff, 1e-4f);
        EXPECT_LT(value_diff, 1e-4f);
      }
      // Not a vacuous comparison: the logits spread and the values are not saturated.
      const auto [lo, hi] = std::minmax_element(logits.begin(), logits.end());
      EXPECT_GT(*hi - *lo, 0.5f);
      int saturated = 0;
      for (float v : values) saturated += std::abs(v) > 0.999f;
      EXPECT_LE(4 * saturated, n);
    }
  }
}

// ---- The command -------------------------------------------------------------------------------

using ::oppidum::test_util::CommandResult;

CommandResult run_oppidum(const std::string& args) {
  return ::oppidum::test_util::run_shell(std::string(OPPIDUM_BINARY) + " " + args + " 2>&1");
}

TEST(ExportCommand, WritesACheckedModelAndRefusesBadInput) {
  TempDir dir("onnx_cli");
  const std::string ckpt = dir.file("net.ckpt");
  Checkpoint c = random_checkpoint(game_by_name("dvonn"), test_config(1, 8, true), 4);
  c.step = 777;
  save_checkpoint(c, ckpt);
  const std::string model = dir.file("net.onnx");

  const CommandResult ok =
      run_oppidum("export --checkpoint " + ckpt + " --format onnx --out " + model);
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("training step 777"), std::string::npos) << ok.out;
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  EXPECT_EQ(metadata_of(parse_model(model)).at("oppidum.training_step"), "777");

  const CommandResult format =
      run_oppidum("export --checkpoint " + ckpt + " --format tflite --out x");
  EXPECT_NE(format.status, 0);
  EXPECT_NE(format.out.find("tflite"), std::string::npos) << format.out;

  const CommandResult self = run_oppidum("export --checkpoint " + ckpt + " --out " + ckpt);
  EXPECT_NE(self.status, 0);
  EXPECT_NE(self.out.find("refusing"), std::string::npos) << self.out;
  EXPECT_NO_THROW(load_checkpoint(ckpt));

  // A damaged checkpoint: a clear error naming it, and the model written before is untouched.
  std::string bytes = read_file(ckpt);
  bytes[bytes.size() / 2] ^= 0x5a;
  const std::string damaged = dir.file("damaged.ckpt");
  std::ofstream(damaged, std::ios::binary) << bytes;
  const std::string before = read_file(model);
  const CommandResult bad = run_oppidum("export --checkpoint " + damaged + " --out " + model);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("damaged.ckpt"), std::string::npos) << bad.out;
  EXPECT_EQ(read_file(model), before);
}

}  // namespace
}  // namespace oppidum::model
