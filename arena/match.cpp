#include "arena/match.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <unordered_set>
#include <utility>

#include "mcts/evaluator.h"
#include "mcts/rng.h"
#include "mcts/runner.h"
#include "mcts/seed.h"
#include "util/text.h"

namespace oppidum::arena {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kStopPoll = std::chrono::milliseconds(10);  // how often MatchHooks::stop is read
constexpr const char* kTimeForfeit = "time: ";  // how a loss on time's reason begins

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A game's moves as one 64-bit hash (splitmix64 chained over its length and actions): the
// distinct counts keep that, not the moves (some 400 bytes a game: 4 GB for a match of 10^7
// random games). Two distinct games of n share a hash with probability about n^2 / 2^65
// (3e-6 for 10^7 games): a count may then be one short.
std::uint64_t moves_hash(const std::vector<Action>& moves) {
  std::uint64_t h = splitmix64(moves.size());
  for (const Action a : moves) h = splitmix64(h ^ static_cast<std::uint32_t>(a));
  return h;
}

// The distinct values inserted, in about 13 bytes each: a sorted vector, and the newest in a hash
// set that is merged into it once it holds an eighth as many.
class DistinctSet {
 public:
  // True when `value` was not inserted before.
  bool insert(std::uint64_t value) {
    if (std::binary_search(sorted_.begin(), sorted_.end(), value)) return false;
    if (!recent_.insert(value).second) return false;
    if (recent_.size() >= std::max<std::size_t>(1024, sorted_.size() / 8)) {
      sorted_.insert(sorted_.end(), recent_.begin(), recent_.end());
      std::sort(sorted_.begin(), sorted_.end());
      recent_.clear();
    }
    return true;
  }

 private:
  std::vector<std::uint64_t> sorted_;
  std::unordered_set<std::uint64_t> recent_;
};

// Measures the time spent in an evaluator.
class TimedEvaluator final : public mcts::Evaluator {
 public:
  explicit TimedEvaluator(mcts::Evaluator& inner) : inner_(inner) {}
  void evaluate(const mcts::EvalRequest* requests, int n, mcts::EvalResult* results) override {
    const auto start = Clock::now();
    inner_.evaluate(requests, n, results);
    nanoseconds_ += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  }
  std::string describe() const override { return inner_.describe(); }
  double seconds() const { return static_cast<double>(nanoseconds_.load()) * 1e-9; }

 private:
  mcts::Evaluator& inner_;
  std::atomic<std::int64_t> nanoseconds_{0};
};

// The state every worker shares: the counted prefix, the tallies and the stop flag.
class MatchState {
 public:
  MatchState(MatchStatus status, int num_pairs, const MatchHooks& hooks)
      : status_(std::move(status)), num_pairs_(num_pairs), hooks_(hooks), start_(Clock::now()) {}

  // The runners' stop flag: set when the match is decided, at its cap, failed or stopped.
  std::atomic<bool>& stop() { return stop_; }

  // True once the match is to end; reads MatchHooks::stop and passes it on to stop(), at once
  // (the runners see it while a hook holds the lock) and then under the lock.
  bool stopping() {
    if (!stop_ && stop_asked()) {
      stop_ = true;
      std::lock_guard<std::mutex> lock(mutex_);
      if (!status_.finished) stopped_ = true;  // else the match ended on its own just before
    }
    return stop_;
  }

