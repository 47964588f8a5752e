// Network checkpoints: one self-describing file per checkpoint, readable without LibTorch (the
// Eigen backend and the tools use it as is). The byte layout is in docs/FORMATS.md ("Network").
//
// A checkpoint holds the game it was trained for (name, encoding version, input shape, action
// count), the NetConfig, the training step, a free-form metadata string (e.g. the run name), and
// every tensor of network_tensor_specs() as named float32 arrays: all parameters and the batch-norm
// running statistics. Optimiser state is the trainer's business and is not stored here.
//
// save_checkpoint writes durably and atomically (util/file_io.h), so readers never see half a
// file. load_checkpoint checks the magic, the format version, the CRC-32 over the whole content,
// every length against the file size, that the tensors are exactly those the stored NetConfig
// needs, with their shapes, and that every value is finite (save_checkpoint refuses NaN and
// infinities too, so no checkpoint with a non-finite weight is ever written or loaded). A
// truncated, damaged or foreign file throws CheckpointError naming the file and what is wrong. check_compatible then compares the checkpoint with what the caller expects
// (game, encoding version, input shape, action count, and optionally the architecture).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "games/game.h"
#include "model/net_config.h"

namespace oppidum::model {

inline constexpr char kCheckpointMagic[8] = {'O', 'P', 'P', 'I', 'D', 'U', 'M', 'C'};
inline constexpr std::uint32_t kCheckpointFormatVersion = 1;

// A bad checkpoint file (unreadable, damaged, foreign) or one that does not fit what the caller
// expects. The message names the file.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NamedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> data;  // row-major, product(shape) values
};

struct Checkpoint {
  std::string game;           // Game::name(), e.g. "mg"
  int encoding_version = 0;   // Game::encoding_version() at training time
  PlaneShape input;           // Game::input_shape()
  int num_actions = 0;        // Game::num_actions()
  NetConfig config;
  std::int64_t step = 0;      // training step (optimiser updates) that produced these weights
  std::string metadata;       // free-form, e.g. the run name and generation
  std::vector<NamedTensor> tensors;  // network_tensor_specs(config, input, num_actions), in order

  // nullptr when absent.
  const NamedTensor* find(std::string_view name) const;
  // Throws CheckpointError when absent or when its shape is not `shape`.
  const NamedTensor& tensor(std::string_view name, const std::vector<std::int64_t>& shape) const;
};

// Writes atomically (`<path>.tmp`, then rename). Throws CheckpointError when the tensors do not
// match the config or the file cannot be written.
void save_checkpoint(const Checkpoint& checkpoint, const std::string& path);

// The largest checkpoint file read: 4 GiB (a 40x512 network is about 0.75 GiB).
inline constexpr std::uint64_t kMaxCheckpointBytes = std::uint64_t{4} << 30;

// Reads and checks the file alone (see above); throws CheckpointError. Only a regular file of at
// most kMaxCheckpointBytes is read, and its header is checked against the file's size before
// memory is allocated for the rest; running out of memory is a CheckpointError naming the file.
// A file that is there but cannot be opened or read (no permission, an I/O error, no descriptors
// left) is util::FileAccessError instead, since it may be intact.
Checkpoint load_checkpoint(const std::string& path);

// Throws CheckpointError, naming `path` and every mismatch, when the checkpoint was not made for
// `game` (name, encoding version, input shape, action count) or, when `expected` is given, when
// its architecture differs from *expected.
void check_compatible(const Checkpoint& checkpoint, const Game& game, const std::string& path,
                      const NetConfig* expected = nullptr);

// load_checkpoint then check_compatible.
Checkpoint load_checkpoint(const std::string& path, const Game& game,
                           const NetConfig* expected = nullptr);

// The most bytes parse_checkpoint takes for a checkpoint of this network: its header and tensors,
// and the game's name and the metadata at the longest a checkpoint may hold them (1 MiB each). A
// reader that fetches a network it knows the config of (a worker, from the run's server) fetches
// no more than this.
std::uint64_t max_checkpoint_bytes(const NetConfig& config, PlaneShape input, int num_actions);

// The checkpoint as bytes, and back (the file content; `source` names it in errors).
std::string serialize_checkpoint(const Checkpoint& checkpoint);
Checkpoint parse_checkpoint(const char* bytes, std::size_t size, const std::string& source);

// Checks that the tensors are exactly network_tensor_specs() of the stored config and shapes, with
// the right data sizes and only finite values; throws CheckpointError mentioning `source`.
void check_tensors(const Checkpoint& checkpoint, const std::string& source);

// A checkpoint for `game` with seeded random weights (variance 1 / fan-in), and batch-norm parameters and
// running statistics far from the identity, so that tests and benchmarks exercise every path.
Checkpoint random_checkpoint(const Game& game, const NetConfig& config, std::uint64_t seed);

}  // namespace oppidum::model
