#include "trainer/trainer.h"

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>
#include <vector>

#include <ATen/autocast_mode.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "model/backend.h"
#include "model/torch_net.h"
#include "util/file_io.h"

namespace oppidum::trainer {
namespace {

constexpr char kOptimizerMagic[8] = {'O', 'P', 'P', 'O', 'P', 'T', 'I', 'M'};
constexpr std::uint32_t kOptimizerFormatVersion = 1;

// The first line of a message (LibTorch's errors carry a backtrace after it).
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// LibTorch keys an optimiser's per-parameter state by the parameter's TensorImpl: by its address
// as text (c10::guts::to_string, which streams the pointer) up to 2.1, by the address itself (void*)
// from 2.2 on. The key type is read off the map, so this compiles against both.
template <class StateMap>
typename StateMap::key_type optimizer_state_key(const torch::Tensor& p) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;
    key << static_cast<const void*>(p.unsafeGetTensorImpl());
    return key.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

bool all_finite(const torch::Tensor& t) {
  return !t.defined() || torch::isfinite(t).all().item<bool>();
}

// A tensor read from a file is a view of a storage with the dtype, size, offset and strides that
// the file states; one whose elements lie outside its storage would be read out of bounds by the
// first operation on it. True when `t` is a dense, contiguous tensor of `like`'s dtype, shape and
// device whose elements all lie inside its storage: checked before anything reads its data.
bool sound_like(const torch::Tensor& t, const torch::Tensor& like) {
  if (!t.defined() || t.layout() != torch::kStrided || !t.has_storage() ||
      t.scalar_type() != like.scalar_type() || t.device() != like.device() ||
      t.sizes() != like.sizes() || !t.is_contiguous())
    return false;
  const auto bytes = static_cast<std::int64_t>(t.storage().nbytes());
  const std::int64_t offset = t.storage_offset();
  const std::int64_t count = t.numel();
  return offset >= 0 && offset <= bytes && count <= bytes &&
         (offset + count) * static_cast<std::int64_t>(t.element_size()) <= bytes;
}

// LibTorch's allocators report a failed allocation as a c10::Error with a backtrace: said in words
// with the key to change (std::runtime_error); any other error is left to the caller.
void throw_if_out_of_memory(const c10::Error& e, int positions, const model::NetConfig& net) {
  const std::string what = first_line(e.what_without_backtrace());
  if (!model::is_torch_out_of_memory(what)) return;
  throw std::runtime_error("out of memory: the training step of " + std::to_string(positions) +
                           " positions (training.batch_size) on network " + net.to_string() +
                           " needs more memory than there is: give a smaller training.batch_size "
                           "or network (" + what + ")");
}

// "cpu", "cuda" (GPU 0) or "cuda:N", checked against the GPUs LibTorch sees.
torch::Device parse_training_device(const std::string& name) {
  if (name == "cpu") return torch::Device(torch::kCPU);
  int index = -1;
  if (name == "cuda") index = 0;
  else if (name.size() > 5 && name.size() <= 7 && name.compare(0, 5, "cuda:") == 0) {
    index = 0;
    for (std::size_t i = 5; i < name.size(); ++i)
      index = name[i] >= '0' && name[i] <= '9' && index >= 0 ? index * 10 + (name[i] - '0') : -1;
  }
  if (index < 0)
    throw std::invalid_argument("training.device: \"" + name + "\" is not cpu, cuda or cuda:N");
  if (!torch::cuda::is_available())
    throw std::invalid_argument("training.device " + name +
                                ": LibTorch sees no CUDA GPU (a CPU-only LibTorch build, or no "
                                "driver); use cpu");
  const int count = static_cast<int>(torch::cuda::device_count());
  if (index >= count)
    throw std::invalid_argument("training.device " + name + ": LibTorch sees " +
                                std::to_string(count) + " GPU(s)");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

// Every public call of the trainer runs its tensor work on the trainer's stream (nothing on the
// cpu); a value read back (item()) then waits for that stream alone.
class OnStream {
 public:
  explicit OnStream(const std::optional<c10::Stream>& stream) {
    if (stream) guard_.emplace(*stream);
  }

 private:
  std::optional<c10::StreamGuard> guard_;
};

// bf16 autocast of the CUDA ops run while it lives (LibTorch renamed the calls in 2.4).
class Bf16Autocast {
 public:
  explicit Bf16Autocast(bool on) : on_(on) {
    if (!on_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
#endif
  }
  ~Bf16Autocast() {
    if (!on_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, false);
#else
    at::autocast::set_enabled(false);
#endif
    at::autocast::clear_cache();
  }
  Bf16Autocast(const Bf16Autocast&) = delete;
  Bf16Autocast& operator=(const Bf16Autocast&) = delete;

 private:
  bool on_;
};

}  // namespace

struct Trainer::Impl {
  const Game& game;
  TrainerSettings settings;
  torch::Device device;
  std::optional<c10::Stream> stream;  // cuda only: the trainer's own stream
  model::TorchNet net{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::int64_t steps = 0;

  Impl(const Game& g, const model::NetConfig& config, const TrainerSettings& s, std::uint64_t seed)
      : game(g), settings(s), device(parse_training_device(s.device.empty() ? "cpu" : s.device)) {
    if (s.precision == "bf16" && !device.is_cuda())
      throw std::invalid_argument("training.precision bf16 needs training on cuda, not " +
                                  s.device);
    if (device.is_cuda()) {
      model::use_ieee_fp32_on_cuda();
      stream = c10::impl::VirtualGuardImpl(c10::DeviceType::CUDA)
                   .getStreamFromGlobalPool(device, /*isHighPriority=*/false);
    }
    const OnStream guard(stream);
    const int threads =
        s.threads > 0 ? s.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    torch::set_num_threads(threads);
    torch::manual_seed(seed);
    net = model::make_torch_net(game, config);
    net->to(device);
    make_optimizer();
  }

  void make_optimizer() {
    // One parameter group, or two when batch-norm parameters and biases (rank < 2) are not decayed.
    std::vector<torch::Tensor> decayed, plain;
    for (const auto& p : net->parameters())
      (settings.weight_decay_on == "all" || p.dim() >= 2 ? decayed : plain).push_back(p);
    const auto groups = [&](const auto& options) {
      using Options = std::decay_t<decltype(options)>;
      std::vector<torch::optim::OptimizerParamGroup> g;
      g.emplace_back(decayed, std::make_unique<Options>(options));
      if (!plain.empty()) {
        auto no_decay = std::make_unique<Options>(options);
        no_decay->weight_decay(0.0);
        g.emplace_back(plain, std::move(no_decay));
      }
      return g;
    };
    if (settings.optimizer == "adamw") {
      const auto options =
          torch::optim::AdamWOptions(settings.learning_rate).weight_decay(settings.weight_decay);
      optimizer = std::make_unique<torch::optim::AdamW>(groups(options), options);
    } else if (settings.optimizer == "sgd") {
      const auto options = torch::optim::SGDOptions(settings.learning_rate)
                               .momentum(settings.momentum)
                               .nesterov(settings.momentum > 0)
                               .weight_decay(settings.weight_decay);
      optimizer = std::make_unique<torch::optim::SGD>(groups(options), options);
    } else {
      throw std::invalid_argument("optimizer must be sgd or adamw, not " + settings.optimizer);
    }
    // LibTorch 2.10+ merges each group's options into the defaults, keeping only the fields that
    // differ from the options type's constructor defaults: SGD's weight_decay 0 would be replaced
    // by the decay. Set the second group's decay after construction (same result on 1.13).
    if (!plain.empty()) {
      torch::optim::OptimizerOptions& o = optimizer->param_groups().back().options();
      if (settings.optimizer == "adamw")
        static_cast<torch::optim::AdamWOptions&>(o).weight_decay(0.0);
      else
        static_cast<torch::optim::SGDOptions&>(o).weight_decay(0.0);
    }
  }

  // Zeroes the gradients rather than dropping them (LibTorch 2.x's zero_grad() default; 1.13 has
  // no choice), so that on every LibTorch a parameter without a gradient in a step is still
  // decayed and carried by its momentum.
  void zero_gradients() {
    for (auto& group : optimizer->param_groups())
      for (auto& p : group.params())
        if (p.mutable_grad().defined()) {
          p.mutable_grad().detach_();
          p.mutable_grad().zero_();
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

  // Throws NonFiniteError naming the first parameter or buffer that holds a NaN or an infinity.
  void check_weights_finite(const std::string& when) const {
    for (const auto& p : net->named_parameters())
      if (!all_finite(p.value()))
        throw NonFiniteError("training diverged: weight " + p.key() + " is not finite " + when +
                             "; the run stops with the last good files in place (lower "
                             "training.learning_rate, then resume)");
    for (const auto& b : net->named_buffers())
      if (!all_finite(b.value()))
        throw NonFiniteError("training diverged: buffer " + b.key() + " is not finite " + when +
                             "; the run stops with the last good files in place");
  }

  // Empty when every optimiser state tensor is finite, else the name of the first that is not.
  std::string non_finite_optimizer_state() const {
    for (const auto& [key, state] : optimizer->state()) {
      if (const auto* s = dynamic_cast<const torch::optim::SGDParamState*>(state.get())) {
        if (!all_finite(s->momentum_buffer())) return "a momentum buffer";
      } else if (const auto* a = dynamic_cast<const torch::optim::AdamWParamState*>(state.get())) {
        if (!all_finite(a->exp_avg()) || !all_finite(a->exp_avg_sq()) ||
            !all_finite(a->max_exp_avg_sq()))
          return "an AdamW moment";
      }
    }
    return "";
  }

  // Empty when every optimiser state tensor has its parameter's shape, dtype and device and lies
  // inside its storage (sound_like), else which does not. A state from a network of another shape
  // (other filters, say) loads without complaint, keyed by position, and would fail only inside the
  // next step; one whose storage does not hold it would be read out of bounds.
  std::string mismatched_optimizer_state() const {
    std::size_t params = 0;
    for (const auto& group : optimizer->param_groups()) {
      for (const auto& p : group.params()) {
        ++params;
        // LibTorch keys a parameter's state by its TensorImpl (optimizer_state_key).
        using StateMap = std::decay_t<decltype(optimizer->state())>;
        const auto it = optimizer->state().find(optimizer_state_key<StateMap>(p));
        if (it == optimizer->state().end()) continue;  // no step has touched it yet
        const auto fits = [&](const torch::Tensor& t, bool required) {
          return t.defined() ? sound_like(t, p) : !required;
        };
        const auto shape = [&](const torch::Tensor& t) {
          return t.defined() ? c10::str(t.sizes(), " ", t.scalar_type(), t.is_contiguous() ? "" :
                                        " (not contiguous)") : std::string("none");
        };
        const std::string where = "parameter " + std::to_string(params - 1) + " (shape " +
                                  c10::str(p.sizes()) + ")";
        if (const auto* s = dynamic_cast<const torch::optim::SGDParamState*>(it->second.get())) {
          if (!fits(s->momentum_buffer(), true))
            return "the momentum buffer of " + where + " is " + shape(s->momentum_buffer());
        } else if (const auto* a =
                       dynamic_cast<const torch::optim::AdamWParamState*>(it->second.get())) {
          if (!fits(a->exp_avg(), true) || !fits(a->exp_avg_sq(), true) ||
              !fits(a->max_exp_avg_sq(), false))
            return "an AdamW moment of " + where + " is " + shape(a->exp_avg());
        } else {
          return "the state of " + where + " is not " + settings.optimizer + " state";
        }
      }
    }
    if (optimizer->state().size() > params)
      return std::to_string(optimizer->state().size()) + " parameter states for " +
             std::to_string(params) + " parameters";
    return "";
  }

  // Losses of the batch under the current mode (train or eval).
  struct Losses {
    torch::Tensor policy, value, score, total;  // score: undefined without a score head

    StepStats stats(double learning_rate) const {
      return {policy.item<double>(), value.item<double>(),
              score.defined() ? score.item<double>() : 0.0, total.item<double>(), learning_rate};
    }
  };

  Losses losses(const TrainingBatch& b) {
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
    const Bf16Autocast autocast(settings.precision == "bf16");
    const auto out = net->forward(x);
    // Illegal actions get a very negative logit, so the softmax is over legal actions only.
    const auto logits = out.policy_logits.masked_fill(legal.eq(0), -1e9f);
    const auto log_p = torch::log_softmax(logits, 1);
    // The mean of `losses` over the positions whose weight is 1 (0 when there are none).
    const auto weighted_mean = [](const torch::Tensor& losses, const torch::Tensor& weights) {
      return (losses * weights).sum() / weights.sum().clamp_min(1.0f);
    };
    const auto policy_loss = weighted_mean(-(target * log_p).sum(1), weight);
    const auto value_loss = torch::mse_loss(out.value, z);
    auto loss = policy_loss + settings.value_loss_weight * value_loss;
    torch::Tensor score_loss;
    // A batch without score vectors (filled by hand) has no score targets.
    if (out.score.defined() && b.score.size() == static_cast<std::size_t>(b.n) &&
        b.score_weight.size() == static_cast<std::size_t>(b.n)) {
      const auto score = from(b.score, {b.n});
      const auto score_weight = from(b.score_weight, {b.n});
      score_loss = weighted_mean((out.score - score).square(), score_weight);
      loss = loss + settings.score_loss_weight * score_loss;
    }
    return {policy_loss, value_loss, score_loss, loss};
  }
};

Trainer::Trainer(const Game& game, const model::NetConfig& net, const TrainerSettings& settings,
                 std::uint64_t seed)
    : impl_(std::make_unique<Impl>(game, net, settings, seed)) {}

Trainer::~Trainer() = default;

void Trainer::load_weights(const model::Checkpoint& checkpoint) {
  const OnStream guard(impl_->stream);
  model::load_weights(*impl_->net, checkpoint);
}

void Trainer::set_steps(std::int64_t steps) { impl_->steps = steps; }

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
  const OnStream guard(m.stream);
  m.net->train();
  const double lr = learning_rate_at(m.steps);
  m.set_learning_rate(lr);
  m.zero_gradients();
  StepStats stats;
  try {  // the forward and the backward pass allocate: running out is said in words
    Impl::Losses losses = m.losses(batch);
    stats = losses.stats(lr);
    if (!std::isfinite(stats.loss))
      throw NonFiniteError("training diverged at step " + std::to_string(m.steps + 1) +
                           ": the loss is " + std::to_string(stats.loss) + " (policy " +
                           std::to_string(stats.policy_loss) + ", value " +
                           std::to_string(stats.value_loss) + ", score " +
                           std::to_string(stats.score_loss) +
                           "); no weight was changed and the run stops with the last good files "
                           "in place (lower training.learning_rate, then resume)");
    losses.total.backward();
  } catch (const c10::Error& e) {
    throw_if_out_of_memory(e, batch.n, m.net->config());
    throw;
  }
  m.optimizer->step();
  ++m.steps;
  return stats;
}

StepStats Trainer::evaluate(const TrainingBatch& batch) {
  Impl& m = *impl_;
  const OnStream guard(m.stream);
  torch::NoGradGuard no_grad;
  m.net->eval();
  return m.losses(batch).stats(learning_rate_at(m.steps));
}

std::int64_t Trainer::steps() const { return impl_->steps; }

const model::NetConfig& Trainer::net_config() const { return impl_->net->config(); }

model::Checkpoint Trainer::checkpoint(const std::string& metadata) const {
  const OnStream guard(impl_->stream);
  impl_->check_weights_finite("at step " + std::to_string(impl_->steps));
  return model::to_checkpoint(*impl_->net, impl_->game, impl_->steps, metadata);
}

void Trainer::save_state(const std::string& prefix) const {
  const model::Checkpoint weights = checkpoint("trainer state");  // checks the weights first
  const OnStream guard(impl_->stream);
  std::ostringstream archive_bytes;
  {
    torch::serialize::OutputArchive archive;
    impl_->optimizer->save(archive);
    archive.write("oppidum_step", torch::tensor(static_cast<std::int64_t>(impl_->steps)));
    archive.save_to(archive_bytes);
  }
  util::write_file_atomically(prefix + ".optim",
                              util::frame(kOptimizerMagic, kOptimizerFormatVersion,
                                          archive_bytes.str()));
  model::save_checkpoint(weights, prefix + ".ckpt");
}

Trainer::LoadResult Trainer::load_state(const std::string& prefix) {
  LoadResult result;
  const std::string weights = prefix + ".ckpt";
  const std::string optim = prefix + ".optim";
  // Both files are written again at every generation: a directory or a device in their place is
  // refused now, not after a generation of work.
  util::check_replaceable(weights);
  util::check_replaceable(optim);
  if (!std::filesystem::exists(weights)) return result;
  const OnStream guard(impl_->stream);
  const model::Checkpoint ckpt = model::load_checkpoint(weights, impl_->game,
                                                        &impl_->net->config());
  model::load_weights(*impl_->net, ckpt);
  impl_->steps = ckpt.step;
  impl_->make_optimizer();
  result.found = true;
  try {
    // At most two moments per weight (AdamW) beside the archive's own structure.
    const std::string bytes = util::read_regular_file(optim, 3 * model::kMaxCheckpointBytes);
    const std::string_view payload =
        util::unframe(bytes, kOptimizerMagic, kOptimizerFormatVersion, optim);
    torch::serialize::InputArchive archive;
    // Written on any device, loaded onto this one.
    archive.load_from(payload.data(), payload.size(), impl_->device);
    torch::Tensor step;
    archive.read("oppidum_step", step);
    if (!step.defined() ||
        !sound_like(step, torch::zeros({}, torch::dtype(torch::kLong).device(step.device()))))
      throw std::runtime_error("its step is not one whole number");
    if (step.item<std::int64_t>() != ckpt.step)
      throw std::runtime_error("it is from step " + std::to_string(step.item<std::int64_t>()) +
                               ", the weights from step " + std::to_string(ckpt.step));
    impl_->optimizer->load(archive);
    const std::string mismatch = impl_->mismatched_optimizer_state();
    if (!mismatch.empty())
      throw std::runtime_error("it does not fit this network (one of another shape, a damaged "
                               "file, or one of LibTorch 2.1 or older, whose state 2.2 and later "
                               "misread): " +
                               mismatch);
    const std::string bad = impl_->non_finite_optimizer_state();
    if (!bad.empty()) throw std::runtime_error(bad + " holds NaN or infinity");
  } catch (const std::exception& e) {
    // Our messages and LibTorch's; the file's own (util::FileError) already name it.
    const std::string what = first_line(e.what());
    result.warning = "starting with fresh optimiser state: " +
                     (what.find(optim) == std::string::npos ? optim + ": " : std::string()) + what;
    impl_->make_optimizer();
  }
  return result;
}

}  // namespace oppidum::trainer
