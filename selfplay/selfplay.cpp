#include "selfplay/selfplay.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include "games/playout.h"
#include "mcts/rng.h"
#include "mcts/seed.h"
#include "util/log.h"
#include "util/machine.h"

namespace oppidum::selfplay {
namespace {

constexpr std::uint64_t kBudgetStream = 0x4255444745540000ULL;   // full or fast search per move
constexpr std::uint64_t kSessionStream = 0x53455353494F4E00ULL;  // runner seed per session+worker
constexpr std::uint64_t kResignStream = 0x52455349474E0000ULL;   // which games are played out

class SelfPlayDriver final : public mcts::GameDriver {
 public:
  SelfPlayDriver(const Game& game, const SelfPlaySettings& s, std::uint64_t runner_seed,
                 ResignControl& resign, std::atomic<std::int64_t>& moves,
                 std::function<void(mcts::FinishedGame, std::uint64_t)> done)
      : game_(game), s_(s), runner_seed_(runner_seed), resign_(resign), moves_(moves),
        done_(std::move(done)) {}

  // The search's choice, counted as it is played (SelfPlayStats::moves).
  Action choose_move(int, const GameState&, const mcts::SearchResult& search) override {
    moves_.fetch_add(1, std::memory_order_relaxed);
    return search.action;
  }

  int resignation(int game_index, const std::vector<mcts::MoveStats>& moves) override {
    const int player = resign_.wants_to_resign(moves);
    if (player < 0 || checked_.count(game_index) > 0) return -1;
    mcts::Rng rng(mcts::derive_seed(runner_seed_, kResignStream,
                                    static_cast<std::uint64_t>(game_index)));
    const bool play_out = rng.uniform() < resign_.settings().playout;
    if (!play_out && resign_.allowed()) {
      resign_.count_resignation();
      return player;
    }
    checked_.emplace(game_index, player);  // played on: checked when the game ends
    return -1;
  }

  mcts::GameSetup setup_game(int) override {
    mcts::GameSetup setup;
    setup.start = game_.initial_state();
    return setup;
  }

  mcts::SearchBudget search_budget(int game_index, const GameState& state,
                                   const mcts::Agent&) override {
    mcts::Rng rng(mcts::derive_seed(runner_seed_, kBudgetStream,
                                    static_cast<std::uint64_t>(game_index) * 65536 +
                                        static_cast<std::uint64_t>(state.ply())));
    const bool full = rng.uniform() < s_.full_search_fraction;
    return {full ? s_.simulations : s_.fast_simulations, full, full};
  }

  void game_finished(mcts::FinishedGame game) override {
    const auto checked = checked_.find(game.index);
    if (checked != checked_.end()) {
      const double for_resigner = checked->second == 0 ? game.result : -game.result;
      resign_.record_check(for_resigner >= 0);
      checked_.erase(checked);
    }
    const std::uint64_t seed =
        mcts::derive_seed(runner_seed_, mcts::kSearchStream, static_cast<std::uint64_t>(game.index));
    done_(std::move(game), seed);
  }

