#include "trainer/run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "arena/players.h"
#include "mcts/seed.h"
#include "model/checkpoint.h"
#include "model/inference_server.h"
#include "selfplay/replay_store.h"
#include "selfplay/selfplay.h"
#include "store/redis_game_sink.h"
#include "store/run_channel.h"
#include "trainer/gate.h"
#include "trainer/intake.h"
#include "trainer/replay_window.h"
#include "trainer/resume.h"
#include "trainer/run_folder.h"
#include "trainer/settings.h"
#include "trainer/trainer.h"
#include "util/file_io.h"

namespace oppidum::trainer {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kInitStream = 0x494E495400000000ULL;    // initial network weights
constexpr std::uint64_t kSampleStream = 0x53414D504C450000ULL;  // batch sampling, by session

// The keys (section.key: value) where two configs differ, those that may change on resume left
// out (config::may_change_on_resume).
std::string differing_keys(const config::RunConfig& a, const config::RunConfig& b) {
  std::istringstream ia(config::to_yaml(a)), ib(config::to_yaml(b));
  std::string la, lb, section, differences;
  while (std::getline(ia, la) && std::getline(ib, lb)) {
    if (!la.empty() && la[0] != ' ') section = la.substr(0, la.size() - 1);
    const std::string key = la.substr(2, la.find(':') - 2);
    if (la != lb && !config::may_change_on_resume(section, key))
      differences += "\n  " + section + "." + la.substr(2) + " (the run has" +
                     lb.substr(lb.find(':') + 1) + ")";
  }
  return differences;
}

// A new run takes --config and --set. A resumed run keeps the identity of the config it was
// started with: --set and a --config given again may change only the keys of
// config::resumable_keys (stop conditions, devices, threads), which then hold for this session.
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
  if (!differences.empty()) {
    std::string keys;
    for (const std::string& k : config::resumable_keys()) keys += (keys.empty() ? "" : ", ") + k;
    throw config::ConfigError(
        (o.config_path.empty() ? std::string("--set") : o.config_path) + " differs from the config " +
        paths.dir.string() + " was started with:" + differences +
        "\nonly these keys may change when a run continues: " + keys);
  }
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

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The training loop of one session of a run (the trainer node): owns every moving part.
class Session {
 public:
  Session(const TrainOptions& options, const std::atomic<bool>& stop)
      : options_(options), stop_(stop), paths_{options.run_dir} {}

  void run() {
    open_folder();
    try {
      if (new_run_) create_run();
      restore();
      start_services();
      loop();
      if (pipeline_marked_) report_pipeline(session_mark_, "session", false);
      closing_ = true;  // a push waiting for Redis gives up: those games were in flight
      if (selfplay_) selfplay_->stop();
      intake_->drain(30.0);
      if (channel_) {
        log_->info("{}", intake_->summary());
        try {
          channel_->release(lease_);
        } catch (const store::RedisError&) {  // it expires by itself
        }
      }
      if (selfplay_) {
        const selfplay::SelfPlayStats sp = selfplay_->stats();
        if (sp.target_visits > 0)
          log_->info("self-play this session: {} positions, {} with full searches; {:.1f}% of the "
                     "root visits of full PUCT searches were kept from earlier searches by tree "
                     "reuse{}", sp.positions, sp.policy_targets,
                     100.0 * static_cast<double>(sp.reused_target_visits) /
                         static_cast<double>(sp.target_visits),
                     config_.selfplay.target_visits == "search" ? " (not in the targets)" : "");
      }
      trainer_->save_state(paths_.trainer_prefix());  // a clean stop keeps every step
      if (status_shown_) std::fputc('\n', stderr);
      log_->info("stopped: {} positions, trainer step {}, generation {}; run the same command to "
                 "continue", window_->total_positions(), trainer_->steps(), generation());
    } catch (const std::exception& e) {
      if (status_shown_) std::fputc('\n', stderr);
      log_->sinks().front()->set_level(spdlog::level::off);  // the console gets it from main
      log_->error("stopped by an error: {}", e.what());
      log_->flush();
      throw;
    }
  }