  void report(GameRecord record) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_.finished || stopped_) return;
    if (stop_asked()) {  // no pair counts after a stop, whoever sees it
      stopped_ = true;
      stop_ = true;
      return;
    }
    const int index = record.index;
    finished_.emplace(index, std::move(record));
    while (counted_pairs_ < num_pairs_ && !status_.finished) {
      const auto first = finished_.find(2 * counted_pairs_);
      const auto second = finished_.find(2 * counted_pairs_ + 1);
      if (first == finished_.end() || second == finished_.end()) break;
      count_pair(first->second, second->second);
      finished_.erase(first);
      finished_.erase(second);
      ++counted_pairs_;
      if (status_.verdict != SprtVerdict::kContinue || counted_pairs_ == num_pairs_) {
        status_.finished = true;
        stop_ = true;
      }
      status_.seconds = seconds_since(start_);
      if (hooks_.on_progress) hooks_.on_progress(status_);
    }
  }

  // A search player's moves of a chunk (every game it searched in, counted or not) and their
  // time: what the mean per move of its counted moves comes from.
  void add_search_time(int side, std::int64_t moves, double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    SideTime& searched = searched_[static_cast<std::size_t>(side)];
    searched.moves += moves;
    searched.seconds += seconds;
  }

  // MatchHooks::on_wait with the status so far; its exception fails the match.
  void wait_hook() {
    if (!hooks_.on_wait) return;
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;  // (set as the match finishes, is stopped or fails)
      status_.seconds = seconds_since(start_);
      hooks_.on_wait(status_);
    } catch (...) {
      fail(std::current_exception());
    }
  }

  void fail(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = error;
    stop_ = true;
  }

  MatchStatus finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_) std::rethrow_exception(error_);
    status_.finished = !stopped_;
    status_.stopped = stopped_;
    status_.seconds = seconds_since(start_);
    for (std::size_t s = 0; s < 2; ++s)
      if (searched_[s].moves > 0)
        status_.time[s].seconds =
            static_cast<double>(status_.time[s].moves) * searched_[s].per_move();
    return status_;
  }

 private:
  bool stop_asked() const { return hooks_.stop != nullptr && hooks_.stop->load(); }

  void count_pair(const GameRecord& first, const GameRecord& second) {
    for (const GameRecord* game : {&first, &second}) {
      const double score = game->score_a();
      if (score > 0.75) ++status_.wins;
      else if (score < 0.25) ++status_.losses;
      else ++status_.draws;
      if (game->adjudicated) ++status_.adjudicated;
      if (!game->forfeit.empty()) {
        const int loser = game->score_a() < 0.5 ? 0 : 1;
        ++status_.forfeits;
        ++status_.forfeits_by[static_cast<std::size_t>(loser)];
        if (game->forfeit.rfind(kTimeForfeit, 0) == 0)
          ++status_.time_losses[static_cast<std::size_t>(loser)];
        status_.forfeit_lines.push_back("game " + std::to_string(game->index) + ": " +
                                        (loser == 0 ? "A" : "B") + " forfeits: " + game->forfeit);
      }
      if (distinct_.insert(moves_hash(game->moves))) ++status_.distinct_games;
      for (std::size_t s = 0; s < 2; ++s) {
        SideTime& time = status_.time[s];
        time.moves += game->time[s].moves;
        time.seconds += game->time[s].seconds;
        time.max_move = std::max(time.max_move, game->time[s].max_move);
      }
      if (hooks_.on_game) hooks_.on_game(*game);
    }
    if (distinct_pairs_.insert(splitmix64(moves_hash(first.moves)) ^ moves_hash(second.moves)))
      ++status_.distinct_pairs;
    status_.games_counted += 2;
    const int points = static_cast<int>(std::lround(2.0 * (first.score_a() + second.score_a())));
    ++status_.pairs[static_cast<std::size_t>(points)];
    std::array<double, 5> counts;
    for (std::size_t k = 0; k < 5; ++k) counts[k] = status_.pairs[k];
    const OutcomeCounts outcomes = pentanomial(counts);
    status_.elo = estimate_elo(outcomes);
    if (status_.sprt) {
      status_.llr = sprt_llr(outcomes, status_.sprt->elo0, status_.sprt->elo1);
      status_.verdict = sprt_verdict(status_.llr, status_.bounds);
    }
  }

  std::mutex mutex_;
  MatchStatus status_;
  const int num_pairs_;
  // The games finished but not yet counted, by index: those in flight ahead of the counted
  // prefix (a slot for every game of the cap took gigabytes before a game of a capped SPRT).
  std::map<int, GameRecord> finished_;
  DistinctSet distinct_;        // the counted games' moves_hash
  DistinctSet distinct_pairs_;  // of their pairs, the first's mixed with the second's
  std::array<SideTime, 2> searched_;                  // search players': add_search_time
  int counted_pairs_ = 0;
  const MatchHooks& hooks_;
  Clock::time_point start_;
  std::atomic<bool> stop_{false};
  bool stopped_ = false;  // by MatchHooks::stop, before the match ended on its own
  std::exception_ptr error_;
};

