#include "trainer/run.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include "arena/match.h"
#include "arena/players.h"
#include "mcts/seed.h"
#include "model/atomic_file.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/inference_server.h"
#include "selfplay/replay_store.h"
#include "selfplay/selfplay.h"
#include "trainer/replay_window.h"
#include "trainer/trainer.h"

namespace oppidum::trainer {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kInitStream = 0x494E495400000000ULL;    // initial network weights
constexpr std::uint64_t kSampleStream = 0x53414D504C450000ULL;  // batch sampling, by session
constexpr std::uint64_t kGateStream = 0x4741544500000000ULL;    // gate matches, by generation

// Keys whose value may change between invocations of one run: stop conditions, not identity.
bool is_session_key(const std::string& line) {
  return line.find("stop_after_minutes:") != std::string::npos ||
         line.find("max_generations:") != std::string::npos;
}

void write_text_atomically(const fs::path& path, const std::string& text) {
  model::write_file_atomically(path.string(), text);
}

// The files of a run folder.
struct RunPaths {
  fs::path dir;
  fs::path config() const { return dir / "config.yaml"; }
  fs::path state() const { return dir / "state.yaml"; }
  fs::path best() const { return dir / "checkpoints" / "best.ckpt"; }
  fs::path candidate(int generation) const {
    char name[32];
    std::snprintf(name, sizeof name, "gen-%04d.ckpt", generation);
    return dir / "checkpoints" / name;
  }
  std::string trainer_prefix() const { return (dir / "trainer").string(); }
  fs::path games() const { return dir / "games"; }
  fs::path arena() const { return dir / "arena.csv"; }
  fs::path metrics() const { return dir / "metrics.csv"; }
  fs::path log() const { return dir / "log.txt"; }
};

// What state.yaml keeps: only what cannot be derived from the other files.
struct RunState {
  std::uint64_t sessions = 0;  // starts of the run so far (seeds each session's self-play anew)
  double best_elo = 0.0;       // chained gate estimates from the initial network
  std::string last_gate;       // one line about the last gate
};

RunState load_state(const RunPaths& paths) {
  RunState s;
  if (!fs::exists(paths.state())) return s;
  try {
    const YAML::Node n = YAML::LoadFile(paths.state().string());
    s.sessions = n["sessions"].as<std::uint64_t>();
    s.best_elo = n["best_elo"].as<double>();
    s.last_gate = n["last_gate"] ? n["last_gate"].as<std::string>() : "";
  } catch (const std::exception& e) {
    throw std::runtime_error(paths.state().string() + ": damaged (" + e.what() +
                             "); restore it or remove it to restart the counters");
  }
  return s;
}

void save_state(const RunPaths& paths, const RunState& s) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "sessions" << YAML::Value << s.sessions << YAML::Key << "best_elo"
      << YAML::Value << s.best_elo << YAML::Key << "last_gate" << YAML::Value << s.last_gate
      << YAML::EndMap;
  write_text_atomically(paths.state(), std::string(out.c_str()) + "\n");
}

// Appends one line (a CSV row) and flushes, creating the file with its header first.
void append_line(const fs::path& path, const std::string& header, const std::string& line) {
  const bool fresh = !fs::exists(path);
  std::ofstream out(path, std::ios::app);
  if (fresh) out << header << '\n';
  out << line << '\n';
}

// The keys (section.key: value) where two configs differ, stop conditions left out.
std::string differing_keys(const config::RunConfig& a, const config::RunConfig& b) {
  std::istringstream ia(config::to_yaml(a)), ib(config::to_yaml(b));
  std::string la, lb, section, differences;
  while (std::getline(ia, la) && std::getline(ib, lb)) {
    if (!la.empty() && la[0] != ' ') section = la.substr(0, la.size() - 1);
    if (la != lb && !is_session_key(la))
      differences += "\n  " + section + "." + la.substr(2) + " (the run has" +
                     lb.substr(lb.find(':') + 1) + ")";
  }
  return differences;
}

