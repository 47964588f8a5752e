// Network checkpoints (model/checkpoint.h) read without LibTorch: parse_checkpoint, then for a
// checkpoint that parses, the Eigen backend's forward pass on each compatible game's initial
// position. Input: a flags byte, then the file. Flag bit 0: fix the content length and the CRC
// (so the fuzzer gets past them). A checkpoint that parses must serialize to the same bytes.
#include <zlib.h>

#include <cstring>

#include "common.h"
#include "games/registry.h"
#include "model/checkpoint.h"
#include "model/eigen_net.h"

using namespace oppidum;
using namespace oppidum::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) && bytes.size() >= 24) {
    const std::uint64_t length = bytes.size() - 4;
    std::memcpy(&bytes[12], &length, 8);
    const auto crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(length)));
    std::memcpy(&bytes[length], &crc, 4);
  }
  Checkpoint c;
  try {
    c = parse_checkpoint(bytes.data(), bytes.size(), "fuzz.ckpt");
  } catch (const CheckpointError&) {
    return 0;
  }
  FUZZ_CHECK(serialize_checkpoint(c) == bytes, "serialize(parse(file)) != file");
  for (const Game* game : all_games()) {
    try {
      check_compatible(c, *game, "fuzz.ckpt");
    } catch (const CheckpointError&) {
      continue;
    }
    EigenNet net(c, 1);
    std::vector<float> planes(static_cast<std::size_t>(game->input_shape().size()));
    game->initial_state()->encode(planes.data());
    std::vector<float> logits(static_cast<std::size_t>(game->num_actions()));
    float value = 0;
    net.forward(planes.data(), 1, logits.data(), &value);
  }
  return 0;
}
