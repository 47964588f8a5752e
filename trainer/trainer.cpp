#include "trainer/trainer.h"

#include <cmath>
#include <cstring>
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

#include "games/quote.h"
#include "model/backend.h"
#include "model/torch_net.h"
#include "util/file_io.h"

namespace oppidum::trainer {
namespace {

constexpr char kOptimizerMagic[8] = {'O', 'P', 'P', 'O', 'P', 'T', 'I', 'M'};
// 2: our own layout (save_optimizer); 1 was a LibTorch archive, whose loader compiles the
// TorchScript source stored in the file (a crafted file crashed it).
constexpr std::uint32_t kOptimizerFormatVersion = 2;

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
    throw std::invalid_argument("training.device: \"" + quote_input(name, 40) +
                                "\" is not cpu, cuda or cuda:N");
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
  // The optimiser state file this session loaded and the step it was loaded at (none: -1): a
  // divergence after it may be the file's (a finite but absurd state), and its message says so.
  std::string loaded_optimizer;
  std::int64_t loaded_at = -1;

  // The file whose weights this session loaded last, and whether a step has changed them since
  // ("" and false: none loaded): a loss that is not finite before any step is theirs, not a
  // learning rate's.
  std::string loaded_weights;
  bool stepped_since_load = true;
  bool weights_are_trainers = false;  // loaded_weights is the trainer's own trainer.ckpt

  // What a divergence message of the loss says of its cause and the way out.
  std::string loss_advice() const {
    if (stepped_since_load)
      return "no weight was changed and the run stops with the last good files in place (lower "
             "training.learning_rate, then resume)" + since_loaded();
    const std::string from = loaded_weights.empty() ? "the weights loaded"
                                                    : "the weights of " + loaded_weights;
    return "no step of this session has changed " + from + " yet, so the learning rate is not "
           "the cause: they are (or the batch); no weight was changed and the run stops with the "
           "last good files in place" +
           (weights_are_trainers ? " (move " + loaded_weights + " aside and run `train "
                                   "--recover`: the trainer restarts from the newest intact "
                                   "network)"
                                 : std::string());
  }

  // What a divergence message adds after a loaded optimiser state: the way out.
  std::string since_loaded() const {
    if (loaded_at < 0) return "";
    return "; " + std::to_string(steps - loaded_at) + " step(s) after this session loaded the "
           "optimiser state of " + loaded_optimizer + ": should the resume diverge again at once, "
           "move that file aside and the optimiser starts fresh, losing only its momentum";
  }

  Impl(const Game& g, const model::NetConfig& config, const TrainerSettings& s, std::uint64_t seed)
      : game(g), settings(s), device(parse_training_device(s.device.empty() ? "cpu" : s.device)) {
    if (s.precision == "bf16" && !device.is_cuda())
      throw std::invalid_argument("training.precision bf16 needs training on cuda, not " +
                                  s.device);
    if (device.is_cuda()) {
      model::use_ieee_fp32_on_cuda();
      // The low-priority pool (why: model/torch_backend.cpp's header).
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
    loaded_at = -1;  // fresh state
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
                             "training.learning_rate, then resume)" + since_loaded());
    for (const auto& b : net->named_buffers())
      if (!all_finite(b.value()))
        throw NonFiniteError("training diverged: buffer " + b.key() + " is not finite " + when +
                             "; the run stops with the last good files in place" +
                             since_loaded());
  }