// While it lives, polls MatchHooks::stop every kStopPoll on a thread of its own (the runners only
// read one flag, MatchState::stop, and a search player's runner may not call the driver for many
// rounds), so that a stop request reaches the runners within kStopPoll; and calls
// MatchHooks::on_wait every kWaitHookSeconds on another (a hook that takes long holds up no stop).
class StopWatcher {
 public:
  StopWatcher(MatchState& state, const MatchHooks& hooks) : state_(state) {
    if (hooks.stop != nullptr) thread_ = std::thread([this] { watch(); });
    try {
      if (hooks.on_wait) wait_thread_ = std::thread([this] { call_wait_hook(); });
    } catch (...) {  // (no destructor runs for a constructor that throws: the first is joined here)
      end();
      throw;
    }
  }
  StopWatcher(const StopWatcher&) = delete;
  StopWatcher& operator=(const StopWatcher&) = delete;
  ~StopWatcher() {
    end();
    if (wait_thread_.joinable()) wait_thread_.join();
  }

 private:
  void end() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, kStopPoll, [this] { return done_; }))
      if (state_.stopping()) return;
  }

  void call_wait_hook() {
    const auto every = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(MatchHooks::kWaitHookSeconds));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, every, [this] { return done_; })) {
      lock.unlock();  // (the hook may take long: the destructor must not wait for the lock)
      state_.wait_hook();
      lock.lock();
    }
  }

  MatchState& state_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_, wait_thread_;
};

// Drives the games of one chunk of pairs in one runner. Agent 0 is A, agent 1 is B.
class ChunkDriver final : public mcts::GameDriver {
 public:
  ChunkDriver(const Game& game, std::array<Player*, 2> players, std::array<bool, 2> direct,
              const MatchConfig& config, int opening_plies, int first_pair, int num_games,
              MatchState& state)
      : game_(game), players_(players), config_(config), opening_plies_(opening_plies),
        first_game_(2 * first_pair), state_(state), direct_(direct),
        games_(static_cast<std::size_t>(num_games)),
        time_{players[0]->time_control(), players[1]->time_control()} {}

  // Games that never finished (the match stopped, or an exception) end here for the players.
  ~ChunkDriver() override {
    for (std::size_t i = 0; i < games_.size(); ++i)
      if (games_[i].started && !games_[i].ended) end_game(first_game_ + static_cast<int>(i));
  }

  mcts::GameSetup setup_game(int index) override {
    const int g = first_game_ + index;
    games_[static_cast<std::size_t>(index)].started = true;
    mcts::GameSetup setup;
    auto state = game_.initial_state();
    const std::vector<Action> opening = make_opening(game_, opening_plies_, config_.seed, g / 2);
    for (Action a : opening) state->apply(a);
    setup.start = std::move(state);
    setup.agents = a_first(g) ? std::array<int, 2>{0, 1} : std::array<int, 2>{1, 0};
    players_[0]->game_started(g, opening);
    if (players_[1] != players_[0]) players_[1]->game_started(g, opening);
    return setup;
  }

  mcts::SearchBudget search_budget(int index, const GameState& state,
                                   const mcts::Agent& agent) override {
    (void)state;
    // A forfeited game is played out with the cheapest searches; its moves are thrown away.
    if (games_[static_cast<std::size_t>(index)].forfeit_side >= 0) return {1, false, false};
    return {agent.search.simulations, true, true};
  }

  Action choose_move(int index, const GameState& state, const mcts::SearchResult& search) override {
    const int g = first_game_ + index;
    Progress& progress = games_[static_cast<std::size_t>(index)];
    if (progress.forfeit_side >= 0) return search.action;
    const int side = (state.current_player() == 0) == a_first(g) ? 0 : 1;
    const auto s = static_cast<std::size_t>(side);
    ++progress.moves;
    ++progress.time[s].moves;  // a forfeited move too: its time counts
    if (!direct_[s]) return search.action;
    // A stopping match abandons this game: its direct player (an external program) is not asked.
    if (state_.stopping()) return search.action;
    const auto start = Clock::now();
    const std::uint64_t seed = mcts::derive_seed(
        config_.seed, kMoveStream,
        (static_cast<std::uint64_t>(g) << 20) + static_cast<std::uint64_t>(state.ply()));
    Action action = search.action;
    try {
      action = players_[s]->choose_move_in_game(g, state, seed);
    } catch (const Forfeit& forfeit) {
      progress.forfeit_side = side;
      progress.forfeit_reason = forfeit.what();
      --progress.moves;
    }
    const double seconds = seconds_since(start);
    progress.time[s].seconds += seconds;
    progress.time[s].max_move = std::max(progress.time[s].max_move, seconds);
    if (progress.forfeit_side < 0) {
      char reason[160];
      reason[0] = '\0';
      const TimeControl& time = time_[s];
      if (time.move_ms > 0 && seconds > time.move_limit_seconds())
        std::snprintf(reason, sizeof reason, "%sthe move took %.3f s of %d ms (+%.2f s grace)",
                      kTimeForfeit, seconds, time.move_ms, kTimeGrace);
      else if (time.clock_seconds > 0 && progress.time[s].seconds > time.game_limit_seconds())
        std::snprintf(reason, sizeof reason,
                      "%sthe moves took %.3f s of a %s s clock (+%.2f s grace)", kTimeForfeit,
                      progress.time[s].seconds, format_number(time.clock_seconds).c_str(),
                      kTimeGrace);
      if (reason[0] != '\0') {
        progress.forfeit_side = side;
        progress.forfeit_reason =
            std::string(reason) + " (ply " + std::to_string(state.ply()) + ")";
        --progress.moves;
      }
    }
    return action;
  }

