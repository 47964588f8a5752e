// The inference form of a checkpoint: each batch norm folded into the convolution before it
// (w' = w * gamma / sqrt(var + eps) per output channel, b' = beta - mean * gamma / sqrt(var + eps)),
// leaving convolutions with bias and linear layers. Both inference backends (Eigen and LibTorch)
// start from it, so they compute the same function. Layouts are LibTorch's: conv weights
// [out][in][k][k], linear weights [out][in], the heads' flatten channel-major (c * H * W + cell).
#pragma once

#include <vector>

#include "model/checkpoint.h"

namespace oppidum::model {

struct FoldedConv {
  int out = 0, in = 0, kernel = 0;  // kernel 3 (padding 1) or 1
  std::vector<float> weight;        // out x in x kernel x kernel
  std::vector<float> bias;          // out
};

struct FoldedLinear {
  int out = 0, in = 0;
  std::vector<float> weight;  // out x in
  std::vector<float> bias;    // out
};

struct FoldedBlock {
  FoldedConv conv1, conv2;
  bool has_pool = false;
  FoldedLinear pool;  // 2 * filters -> filters, when has_pool
};

struct FoldedNet {
  PlaneShape input;
  int num_actions = 0;
  NetConfig config;
  FoldedConv stem;
  std::vector<FoldedBlock> blocks;
  FoldedConv policy_conv;
  FoldedLinear policy_fc;
  FoldedConv value_conv;
  FoldedLinear value_fc1, value_fc2;
};

// Checks the tensors (check_tensors) and folds; throws CheckpointError.
FoldedNet fold_batch_norm(const Checkpoint& checkpoint);

}  // namespace oppidum::model
