#include "trainer/run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "games/quote.h"
#include "mcts/seed.h"
#include "model/checkpoint.h"
#include "model/inference_server.h"
#include "selfplay/replay_store.h"
#include "selfplay/selfplay.h"
#include "store/redis_game_sink.h"
#include "store/redis_url.h"
#include "store/run_channel.h"
#include "trainer/gate.h"
#include "trainer/intake.h"
#include "trainer/progress.h"
#include "trainer/replay_window.h"
#include "trainer/resume.h"
#include "trainer/run_folder.h"
#include "trainer/settings.h"
#include "trainer/store_lease.h"
#include "trainer/trainer.h"
#include "util/file_io.h"
#include "util/log.h"
#include "util/stop_watch.h"

namespace oppidum::trainer {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kInitStream = 0x494E495400000000ULL;    // initial network weights
constexpr std::uint64_t kSampleStream = 0x53414D504C450000ULL;  // batch sampling, by session

// The first error writing log.txt (a full disk): the session stops on it as it does on its
// tables' (spdlog alone would print it to stderr and go on, the file cut mid-line and every later
// line lost, the lines --recover reads among them).
class LogFailure {
 public:
  void record(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (what_.empty()) what_ = what.empty() ? "an unknown error" : what;
  }
  // Throws std::runtime_error naming the log once an error was recorded.
  void check(const RunPaths& paths) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!what_.empty())
      throw std::runtime_error("cannot write the run's log " + paths.log().string() + ": " +
                               what_);
  }

 private:
  mutable std::mutex mutex_;
  std::string what_;
};

// The message of a log line as the terminal and log.txt get it: one line, without a control
// character (a run folder's name, a player spec or a file's content in a message could send the
// terminal commands, retitle its window, reorder the line or start a forged one), at most 16 KiB.
class PrintableMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string text =
        printable_line(std::string_view(msg.payload.data(), msg.payload.size()), 16384);
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
    return std::make_unique<PrintableMessage>();
  }
};

// A sink's pattern with the message made printable (%*).
std::unique_ptr<spdlog::formatter> printable_pattern(const std::string& pattern) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<PrintableMessage>('*').set_pattern(pattern);
  return formatter;
}

// `status_line`: a status line may stand on the terminal (Telemetry's): each console line first
// clears it, and the next status takes its place under the line (lines ran on after it).
std::shared_ptr<spdlog::logger> make_logger(const RunPaths& paths,
                                            const std::shared_ptr<LogFailure>& failure,
                                            bool status_line) {
  const std::string path = paths.log().string();
  // spdlog opens whatever is there: a link (its target written), a FIFO (a hang) are refused first.
  util::append_to_file(path, "", false);
  {  // a last line cut short (a full disk, a kill mid-write) is ended: none runs into the next
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    char last = '\n';
    if (in && in.tellg() > 0 && in.seekg(-1, std::ios::end) && in.get(last) && last != '\n')
      util::append_to_file(path, "\n", false);
  }
  auto console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path);
  auto logger = std::make_shared<spdlog::logger>("train", spdlog::sinks_init_list{console, file});
  logger->set_formatter(printable_pattern("[%Y-%m-%d %H:%M:%S] %*"));
  if (status_line && isatty(2))
    console->set_formatter(printable_pattern("\r\033[K[%Y-%m-%d %H:%M:%S] %*"));
  logger->flush_on(spdlog::level::info);
  // spdlog's file errors ("Failed writing to file ...", "Failed flush to file ...") stop the run;
  // any other (a message it could not format) is only said.
  logger->set_error_handler([failure](const std::string& what) {
    if (what.rfind("Failed ", 0) == 0) failure->record(what);
    else std::fprintf(stderr, "log: %s\n", what.c_str());
  });
  return logger;
}

// One session of a run (the trainer node): its loop and the wiring of every moving part; what it
// shows and records of its progress is trainer/progress.h's.
class Session {
 public:
  Session(const TrainOptions& options, const std::atomic<bool>& stop)
      : options_(options), stop_(stop), store_watch_(stop), paths_{options.run_dir} {}