  void game_finished(mcts::FinishedGame finished) override {
    Progress& progress = games_[static_cast<std::size_t>(finished.index)];
    GameRecord record;
    record.index = first_game_ + finished.index;
    record.a_first = a_first(record.index);
    end_game(record.index);
    record.moves = make_opening(game_, opening_plies_, config_.seed, record.index / 2);
    record.opening_plies = static_cast<int>(record.moves.size());
    if (progress.forfeit_side >= 0)
      finished.moves.resize(static_cast<std::size_t>(progress.moves));  // the moves before it
    for (const auto& move : finished.moves) record.moves.push_back(move.action);
    record.result = finished.result;
    record.adjudicated = finished.adjudicated;
    // The forfeited move was asked for and its time counted: it counts as a move of the time per
    // move too, so that the mean never exceeds the longest.
    record.time = progress.time;
    if (progress.forfeit_side >= 0) {
      const bool first_forfeits = (progress.forfeit_side == 0) == record.a_first;
      record.result = first_forfeits ? -1.0 : 1.0;
      record.adjudicated = false;
      record.forfeit = progress.forfeit_reason;
    }
    state_.report(std::move(record));
  }

  bool direct(int side) const { return direct_[static_cast<std::size_t>(side)]; }
  // `side`'s moves in every game of the chunk, finished or abandoned, and their seconds (a direct
  // player's; a search player's are not measured move by move).
  SideTime chunk_time(int side) const {
    SideTime total;
    for (const Progress& p : games_) {
      total.moves += p.time[static_cast<std::size_t>(side)].moves;
      total.seconds += p.time[static_cast<std::size_t>(side)].seconds;
    }
    return total;
  }

 private:
  // One game of the chunk.
  struct Progress {
    bool started = false;
    bool ended = false;       // game_ended was called
    int moves = 0;            // moves played (before a forfeit)
    int forfeit_side = -1;    // 0: A, 1: B
    std::string forfeit_reason;
    std::array<SideTime, 2> time;  // A's and B's moves; the seconds of direct players'
  };

  static bool a_first(int game_index) { return game_index % 2 == 0; }

  void end_game(int g) noexcept {
    games_[static_cast<std::size_t>(g - first_game_)].ended = true;
    players_[0]->game_ended(g);
    if (players_[1] != players_[0]) players_[1]->game_ended(g);
  }

  const Game& game_;
  std::array<Player*, 2> players_;
  const MatchConfig& config_;
  int opening_plies_;
  int first_game_;
  MatchState& state_;
  std::array<bool, 2> direct_{};
  std::vector<Progress> games_;  // by index in the chunk
  std::array<TimeControl, 2> time_;
};

