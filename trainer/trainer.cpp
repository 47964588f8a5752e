#include "trainer/trainer.h"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <thread>

#include <torch/torch.h>

#include "model/torch_net.h"

namespace oppidum::trainer {

struct Trainer::Impl {
  const Game& game;
  TrainerSettings settings;
  torch::Device device{torch::kCPU};
  model::TorchNet net{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::int64_t steps = 0;

  Impl(const Game& g, const model::NetConfig& config, const TrainerSettings& s, std::uint64_t seed)
      : game(g), settings(s) {
    if (s.device == "cuda") {
      if (!torch::cuda::is_available())
        throw std::invalid_argument("training.device cuda: LibTorch sees no CUDA device");
      device = torch::Device(torch::kCUDA);
    } else if (s.device != "cpu") {
      throw std::invalid_argument("trainer device must be cpu or cuda, not " + s.device);
    }
    const int threads =
        s.threads > 0 ? s.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    torch::set_num_threads(threads);
    torch::manual_seed(seed);
    net = model::make_torch_net(game, config);
    net->to(device);
    make_optimizer();
  }

  void make_optimizer() {
    if (settings.optimizer == "adamw") {
      optimizer = std::make_unique<torch::optim::AdamW>(
          net->parameters(),
          torch::optim::AdamWOptions(settings.learning_rate).weight_decay(settings.weight_decay));
    } else if (settings.optimizer == "sgd") {
      optimizer = std::make_unique<torch::optim::SGD>(
          net->parameters(), torch::optim::SGDOptions(settings.learning_rate)
                                 .momentum(settings.momentum)
                                 .nesterov(settings.momentum > 0)
                                 .weight_decay(settings.weight_decay));
    } else {
      throw std::invalid_argument("optimizer must be sgd or adamw, not " + settings.optimizer);
    }
  }

  void set_learning_rate(double lr) {
    for (auto& group : optimizer->param_groups()) {
      if (settings.optimizer == "adamw")
        static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
      else
        static_cast<torch::optim::SGDOptions&>(group.options()).lr(lr);
    }
  }

  // Losses of the batch under the current mode (train or eval).
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> losses(const TrainingBatch& b) {
    const PlaneShape shape = game.input_shape();
    const int actions = game.num_actions();
    auto opts = torch::TensorOptions().dtype(torch::kFloat32);
    auto from = [&](const std::vector<float>& v, std::vector<std::int64_t> dims) {
      return torch::from_blob(const_cast<float*>(v.data()), dims, opts).to(device);
    };
    const auto x = from(b.planes, {b.n, shape.planes, shape.height, shape.width});
    const auto target = from(b.policy, {b.n, actions});
    const auto legal = from(b.legal_mask, {b.n, actions});
    const auto weight = from(b.policy_weight, {b.n});
    const auto z = from(b.value, {b.n});
    const auto out = net->forward(x);
    // Illegal actions get a very negative logit, so the softmax is over legal actions only.
    const auto logits = out.policy_logits.masked_fill(legal.eq(0), -1e9f);
    const auto log_p = torch::log_softmax(logits, 1);
    const auto per_position = -(target * log_p).sum(1);
    const auto targets = weight.sum().clamp_min(1.0f);
    const auto policy_loss = (per_position * weight).sum() / targets;
    const auto value_loss = torch::mse_loss(out.value, z);
    const auto loss = policy_loss + settings.value_loss_weight * value_loss;
    return {policy_loss, value_loss, loss};
  }
};

Trainer::Trainer(const Game& game, const model::NetConfig& net, const TrainerSettings& settings,
                 std::uint64_t seed)
    : impl_(std::make_unique<Impl>(game, net, settings, seed)) {}

Trainer::~Trainer() = default;

void Trainer::load_weights(const model::Checkpoint& checkpoint) {
  model::load_weights(*impl_->net, checkpoint);
}

double Trainer::learning_rate_at(std::int64_t step) const {
  const TrainerSettings& s = impl_->settings;
  if (s.warmup_steps > 0 && step < s.warmup_steps)
    return s.learning_rate * static_cast<double>(step + 1) / s.warmup_steps;
  if (s.lr_decay_steps <= 0) return s.learning_rate;
  const double t = std::min(1.0, static_cast<double>(step - s.warmup_steps) / s.lr_decay_steps);
  return s.learning_rate * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(M_PI * t)));
}

StepStats Trainer::step(const TrainingBatch& batch) {
  Impl& m = *impl_;
  m.net->train();
  const double lr = learning_rate_at(m.steps);
  m.set_learning_rate(lr);
  m.optimizer->zero_grad();
  auto [policy_loss, value_loss, loss] = m.losses(batch);
  loss.backward();
  m.optimizer->step();
  ++m.steps;
  return {policy_loss.item<double>(), value_loss.item<double>(), loss.item<double>(), lr};
}

StepStats Trainer::evaluate(const TrainingBatch& batch) {
  Impl& m = *impl_;
  torch::NoGradGuard no_grad;
  m.net->eval();
  auto [policy_loss, value_loss, loss] = m.losses(batch);
  return {policy_loss.item<double>(), value_loss.item<double>(), loss.item<double>(),
          learning_rate_at(m.steps)};
}

std::int64_t Trainer::steps() const { return impl_->steps; }

model::Checkpoint Trainer::checkpoint(const std::string& metadata) const {
  return model::to_checkpoint(*impl_->net, impl_->game, impl_->steps, metadata);
}

void Trainer::save_state(const std::string& prefix) const {
  const std::string optim = prefix + ".optim";
  {
    torch::serialize::OutputArchive archive;
    impl_->optimizer->save(archive);
    archive.write("oppidum_step", torch::tensor(static_cast<std::int64_t>(impl_->steps)));
    archive.save_to(optim + ".tmp");
  }
  model::save_checkpoint(checkpoint("trainer state"), prefix + ".ckpt");
  std::filesystem::rename(optim + ".tmp", optim);
}

bool Trainer::load_state(const std::string& prefix) {
  const std::string weights = prefix + ".ckpt";
  if (!std::filesystem::exists(weights)) return false;
  const model::Checkpoint ckpt = model::load_checkpoint(weights, impl_->game,
                                                        &impl_->net->config());
  model::load_weights(*impl_->net, ckpt);
  impl_->steps = ckpt.step;
  impl_->make_optimizer();
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(prefix + ".optim");
    torch::Tensor step;
    archive.read("oppidum_step", step);
    if (step.item<std::int64_t>() != ckpt.step)
      throw std::runtime_error("optimiser state is from step " +
                               std::to_string(step.item<std::int64_t>()) + ", weights from step " +
                               std::to_string(ckpt.step));
    impl_->optimizer->load(archive);
  } catch (const std::exception& e) {
    std::cerr << "trainer: starting with fresh optimiser state (" << e.what() << ")\n";
    impl_->make_optimizer();
  }
  return true;
}

}  // namespace oppidum::trainer
