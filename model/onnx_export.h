// Export of a checkpoint as a standard ONNX model, for other engines and runtimes (docs/EXPORT.md).
//
// The graph is the network of model/net_config.h in inference form: batch norm folded into the
// convolutions (model/folded_net.h), ONNX opset 13, IR version 7, float32 throughout.
//   input   "planes"         [batch, C, H, W]  the planes of GameState::encode (docs/FORMATS.md)
//   output  "policy_logits"  [batch, A]        raw logits over every action, legal or not
//   output  "value"          [batch, 1]        tanh value in [-1, 1] for the side to move
// `batch` is a dynamic dimension. Global pooling is GlobalAveragePool, GlobalMaxPool, Concat and a
// 1x1 convolution; the heads flatten channel-major, as LibTorch does.
//
// The model carries metadata properties (onnx_metadata) that tell another program everything it
// needs: the game, the encoding version, the input planes and the action layout in words, what the
// outputs mean, the network's shape and the training step. The layouts are written here for each
// game's current encoding version; a checkpoint made for another encoding version is refused
// rather than exported with a wrong description.
//
// Only the Debian package libonnx-dev (schema classes, checker, shape inference) is used; the
// model is checked with ONNX's checker and strict shape inference before it is written.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/checkpoint.h"

namespace oppidum::model {

inline constexpr int kOnnxOpset = 13;
inline constexpr int kOnnxIrVersion = 7;
inline constexpr char kOnnxInput[] = "planes";
inline constexpr char kOnnxPolicyOutput[] = "policy_logits";
inline constexpr char kOnnxValueOutput[] = "value";

// The metadata properties written into the model, as (key, value) pairs in a fixed order; keys
// start with "oppidum.". Throws CheckpointError (naming `source`) when the checkpoint's game or
// encoding version is not one this build knows.
std::vector<std::pair<std::string, std::string>> onnx_metadata(const Checkpoint& checkpoint,
                                                               const std::string& source);

// The serialized ONNX model (a ModelProto) for `checkpoint`, after ONNX's checker and strict shape
// inference accepted it. Throws CheckpointError as onnx_metadata does, or when the checkpoint's
// tensors are wrong; std::runtime_error if ONNX rejects the graph (a bug in this exporter).
std::string onnx_model_bytes(const Checkpoint& checkpoint, const std::string& source);

// Writes onnx_model_bytes atomically to `path` (`<path>.tmp`, then rename): an existing file at
// `path` is replaced only by a complete, checked model. Throws as above, or std::runtime_error
// naming `path` when it cannot be written.
void export_onnx(const Checkpoint& checkpoint, const std::string& source, const std::string& path);

}  // namespace oppidum::model
