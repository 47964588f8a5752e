// The run configuration: YAML files in configs/ parsed once into typed structs, passed around by
// const reference. Every field is declared once, in the field lists below, with its default, its
// allowed range and a one-line description; the reader, the range checks, the writer of the
// effective config and `--set key=value` overrides are all generated from those lists.
//
// Errors name the key: an unknown key ("training.batch_sise: unknown key; keys of training: ..."),
// a value of the wrong type or out of range ("selfplay.simulations: 0 is out of range 1..1000000"),
// a malformed file (with the line and column yaml-cpp reports). A config says what it means: a key
// or a section given twice ("x.yaml: line 7: training.batch_size is given twice (first at line
// 3)"), a second YAML document after `---`, an empty config file (or one of comments only) and a
// directory are errors, never a silent default. Bad input quoted in a message is cut to about 100
// bytes (games/quote.h). This header does not include yaml-cpp or LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/net_config.h"
#include "selfplay/game_record.h"

namespace oppidum::config {

// Limits of keys that options beside the config share (`oppidum selfplay --threads`, the
// benchmarks' options).
inline constexpr int kMaxSelfplayThreads = 256;
// The longest time limit of a session, in minutes (run.stop_after_minutes, selfplay --minutes).
inline constexpr double kMaxStopAfterMinutes = 1e7;
inline constexpr int kMaxBatchSize = 65536;
// The highest GPU index a config names (inference.cuda_devices, training.device cuda:N).
inline constexpr int kMaxGpuIndex = 63;
// The most games of one gate or anchor match (arena.max_games, arena.anchor_games): a gate row
// that counts more is damaged.
inline constexpr int kMaxGateGames = 100'000;

// F(type, name, default, min, max, resumable, description). Strings list their allowed values in
// `min` (a '|'-separated list, empty = any) and ignore `max`; booleans (true/false) ignore both.
// `resumable`: the key may change when a run continues (where and how fast it runs, its stop
// conditions), else it is part of the run's identity (resumable_keys()).
#define OPPIDUM_RUN_FIELDS(F)                                                                      \
  F(std::string, game, "mg", "", 0, false,                                                         \
    "the game: mg (Murus Gallicus), dvonn, ... (games/registry.h)")                                \
  F(std::uint64_t, seed, 1, 0, UINT64_MAX, false, "run seed; every random stream derives from it") \
  F(double, stop_after_minutes, 0, 0, kMaxStopAfterMinutes, true,                                  \
    "stop the session after this many minutes, a gate in progress too (0: never)")                 \
  F(int, max_generations, 0, 0, 1000000, true, "stop after this many generations (0: never)")      \
  F(std::uint64_t, stop_after_positions, 0, 0, UINT64_MAX, true,                                   \
    "stop once the run has this many self-play positions (0: never); a fixed budget")              \
  F(std::string, store, "", "", 0, true,                                                           \
    "where self-play games meet: empty for the run folder, or redis://[user@]host[:port]/RUN "     \
    "(password in OPPIDUM_REDIS_PASSWORD; docs/DISTRIBUTED.md)")                                   \
  F(int, stream_max_games, 100000, 100, 1000000000, true,                                          \
    "the Redis stream keeps about this many games for the trainer to read")

// The net section is model::NetConfig, declared with its field list in model/net_config.h.

#define OPPIDUM_SELFPLAY_FIELDS(F)                                                                 \
  F(int, threads, 1, 0, kMaxSelfplayThreads, true,                                                                 \
    "self-play threads, each playing many games at once (0: none here; needs run.store)")          \
  F(int, concurrent_games, 64, 1, 4096, true,                                                      \
    "games in progress per thread (the evaluation batch)")                                         \
  F(int, simulations, 100, 1, 1000000, false, "search simulations of a full search")               \
  F(int, fast_simulations, 25, 1, 1000000, false, "simulations of a fast search (playout cap)")    \
  F(double, full_search_fraction, 0.25, 0, 1, false,                                               \
    "share of moves searched fully and used as policy targets (1: every move)")                    \
  F(std::string, root, "puct", "puct|gumbel", 0, false,                                            \
    "root search: puct (visits, Dirichlet noise, temperature) or gumbel (Gumbel-top-k, "           \
    "sequential halving, improved-policy targets; docs/ARCHITECTURE.md)")                          \
  F(double, cpuct, 1.5, 0.01, 100, false, "exploration constant of PUCT")                          \
  F(double, cpuct_base, 0, 0, 1e9, false,                                                          \
    "> 0 grows cpuct by log((1 + N + base) / base) (AlphaZero: 19652); 0: off")                    \
  F(double, fpu_reduction, 0.25, 0, 2, false,                                                      \
    "first-play urgency: reduction from the parent value")                                         \
  F(double, dirichlet_alpha_scale, 10, 0.01, 1000, false,                                          \
    "root noise alpha = this / number of legal actions")                                           \
  F(double, dirichlet_weight, 0.25, 0, 1, false, "weight of the root noise in full searches")      \
  F(int, temperature_plies, 20, 0, 10000, false, "plies played with temperature `temperature`")    \
  F(double, temperature, 1.0, 0, 10, false,                                                        \
    "move temperature in the first temperature_plies plies")                                       \
  F(double, final_temperature, 0.0, 0, 10, false, "move temperature after that")                   \
  F(int, gumbel_considered, 16, 2, 1000, false, "gumbel: root actions sampled by Gumbel-top-k")    \
  F(double, gumbel_c_visit, 50, 0, 1e6, false,                                                     \
    "gumbel: c_visit of sigma(q) = (c_visit + max N) c_scale q")                                   \
  F(double, gumbel_c_scale, 1.0, 0, 1e6, false, "gumbel: c_scale of sigma(q)")                     \
  F(std::string, target_visits, "tree", "tree|search", 0, false,                                   \
    "PUCT policy target: root visits with those kept by tree reuse, or this search's alone")       \
  F(double, resign_below, 0, -1, 0, false,                                                         \
    "resign when a player's root value stays below this (e.g. -0.9); 0: never resign")             \
  F(int, resign_moves, 3, 1, 1000, false, "... for this many of its own moves in a row")           \
  F(double, resign_playout, 0.1, 0, 1, false, "share of games played out to check resignations")   \
  F(double, resign_max_false, 0.05, 0, 1, false,                                                   \
    "resigning stops while more than this share of the last 100 checks were wrong")                \
  F(int, max_plies, 300, 1, selfplay::kMaxRecordPlies, false,                                     \
    "a game reaching this ply is adjudicated a draw")                                              \
  F(int, games_per_chunk, 32, 1, 100000, false,                                                    \
    "finished games per replay chunk file (written sooner once its first game waited 60 s)")

#define OPPIDUM_TRAINING_FIELDS(F)                                                                 \
  F(std::string, optimizer, "sgd", "sgd|adamw", 0, false, "sgd (with momentum) or adamw")          \
  F(int, batch_size, 256, 1, kMaxBatchSize, false, "positions per optimiser step")                 \
  F(double, learning_rate, 0.02, 1e-7, 10, false, "peak learning rate")                            \
  F(int, warmup_steps, 100, 0, 10000000, false, "steps of linear learning-rate warm-up")           \
  F(double, lr_decay_steps, 0, 0, 1e12, false,                                                     \
    "cosine decay to 10% over this many steps (0: constant)")                                      \
  F(double, momentum, 0.9, 0, 0.999, false, "SGD momentum")                                        \
  F(double, weight_decay, 1e-4, 0, 1, false,                                                       \
    "weight decay: sgd adds it times the weights to the gradient (L2); adamw takes it off the "    \
    "weights times the learning rate (decoupled, so 1e-4 is far weaker there)")                   \
  F(std::string, weight_decay_on, "all", "all|weights", 0, false,                                  \
    "decay every parameter, or only convolution and linear weights (not batch norm, biases)")      \
  F(double, value_loss_weight, 1.0, 0, 100, false,                                                 \
    "weight of the value loss against the policy loss")                                            \
  F(double, score_loss_weight, 0.5, 0, 100, false,                                                 \
    "weight of the score-margin loss (only with net.score_head)")                                  \
  F(double, value_q_weight, 0, 0, 1, false,                                                        \
    "value target = (1 - w) game result + w search value at the root")                             \
  F(std::string, fast_search_rows, "value", "value|drop", 0, false,                                \
    "positions of fast (playout-cap) searches: value-only rows, or left out of the window (drop "  \
    "needs selfplay.full_search_fraction above 0)")                                                \
  F(int, window_min, 20000, 1, 1000000000, false, "replay window at the start, in positions")      \
  F(int, window_max, 500000, 1, 1000000000, false, "replay window cap, in positions")              \
  F(double, window_growth, 0.5, 0, 1, false,                                                       \
    "the window grows by this share of every new position")                                        \
  F(double, sample_reuse, 4, 0.1, 1000, false,                                                     \
    "target training samples per new self-play position")                                          \
  F(int, min_positions, 5000, 1, 1000000000, false,                                                \
    "positions in the replay store before training, and rows in the replay window (or as many "   \
    "as the window keeps, if fewer): training waits while either is short")                        \
  F(int, steps_per_generation, 500, 1, 100000000, false, "optimiser steps between candidates")     \
  F(int, threads, 0, 0, 256, true, "LibTorch threads for training (0: all cores)")                 \
  F(std::string, device, "", "", 0, true,                                                          \
    "device of training: cpu, cuda (the first GPU of inference.cuda_devices), cuda:N, or empty "   \
    "for inference.device")                                                                        \
  F(std::string, precision, "fp32", "fp32|bf16", 0, true,                                          \
    "training arithmetic: fp32, or bf16 autocast of the forward pass (cuda only; fp32 weights)")

#define OPPIDUM_ARENA_FIELDS(F)                                                                    \
  F(int, max_games, 200, 0, kMaxGateGames, false,                                                  \
    "game cap of a gate match (paired, so even); 0: no gate, every candidate is promoted")         \
  F(int, simulations, 100, 1, 1000000, false, "search simulations per move in gate matches")       \
  F(double, elo0, 0, -1000, 1000, false, "SPRT: H0 Elo difference")                                \
  F(double, elo1, 20, -1000, 1000, false, "SPRT: H1 Elo difference")                               \
  F(double, alpha, 0.05, 1e-6, 0.5, false, "SPRT: false-positive rate")                            \
  F(double, beta, 0.05, 1e-6, 0.5, false, "SPRT: false-negative rate")                             \
  F(int, opening_plies, 4, 0, 100, false, "random plies that make each paired opening")            \
  F(std::string, anchor, "alphabeta:depth=2", "", 0, false,                                        \
    "fixed opponent each new best network plays, for a rating that does not chain")                \
  F(int, anchor_games, 20, 0, kMaxGateGames, false,                                                \
    "games against the anchor per promotion (0: none)")

#define OPPIDUM_INFERENCE_FIELDS(F)                                                                \
  F(std::string, backend, "eigen", "eigen|torch", 0, true,                                         \
    "inference backend: eigen (cpu only) or torch (cpu or cuda)")                                  \
  F(std::string, device, "cpu", "cpu|cuda", 0, true,                                               \
    "device of inference (and of training, unless training.device says otherwise)")                \
  F(int, max_batch, 256, 1, 65536, true, "largest inference batch")                                \
  F(int, max_wait_us, 1000, 0, 1000000, true, "longest wait for a batch to fill, in microseconds") \
  F(int, workers, 1, 1, 64, true,                                                                  \
    "forward threads of the inference server, sharing its queue, each with its own backend")       \
  F(int, threads, 1, 0, 256, true,                                                                 \
    "eigen: CPU threads of each worker's forward pass (0: the cores divided among the workers)")   \
  F(std::string, cuda_devices, "", "", 0, true,                                                    \
    "cuda: GPU indices the workers use in turn, e.g. \"0,1\" (empty: every GPU, worker k on k "    \
    "mod count)")                                                                                  \
  F(std::string, precision, "fp32", "fp32|fp16|bf16", 0, true,                                     \
    "arithmetic of the forward pass: fp32, or fp16/bf16 weights and activations (backend torch "   \
    "on device cuda only; the older key half: true means fp16)")

// The most forward threads of an Eigen inference server: inference.workers x inference.threads
// (each key alone allows more; thousands of OpenMP threads only fail, on any machine).
inline constexpr int kMaxForwardThreads = 256;

#define OPPIDUM_DECLARE_FIELD(type, name, def, lo, hi, resumable, doc) type name = def;

struct RunSection { OPPIDUM_RUN_FIELDS(OPPIDUM_DECLARE_FIELD) };
using NetSection = model::NetConfig;
struct SelfplaySection { OPPIDUM_SELFPLAY_FIELDS(OPPIDUM_DECLARE_FIELD) };
struct TrainingSection { OPPIDUM_TRAINING_FIELDS(OPPIDUM_DECLARE_FIELD) };
struct ArenaSection { OPPIDUM_ARENA_FIELDS(OPPIDUM_DECLARE_FIELD) };
struct InferenceSection { OPPIDUM_INFERENCE_FIELDS(OPPIDUM_DECLARE_FIELD) };

#undef OPPIDUM_DECLARE_FIELD

struct RunConfig {
  RunSection run;
  NetSection net;
  SelfplaySection selfplay;
  TrainingSection training;
  ArenaSection arena;
  InferenceSection inference;
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The first line of what to_yaml writes (a run's config.yaml, the config a Redis store publishes).
// Text that starts with it must hold every key: one that is missing is an error naming it, not its
// default, so that a config cut short or edited never changes a run's identity unseen. (A key added
// to a later version must then be exempt for the files written before it.)
inline constexpr const char* kEveryKeyLine =
    "# oppidum run config: every key as the run uses it (a key missing below is an error)";

// Parses YAML text; `source` names it in errors (a file name). `overrides` are "section.key=value"
// strings applied after the file (the CLI's --set). Checks cross-field rules too. Text without
// sections (empty, comments only) gives the defaults; text that starts with kEveryKeyLine must
// hold every key.
RunConfig parse_config(std::string_view yaml_text, const std::string& source,
                       const std::vector<std::string>& overrides = {});
// How many YAML documents `text` holds, counted up to 2 (yaml-cpp's LoadAll never ends on some
// malformed texts); ConfigError, `where` first, when it is not valid YAML. For the run's other
// YAML file, state.yaml, which is one document too.
int count_yaml_documents(std::string_view text, const std::string& where);
// The largest config file read (1 MiB; the configs in configs/ are about 2 KB).
inline constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

// Reads and parses the file `path`, as parse_config does, except that a file without sections is
// an error ("<path>: the file is empty (no sections)"), as is anything but a regular file of at
// most kMaxConfigBytes ("<path>: a directory, not a config file"; a device, a FIFO).
RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});
// load_config, or with an empty path the built-in defaults with `overrides` (the benchmarks'
// --config, which may be left out).
RunConfig load_config_or_defaults(const std::string& path,
                                  const std::vector<std::string>& overrides);
// inference.cuda_devices as GPU indices: "" -> {}, "0,1" -> {0, 1}; throws ConfigError naming
// the key for anything but comma-separated whole numbers 0..kMaxGpuIndex.
std::vector<int> parse_cuda_devices(std::string_view text);

// ConfigError (`where` first) when an Eigen inference server would run more than
// kMaxForwardThreads forward threads. Loading checks it for a config that starts a run; a run's
// own config.yaml is checked with the session's --set (trainer/resume.h, resolve_config).
void check_forward_threads(const RunConfig& config, const std::string& where = "");
// The device training runs on, from training.device (or inference.device when that is empty):
// "cpu" or "cuda:N"; plain cuda is the first GPU of inference.cuda_devices (0 when that is empty).
std::string training_device(const RunConfig& config);
// Keys ("section.key") that may change when a run continues: its stop conditions and where and
// how fast it runs (devices, precision, threads, batching), never what it learns. Everything else
// is the run's identity, frozen in its folder's config.yaml.
const std::vector<std::string>& resumable_keys();
bool may_change_on_resume(const std::string& section, const std::string& key);
// The effective config as YAML, every field written (it parses back to the same config).
std::string to_yaml(const RunConfig& config);
// The run's identity: one line "section.key: value" for each key no later session may change, in
// the config's order. A run keeps it in state.yaml, so that config.yaml edited by hand is seen.
std::string identity_text(const RunConfig& config);
// One line per key: "section.key  default  description", for --help and docs.
std::string describe_keys();

}  // namespace oppidum::config