// A new run takes --config and --set. A resumed run keeps the config it was started with; --set
// may change only its stop conditions, and a --config given again must match it.
config::RunConfig resolve_config(const TrainOptions& o, const RunPaths& paths) {
  if (!fs::exists(paths.config())) {
    if (o.config_path.empty())
      throw config::ConfigError(paths.dir.string() + " is not a run yet: give --config to start it");
    return config::load_config(o.config_path, o.overrides);
  }
  const config::RunConfig saved = config::load_config(paths.config().string());
  const config::RunConfig effective = config::load_config(paths.config().string(), o.overrides);
  const config::RunConfig asked =
      o.config_path.empty() ? effective : config::load_config(o.config_path, o.overrides);
  const std::string differences = differing_keys(asked, saved);
  if (!differences.empty())
    throw config::ConfigError(
        (o.config_path.empty() ? std::string("--set") : o.config_path) + " differs from the config " +
        paths.dir.string() + " was started with:" + differences +
        "\nonly run.stop_after_minutes and run.max_generations may change when a run continues");
  return asked;
}

std::shared_ptr<spdlog::logger> make_logger(const RunPaths& paths) {
  auto console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(paths.log().string());
  auto logger = std::make_shared<spdlog::logger>("train", spdlog::sinks_init_list{console, file});
  logger->set_pattern("[%Y-%m-%d %H:%M:%S] %v");
  logger->flush_on(spdlog::level::info);
  return logger;
}

model::NetConfig net_config(const config::NetSection& n) {
  model::NetConfig c;
  c.blocks = n.blocks;
  c.filters = n.filters;
  c.policy_channels = n.policy_channels;
  c.value_channels = n.value_channels;
  c.value_hidden = n.value_hidden;
  c.global_pooling = n.global_pooling;
  return c;
}

model::BackendOptions backend_options(const config::InferenceSection& s) {
  model::BackendOptions b;
  b.kind = model::parse_backend_kind(s.backend);
  b.device = model::parse_device(s.device);
  b.threads = 1;
  return b;
}

selfplay::SelfPlaySettings selfplay_settings(const config::RunConfig& c, std::uint64_t session) {
  selfplay::SelfPlaySettings s;
  s.game = c.run.game;
  s.threads = c.selfplay.threads;
  s.concurrent_games = c.selfplay.concurrent_games;
  s.simulations = c.selfplay.simulations;
  s.fast_simulations = c.selfplay.fast_simulations;
  s.full_search_fraction = c.selfplay.full_search_fraction;
  s.search.cpuct = static_cast<float>(c.selfplay.cpuct);
  s.search.fpu_reduction = static_cast<float>(c.selfplay.fpu_reduction);
  s.search.dirichlet_alpha_scale = static_cast<float>(c.selfplay.dirichlet_alpha_scale);
  s.search.dirichlet_weight = static_cast<float>(c.selfplay.dirichlet_weight);
  s.search.temperature_plies = c.selfplay.temperature_plies;
  s.search.temperature = static_cast<float>(c.selfplay.temperature);
  s.search.final_temperature = static_cast<float>(c.selfplay.final_temperature);
  s.max_plies = c.selfplay.max_plies;
  s.games_per_chunk = c.selfplay.games_per_chunk;
  s.seed = c.run.seed;
  s.session = session;
  return s;
}