 private:
  // Resolves the config and checks what a new run needs before anything is created, so a refused
  // run leaves no trace; then takes the folder's lock and looks again (another process may have
  // created the run meanwhile).
  void open_folder() {
    check_not_orphaned();
    resolve();
    const bool had_config = fs::exists(paths_.config());
    if (!had_config) check_new_run();
    folder_ = std::make_unique<RunFolder>(paths_.dir);
    if (folder_->exists() != had_config) {
      check_not_orphaned();
      resolve();
      if (!folder_->exists()) check_new_run();
    }
    new_run_ = !folder_->exists();
    if (!new_run_) {  // made by another process meanwhile: its own network, not ours
      initial_.reset();
      server_.reset();
    }
    log_ = make_logger(paths_);
  }

  // What a new run needs beyond its config and anchor (resolve), checked before its folder exists
  // (its config is frozen once it does): the initial network, the inference server on it, and the
  // Redis store (reachable, the credentials accepted, its keys free).
  void check_new_run() {
    initial_ = make_trainer()->checkpoint("initial network");
    server_ = std::make_unique<model::InferenceServer>(*game_, *initial_,
                                                       backend_options(config_.inference),
                                                       server_options(config_.inference));
    if (url_) {
      store::RunChannel channel(
          *url_, [](const std::string& line) { std::fprintf(stderr, "redis: %s\n", line.c_str()); },
          &stop_);
      channel.check_free();
    }
  }

  // The config, its store's URL (refused before any connection) and its anchor player.
  void resolve() {
    config_ = resolve_config(options_, paths_);
    game_ = &game_by_name(config_.run.game);
    check_store();
    check_anchor();
  }

  void check_anchor() const {
    if (config_.arena.anchor_games <= 0) return;
    arena::PlayerOptions options;
    options.net_factory = model::net_evaluator_factory(backend_options(config_.inference));
    try {
      arena::make_player(*game_, config_.arena.anchor, options);
    } catch (const std::exception& e) {
      throw config::ConfigError("arena.anchor: " + std::string(e.what()));
    }
  }

  // The run's Redis store, if it has one; refused before anything is created or connected.
  void check_store() {
    if (config_.run.store.empty()) return;
    const char* env = std::getenv("OPPIDUM_REDIS_PASSWORD");
    url_ = store::parse_redis_url(config_.run.store, options_.store_password.empty()
                                                         ? env
                                                         : options_.store_password.c_str());
    store::check_security(*url_, options_.insecure);
  }

  // Takes the run's Redis keys (store/run_channel.h): refused when they belong to another run or
  // another trainer holds them. Keys that were missing on a run that read from them before (the
  // server lost its data, the run moved to this key, or it last ran with a version before run
  // ids) are read from the start of their stream.
  void claim_store() {
    channel_ = std::make_unique<store::RunChannel>(
        *url_, [this](const std::string& line) { log_->warn("redis: {}", line); }, &stop_);
    lease_ = store::lease_value(state_.run_id);
    const store::Claim claim = channel_->claim(state_.run_id, lease_, 0);
    if (!claim.replaced.empty())
      log_->info("redis: took over the lease of this run's last trainer, whose process is gone "
                 "({})", claim.replaced);
    sessions_seen_ = claim.sessions;
    if (claim.claimed && (state_.stream_cursor != "0-0" || state_.stream_read != 0)) {
      log_->warn("redis: {} held no owner for this run, which read {} entries from it before (the "
                 "server lost its data, the run moved to this key, or it last ran with a version "
                 "before run ids): reading its stream from the start (games already kept are not "
                 "kept twice)", url_->to_string(), state_.stream_read);
      state_.stream_cursor = "0-0";
      state_.stream_read = 0;
    }
  }

  // Every few seconds: renews the lease (another trainer that took it stops this one with
  // StoreTakenError) and publishes again whatever a worker needs that the server lost.
  void renew_store() {
    const store::Claim claim = channel_->claim(state_.run_id, lease_, sessions_seen_);
    sessions_seen_ = std::max(sessions_seen_, claim.sessions);
    if (claim.claimed)
      intake_->restart_stream("the run's keys were gone from " + url_->to_string() +
                              " (the server lost its data?); the config and network are "
                              "published again");
    if (!claim.config_published) {
      channel_->publish_config(config::to_yaml(config_));
      log_->warn("redis: the run's config was missing; published it again");
    }
    if (claim.network_step != best_step_.load()) publish_best();
  }