void play_chunk(const Game& game, std::array<Player*, 2> players, const MatchConfig& config,
                int opening_plies, int chunk, int first_pair, int num_pairs, MatchState& state) {
  static mcts::UniformEvaluator stand_in_evaluator;
  std::array<bool, 2> direct{};
  std::array<std::shared_ptr<mcts::Evaluator>, 2> owned;
  std::array<std::unique_ptr<TimedEvaluator>, 2> timed;
  std::vector<mcts::Agent> agents;
  for (int side = 0; side < 2; ++side) {
    const auto s = static_cast<std::size_t>(side);
    mcts::Agent agent;
    agent.name = players[s]->spec();
    const auto search = players[s]->search_agent(
        mcts::derive_seed(config.seed, kAgentStream + s, static_cast<std::uint64_t>(chunk)));
    if (search) {
      owned[s] = search->evaluator;
      timed[s] = std::make_unique<TimedEvaluator>(*owned[s]);
      agent.evaluator = timed[s].get();
      agent.search = search->search;
    } else {
      direct[s] = true;
      agent.evaluator = &stand_in_evaluator;
      agent.search = arena_search_config(1, 1.0f);
    }
    agents.push_back(std::move(agent));
  }
  ChunkDriver driver(game, players, direct, config, opening_plies, first_pair, 2 * num_pairs,
                     state);
  mcts::RunnerConfig runner_config;
  runner_config.num_games = 2 * num_pairs;
  runner_config.concurrent_games = 2 * num_pairs;
  runner_config.max_plies = config.max_plies;
  runner_config.seed = mcts::derive_seed(config.seed, kRunnerStream, static_cast<std::uint64_t>(chunk));
  mcts::GameRunner runner(std::move(agents), runner_config);
  const auto start = Clock::now();
  runner.run(driver, &state.stop());
  const double wall = seconds_since(start);

  // Search time: the wall time not spent in direct players, split by evaluator time.
  double search_time = wall;
  for (int side = 0; side < 2; ++side) search_time -= driver.chunk_time(side).seconds;
  double evaluator_time = 0.0;
  for (const auto& t : timed)
    if (t) evaluator_time += t->seconds();
  for (int side = 0; side < 2; ++side) {
    const auto s = static_cast<std::size_t>(side);
    if (driver.direct(side)) continue;  // timed move by move, in the games' records
    const bool both_search = !driver.direct(1 - side);
    const double share = !both_search ? 1.0
                         : evaluator_time > 0 ? timed[s]->seconds() / evaluator_time
                                              : 0.5;
    state.add_search_time(side, driver.chunk_time(side).moves, std::max(0.0, search_time) * share);
  }
}

}  // namespace

double GameRecord::score_a() const {
  const double first_points = (result + 1.0) / 2.0;
  return a_first ? first_points : 1.0 - first_points;
}

void MatchConfig::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("match: " + what); };
  if (games < 1) fail("games must be at least 1, not " + std::to_string(games));
  if (threads < 1 || threads > 1024) fail("threads must be 1..1024, not " + std::to_string(threads));
  if (opening_plies < -1) fail("opening plies must be 0 or more, not " + std::to_string(opening_plies));
  if (pairs_per_runner < 1) fail("pairs per runner must be at least 1");
  if (max_plies < 0) fail("max plies must be 0 (the game's bound) or more");
  if (sprt) sprt->validate();
}


std::vector<Action> make_opening(const Game& game, int plies, std::uint64_t seed, int pair) {
  mcts::Rng rng(mcts::derive_seed(seed, kOpeningStream, static_cast<std::uint64_t>(pair)));
  ActionList legal;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    auto state = game.initial_state();
    std::vector<Action> moves;
    for (int ply = 0; ply < plies; ++ply) {
      state->legal_actions(legal);
      if (legal.empty()) break;
      moves.push_back(legal[rng.uniform_int(legal.size())]);
      state->apply(moves.back());
    }
    if (static_cast<int>(moves.size()) == plies && !state->is_terminal()) return moves;
  }
  throw std::invalid_argument("match: no opening of " + std::to_string(plies) + " random plies of " +
                              game.name() + " leaves the game running");
}

MatchPlan plan_match(const Game& game, const Player& a, const Player& b,
                     const MatchConfig& config) {
  config.validate();
  for (const Player* p : {&a, &b})
    if (p->interactive())
      throw std::invalid_argument("match: " + p->spec() +
                                  " reads moves from a person; use `oppidum play` instead");
  int opening_plies =
      config.opening_plies >= 0 ? config.opening_plies : game.default_opening_plies();
  std::string openings_note;
  for (const Player* p : {&a, &b}) {
    if (!p->needs_initial_position()) continue;
    if (config.opening_plies > 0)
      throw std::invalid_argument("match: " + p->spec() +
                                  " plays only from the initial position (an external program "
                                  "without openings=1 cannot be given a position), so the "
                                  "openings must have 0 plies");
    if (opening_plies > 0 && openings_note.empty())
      openings_note = p->spec() + " plays only from the initial position (give an external "
                      "program that reads the Opening line openings=1)";
    opening_plies = 0;
  }
  make_opening(game, opening_plies, config.seed, 0);  // fails early for an impossible length
  // A ply limit within the opening would end every game before either player moved.
  if (config.max_plies > 0 && config.max_plies <= opening_plies)
    throw std::invalid_argument("match: the ply limit (" + std::to_string(config.max_plies) +
                                ", --max-plies) must be above the openings' " +
                                std::to_string(opening_plies) +
                                " random plies (--openings-plies), or no player would move");
  return {opening_plies, openings_note};
}

