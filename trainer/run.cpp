#include "trainer/run.h"

#include <unistd.h>

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
#include "trainer/replay_window.h"
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

// Keys whose value may change between invocations of one run: stop conditions, not identity.
bool is_session_key(const std::string& line) {
  for (const char* key : {"stop_after_minutes:", "max_generations:", "store:", "stream_max_games:"})
    if (line.find(key) != std::string::npos) return true;
  return false;
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
        "\nonly run.stop_after_minutes, run.max_generations, run.store and run.stream_max_games may "
        "change when a run continues");
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

bool intact(const std::string& path, const Game& game) {
  try {
    model::load_checkpoint(path, game);
    return true;
  } catch (const model::CheckpointError&) {
    return false;
  }
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
      closing_ = true;  // a push waiting for Redis gives up: those games were in flight
      if (selfplay_) selfplay_->stop();
      ingest();
      if (channel_) drain_stream();
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
  // Resolves the config before anything is created, so a refused config leaves no trace; then
  // takes the folder's lock and looks again (another process may have created the run meanwhile).
  void open_folder() {
    check_not_orphaned();
    config_ = resolve_config(options_, paths_);
    check_store();
    const bool had_config = fs::exists(paths_.config());
    folder_ = std::make_unique<RunFolder>(paths_.dir);
    if (folder_->exists() != had_config) {
      check_not_orphaned();
      config_ = resolve_config(options_, paths_);
    }
    new_run_ = !folder_->exists();
    game_ = &game_by_name(config_.run.game);
    log_ = make_logger(paths_);
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
    return std::make_unique<Trainer>(*game_, net_config(config_.net), trainer_settings(config_),
                                     mcts::derive_seed(config_.run.seed, kInitStream, 0));
  }

  // Writes the initial network (gen-0000 and best), the state and, last, config.yaml: a run
  // interrupted before that is created again from scratch.
  void create_run() {
    const model::Checkpoint initial = make_trainer()->checkpoint("initial network");
    model::save_checkpoint(initial, paths_.candidate(0).string());
    model::save_checkpoint(initial, paths_.best().string());
    folder_->save_state(RunState{});
    util::write_file_atomically(paths_.config().string(), config::to_yaml(config_));
    log_->info("created run {}: initial network in {}", paths_.dir.string(),
               paths_.candidate(0).string());
  }

  std::string recover_hint(const std::string& what) const {
    return what + "; restore it, or run the same command with --recover to rebuild the run from "
                  "its newest intact checkpoints (docs/FORMATS.md, \"Run folder\")";
  }

  // Checks and repairs the folder (trainer/run_folder.h), loads the trainer and the best network,
  // and finds a gate left unfinished.
  void restore() {
    state_ = folder_->load_state(options_.recover);
    for (const auto& line : folder_->open_tables()) log_->warn("repaired {}", line);
    load_trainer();
    for (const auto& line : folder_->drop_rows_after(trainer_->steps(),
                                                     config_.training.steps_per_generation))
      log_->warn("repaired {}", line);
    load_best();
    const int trained = generation();
    const int gated = folder_->gates().empty() ? 0 : folder_->gates().back().generation;
    if (trainer_->steps() % config_.training.steps_per_generation == 0 && trained > gated) {
      if (!intact(paths_.candidate(trained).string(), *game_)) {
        model::save_checkpoint(trainer_->checkpoint(candidate_metadata(trained)),
                               paths_.candidate(trained).string());
        log_->info("rewrote {} from the trainer's state", paths_.candidate(trained).string());
      }
      pending_gate_ = trained;
      log_->info("generation {} was not gated yet: its gate comes first", trained);
    }
    if (config_.arena.anchor_games > 0) {
      arena::PlayerOptions options;
      options.net_factory = model::net_evaluator_factory(backend_options(config_.inference));
      try {
        arena::make_player(*game_, config_.arena.anchor, options);
      } catch (const std::exception& e) {
        throw config::ConfigError("arena.anchor: " + std::string(e.what()));
      }
    }
    ++state_.sessions;  // only now: a refused resume changes nothing
    folder_->save_state(state_);
    log_->info("{} run {} (session {}): {} {}", new_run_ ? "starting" : "resuming",
               paths_.dir.string(), state_.sessions, game_->name(),
               net_config(config_.net).to_string());
  }

  void load_trainer() {
    trainer_ = make_trainer();
    Trainer::LoadResult loaded;
    try {
      loaded = trainer_->load_state(paths_.trainer_prefix());
    } catch (const model::CheckpointError& e) {
      if (!options_.recover) throw RunFolderError(recover_hint(e.what()));
      recover_trainer(e.what());
      return;
    }
    if (!loaded.warning.empty()) log_->warn("trainer: {}", loaded.warning);
    if (loaded.found) {
      if (trainer_->steps() > 0)
        log_->info("trainer resumes at step {} (generation {})", trainer_->steps(), generation());
      return;
    }
    // No trainer state: right for a run that never finished its first generation.
    if (fs::exists(paths_.candidate(1)) || !folder_->gates().empty()) {
      const std::string what = paths_.trainer_weights().string() +
                               " is missing, but the run has trained generations";
      if (!options_.recover) throw RunFolderError(recover_hint(what));
      recover_trainer(what);
      return;
    }
    const std::string initial =
        fs::exists(paths_.candidate(0)) ? paths_.candidate(0).string() : paths_.best().string();
    trainer_->load_weights(model::load_checkpoint(initial, *game_));
  }

  // --recover: the trainer from the newest intact gen-*.ckpt, with fresh optimiser state.
  void recover_trainer(const std::string& why) {
    for (int gen = newest_candidate(); gen >= 0; --gen) {
      const std::string path = paths_.candidate(gen).string();
      if (!intact(path, *game_)) continue;
      const model::Checkpoint c = model::load_checkpoint(path, *game_);
      trainer_->load_weights(c);
      trainer_->set_steps(c.step);
      trainer_->save_state(paths_.trainer_prefix());
      log_->warn("recovered: {}; the trainer restarts from {} (step {}) with fresh optimiser state",
                 why, path, c.step);
      return;
    }
    throw RunFolderError(why + ", and no intact checkpoints/gen-*.ckpt is left to recover from");
  }

  int newest_candidate() const {
    int newest = -1;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(paths_.checkpoints(), ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() == 13 && name.rfind("gen-", 0) == 0 && name.compare(8, 5, ".ckpt") == 0 &&
          name.substr(4, 4).find_first_not_of("0123456789") == std::string::npos)
        newest = std::max(newest, std::stoi(name.substr(4, 4)));
    }
    return newest;
  }

  // best.ckpt must be the last promoted generation (gen-0000 when none was): a kill between a
  // gate's commit and the copy is rolled forward; a missing or damaged one is an error, or with
  // --recover copied again.
  void load_best() {
    const auto promoted = folder_->last_promoted();
    const int best_gen = promoted ? promoted->generation : 0;
    const std::int64_t best_step = promoted ? promoted->step : 0;
    const std::string source = paths_.candidate(best_gen).string();
    std::string problem;
    try {
      const model::Checkpoint best =
          model::load_checkpoint(paths_.best().string(), *game_, nullptr);
      if (best.step == best_step) {
        best_step_ = best_step;
        return;
      }
      problem = "it holds step " + std::to_string(best.step) + ", not generation " +
                std::to_string(best_gen) + " (step " + std::to_string(best_step) +
                "), the last promoted in arena.csv";
    } catch (const model::CheckpointError& e) {
      if (!options_.recover && fs::exists(paths_.best()))
        throw RunFolderError(recover_hint(e.what()));
      if (!options_.recover)
        throw RunFolderError(recover_hint(paths_.best().string() + " is missing"));
      problem = e.what();
    }
    if (!fs::exists(source) && best_gen == 0 && !promoted) {
      // A run from before gen-0000 existed, whose best is still its initial network: keep it.
      best_step_ = 0;
      return;
    }
    const model::Checkpoint copy = model::load_checkpoint(source, *game_);
    model::save_checkpoint(copy, paths_.best().string());
    best_step_ = copy.step;
    log_->warn("{}: {}; copied {} to it", paths_.best().string(), problem, source);
  }

  void start_services() {
    server_ = model::make_net_evaluator(*game_, paths_.best().string(),
                                        backend_options(config_.inference),
                                        server_options(config_.inference));
    store_ = std::make_unique<selfplay::FolderReplayStore>(
        paths_.games().string(), selfplay::FolderReplayStore::Mode::kOwner);
    window_ = std::make_unique<ReplayWindow>(
        *game_, WindowSettings{config_.training.window_min, config_.training.window_max,
                               config_.training.window_growth});
    ingest_folder();
    log_->info("replay: {} positions in {} chunks, window {}", window_->total_positions(),
               ingested_chunks_, window_->size());
    selfplay::GameSink* sink = store_.get();
    std::uint64_t session = state_.sessions;
    if (url_) {
      channel_ = std::make_unique<store::RunChannel>(
          *url_, [this](const std::string& line) { log_->warn("redis: {}", line); }, &stop_);
      log_->info("store {}: publishing the config and generation {}; workers join with "
                 "`oppidum selfplay --store {}`", url_->to_string(), best_generation(),
                 url_->to_string());
      channel_->publish_config(config::to_yaml(config_));
      publish_best();
      session = channel_->new_session();
      sink_ = std::make_unique<store::RedisGameSink>(
          *url_, "trainer", config_.run.stream_max_games,
          [this](const std::string& line) { log_->warn("redis (self-play): {}", line); }, &closing_);
      sink = sink_.get();
    }
    if (config_.selfplay.threads > 0) {
      selfplay_ = std::make_unique<selfplay::SelfPlay>(*server_, *sink,
                                                       selfplay_settings(config_, session),
                                                       [this] { return best_step_.load(); });
      selfplay_->start();
    }
    start_ = Clock::now();
  }

  // Publishes best.ckpt to the store as the run's network (workers switch to it).
  void publish_best() {
    const std::string bytes = util::read_regular_file(paths_.best().string());
    const std::int64_t version = channel_->publish_network(
        bytes, best_step_.load(), best_generation(), game_->name(), game_->encoding_version());
    log_->info("published generation {} as network version {}", best_generation(), version);
  }

  int generation() const {
    return static_cast<int>(trainer_->steps() / config_.training.steps_per_generation);
  }

  std::string candidate_metadata(int gen) const {
    return paths_.dir.filename().string() + " generation " + std::to_string(gen);
  }

  bool should_stop() const {
    if (stop_.load()) return true;
    if (config_.run.max_generations > 0 && generation() >= config_.run.max_generations &&
        pending_gate_ == 0)
      return true;
    if (config_.run.stop_after_minutes > 0 &&
        std::chrono::duration<double>(Clock::now() - start_).count() >=
            config_.run.stop_after_minutes * 60.0)
      return true;
    const std::string error = selfplay_ ? selfplay_->error() : "";
    if (!error.empty()) throw std::runtime_error("self-play failed: " + error);
    return false;
  }

  // New games into the window: from the run's chunks, and with a Redis store from its stream.
  void ingest() {
    if (channel_) ingest_stream();
    else ingest_folder();
  }

  // Keeps the window's count of a dropped game, and logs why.
  void drop_game(const std::string& where, const std::string& why) {
    ++rejected_games_;
    log_->warn("dropped game {} ({} dropped so far): {}", where, rejected_games_, why);
  }

  // Reads the chunks written since the last call into the window. Every record is replayed and
  // checked (selfplay::replay); one that does not hold up is dropped, counted and logged.
  void ingest_folder() {
    const auto chunks = store_->chunks();
    for (const std::string& p : store_->problems())
      if (logged_problems_.insert(p).second) log_->warn("games: {}", p);
    for (; ingested_chunks_ < chunks.size(); ++ingested_chunks_) {
      const std::string& chunk = chunks[ingested_chunks_];
      const selfplay::ReadResult read = store_->read_chunk(chunk);
      for (const std::string& p : read.problems) log_->warn("skipping damaged data: {}", p);
      for (std::size_t i = 0; i < read.records.size(); ++i) {
        const selfplay::GameRecord& r = read.records[i];
        std::string why;
        if (window_->add_game(r, &why)) {
          ++games_;
          if (!r.origin.empty() && store::compare_stream_ids(r.origin, stored_until_) > 0)
            stored_until_ = r.origin;
        } else {
          drop_game(std::to_string(i) + " of " + chunk, why);
        }
      }
    }
  }

  // Reads the stream entries after the cursor: the good games go into the window and, as one
  // chunk, into the run folder; then the cursor moves past them (state.yaml). After a kill between
  // the two writes, entries already in a chunk (up to stored_until_) are read again but not kept
  // twice. When caught up, the stream's entries-added tells how many were evicted unread.
  void ingest_stream() {
    for (int round = 0; round < 8; ++round) {
      const auto entries = channel_->read_games(state_.stream_cursor, 512);
      if (entries.empty()) break;
      std::vector<selfplay::GameRecord> kept;
      for (const store::StreamEntry& e : entries) {
        ++state_.stream_read;
        if (!e.problem.empty()) {
          drop_game("entry " + e.id + " from " + e.node, e.problem);
          continue;
        }
        if (store::compare_stream_ids(e.id, stored_until_) <= 0) continue;  // already in a chunk
        std::string why;
        if (!window_->add_game(e.record, &why)) {
          drop_game("entry " + e.id + " from " + e.node, why);
          continue;
        }
        ++games_;
        ++games_from_stream_;
        kept.push_back(e.record);
      }
      if (!kept.empty()) {
        store_->append(kept);
        ++ingested_chunks_;
        stored_until_ = kept.back().origin;
      }
      state_.stream_cursor = entries.back().id;
      folder_->save_state(state_);
      if (entries.size() < 512) break;
    }
    // Caught up, every entry ever added was either read or evicted unread.
    const store::StreamInfo info = channel_->stream_info();
    if (info.entries_added == 0 || info.last_id == state_.stream_cursor) {
      stream_evicted_ = info.entries_added - state_.stream_read;
      stream_lag_ = 0;
    } else {
      stream_lag_ = std::max<std::int64_t>(
          1, info.entries_added - state_.stream_read - stream_evicted_);
    }
  }

  // At a clean stop: reads what the stream holds (for up to 30 s, or until Ctrl-C) so that the
  // cursor is current, and reports the stream's accounting.
  void drain_stream() {
    const auto until = Clock::now() + std::chrono::seconds(30);
    try {
      while (stream_lag_ != 0 && Clock::now() < until) ingest_stream();
    } catch (const store::RedisStopped&) {
    }
    log_->info("stream: {} entries read, {} games kept, {} dropped, {} evicted before they were "
               "read{}", state_.stream_read, games_from_stream_, rejected_games_, stream_evicted_,
               stream_lag_ == 0 ? "" : " (not caught up)");
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
      folder_->append_train({elapsed(), trainer_->steps(), generation(), positions, games_,
                             last_step_.policy_loss, last_step_.value_loss,
                             last_step_.learning_rate});
      if (trainer_->steps() % config_.training.steps_per_generation == 0) end_generation();
    }
  }

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Steps 1 and 2 of trainer/run_folder.h; the gate follows in the loop.
  void end_generation() {
    const int gen = generation();
    trainer_->save_state(paths_.trainer_prefix());
    model::save_checkpoint(trainer_->checkpoint(candidate_metadata(gen)),
                           paths_.candidate(gen).string());
    pending_gate_ = gen;
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
    folder_->append_gate(row, window_->total_positions(), games_);
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
    const auto now = Clock::now();
    if (now - last_status_ < std::chrono::seconds(1)) return;
    last_status_ = now;
    const selfplay::SelfPlayStats sp = selfplay_ ? selfplay_->stats() : selfplay::SelfPlayStats{};
    const model::InferenceStats inf = server_->stats();
    const double secs = std::max(1e-9, elapsed());
    std::string line = "gen " + std::to_string(generation()) + " | games " +
                       std::to_string(games_) + " pos " + std::to_string(window_->total_positions()) +
                       " (" + fixed(static_cast<double>(sp.positions) / secs, 0) + "/s) | eval " +
                       fixed(inf.evals_per_second, 0) + "/s fill " + fixed(inf.mean_fill, 2) +
                       " | step " + std::to_string(trainer_->steps()) + " loss " +
                       fixed(last_step_.loss, 3) + " (p " + fixed(last_step_.policy_loss, 3) +
                       " v " + fixed(last_step_.value_loss, 3) + ") | best gen " +
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
      for (const auto& [node, beat] : channel_->nodes()) {
        NodeSeen& seen = nodes_seen_[node];
        if (seen.beats >= 0 && beat.beats != seen.beats) {
          const double dt = std::chrono::duration<double>(now - seen.sampled).count();
          if (dt > 0) seen.games_per_second = static_cast<double>(beat.games - seen.games) / dt;
          seen.changed = now;
        }
        if (seen.beats != beat.beats) {
          seen.beats = beat.beats;
          seen.games = beat.games;
          seen.sampled = now;
        }
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
        if (record) folder_->append_node(elapsed(), node, seen.games, seen.games_per_second);
      }
      if (record)
        folder_->append_stream(elapsed(), window_->total_positions(), games_, active, stream_lag_,
                               stream_evicted_);
      cluster_line_ = "nodes " + std::to_string(active) +
                      (cluster_line_.empty() ? "" : " (" + cluster_line_ + ")") + " lag " +
                      std::to_string(stream_lag_) +
                      " evicted " + std::to_string(stream_evicted_);
    }
    return cluster_line_;
  }

  const TrainOptions& options_;
  const std::atomic<bool>& stop_;
  RunPaths paths_;
  config::RunConfig config_;
  std::unique_ptr<RunFolder> folder_;
  bool new_run_ = false;
  std::shared_ptr<spdlog::logger> log_;
  const Game* game_ = nullptr;
  RunState state_;
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<model::InferenceServer> server_;
  std::atomic<std::int64_t> best_step_{0};
  std::unique_ptr<selfplay::FolderReplayStore> store_;
  std::unique_ptr<ReplayWindow> window_;
  std::unique_ptr<selfplay::SelfPlay> selfplay_;  // none with selfplay.threads 0
  std::optional<store::RedisUrl> url_;             // a run with a Redis store
  std::unique_ptr<store::RunChannel> channel_;     // the trainer's own connection (main thread)
  std::unique_ptr<store::RedisGameSink> sink_;     // local self-play's pushes (writer thread)
  std::atomic<bool> closing_{false};
  std::string stored_until_ = "0-0";               // the newest stream entry kept in a chunk
  std::int64_t stream_evicted_ = 0;                // evicted before read (known when caught up)
  std::int64_t stream_lag_ = 0;                    // entries not read yet (estimate)
  std::int64_t games_from_stream_ = 0;             // this session
  std::map<std::string, NodeSeen> nodes_seen_;
  Clock::time_point last_cluster_poll_{}, last_cluster_row_ = Clock::now();
  std::string cluster_line_;
  std::size_t ingested_chunks_ = 0;
  std::int64_t games_ = 0;
  std::int64_t rejected_games_ = 0;
  std::set<std::string> logged_problems_;
  int pending_gate_ = 0;  // a generation saved but not gated yet
  StepStats last_step_;
  Clock::time_point start_ = Clock::now();
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