  // A folder that holds training progress but no config.yaml lost its config: never start over.
  void check_not_orphaned() const {
    if (fs::exists(paths_.config())) return;
    const auto found = progress_files(paths_);
    if (found.empty()) return;
    std::string list;
    for (const auto& f : found) list += (list.empty() ? "" : ", ") + f;
    throw RunFolderError(paths_.config().string() + " is missing, but " + paths_.dir.string() +
                         " holds a run (" + list +
                         "); restore config.yaml (the run's effective config) to continue it, or "
                         "start the new run in another folder");
  }

  std::unique_ptr<Trainer> make_trainer() const {
    return std::make_unique<Trainer>(*game_, config_.net, trainer_settings(config_),
                                     mcts::derive_seed(config_.run.seed, kInitStream, 0));
  }

  // Writes the initial network (gen-0000 and best), the state (with a new run id) and, last,
  // config.yaml: a run interrupted before that is created again from scratch.
  void create_run() {
    model::save_checkpoint(*initial_, paths_.candidate(0).string());
    model::save_checkpoint(*initial_, paths_.best().string());
    RunState state;
    state.run_id = store::random_id();
    folder_->save_state(state);
    util::write_file_atomically(paths_.config().string(), config::to_yaml(config_));
    log_->info("created run {}: initial network in {}", paths_.dir.string(),
               paths_.candidate(0).string());
  }

  // Checks and repairs the folder (trainer/run_folder.h, trainer/resume.h) and its games' index,
  // loads the trainer and the best network (into the inference server), finds a gate left
  // unfinished, takes the Redis store, and only then counts the session: a refused resume counts
  // none.
  void restore() {
    state_ = folder_->load_state(options_.recover);
    for (const auto& line : folder_->open_tables(options_.recover, config_.arena.anchor))
      log_->warn("repaired {}", line);
    trainer_ = make_trainer();
    const ResumeLog log{[this](const std::string& line) { log_->info("{}", line); },
                        [this](const std::string& line) { log_->warn("{}", line); }};
    const Resumed resumed = resume_run(*folder_, *trainer_, *game_,
                                       config_.training.steps_per_generation, options_.recover, log);
    best_step_ = resumed.best_step;
    pending_gate_ = resumed.pending_gate;
    if (!server_)  // a new run's is already on its initial network, which best.ckpt holds
      server_ = model::make_net_evaluator(*game_, paths_.best().string(),
                                          backend_options(config_.inference),
                                          server_options(config_.inference));
    store_ = std::make_unique<selfplay::FolderReplayStore>(
        paths_.games().string(), selfplay::FolderReplayStore::Mode::kOwner);
    if (state_.run_id.empty()) state_.run_id = store::random_id();  // a run from before run ids
    if (url_) claim_store();
    ++state_.sessions;
    folder_->save_state(state_);
    log_->info("{} run {} (session {}): {} {}; run id {}", new_run_ ? "starting" : "resuming",
               paths_.dir.string(), state_.sessions, game_->name(),
               config_.net.to_string(), state_.run_id);
  }

  void start_services() {
    log_->info("inference: {}; training on {}{}", server_->describe(),
               config::training_device(config_),
               config_.training.precision == "bf16" ? " with bf16 autocast" : "");
    window_ = std::make_unique<ReplayWindow>(*game_, config_.training);
    intake_ = std::make_unique<Intake>(*folder_, state_, *window_, *store_, channel_.get(),
                                       [this](const std::string& line) { log_->warn("{}", line); });
    intake_->load_window(config_.training.window_max);
    log_->info("replay: {} positions in {} chunks, window {}", window_->total_positions(),
               intake_->chunks(), window_->size());
    selfplay::GameSink* sink = store_.get();
    std::uint64_t session = state_.sessions;
    if (channel_) {
      log_->info("store {}: publishing the config and generation {}; workers join with "
                 "`oppidum selfplay --store {}`", url_->to_string(), best_generation(),
                 url_->to_string());
      channel_->publish_config(config::to_yaml(config_));
      publish_best();
      session = channel_->new_session();
      sessions_seen_ = std::max(sessions_seen_, static_cast<std::int64_t>(session));
      sink_ = std::make_unique<store::RedisGameSink>(
          *url_, "trainer", state_.run_id, config_.run.stream_max_games,
          [this](const std::string& line) { log_->warn("redis (self-play): {}", line); }, &closing_);
      sink = sink_.get();
    }
    if (config_.selfplay.threads > 0) {
      selfplay::SelfPlaySettings settings = selfplay_settings(config_, session);
      if (channel_) settings.seed = store::node_seed(config_.run.seed, "trainer");
      selfplay_ = std::make_unique<selfplay::SelfPlay>(*server_, *sink, settings,
                                                       [this] { return best_step_.load(); });
      selfplay_->start();
    }
    start_ = Clock::now();
  }