MatchStatus run_match(const Game& game, Player& a, Player& b, const MatchConfig& config,
                      const MatchHooks& hooks) {
  // (no structured binding: a lambda below uses opening_plies, which C++17 does not allow of one)
  const MatchPlan plan = plan_match(game, a, b, config);
  const int opening_plies = plan.opening_plies;
  const std::string& openings_note = plan.openings_note;
  const int num_pairs = (config.games + 1) / 2;
  MatchStatus status;
  status.game = game.name();
  status.a = a.spec();
  status.b = b.spec();
  status.sprt = config.sprt;
  if (config.sprt) status.bounds = sprt_bounds(*config.sprt);
  status.threads = config.threads;
  status.seed = config.seed;
  status.games_cap = 2 * num_pairs;
  status.opening_plies = opening_plies;
  status.openings_note = openings_note;
  status.elo = estimate_elo(pentanomial({}));
  MatchState state(status, num_pairs, hooks);

  const int pairs_per_chunk = a.wants_batching() || b.wants_batching() ? config.pairs_per_runner : 1;
  const int num_chunks = (num_pairs + pairs_per_chunk - 1) / pairs_per_chunk;
  std::atomic<int> next_chunk{0};
  const std::array<Player*, 2> players = {&a, &b};
  auto worker = [&] {
    try {
      for (int chunk = next_chunk++; chunk < num_chunks && !state.stopping();
           chunk = next_chunk++) {
        const int first_pair = chunk * pairs_per_chunk;
        const int pairs = std::min(pairs_per_chunk, num_pairs - first_pair);
        play_chunk(game, players, config, opening_plies, chunk, first_pair, pairs, state);
      }
    } catch (...) {
      state.fail(std::current_exception());
    }
  };
  const int num_threads = std::min(config.threads, num_chunks);
  {
    // A move of a direct player ends when the match is to end (decided, stopped, failed): its
    // game is abandoned then anyway.
    struct StopMoves {
      const std::array<Player*, 2>& players;
      StopMoves(const std::array<Player*, 2>& p, const std::atomic<bool>* flag) : players(p) {
        for (Player* player : players) player->stop_moves_when(flag);
      }
      ~StopMoves() {
        for (Player* player : players) player->stop_moves_when(nullptr);
      }
    } const stop_moves(players, &state.stop());
    const StopWatcher watcher(state, hooks);
    std::vector<std::thread> threads;
    try {
      for (int t = 1; t < num_threads; ++t) threads.emplace_back(worker);
    } catch (const std::system_error& e) {
      // The threads started stop at once and are joined; the match fails naming why (the
      // joinable threads' destruction aborted the program).
      state.fail(std::make_exception_ptr(std::runtime_error(
          "arena: could not start thread " + std::to_string(threads.size() + 2) + " of " +
          std::to_string(num_threads) + " (" + e.what() + "); use fewer --threads")));
    }
    worker();
    for (auto& t : threads) t.join();
  }
  return state.finish();
}

std::string describe_verdict(const MatchStatus& status) {
  if (!status.sprt) return "";
  const auto& s = *status.sprt;
  switch (status.verdict) {
    case SprtVerdict::kAcceptH1:
      // "A is stronger" only where both hypotheses say at least equal: with elo0 < 0, H1 can be
      // a weaker A (elo0=-300, elo1=-100 accepted between equal players read "A is stronger").
      return std::string("H1 accepted: ") + (s.elo0 >= 0 ? "A is stronger, " : "") + "elo >= " +
             format_number(s.elo1) + " more likely than elo <= " + format_number(s.elo0);
    case SprtVerdict::kAcceptH0:
      return "H0 accepted: elo <= " + format_number(s.elo0) + " more likely than elo >= " +
             format_number(s.elo1);
    case SprtVerdict::kContinue:
      break;
  }
  if (status.stopped)
    return "no decision: stopped after " + std::to_string(status.games_counted) + " games";
  return "no decision after " + std::to_string(status.games_counted) + " games (the cap)";
}