  void run() {
    try {
      open_folder();
    } catch (const std::exception&) {
      give_back_reservation();
      throw;
    }
    try {
      if (new_run_) create_run();
      restore();
      start_services();
      loop();
      telemetry_->end_session(progress());
      closing_ = true;  // a push waiting for Redis gives up: those games were in flight
      if (selfplay_) selfplay_->stop();
      intake_->drain(30.0);
      if (lease_) {
        log_->info("{}", intake_->summary());
        lease_->release();
      }
      telemetry_->end_selfplay(progress());
      trainer_->save_state(paths_.trainer_prefix());  // a clean stop keeps every step
      append_train_row();  // and the rows account for each of them
      folder_->append_session(session_row(false));
      telemetry_->end_status_line();
      log_->info("stopped: {} positions, trainer step {}, generation {}; run the same command to "
                 "continue", window_->total_positions(), trainer_->steps(), generation());
      log_failure_->check(paths_);
    } catch (const std::exception& e) {
      if (new_run_ && !fs::exists(paths_.config())) give_back_reservation();  // never created
      if (telemetry_) telemetry_->end_status_line();
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
    resolve();
    const bool had_config = fs::exists(paths_.config());
    if (!had_config) check_new_run();
    folder_ = std::make_unique<RunFolder>(paths_.dir);
    if (folder_->exists() != had_config) {
      resolve();
      if (!folder_->exists()) check_new_run();
    }
    new_run_ = !folder_->exists();
    if (!new_run_) {  // made by another process meanwhile: its own network and keys, not ours
      initial_.reset();
      server_.reset();
      give_back_reservation();
    }
    log_ = make_logger(paths_, log_failure_, options_.status_line);
  }

  // What a new run needs beyond its config and anchor (resolve), checked before its folder exists
  // (its config is frozen once it does): the initial network, the inference server on it, and the
  // Redis store (reachable, the credentials accepted, its keys free).
  void check_new_run() {
    initial_ = make_trainer()->checkpoint("initial network");
    server_ = std::make_unique<model::InferenceServer>(*game_, *initial_,
                                                       backend_options(config_.inference),
                                                       selfplay_server_options(config_.inference));
    server_->set_source("checkpoint " + paths_.best().string());  // what it serves from here on
    if (url_ && reserved_id_.empty()) {
      // Remembered first: a stop can end the call after the server made the reservation, and
      // unreserve undoes only a reservation of this id.
      reserved_id_ = store::random_id();
      reserved_url_ = url_;
      try {
        setup_channel(*reserved_url_).reserve(reserved_id_);  // the keys are this new run's now
      } catch (const store::StoreTakenError&) {
        reserved_id_.clear();  // another run's keys: nothing of ours to give back
        reserved_url_.reset();
        throw;
      }
    }
  }

  // A new run that did not come to be leaves its keys as it found them (best effort: the server
  // may be what failed).
  void give_back_reservation() noexcept {
    if (reserved_id_.empty()) return;
    try {
      setup_channel(*reserved_url_).unreserve(reserved_id_);
    } catch (const std::exception&) {
    }
    reserved_id_.clear();
    reserved_url_.reset();
  }

  // A channel for the checks before the run's log exists (its lines go to standard error).
  store::RunChannel setup_channel(const store::RedisUrl& url) {
    return store::RunChannel(
        url, [](const std::string& line) { std::fprintf(stderr, "redis: %s\n", line.c_str()); },
        &store_stop_);
  }

  // The config (trainer/resume.h), its store's URL (refused before any connection), its anchor
  // player and its gate openings.
  void resolve() {
    url_.reset();  // a run found at the second look may have another store, or none
    config_ = resolve_config(paths_, options_.config_path, options_.overrides);
    game_ = &game_by_name(config_.run.game);
    if (!config_.run.store.empty())
      url_ = store::node_url(config_.run.store, options_.store_password, options_.insecure);
    check_anchor(*game_, config_);
    check_openings(*game_, config_);
    // The run must fit this machine (a resumed run's too: threads and games may change), checked
    // before anything is created or a session counted.
    check_run_memory(config_, fs::exists(paths_.config()));
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
    state.run_id = reserved_id_.empty() ? store::random_id() : reserved_id_;
    state.identity = config::identity_text(config_);
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
    // Every repair is logged, and --recover ends with a count, so that it never repairs silently.
    int repairs = 0;
    const util::LogLine repaired = [&](const std::string& line) {
      ++repairs;
      warn_(line);
    };
    folder_->check_writable({{selfplay::FolderReplayStore::index_path(paths_.games().string()),
                              util::WriteUse::kAppend}});
    std::string rebuilt;
    state_ = folder_->load_state(options_.recover, &rebuilt);
    if (!rebuilt.empty()) repaired("recovered: " + rebuilt);
    check_identity(state_, config_, paths_);  // before anything is repaired or counted
    for (const auto& line : folder_->open_tables(options_.recover, config_.arena.anchor))
      repaired("repaired " + line);
    trainer_ = make_trainer();
    const Resumed resumed = resume_run(*folder_, *trainer_, *game_,
                                       config_.training.steps_per_generation, options_.recover,
                                       {info_, repaired});
    if (options_.recover)
      info_(repairs == 0 ? "--recover: nothing to repair, every file of the run is intact"
                         : "--recover: " + std::to_string(repairs) +
                               " repair(s) or warning(s), each in a line above");
    best_step_ = resumed.best_step;
    pending_gate_ = resumed.pending_gate;
    if (!server_)  // a new run's is already on its initial network, which best.ckpt holds
      server_ = model::make_net_evaluator(*game_, paths_.best().string(),
                                          backend_options(config_.inference),
                                          selfplay_server_options(config_.inference));
    store_ = std::make_unique<selfplay::FolderReplayStore>(
        paths_.games().string(), selfplay::FolderReplayStore::Mode::kOwner);
    if (state_.run_id.empty()) state_.run_id = store::random_id();  // a run from before run ids
    if (url_)  // takes the run's keys (trainer/store_lease.h)
      lease_ = std::make_unique<StoreLease>(*url_, state_, paths_, *game_, config::to_yaml(config_),
                                            info_, warn_, store_stop_);
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
    store::RunChannel* channel = lease_ ? &lease_->channel() : nullptr;
    intake_ = std::make_unique<Intake>(*folder_, state_, *window_, *store_, channel, warn_);
    intake_->load_window(config_.training.window_max);
    log_->info("replay: {} positions in {} chunks, window {}", window_->total_positions(),
               intake_->chunks(), window_->size());
    if (window_->total_positions() >= config_.training.min_positions &&
        window_->size() < rows_needed())
      log_->warn("replay: the window holds {} positions of the {} training needs "
                 "(training.min_positions); training waits for self-play to add the rest",
                 window_->size(), rows_needed());
    selfplay::GameSink* sink = store_.get();
    std::uint64_t session = state_.sessions;
    if (lease_) {
      session = lease_->open_session(best_step_.load(), best_generation());
      sink_ = std::make_unique<store::RedisGameSink>(
          *url_, "trainer", state_.run_id, config_.run.stream_max_games,
          [this](const std::string& line) { log_->warn("redis (self-play): {}", line); },
          &closing_);
      sink = sink_.get();
    }
    if (config_.selfplay.threads > 0) {
      selfplay::SelfPlaySettings settings = selfplay_settings(config_, session);
      if (lease_) settings.seed = store::node_seed(config_.run.seed, "trainer");
      selfplay_ = std::make_unique<selfplay::SelfPlay>(*server_, *sink, settings,
                                                       [this] { return best_step_.load(); });
      selfplay_->start();
    }
    Telemetry::Sources sources{[server = server_.get()] { return server->stats(); }, {}};
    if (selfplay_) sources.selfplay = [selfplay = selfplay_.get()] { return selfplay->stats(); };
    telemetry_ = std::make_unique<Telemetry>(config_, options_.status_line, std::move(sources),
                                             *folder_, channel, info_);
    start_ = Clock::now();
    if (config_.run.stop_after_minutes > 0)
      store_watch_.set_deadline_in(config_.run.stop_after_minutes * 60.0 + kStoreGraceSeconds);
    folder_->append_session(session_row(true));
  }

  SessionRow session_row(bool start) const {
    return {start, start ? 0.0 : elapsed(), trainer_->steps(), generation(),
            window_->total_positions(), intake_->games()};
  }

  int generation() const {
    return static_cast<int>(trainer_->steps() / config_.training.steps_per_generation);
  }

  bool should_stop() const {
    if (stop_.load() || store_stop_.load()) return true;
    if (config_.run.max_generations > 0 && generation() >= config_.run.max_generations &&
        pending_gate_ == 0)
      return true;
    if (config_.run.stop_after_positions > 0 && pending_gate_ == 0 &&
        static_cast<std::uint64_t>(window_->total_positions()) >= config_.run.stop_after_positions)
      return true;
    if (const auto end = session_end(); end && Clock::now() >= *end) return true;
    const std::string error = selfplay_ ? selfplay_->error() : "";
    if (!error.empty()) throw std::runtime_error("self-play failed: " + error);
    return false;
  }

  // When run.stop_after_minutes ends this session; none when it is 0.
  std::optional<Clock::time_point> session_end() const {
    if (config_.run.stop_after_minutes <= 0) return std::nullopt;
    return start_ + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(config_.run.stop_after_minutes * 60.0));
  }