  // The optimiser's state as trainer.optim's payload (docs/FORMATS.md): the optimiser, the step,
  // and for each parameter in order its size and, when a step has touched it, its state as
  // float32 values (SGD: the momentum; AdamW: its step count and two or three moments). Every size
  // follows from the network, so a reader allocates nothing that the file states.
  std::string save_optimizer() const {
    std::string out;
    const auto put = [&](auto v) {
      util::put_le(out, static_cast<std::uint64_t>(v), static_cast<int>(sizeof v));
    };
    const auto put_values = [&](const torch::Tensor& t) {
      const torch::Tensor c = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
      out.append(reinterpret_cast<const char*>(c.data_ptr<float>()),
                 static_cast<std::size_t>(c.numel()) * sizeof(float));
    };
    const bool adamw = settings.optimizer == "adamw";
    put(std::uint32_t{adamw ? 2u : 1u});
    put(std::int64_t{steps});
    std::uint32_t params = 0;
    for (const auto& group : optimizer->param_groups()) params += group.params().size();
    put(params);
    using StateMap = std::decay_t<decltype(optimizer->state())>;
    for (const auto& group : optimizer->param_groups()) {
      for (const auto& p : group.params()) {
        put(static_cast<std::uint64_t>(p.numel()));
        const auto it = optimizer->state().find(optimizer_state_key<StateMap>(p));
        if (it == optimizer->state().end()) {
          put(std::uint8_t{0});
        } else if (const auto* a =
                       dynamic_cast<const torch::optim::AdamWParamState*>(it->second.get())) {
          const bool max = a->max_exp_avg_sq().defined();
          put(static_cast<std::uint8_t>(max ? 3 : 1));
          put(static_cast<std::int64_t>(a->step()));
          put_values(a->exp_avg());
          put_values(a->exp_avg_sq());
          if (max) put_values(a->max_exp_avg_sq());
        } else {
          const auto& sgd = static_cast<const torch::optim::SGDParamState&>(*it->second);
          const bool momentum = sgd.momentum_buffer().defined();
          put(static_cast<std::uint8_t>(momentum ? 1 : 0));
          if (momentum) put_values(sgd.momentum_buffer());
        }
      }
    }
    return out;
  }