  // Publishes best.ckpt to the store as the run's network (workers switch to it).
  void publish_best() {
    const std::string bytes =
        util::read_regular_file(paths_.best().string(), model::kMaxCheckpointBytes);
    const std::int64_t version = channel_->publish_network(
        bytes, best_step_.load(), best_generation(), game_->name(), game_->encoding_version());
    log_->info("published generation {} as network version {}", best_generation(), version);
  }

  int generation() const {
    return static_cast<int>(trainer_->steps() / config_.training.steps_per_generation);
  }

  bool should_stop() const {
    if (stop_.load()) return true;
    if (config_.run.max_generations > 0 && generation() >= config_.run.max_generations &&
        pending_gate_ == 0)
      return true;
    if (config_.run.stop_after_positions > 0 && pending_gate_ == 0 &&
        static_cast<std::uint64_t>(window_->total_positions()) >= config_.run.stop_after_positions)
      return true;
    if (config_.run.stop_after_minutes > 0 &&
        std::chrono::duration<double>(Clock::now() - start_).count() >=
            config_.run.stop_after_minutes * 60.0)
      return true;
    const std::string error = selfplay_ ? selfplay_->error() : "";
    if (!error.empty()) throw std::runtime_error("self-play failed: " + error);
    return false;
  }

  void loop() {
    mcts::Rng rng(mcts::derive_seed(config_.run.seed, kSampleStream, state_.sessions));
    TrainingBatch batch;
    auto last_ingest = Clock::now();
    while (!should_stop()) {
      if (pending_gate_ > 0) {
        gate(pending_gate_);
        continue;
      }
      if (Clock::now() - last_ingest > std::chrono::milliseconds(500)) {
        intake_->poll();
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
      folder_->append_train({elapsed(), trainer_->steps(), generation(), positions, intake_->games(),
                             last_step_.policy_loss, last_step_.value_loss,
                             last_step_.learning_rate});
      if (trainer_->steps() % config_.training.steps_per_generation == 0) end_generation();
    }
  }

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // What the self-play pipeline's counters were at a moment, to measure it over an interval.
  struct PipelineMark {
    Clock::time_point at = Clock::now();
    model::InferenceStats inference;
    std::int64_t selfplay_positions = 0;
  };

  PipelineMark pipeline_mark() const {
    PipelineMark m;
    m.inference = server_->stats();
    m.selfplay_positions = selfplay_ ? selfplay_->stats().positions : 0;
    return m;
  }

  // Self-play since `from` (positions of the games finished since) against its bound: the
  // forward pass's own rate at the batch sizes seen (positions per second of forward time, times
  // the workers) divided by the network evaluations per self-play position. One log line, and a
  // "selfplay" row of metrics.csv when `record`; nothing for an interval in which no game
  // finished or no batch ran.
  void report_pipeline(const PipelineMark& from, const std::string& what, bool record) {
    if (!selfplay_) return;
    const PipelineMark to = pipeline_mark();
    const double wall = std::chrono::duration<double>(to.at - from.at).count();
    const double positions =
        static_cast<double>(to.selfplay_positions - from.selfplay_positions);
    const double evals =
        static_cast<double>(to.inference.positions) - static_cast<double>(from.inference.positions);
    const double batches =
        static_cast<double>(to.inference.batches) - static_cast<double>(from.inference.batches);
    const double forward = to.inference.forward_seconds - from.inference.forward_seconds;
    if (wall <= 0 || positions <= 0 || forward <= 0 || batches <= 0) return;
    SelfplayRow row;
    row.seconds = elapsed();
    row.generation = generation();
    row.positions = window_->total_positions();
    row.games = intake_->games();
    row.positions_per_second = positions / wall;
    row.evals_per_position = evals / positions;
    row.forward_busy = std::min(1.0, forward / (wall * to.inference.workers));
    row.forward_rate = evals / forward;
    row.mean_batch = evals / batches;
    row.bound = to.inference.workers * row.forward_rate / row.evals_per_position;
    if (config_.selfplay.resign_below < 0) {
      const selfplay::ResignControl::Stats r = selfplay_->stats().resign;
      row.resigned = r.resigned;
      row.resign_checks = r.checks;
      row.resign_false_rate = r.recent_false_rate;
    }
    log_->info("{} self-play: {} positions/s, {} evaluations/position, forward busy {}% ({} "
               "worker{}, mean batch {}), forward alone {} positions/s, so the bound is {} "
               "positions/s: {}% of it",
               what, fixed(row.positions_per_second, 1), fixed(row.evals_per_position, 1),
               fixed(100.0 * row.forward_busy, 0), to.inference.workers,
               to.inference.workers == 1 ? "" : "s", fixed(row.mean_batch, 1),
               fixed(row.forward_rate, 0), fixed(row.bound, 1),
               fixed(100.0 * row.positions_per_second / row.bound, 0));
    if (record) folder_->append_selfplay(row);
  }

  // Steps 1 and 2 of trainer/run_folder.h; the gate follows in the loop.
  void end_generation() {
    const int gen = generation();
    trainer_->save_state(paths_.trainer_prefix());
    model::save_checkpoint(trainer_->checkpoint(candidate_metadata(paths_, gen)),
                           paths_.candidate(gen).string());
    pending_gate_ = gen;
    if (config_.net.score_head)  // metrics.csv has no score column: the log carries it
      log_->info("generation {}: step {} losses: policy {}, value {}, score margin {}", gen,
                 trainer_->steps(), fixed(last_step_.policy_loss, 4),
                 fixed(last_step_.value_loss, 4), fixed(last_step_.score_loss, 4));
    // After the save, so that a generation resumed from an earlier step has no row yet.
    if (pipeline_marked_) {
      report_pipeline(generation_mark_, "generation " + std::to_string(gen), true);
      generation_mark_ = pipeline_mark();
    }
    if (selfplay_ && config_.selfplay.resign_below < 0) {
      const selfplay::ResignControl::Stats r = selfplay_->stats().resign;
      log_->info("self-play resignations this session: {} games resigned; {} checked by playing "
                 "on, {} wrong ({:.1f}% of the last {}); resigning is {}",
                 r.resigned, r.checks, r.wrong, 100.0 * r.recent_false_rate,
                 std::min<std::int64_t>(r.checks, selfplay::ResignControl::kRecentChecks),
                 r.allowed ? "on" : "off");
    }
  }

  // Steps 3 to 6: the gate of generation `gen` against the best network, its commit, and the
  // promotion. A stopped gate leaves no trace and is played again when the run continues.
  void gate(int gen) {
    const int opponent = best_generation();
    log_->info("generation {}: gating {} against generation {}", gen,
               paths_.candidate(gen).filename().string(), opponent);
    GateInputs in;
    in.game = game_;
    in.config = &config_;
    in.generation = gen;
    in.candidate_path = paths_.candidate(gen).string();
    in.best_path = paths_.best().string();
    in.candidate_name = "gen-" + std::to_string(gen);
    in.best_name = "gen-" + std::to_string(opponent);
    in.stop = &stop_;
    in.on_progress = [this](const std::string& line) {
      gate_progress_ = line;
      show_status();
    };
    const GateMatches m = play_gate(in);
    gate_progress_.clear();
    if (m.stopped()) {
      if (status_shown_) std::fputc('\n', stderr);
      log_->info("generation {}: gate stopped; it is played again when the run continues", gen);
      return;
    }
    const model::Checkpoint candidate = model::load_checkpoint(in.candidate_path, *game_);
    GateRow row;
    row.generation = gen;
    row.step = candidate.step;
    row.opponent_generation = opponent;
    row.games = m.gate.games_counted;
    row.wins = m.gate.wins;
    row.draws = m.gate.draws;
    row.losses = m.gate.losses;
    row.elo = m.gate.elo.elo;
    row.elo_low = m.gate.elo.elo_low;
    row.elo_high = m.gate.elo.elo_high;
    row.llr = m.gate.llr;
    row.verdict = m.gate.games_cap == 0 ? "no gate (arena.max_games 0)"
                                        : arena::describe_verdict(m.gate);
    row.promoted = m.promoted;
    row.seconds = elapsed();
    row.rating = folder_->rating() + (m.promoted && std::isfinite(row.elo) ? row.elo : 0.0);
    if (m.anchor) {
      row.anchor = config_.arena.anchor;
      row.anchor_games = m.anchor->games_counted;
      row.anchor_score = m.anchor->elo.score;
      row.anchor_elo = m.anchor->elo.elo;
      row.anchor_elo_low = m.anchor->elo.elo_low;
      row.anchor_elo_high = m.anchor->elo.elo_high;
    }
    folder_->append_gate(row, window_->total_positions(), intake_->games());
    pending_gate_ = 0;
    if (m.promoted) {
      model::save_checkpoint(candidate, paths_.best().string());
      server_->swap_weights(candidate);
      best_step_ = candidate.step;
      if (channel_) publish_best();
    }
    last_gate_ = "gen " + std::to_string(gen) + " " + arena::format_elo(row.elo) + " [" +
                 arena::format_elo(row.elo_low) + ", " + arena::format_elo(row.elo_high) +
                 "] over " + std::to_string(row.games) + " games: " +
                 (m.promoted ? "promoted" : "rejected");
    if (m.anchor)
      last_gate_ += "; vs " + row.anchor + " " + fixed(100.0 * row.anchor_score, 1) + "% (" +
                    arena::format_elo(row.anchor_elo) + " Elo)";
    if (status_shown_) std::fputc('\n', stderr);
    log_->info("generation {}: {}; best is generation {} (chained rating {:+.0f})", gen, last_gate_,
               best_generation(), folder_->rating());
  }

  // The generation of the best network, from its training step.
  int best_generation() const {
    return static_cast<int>(best_step_.load() / config_.training.steps_per_generation);
  }

  void show_status() {
    // The pipeline is measured from the first finished game: positions count when their game
    // ends, so from then on about as many moves are in flight at the start as at the end.
    if (selfplay_ && !pipeline_marked_ && selfplay_->stats().positions > 0) {
      session_mark_ = generation_mark_ = pipeline_mark();
      pipeline_marked_ = true;
    }
    const auto now = Clock::now();
    if (now - last_status_ < std::chrono::seconds(1)) return;
    last_status_ = now;
    const selfplay::SelfPlayStats sp = selfplay_ ? selfplay_->stats() : selfplay::SelfPlayStats{};
    const model::InferenceStats inf = server_->stats();
    const double secs = std::max(1e-9, elapsed());
    std::string line = "gen " + std::to_string(generation()) + " | games " +
                       std::to_string(intake_->games()) + " pos " + std::to_string(window_->total_positions()) +
                       " (" + fixed(static_cast<double>(sp.positions) / secs, 0) + "/s) | eval " +
                       fixed(inf.evals_per_second, 0) + "/s fill " + fixed(inf.mean_fill, 2) +
                       " fwd " + fixed(100.0 * inf.forward_share, 0) + "%" +
                       " | step " + std::to_string(trainer_->steps()) + " loss " +
                       fixed(last_step_.loss, 3) + " (p " + fixed(last_step_.policy_loss, 3) +
                       " v " + fixed(last_step_.value_loss, 3) +
                       (config_.net.score_head ? " s " + fixed(last_step_.score_loss, 3) : "") +
                       ") | best gen " +
                       std::to_string(best_generation()) + " " +
                       arena::format_elo(folder_->rating()) + " Elo";
    if (channel_) line += " | " + cluster_status(now);
    if (!gate_progress_.empty()) line += " | gate " + gate_progress_;
    else if (!last_gate_.empty()) line += " | last gate " + last_gate_;
    if (options_.status_line && isatty(2)) {
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
      status_shown_ = true;
    } else if (now - last_status_log_ > std::chrono::seconds(30)) {
      last_status_log_ = now;
      log_->info("{}", line);
    }
  }

  // What a node's heartbeats showed the trainer (by the trainer's clock: no clock skew).
  struct NodeSeen {
    std::int64_t beats = -1, games = 0;
    Clock::time_point changed, sampled;
    double games_per_second = 0;
  };

  // The nodes' rates, the nodes seen in the last minute and the stream's lag, for the status line;
  // every 30 s also as metrics rows. Polls the store at most every 5 s.
  std::string cluster_status(Clock::time_point now) {
    if (now - last_cluster_poll_ >= std::chrono::seconds(5)) {
      last_cluster_poll_ = now;
      renew_store();
      if (selfplay_) {  // the trainer's own self-play threads are a node like any other
        const selfplay::SelfPlayStats s = selfplay_->stats();
        channel_->heartbeat("trainer", ++own_beats_, s.games, s.positions);
      }
      for (const auto& [node, beat] : channel_->nodes()) {
        NodeSeen& seen = nodes_seen_[node];
        if (beat.beats == seen.beats) continue;
        // Games arrive a chunk at a time: the rate is taken over 20 s or more.
        const double dt = std::chrono::duration<double>(now - seen.sampled).count();
        if (seen.beats < 0 || dt >= 20) {
          if (seen.beats >= 0) seen.games_per_second = static_cast<double>(beat.games - seen.games) / dt;
          seen.games = beat.games;
          seen.sampled = now;
        }
        seen.beats = beat.beats;
        seen.changed = now;
      }
      const bool record = now - last_cluster_row_ >= std::chrono::seconds(30);
      if (record) last_cluster_row_ = now;
      cluster_line_.clear();
      int active = 0;
      for (const auto& [node, seen] : nodes_seen_) {
        if (now - seen.changed > std::chrono::minutes(1)) continue;
        ++active;
        cluster_line_ += (cluster_line_.empty() ? "" : ", ") + node + " " +
                         fixed(seen.games_per_second, 1) + "/s";
        if (record) folder_->append_node({elapsed(), node, seen.games, seen.games_per_second});
      }
      if (record)
        folder_->append_stream({elapsed(), window_->total_positions(), intake_->games(), active,
                                intake_->stream_lag(), intake_->stream_evicted()});
      cluster_line_ = "nodes " + std::to_string(active) +
                      (cluster_line_.empty() ? "" : " (" + cluster_line_ + ")") + " lag " +
                      std::to_string(intake_->stream_lag()) + " evicted " +
                      std::to_string(intake_->stream_evicted());
    }
    return cluster_line_;
  }

  const TrainOptions& options_;
  const std::atomic<bool>& stop_;
  RunPaths paths_;
  config::RunConfig config_;
  std::unique_ptr<RunFolder> folder_;
  bool new_run_ = false;
  std::optional<model::Checkpoint> initial_;  // a new run's initial network, made before its folder
  std::shared_ptr<spdlog::logger> log_;
  const Game* game_ = nullptr;
  RunState state_;
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<model::InferenceServer> server_;
  std::atomic<std::int64_t> best_step_{0};
  std::unique_ptr<selfplay::FolderReplayStore> store_;
  std::unique_ptr<ReplayWindow> window_;
  std::optional<store::RedisUrl> url_;             // a run with a Redis store
  std::unique_ptr<store::RunChannel> channel_;     // the trainer's own connection (main thread)
  std::string lease_;                              // this session's lease on the store
  std::int64_t sessions_seen_ = 0;                 // the highest sessions counter seen
  std::unique_ptr<store::RedisGameSink> sink_;     // local self-play's pushes (writer thread)
  std::atomic<bool> closing_{false};
  std::map<std::string, NodeSeen> nodes_seen_;
  std::int64_t own_beats_ = 0;
  Clock::time_point last_cluster_poll_{}, last_cluster_row_ = Clock::now();
  std::string cluster_line_;
  std::unique_ptr<Intake> intake_;
  // Last: its threads use the server, the sink and closing_, so it stops before they go.
  std::unique_ptr<selfplay::SelfPlay> selfplay_;  // none with selfplay.threads 0
  int pending_gate_ = 0;  // a generation saved but not gated yet
  StepStats last_step_;
  Clock::time_point start_ = Clock::now();
  PipelineMark session_mark_, generation_mark_;  // set at the first finished game
  bool pipeline_marked_ = false;
  Clock::time_point last_status_{}, last_status_log_{};
  std::string gate_progress_, last_gate_;
  bool status_shown_ = false;
};

}  // namespace

void train(const TrainOptions& options, const std::atomic<bool>& stop) {
  Session session(options, stop);
  session.run();
}

}  // namespace oppidum::trainer