TrainerSettings trainer_settings(const config::RunConfig& c) {
  TrainerSettings t;
  t.optimizer = c.training.optimizer;
  t.learning_rate = c.training.learning_rate;
  t.warmup_steps = c.training.warmup_steps;
  t.lr_decay_steps = c.training.lr_decay_steps;
  t.momentum = c.training.momentum;
  t.weight_decay = c.training.weight_decay;
  t.value_loss_weight = c.training.value_loss_weight;
  t.device = c.inference.device;
  t.threads = c.training.threads;
  return t;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The training loop of one session: owns every moving part and the counters.
class Session {
 public:
  Session(const TrainOptions& options, const std::atomic<bool>& stop)
      : options_(options), stop_(stop), paths_{options.run_dir} {}

  void run() {
    fs::create_directories(paths_.dir / "checkpoints");
    config_ = resolve_config(options_, paths_);
    const bool new_run = !fs::exists(paths_.config());
    if (new_run) write_text_atomically(paths_.config(), config::to_yaml(config_));
    log_ = make_logger(paths_);
    game_ = &game_by_name(config_.run.game);
    state_ = load_state(paths_);
    ++state_.sessions;
    save_state(paths_, state_);
    log_->info("{} run {} (session {}): {} {}", new_run ? "starting" : "resuming",
               paths_.dir.string(), state_.sessions, game_->name(),
               net_config(config_.net).to_string());

    trainer_ = std::make_unique<Trainer>(*game_, net_config(config_.net), trainer_settings(config_),
                                         mcts::derive_seed(config_.run.seed, kInitStream, 0));
    if (!fs::exists(paths_.best())) {
      model::save_checkpoint(trainer_->checkpoint("initial network"), paths_.best().string());
      log_->info("wrote the initial network to {}", paths_.best().string());
    }
    if (trainer_->load_state(paths_.trainer_prefix()))
      log_->info("trainer resumes at step {} (generation {})", trainer_->steps(), generation());
    else
      trainer_->load_weights(model::load_checkpoint(paths_.best().string(), *game_));

    best_step_ = load_best().step;
    server_ = model::make_net_evaluator(*game_, paths_.best().string(),
                                        backend_options(config_.inference),
                                        {config_.inference.max_batch,
                                         std::chrono::microseconds(config_.inference.max_wait_us)});
    store_ = std::make_unique<selfplay::FolderReplayStore>(paths_.games().string());
    window_ = std::make_unique<ReplayWindow>(
        *game_, WindowSettings{config_.training.window_min, config_.training.window_max,
                               config_.training.window_growth});
    ingest();
    log_->info("replay: {} positions in {} chunks, window {}", window_->total_positions(),
               ingested_chunks_, window_->size());

    selfplay_ = std::make_unique<selfplay::SelfPlay>(
        *server_, *store_, selfplay_settings(config_, state_.sessions),
        [this] { return best_step_.load(); });
    selfplay_->start();
    start_ = Clock::now();
    loop();
    selfplay_->stop();
    ingest();
    if (status_shown_) std::fputc('\n', stderr);
    log_->info("stopped: {} positions, trainer step {}, generation {}; run the same command to "
               "continue", window_->total_positions(), trainer_->steps(), generation());
  }

 private:
  int generation() const {
    return static_cast<int>(trainer_->steps() / config_.training.steps_per_generation);
  }

  model::Checkpoint load_best() const {
    return model::load_checkpoint(paths_.best().string(), *game_);
  }

  bool should_stop() const {
    if (stop_.load()) return true;
    if (config_.run.max_generations > 0 && generation() >= config_.run.max_generations) return true;
    if (config_.run.stop_after_minutes > 0 &&
        std::chrono::duration<double>(Clock::now() - start_).count() >=
            config_.run.stop_after_minutes * 60.0)
      return true;
    const std::string error = selfplay_->error();
    if (!error.empty()) throw std::runtime_error("self-play failed: " + error);
    return false;
  }

  void ingest() {
    const auto chunks = store_->chunks();
    for (; ingested_chunks_ < chunks.size(); ++ingested_chunks_) {
      const selfplay::ReadResult read = store_->read_chunk(chunks[ingested_chunks_]);
      for (const std::string& p : read.problems) log_->warn("skipping damaged data: {}", p);
      for (const selfplay::GameRecord& r : read.records) {
        std::string why;
        if (!window_->add_game(r, &why))
          log_->warn("skipping a game of {}: {}", chunks[ingested_chunks_], why);
        else
          ++games_;
      }
    }
  }

  void loop() {
    mcts::Rng rng(mcts::derive_seed(config_.run.seed, kSampleStream, state_.sessions));
    TrainingBatch batch;
    auto last_ingest = Clock::now();
    while (!should_stop()) {
      if (Clock::now() - last_ingest > std::chrono::milliseconds(500)) {
        ingest();
        last_ingest = Clock::now();
      }
      show_status();
      const std::int64_t positions = window_->total_positions();
      const double allowed = config_.training.sample_reuse * static_cast<double>(positions);
      const double wanted = static_cast<double>(trainer_->steps() + 1) * config_.training.batch_size;
      if (positions < config_.training.min_positions || wanted > allowed) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      window_->sample(config_.training.batch_size, rng, batch);
      last_step_ = trainer_->step(batch);
      append_line(paths_.metrics(), kMetricsHeader,
                  "train," + fixed(elapsed(), 1) + "," + std::to_string(trainer_->steps()) + "," +
                      std::to_string(generation()) + "," + std::to_string(positions) + "," +
                      std::to_string(games_) + "," + fixed(last_step_.policy_loss, 5) + "," +
                      fixed(last_step_.value_loss, 5) + "," + fixed(last_step_.learning_rate, 6) +
                      ",,,,");
      if (trainer_->steps() % config_.training.steps_per_generation == 0) end_generation();
    }
  }

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Saves the candidate, gates it against the best, promotes it, then saves the trainer. The
  // trainer's state is saved last: a kill before that resumes at the previous generation and
  // trains and gates a new candidate (arena.csv may then show the generation twice, each row for
  // a different candidate), so no candidate is ever left ungated.
  void end_generation() {
    const int gen = generation();
    const model::Checkpoint candidate =
        trainer_->checkpoint(paths_.dir.filename().string() + " generation " + std::to_string(gen));
    model::save_checkpoint(candidate, paths_.candidate(gen).string());
    log_->info("generation {}: candidate {} (step {}), gating against generation {}", gen,
               paths_.candidate(gen).filename().string(), candidate.step, best_generation());
    const int opponent = best_generation();
    const arena::MatchStatus gate = run_gate(gen);
    const bool promote = gate.verdict == arena::SprtVerdict::kAcceptH1 ||
                         (gate.verdict == arena::SprtVerdict::kContinue && gate.llr > 0);
    const std::string elo = arena::format_elo(gate.elo.elo) + " [" +
                            arena::format_elo(gate.elo.elo_low) + ", " +
                            arena::format_elo(gate.elo.elo_high) + "]";
    state_.last_gate = "gen " + std::to_string(gen) + " " + elo + " over " +
                       std::to_string(gate.games_counted) + " games: " +
                       (promote ? "promoted" : "rejected");
    if (promote) {
      model::save_checkpoint(candidate, paths_.best().string());
      server_->swap_weights(candidate);
      best_step_ = candidate.step;
      if (std::isfinite(gate.elo.elo)) state_.best_elo += gate.elo.elo;
    }
    append_line(paths_.arena(), kArenaHeader,
                std::to_string(gen) + "," + std::to_string(candidate.step) + "," +
                    std::to_string(opponent) + "," + std::to_string(gate.games_counted) + "," +
                    std::to_string(gate.wins) + "," + std::to_string(gate.draws) + "," +
                    std::to_string(gate.losses) + "," + fixed(gate.elo.elo, 1) + "," +
                    fixed(gate.elo.elo_low, 1) + "," + fixed(gate.elo.elo_high, 1) + "," +
                    fixed(gate.llr, 3) + ",\"" + arena::describe_verdict(gate) + "\"," +
                    (promote ? "1" : "0") + "," + fixed(elapsed(), 1));
    append_line(paths_.metrics(), kMetricsHeader,
                "gate," + fixed(elapsed(), 1) + "," + std::to_string(trainer_->steps()) + "," +
                    std::to_string(gen) + "," + std::to_string(window_->total_positions()) + "," +
                    std::to_string(games_) + ",,,," + fixed(gate.elo.elo, 1) + "," +
                    (promote ? "1" : "0") + "," + fixed(state_.best_elo, 1) + "," +
                    std::to_string(gate.games_counted));
    save_state(paths_, state_);
    trainer_->save_state(paths_.trainer_prefix());
    if (status_shown_) std::fputc('\n', stderr);
    log_->info("generation {}: {}; best is generation {} (rating {:+.0f})", gen, state_.last_gate,
               best_generation(), state_.best_elo);
  }

  // The generation of the best network, from its training step.
  int best_generation() const {
    return static_cast<int>(best_step_.load() / config_.training.steps_per_generation);
  }

  arena::MatchStatus run_gate(int gen) {
    const model::BackendOptions backend = backend_options(config_.inference);
    const model::InferenceServerOptions server{config_.inference.max_batch,
                                               std::chrono::microseconds(config_.inference.max_wait_us)};
    std::shared_ptr<mcts::Evaluator> cand = model::make_net_evaluator(
        *game_, paths_.candidate(gen).string(), backend, server);
    std::shared_ptr<mcts::Evaluator> best =
        model::make_net_evaluator(*game_, paths_.best().string(), backend, server);
    const mcts::SearchConfig search = arena::arena_search_config(
        config_.arena.simulations, static_cast<float>(config_.selfplay.cpuct));
    arena::SearchPlayer a("gen-" + std::to_string(gen), search, [cand](std::uint64_t) { return cand; },
                          true);
    arena::SearchPlayer b("gen-" + std::to_string(best_generation()), search,
                          [best](std::uint64_t) { return best; }, true);
    arena::MatchConfig mc;
    mc.games = config_.arena.max_games;
    mc.threads = 1;
    mc.opening_plies = config_.arena.opening_plies;
    mc.seed = mcts::derive_seed(config_.run.seed, kGateStream, static_cast<std::uint64_t>(gen));
    mc.sprt = arena::SprtConfig{config_.arena.elo0, config_.arena.elo1, config_.arena.alpha,
                                config_.arena.beta};
    mc.pairs_per_runner = 32;
    mc.max_plies = config_.selfplay.max_plies;
    arena::MatchHooks hooks;
    hooks.on_progress = [this](const arena::MatchStatus& s) {
      gate_progress_ = arena::format_progress(s);
      show_status();
    };
    const arena::MatchStatus result = arena::run_match(*game_, a, b, mc, hooks);
    gate_progress_.clear();
    return result;
  }

  void show_status() {
    const auto now = Clock::now();
    if (now - last_status_ < std::chrono::seconds(1)) return;
    last_status_ = now;
    const selfplay::SelfPlayStats sp = selfplay_->stats();
    const model::InferenceStats inf = server_->stats();
    const double secs = std::max(1e-9, elapsed());
    std::string line = "gen " + std::to_string(generation()) + " | games " +
                       std::to_string(games_) + " pos " + std::to_string(window_->total_positions()) +
                       " (" + fixed(static_cast<double>(sp.positions) / secs, 0) + "/s) | eval " +
                       fixed(inf.evals_per_second, 0) + "/s fill " + fixed(inf.mean_fill, 2) +
                       " | step " + std::to_string(trainer_->steps()) + " loss " +
                       fixed(last_step_.loss, 3) + " (p " + fixed(last_step_.policy_loss, 3) +
                       " v " + fixed(last_step_.value_loss, 3) + ") | best gen " +
                       std::to_string(best_generation()) + " " + arena::format_elo(state_.best_elo) +
                       " Elo";
    if (!gate_progress_.empty()) line += " | gate " + gate_progress_;
    else if (!state_.last_gate.empty()) line += " | last gate " + state_.last_gate;
    if (options_.status_line && isatty(2)) {
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
      status_shown_ = true;
    } else if (now - last_status_log_ > std::chrono::seconds(30)) {
      last_status_log_ = now;
      log_->info("{}", line);
    }
  }

  static constexpr const char* kMetricsHeader =
      "kind,seconds,step,generation,positions,games,policy_loss,value_loss,learning_rate,"
      "gate_elo,promoted,best_elo,gate_games";
  static constexpr const char* kArenaHeader =
      "generation,step,opponent_generation,games,wins,draws,losses,elo,elo_low,elo_high,llr,"
      "verdict,promoted,seconds";

  const TrainOptions& options_;
  const std::atomic<bool>& stop_;
  RunPaths paths_;
  config::RunConfig config_;
  std::shared_ptr<spdlog::logger> log_;
  const Game* game_ = nullptr;
  RunState state_;
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<model::InferenceServer> server_;
  std::atomic<std::int64_t> best_step_{0};
  std::unique_ptr<selfplay::FolderReplayStore> store_;
  std::unique_ptr<ReplayWindow> window_;
  std::unique_ptr<selfplay::SelfPlay> selfplay_;
  std::size_t ingested_chunks_ = 0;
  std::int64_t games_ = 0;
  StepStats last_step_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_status_{}, last_status_log_{};
  std::string gate_progress_;
  bool status_shown_ = false;
};

}  // namespace

void train(const TrainOptions& options, const std::atomic<bool>& stop) {
  Session session(options, stop);
  session.run();
}

}  // namespace oppidum::trainer