  // Sets the optimiser's state from save_optimizer's bytes, saved at step `step`; throws
  // std::runtime_error saying what does not fit (the optimiser is then made afresh by the caller).
  void load_optimizer(std::string_view bytes, std::int64_t step) {
    std::size_t at = 0;
    const auto need = [&](std::size_t n, const char* what) {
      if (bytes.size() - at < n)
        throw std::runtime_error("it ends at byte " + std::to_string(bytes.size()) + ", within " +
                                 what + " (byte " + std::to_string(at) + ")");
    };
    const auto get = [&](auto v, const char* what) {
      need(sizeof v, what);
      v = static_cast<decltype(v)>(util::get_le(bytes, at, static_cast<int>(sizeof v)));
      at += sizeof v;
      return v;
    };
    const auto values = [&](const torch::Tensor& p, const char* what, bool square = false) {
      const auto n = static_cast<std::size_t>(p.numel());
      need(n * sizeof(float), what);
      torch::Tensor t = torch::empty(p.sizes(), torch::kFloat);
      std::memcpy(t.data_ptr<float>(), bytes.data() + at, n * sizeof(float));
      at += n * sizeof(float);
      if (!torch::isfinite(t).all().item<bool>())
        throw std::runtime_error(std::string(what) + " holds NaN or infinity");
      if (square && (t < 0).any().item<bool>())  // a mean of squares
        throw std::runtime_error(std::string(what) + " holds a value below 0");
      return t.to(p.device(), p.scalar_type());
    };
    const bool adamw = settings.optimizer == "adamw";
    const auto kind = get(std::uint32_t{}, "the optimiser's name");
    if (kind != 1 && kind != 2) throw std::runtime_error("it names no optimiser this program has");
    if ((kind == 2) != adamw)
      throw std::runtime_error(std::string("it is the state of ") + (kind == 2 ? "adamw" : "sgd") +
                               ", and this run trains with " + settings.optimizer);
    const auto saved_step = get(std::int64_t{}, "the step");
    if (saved_step != step)
      throw std::runtime_error("it is from step " + std::to_string(saved_step) +
                               ", the weights from step " + std::to_string(step));
    std::uint32_t params = 0;
    for (const auto& group : optimizer->param_groups()) params += group.params().size();
    const auto found = get(std::uint32_t{}, "the parameter count");
    if (found != params)
      throw std::runtime_error("it holds the state of " + std::to_string(found) +
                               " parameters, this network has " + std::to_string(params));
    using StateMap = std::decay_t<decltype(optimizer->state())>;
    std::size_t index = 0;
    for (const auto& group : optimizer->param_groups()) {
      for (const auto& p : group.params()) {
        const std::string where = "parameter " + std::to_string(index++);
        const auto size = get(std::uint64_t{}, "a parameter's size");
        if (size != static_cast<std::uint64_t>(p.numel()))
          throw std::runtime_error("it does not fit this network: " + where + " has " +
                                   std::to_string(size) + " values in the file, shape " +
                                   c10::str(p.sizes()) + " here");
        const auto flags = get(std::uint8_t{}, "a parameter's state flags");
        if (flags > (adamw ? 3 : 1) || (adamw && flags == 2))
          throw std::runtime_error("the state flags of " + where + " are " +
                                   std::to_string(flags) + ", no layout this program writes");
        if (flags == 0) continue;
        const auto key = optimizer_state_key<StateMap>(p);
        if (adamw) {
          auto state = std::make_unique<torch::optim::AdamWParamState>();
          const auto count = get(std::int64_t{}, "a step count");
          if (count < 0 || count > saved_step)
            throw std::runtime_error("the step count of " + where + " is " +
                                     std::to_string(count) + ", not 0 to the step");
          state->step(count);
          state->exp_avg(values(p, "an AdamW moment"));
          state->exp_avg_sq(values(p, "an AdamW second moment", true));
          if (flags == 3) state->max_exp_avg_sq(values(p, "an AdamW second moment", true));
          optimizer->state()[key] = std::move(state);
        } else {
          auto state = std::make_unique<torch::optim::SGDParamState>();
          state->momentum_buffer(values(p, "a momentum buffer"));
          optimizer->state()[key] = std::move(state);
        }
      }
    }
    if (at != bytes.size())
      throw std::runtime_error(std::to_string(bytes.size() - at) +
                               " bytes follow the state of the last parameter");
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

void Trainer::load_weights(const model::Checkpoint& checkpoint, const std::string& source) {
  const OnStream guard(impl_->stream);
  model::load_weights(*impl_->net, checkpoint);
  impl_->loaded_weights = source;
  impl_->stepped_since_load = false;
  impl_->weights_are_trainers = false;
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
                           std::to_string(stats.score_loss) + "); " + m.loss_advice());
    losses.total.backward();
  } catch (const c10::Error& e) {
    throw_if_out_of_memory(e, batch.n, m.net->config());
    throw;
  }
  m.optimizer->step();
  m.stepped_since_load = true;
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

void Trainer::synchronize() const {
  if (impl_->stream) impl_->stream->synchronize();
}

const model::NetConfig& Trainer::net_config() const { return impl_->net->config(); }

model::Checkpoint Trainer::checkpoint(const std::string& metadata) const {
  const OnStream guard(impl_->stream);
  impl_->check_weights_finite("at step " + std::to_string(impl_->steps));
  return model::to_checkpoint(*impl_->net, impl_->game, impl_->steps, metadata);
}

void Trainer::save_state(const std::string& prefix) const {
  const model::Checkpoint weights = checkpoint("trainer state");  // checks the weights first
  const OnStream guard(impl_->stream);
  util::write_file_atomically(prefix + ".optim",
                              util::frame(kOptimizerMagic, kOptimizerFormatVersion,
                                          impl_->save_optimizer()));
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
  impl_->loaded_weights = weights;
  impl_->stepped_since_load = false;
  impl_->weights_are_trainers = true;
  impl_->steps = ckpt.step;
  impl_->make_optimizer();
  result.found = true;
  try {
    // At most three moments per weight (AdamW) and a few bytes per parameter.
    const std::string bytes = util::read_regular_file(optim, 3 * model::kMaxCheckpointBytes);
    impl_->load_optimizer(util::unframe(bytes, kOptimizerMagic, kOptimizerFormatVersion, optim),
                          ckpt.step);
    impl_->loaded_optimizer = optim;
    impl_->loaded_at = ckpt.step;
  } catch (const util::FileAccessError& e) {
    // Not damaged: fresh moments would be written over the file at the next save.
    throw std::runtime_error(std::string(e.what()) + ": the trainer's optimiser state cannot be "
                             "read; make it readable and run the same command again");
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