  // Rows the window must hold before a step: training.min_positions, or the window's whole size
  // when that is smaller. The run's position count can be far above the rows held: fast-search
  // positions dropped (training.fast_search_rows drop), or a restart whose newest chunks were
  // damaged (the index still counts their positions).
  std::int64_t rows_needed() const {
    return std::min<std::int64_t>(config_.training.min_positions, window_->window_size());
  }

  void loop() {
    // The next batch is drawn while the trainer steps on this one. Made at the first step, once
    // the window holds rows: it draws the batch after the one asked for at once, and a window that
    // holds rows never empties again (it keeps at least window_min).
    std::optional<BatchPrefetcher> batches;
    auto last_ingest = Clock::now();
    while (!should_stop()) {
      if (pending_gate_ > 0) {
        try {
          gate(pending_gate_);
        } catch (const store::RedisStopped&) {  // its promotion's publication, at a stop (below)
        }
        continue;
      }
      // A Redis call waiting for a server that is away ends at a stop (store_stop_): the session
      // then ends as at any stop, its steps saved (it ended by an error, the steps since the last
      // generation lost).
      try {
        if (Clock::now() - last_ingest > std::chrono::milliseconds(500)) {
          intake_->poll();
          last_ingest = Clock::now();
        }
        log_failure_->check(paths_);  // here, on the loop's thread (tick runs on a gate's too)
        tick();
      } catch (const store::RedisStopped&) {
        continue;  // should_stop() holds
      }
      const std::int64_t positions = window_->total_positions();
      const double allowed = config_.training.sample_reuse * static_cast<double>(positions);
      const double wanted =
          static_cast<double>(trainer_->steps() + 1) * config_.training.batch_size;
      const auto now = Clock::now();
      const bool enough = positions >= config_.training.min_positions &&
                          window_->size() >= std::max<std::int64_t>(1, rows_needed());
      if (!enough || wanted > allowed) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (pace_.steps > 0 && enough) pace_.waiting_seconds += seconds_since(now);
        continue;
      }
      if (!batches)
        batches.emplace(*window_, config_.training.batch_size,
                        mcts::derive_seed(config_.run.seed, kSampleStream, state_.sessions));
      last_step_ = trainer_->step(batches->next());
      losses_.policy += last_step_.policy_loss;
      losses_.value += last_step_.value_loss;
      ++losses_.steps;
      const bool generation_end = trainer_->steps() % config_.training.steps_per_generation == 0;
      if (generation_end || Clock::now() - losses_.since >= kTrainRowEvery) append_train_row();
      if (generation_end) end_generation();
      ++pace_.steps;
      pace_.stepping_seconds += seconds_since(now);
    }
  }

  // The train row of the steps since the last one (none when there is none).
  void append_train_row() {
    if (losses_.steps == 0) return;
    const auto n = static_cast<double>(losses_.steps);
    folder_->append_train({elapsed(), trainer_->steps(), generation(),
                           window_->total_positions(), intake_->games(), losses_.policy / n,
                           losses_.value / n, last_step_.learning_rate, losses_.steps});
    losses_ = StepLosses{};
  }

  static double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }

  double elapsed() const { return seconds_since(start_); }

  // Steps 1 and 2 of trainer/run_folder.h; the gate follows in the loop.
  void end_generation() {
    const int gen = generation();
    trainer_->save_state(paths_.trainer_prefix());
    model::save_checkpoint(trainer_->checkpoint(candidate_metadata(paths_, gen)),
                           paths_.candidate(gen).string());
    pending_gate_ = gen;
    // After the save, so that a generation resumed from an earlier step has no pipeline row yet.
    telemetry_->end_generation(progress());
  }

  // Steps 3 to 6: the gate of generation `gen` against the best network, its commit, and the
  // promotion. A stopped gate leaves no trace and is played again when the run continues.
  void gate(int gen) {
    GateInputs in;
    in.game = game_;
    in.config = &config_;
    in.generation = gen;
    in.best_generation = best_generation();
    in.candidate_path = paths_.candidate(gen).string();
    in.best_path = paths_.best().string();
    // A stop, or run.stop_after_minutes passing while the gate plays (a gate of many long games
    // ran on past it, session after session).
    util::StopWatch gate_watch(stop_);
    if (const auto end = session_end()) gate_watch.set_deadline(*end);
    in.stop = &gate_watch.quit();
    in.on_progress = [this](const std::string& line) {
      try {
        tick(line);
      } catch (const store::RedisStopped&) {  // a stop while the server is away: the gate sees it
      }
    };
    log_->info("generation {}: gating {} against generation {}", gen,
               paths_.candidate(gen).filename().string(), in.best_generation);
    const GateMatches m = play_gate(in);
    if (m.stopped()) {
      telemetry_->end_status_line();
      log_->info("generation {}: gate stopped; it is played again when the run continues", gen);
      // A gate longer than a session is never finished: each session starts it again.
      if (!stop_.load() && config_.run.stop_after_minutes > 0)
        log_->warn("generation {}: run.stop_after_minutes ({} minutes) ended the session during "
                   "this gate, which starts again from its first game next session: a gate that "
                   "takes longer than a session never ends; give a longer "
                   "run.stop_after_minutes or fewer arena.max_games",
                   gen, config_.run.stop_after_minutes);
      return;
    }
    if (!m.refused.empty())
      log_->warn("generation {}: not promoted, its network computes nothing ({}); the best "
                 "network stays",
                 gen, m.refused);
    const model::Checkpoint candidate =
        model::load_checkpoint(in.candidate_path, *game_, &config_.net);
    if (candidate.step != std::int64_t{gen} * config_.training.steps_per_generation)
      throw RunFolderError(in.candidate_path + " holds step " + std::to_string(candidate.step) +
                           ", not generation " + std::to_string(gen) +
                           "'s: it was replaced during its gate; the next resume rewrites it from "
                           "the trainer");
    const GateRow row = gate_row(in, m, candidate.step, elapsed(), folder_->rating());
    folder_->append_gate(row, window_->total_positions(), intake_->games());
    pending_gate_ = 0;
    if (m.promoted) {
      model::save_checkpoint(candidate, paths_.best().string());
      server_->swap_weights(candidate);
      best_step_ = candidate.step;
      if (lease_) lease_->publish_best(best_step_.load(), best_generation());
    }
    last_gate_ = gate_summary(row);
    telemetry_->end_status_line();
    const double rating = folder_->rating();
    log_->info("generation {}: {}; best is generation {}{}", gen, last_gate_, best_generation(),
               std::isfinite(rating) ? fmt::format(" (chained rating {:+.0f})", rating) : "");
  }

  // The generation of the best network, from its training step.
  int best_generation() const {
    return static_cast<int>(best_step_.load() / config_.training.steps_per_generation);
  }

  // Where the session is, for the telemetry; `gate`: the progress of the gate being played.
  Progress progress(const std::string& gate = "") const {
    return {elapsed(), generation(), trainer_->steps(), window_->total_positions(),
            intake_->games(), last_step_, best_generation(), folder_->rating(), gate, last_gate_,
            intake_->stream_lag(), intake_->stream_evicted(), pace_};
  }

  // From the loop and during a gate: renews the store's lease every 5 s, then hands the progress
  // to the telemetry (status line, pipeline, cluster monitor).
  void tick(const std::string& gate = "") {
    const auto now = Clock::now();
    if (server_)
      if (const std::string line = non_finite_notice_(server_->stats().non_finite); !line.empty())
        log_->warn("self-play: {}", line);
    if (lease_ && now - last_renewal_ >= std::chrono::seconds(5)) {
      last_renewal_ = now;
      lease_->renew(*intake_, best_step_.load(), best_generation());
    }
    telemetry_->update(progress(gate));
  }

  const TrainOptions& options_;
  const std::atomic<bool>& stop_;
  // The stop flag of every Redis call (store_stop_): set on a signal (stop_), or once
  // run.stop_after_minutes has passed by kStoreGraceSeconds (a call waiting for a server that was away
  // held the run past its time without end; the grace lets the session's last reads and the
  // lease's release happen where the server answers).
  static constexpr double kStoreGraceSeconds = 60;
  util::StopWatch store_watch_;
  const std::atomic<bool>& store_stop_ = store_watch_.quit();
  RunPaths paths_;
  config::RunConfig config_;
  std::unique_ptr<RunFolder> folder_;
  bool new_run_ = false;
  std::optional<model::Checkpoint> initial_;  // a new run's initial network, made before its folder
  std::shared_ptr<LogFailure> log_failure_ = std::make_shared<LogFailure>();
  std::shared_ptr<spdlog::logger> log_;
  // Its lines, for the units that take a log-line callback.
  const util::LogLine info_ = [this](const std::string& line) {
    log_->info("{}", line);
  };
  const util::LogLine warn_ = [this](const std::string& line) {
    log_->warn("{}", line);
  };
  const Game* game_ = nullptr;
  RunState state_;
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<model::InferenceServer> server_;
  std::atomic<std::int64_t> best_step_{0};
  std::unique_ptr<selfplay::FolderReplayStore> store_;
  std::unique_ptr<ReplayWindow> window_;
  std::optional<store::RedisUrl> url_;             // a run with a Redis store
  std::string reserved_id_;  // a new run's id, already the owner of its keys on the store
  std::optional<store::RedisUrl> reserved_url_;  // the store it reserved them on
  std::unique_ptr<StoreLease> lease_;              // its keys and the trainer's own connection
  Clock::time_point last_renewal_{};
  std::unique_ptr<store::RedisGameSink> sink_;     // local self-play's pushes (writer thread)
  std::atomic<bool> closing_{false};
  std::unique_ptr<Intake> intake_;
  std::unique_ptr<Telemetry> telemetry_;
  // Last: its threads use the server, the sink and closing_, so it stops before they go.
  std::unique_ptr<selfplay::SelfPlay> selfplay_;  // none with selfplay.threads 0
  int pending_gate_ = 0;  // a generation saved but not gated yet
  StepStats last_step_;
  // The losses of the steps since the last train row: a row at most every kTrainRowEvery and at
  // each generation's last step (trainer/run_folder.h, TrainRow).
  struct StepLosses {
    double policy = 0, value = 0;
    std::int64_t steps = 0;
    Clock::time_point since = Clock::now();
  };
  static constexpr std::chrono::seconds kTrainRowEvery{1};
  StepLosses losses_;
  TrainerPace pace_;
  Clock::time_point start_ = Clock::now();
  std::string last_gate_;  // gate_summary of the last gate
  NonFiniteNotice non_finite_notice_;  // self-play's positions with outputs not finite
};

}  // namespace

void train(const TrainOptions& options, const std::atomic<bool>& stop) {
  Session session(options, stop);
  session.run();
}

}  // namespace oppidum::trainer