std::string format_pairs(const MatchStatus& s) { return format_pair_counts(s.pairs); }

std::vector<std::string> elo_caveats(const MatchStatus& s) {
  std::vector<std::string> caveats;
  // The estimate is the Elo of the score with the prior's virtual game, not of the observed score
  // printed beside it: said whenever the two Elos differ as printed (to 0.1).
  if (s.games_counted > 0) {
    const bool perfect = s.wins == s.games_counted || s.losses == s.games_counted;
    const double observed = elo_from_score(s.elo.score);
    if (perfect || format_elo(observed) != format_elo(s.elo.elo)) {
      caveats.push_back(
          std::string(perfect ? "a perfect score has no finite Elo: " : "") +
          "the estimate and interval count one virtual game, half a win and half a loss: " +
          format_elo(s.elo.elo) + " is the Elo of " +
          util::fixed(100.0 * score_from_elo(s.elo.elo), 1) + "%" + (perfect ? "" : ", not " +
          format_elo(observed) + " of the observed score") + "; docs/BASELINES.md, \"Matches\"");
    }
  }
  const int pairs = s.games_counted / 2;
  if (s.distinct_pairs < pairs)
    caveats.push_back("only " + std::to_string(s.distinct_pairs) + " of the " +
                      std::to_string(pairs) + " pairs of games differ: the interval" +
                      (s.sprt ? " and the SPRT count" : " counts") +
                      " every pair as independent evidence, so repeated pairs make " +
                      (s.sprt ? "them" : "it") +
                      " too narrow; random openings or players that vary their moves give "
                      "independent pairs");
  if (s.sprt && s.verdict != SprtVerdict::kContinue && s.games_counted < s.games_cap)
    caveats.push_back("stopped early by the SPRT: the interval is that of a fixed number of games, "
                      "and the stop biases the estimate the way it decided (up after H1, down "
                      "after H0)");
  return caveats;
}

std::string format_seconds(double seconds) {
  char buffer[32];
  if (seconds < 1e-3) std::snprintf(buffer, sizeof buffer, "%.1f us", seconds * 1e6);
  else if (seconds < 1.0) std::snprintf(buffer, sizeof buffer, "%.1f ms", seconds * 1e3);
  else std::snprintf(buffer, sizeof buffer, "%.2f s", seconds);
  return buffer;
}

namespace {

// A match's score, and its Elo with the interval: unknown ("–") before a game is counted, not the
// prior's 50% and 0 Elo.
std::string score_text(const MatchStatus& s) {
  if (s.games_counted == 0) return "–";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * s.elo.score);
  return buffer;
}

std::string elo_text(const MatchStatus& s, const char* interval) {
  if (s.games_counted == 0) return "– (no game counted)";
  return format_elo(s.elo.elo) + interval + "[" + format_elo(s.elo.elo_low) + ", " +
         format_elo(s.elo.elo_high) + "]";
}

// A side's mean time a move: unknown without a move.
std::string per_move_text(const SideTime& t) {
  return t.moves > 0 ? format_seconds(t.per_move()) : "–";
}

}  // namespace

std::string format_gauntlet_table(const std::vector<MatchStatus>& matches) {
  std::ostringstream out;
  if (matches.empty()) return "gauntlet: no match played\n";
  out << "gauntlet: " << matches.front().a << " on " << matches.front().game << ", seed "
      << matches.front().seed << "; W/D/L, score and Elo from its view; time per move: mean "
      << "(longest)\n";
  std::vector<std::vector<std::string>> rows = {
      {"opponent", "games", "+W =D -L", "score", "Elo [95%]", "pairs 0/.5/1/1.5/2",
       "time (player)", "time (opponent)", "forfeits p/o (time)", "distinct"}};
  auto time_text = [](const SideTime& t) {
    return per_move_text(t) +
           (t.max_move > 0 ? " (" + format_seconds(t.max_move) + ")" : std::string());
  };
  for (const MatchStatus& m : matches) {
    rows.push_back(
        {m.b + (m.stopped ? " (stopped)" : ""), std::to_string(m.games_counted),
         "+" + std::to_string(m.wins) + " =" + std::to_string(m.draws) + " -" +
             std::to_string(m.losses),
         score_text(m), elo_text(m, " "),
         format_pairs(m), time_text(m.time[0]), time_text(m.time[1]),
         std::to_string(m.forfeits_by[0]) + "/" + std::to_string(m.forfeits_by[1]) + " (" +
             std::to_string(m.time_losses[0]) + "/" + std::to_string(m.time_losses[1]) + ")",
         std::to_string(m.distinct_games) + "/" + std::to_string(m.games_counted)});
  }
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c)
      line += row[c] + (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 2, ' ') : "");
    out << line << '\n';
  }
  for (const MatchStatus& m : matches) {
    if (!m.openings_note.empty())
      out << "openings vs " << m.b << ": none, since " << m.openings_note << '\n';
    for (const std::string& caveat : elo_caveats(m)) out << "vs " << m.b << ": " << caveat << '\n';
  }
  return out.str();
}