 private:
  const Game& game_;
  const SelfPlaySettings& s_;
  std::uint64_t runner_seed_;
  ResignControl& resign_;
  std::atomic<std::int64_t>& moves_;
  std::unordered_map<int, int> checked_;  // game index -> the player who would have resigned
  std::function<void(mcts::FinishedGame, std::uint64_t)> done_;
};

// A PUCT search's target weights: its root's visits (all, or this search's alone), with what the
// search proved (mcts::settle_target).
std::vector<double> visit_target(const mcts::MoveStats& m, bool this_search_only) {
  const std::vector<int>& visits = this_search_only ? m.search_visits : m.visits;
  std::vector<double> weights(m.legal.size(), 0.0);
  for (std::size_t i = 0; i < weights.size() && i < visits.size(); ++i) weights[i] = visits[i];
  mcts::settle_target(weights, m.child_proven, m.proven);
  return weights;
}

}  // namespace

GameRecord to_record(const mcts::FinishedGame& game, std::uint64_t seed, std::int64_t network_step,
                     bool target_this_search_only) {
  GameRecord r;
  r.game = game.start->game().name();
  r.start = game.start->to_string();
  r.seed = seed;
  r.network_step = network_step;
  r.result = static_cast<std::int8_t>(game.result);
  r.adjudicated = game.adjudicated;
  r.resigned = game.resigned >= 0;
  for (int p = 0; p < 2; ++p) r.score[p] = static_cast<std::int16_t>(game.final_state->score(p));
  r.moves.reserve(game.moves.size());
  for (const mcts::MoveStats& m : game.moves) {
    MoveRecord move;
    move.action = static_cast<std::uint16_t>(m.action);
    move.root_value = m.root_value;
    move.policy_target = m.full_search;
    // Gumbel's improved policy (settled by the search) is kept as integer weights summing to about
    // kPolicyWeightScale.
    std::vector<double> weights = visit_target(m, target_this_search_only && m.full_search);
    if (m.improved_policy)
      for (std::size_t i = 0; i < m.legal.size(); ++i)
        weights[i] = std::round(m.policy[i] * kPolicyWeightScale);
    for (std::size_t i = 0; i < m.legal.size(); ++i) {
      const auto weight = static_cast<std::uint32_t>(weights[i]);
      if (weight > 0) move.visits.push_back({static_cast<std::uint16_t>(m.legal[i]), weight});
    }
    r.moves.push_back(std::move(move));
  }
  return r;
}

namespace {

// The mean number of legal actions over seeded random positions (games/playout.h): the nodes a
// search's expansion makes, one per child (mcts/search.h, "Memory").
double mean_children(const Game& game) {
  std::mt19937_64 rng(1);
  double sum = 0, positions = 0;
  ActionList legal;
  for (int k = 0; k < 256; ++k) {
    random_position(game, rng, game.max_game_length(), legal);
    if (legal.empty()) continue;
    sum += legal.size(), positions += 1;
  }
  return positions > 0 ? sum / positions : 1.0;
}

// search_memory_bytes, and the mean number of children it counts a node with.
struct SearchMemory {
  double children = 0, bytes = 0;
};

SearchMemory search_memory(const SelfPlaySettings& settings) {
  const double games = static_cast<double>(settings.threads) * settings.concurrent_games;
  // Each simulation expands a leaf into its children: a tree holds about simulations x the mean
  // number of legal actions nodes (one per simulation, as counted before, let trees 40 times the
  // estimate through in Murus Gallicus, which then ran out of memory).
  const double children = mean_children(game_by_name(settings.game));
  const double nodes =
      std::min<double>(std::max(settings.simulations, settings.fast_simulations) * children,
                       static_cast<double>(settings.search.max_tree_nodes));
  return {children, games * (nodes * 32.0 + kGameBytes)};
}

}  // namespace

double search_memory_bytes(const SelfPlaySettings& settings) {
  return search_memory(settings).bytes;
}

void check_search_memory(const SelfPlaySettings& settings, double machine_bytes) {
  const SearchMemory memory = search_memory(settings);
  const double machine = machine_bytes > 0 ? machine_bytes : util::machine_memory_bytes();
  if (machine > 0 && memory.bytes > machine) {
    char text[400];
    std::snprintf(text, sizeof text,
                  "self-play: %d threads x %d concurrent games of %d simulations (of about %.0f "
                  "children each) need about %.1f GiB for their games and search trees, and this "
                  "machine has %.1f GiB: give fewer selfplay.threads, selfplay.concurrent_games "
                  "or selfplay.simulations",
                  settings.threads, settings.concurrent_games,
                  std::max(settings.simulations, settings.fast_simulations), memory.children,
                  memory.bytes / (1 << 30), machine / (1 << 30));
    throw std::invalid_argument(text);
  }
}

SelfPlay::SelfPlay(mcts::Evaluator& evaluator, GameSink& store, SelfPlaySettings settings,
                   std::function<std::int64_t()> network_step)
    : evaluator_(evaluator),
      store_(store),
      settings_(std::move(settings)),
      network_step_(std::move(network_step)),
      finished_(static_cast<std::size_t>(settings_.games_per_chunk) * 4),
      resign_(settings_.resign) {
  check_search_memory(settings_);
}

SelfPlay::~SelfPlay() { stop(); }

void SelfPlay::start() {
  if (!threads_.empty()) throw std::logic_error("SelfPlay::start called twice");
  stop_ = false;
  finished_.reopen();  // closed by a previous stop()
  ++starts_;
  threads_.emplace_back([this] { writer(); });
  for (int i = 0; i < settings_.threads; ++i) threads_.emplace_back([this, i] { worker(i); });
}

void SelfPlay::stop() {
  stop_ = true;
  // Workers first (they may be blocked pushing into a full queue: closing would drop their game,
  // so let the writer keep draining until they are gone), then the writer.
  for (std::size_t i = 1; i < threads_.size(); ++i) threads_[i].join();
  finished_.close();
  if (!threads_.empty()) threads_[0].join();
  threads_.clear();
}

void SelfPlay::record_error(const std::string& what) {
  std::cerr << "self-play: " << what << std::endl;
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (error_.empty()) error_ = what;
}

void SelfPlay::worker(int index) {
  const auto report = [this](const std::string& line) { record_error(line); };
  util::report_exceptions(report, "worker " + std::to_string(index) + " stopped", [&] {
    const Game& game = game_by_name(settings_.game);
    // A restart after stop() plays new games too.
    const std::uint64_t runner_seed = mcts::derive_seed(
        settings_.seed, kSessionStream + settings_.session,
        static_cast<std::uint64_t>(index) + (std::uint64_t{1} << 32) * (starts_ - 1));
    mcts::RunnerConfig rc;
    rc.num_games = INT_MAX;
    rc.concurrent_games = settings_.concurrent_games;
    rc.max_plies = settings_.max_plies;
    rc.seed = runner_seed;
    mcts::Agent agent{"selfplay", &evaluator_, settings_.search};
    agent.search.simulations = settings_.simulations;
    mcts::GameRunner runner({agent}, rc);
    SelfPlayDriver driver(game, settings_, runner_seed, resign_, moves_,
                          [this](mcts::FinishedGame g, std::uint64_t seed) {
                            count_reuse(g);
                            ++finished_games_;
                            finished_.push(to_record(g, seed, network_step_(),
                                                     settings_.target_this_search_only));
                          });
    runner.run(driver, &stop_);
  });
}

void SelfPlay::writer() {
  std::vector<GameRecord> chunk;
  auto flush = [&] {
    if (chunk.empty()) return;
    store_.append(chunk);
    std::int64_t positions = 0, targets = 0;
    for (const GameRecord& r : chunk) {
      positions += static_cast<std::int64_t>(r.moves.size());
      for (const MoveRecord& m : r.moves) targets += m.policy_target;
    }
    games_ += static_cast<std::int64_t>(chunk.size());
    positions_ += positions;
    policy_targets_ += targets;
    chunk.clear();
  };
  const auto report = [this](const std::string& line) { record_error(line); };
  const bool written = util::report_exceptions(report, "writer stopped", [&] {
    // A chunk is written when it holds games_per_chunk games, or when its first game has waited
    // max_chunk_seconds.
    const auto max_age = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(settings_.max_chunk_seconds));
    std::chrono::steady_clock::time_point first_game;
    for (;;) {
      bool timed_out = false;
      auto record = chunk.empty()
                        ? finished_.pop()
                        : finished_.pop_until(first_game + max_age, timed_out);
      if (timed_out) {
        flush();
        continue;
      }
      if (!record) break;
      if (chunk.empty()) first_game = std::chrono::steady_clock::now();
      chunk.push_back(std::move(*record));
      if (static_cast<int>(chunk.size()) >= settings_.games_per_chunk) flush();
    }
    flush();
  });
  if (!written) {
    stop_ = true;
    finished_.close();
  }
}

void SelfPlay::count_reuse(const mcts::FinishedGame& game) {
  // The target's visits, and of them those kept from earlier searches.
  std::int64_t all = 0, reused = 0;
  for (const mcts::MoveStats& m : game.moves) {
    if (!m.full_search || m.improved_policy) continue;
    const std::vector<double> target = visit_target(m, false);
    for (std::size_t i = 0; i < target.size(); ++i) {
      all += static_cast<std::int64_t>(target[i]);
      if (target[i] > 0 && i < m.search_visits.size())
        reused += std::max(0, m.visits[i] - m.search_visits[i]);
    }
  }
  target_visits_ += all;
  reused_target_visits_ += reused;
}

SelfPlayStats SelfPlay::stats() const {
  SelfPlayStats s;
  s.games = games_.load();
  s.finished = finished_games_.load();
  s.positions = positions_.load();
  s.moves = moves_.load();
  s.policy_targets = policy_targets_.load();
  s.target_visits = target_visits_.load();
  s.reused_target_visits = reused_target_visits_.load();
  s.resign = resign_.stats();
  return s;
}

std::string SelfPlay::error() const {
  std::lock_guard<std::mutex> lock(error_mutex_);
  return error_;
}

}  // namespace oppidum::selfplay