std::string format_progress(const MatchStatus& s) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, "%d/%d games  +%d =%d -%d  score %s  Elo %s",
                s.games_counted, s.games_cap, s.wins, s.draws, s.losses, score_text(s).c_str(),
                elo_text(s, " ").c_str());
  std::string line = buffer;
  if (s.sprt) {
    std::snprintf(buffer, sizeof buffer, "  LLR %.3f [%.3f, %.3f]", s.llr, s.bounds.lower,
                  s.bounds.upper);
    line += buffer;
  }
  std::snprintf(buffer, sizeof buffer, "  %.0f s", s.seconds);
  return line + buffer;
}

std::string format_match_report(const MatchStatus& s) {
  std::ostringstream out;
  char buffer[512];
  out << "match: " << s.a << " (A) vs " << s.b << " (B), " << s.game << ", " << s.games_counted
      << " games (" << s.games_counted / 2 << " pairs; cap " << s.games_cap << "), openings "
      << s.opening_plies << " random plies, seed " << s.seed << ", " << s.threads << " thread(s)\n";
  std::snprintf(buffer, sizeof buffer, "result (A's view): +%d =%d -%d  score %s", s.wins,
                s.draws, s.losses, score_text(s).c_str());
  out << buffer;
  if (s.adjudicated > 0) out << "  (" << s.adjudicated << " draws by the ply limit)";
  if (s.forfeits > 0)
    out << "  (" << s.forfeits << " lost by forfeit: A " << s.forfeits_by[0] << ", B "
        << s.forfeits_by[1] << "; on time: A " << s.time_losses[0] << ", B " << s.time_losses[1]
        << ")";
  out << '\n';
  out << "distinct games: " << s.distinct_games << " of " << s.games_counted << '\n';
  if (!s.openings_note.empty()) out << "openings: none, since " << s.openings_note << '\n';
  constexpr std::size_t kShownForfeits = 10;
  for (std::size_t i = 0; i < s.forfeit_lines.size() && i < kShownForfeits; ++i)
    out << "forfeit: " << s.forfeit_lines[i] << '\n';
  if (s.forfeit_lines.size() > kShownForfeits)
    out << "forfeit: ... and " << s.forfeit_lines.size() - kShownForfeits << " more\n";
  out << "Elo (A - B): " << elo_text(s, "  95% ")
      << "  pairs 0/0.5/1/1.5/2 points: " << format_pairs(s) << '\n';
  for (const std::string& caveat : elo_caveats(s)) out << "(" << caveat << ")\n";
  if (s.sprt) {
    std::snprintf(buffer, sizeof buffer, "SPRT %s: %s  LLR %.3f (bounds %.3f, %.3f)\n",
                  s.sprt->describe().c_str(), describe_verdict(s).c_str(), s.llr, s.bounds.lower,
                  s.bounds.upper);
    out << buffer;
  }
  if (s.stopped)
    out << "stopped: the match was stopped after " << s.games_counted << " of up to " << s.games_cap
        << " games; the games in progress were abandoned\n";
  auto side_time = [](const SideTime& t) {
    std::string text = per_move_text(t);
    if (t.max_move > 0) text += ", max " + format_seconds(t.max_move);
    return text + " (" + std::to_string(t.moves) + " moves)";
  };
  out << "time per move: A " << side_time(s.time[0]) << ", B " << side_time(s.time[1]) << "; wall "
      << format_seconds(s.seconds) << '\n';
  return out.str();
}

}  // namespace oppidum::arena
