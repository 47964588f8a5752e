// Learning, shown on a solved game: `oppidum train --config configs/ttt.yaml` for a fixed budget
// (200 generations, about 40 s on a loaded 2-core machine, the config's seed), then the trained
// network, searching a modest number of simulations, plays tic-tac-toe as judged by the exhaustive
// minimax of tests/ttt_solver.h:
// - as X and as O it never loses, whatever the opponent plays: every legal reply is tried at
//   every opponent move, so every line of a perfect minimax opponent is among them; and in no
//   position on the way does it play a move that gives away the position's value (it takes every
//   win an opponent's mistake offers);
// - from the positions of the first four plies in which the side to move has a forced win (682,
//   most of them after mistakes of both sides), it plays a winning move in all but at most one.
// The untrained network with the same search fails these checks (it loses 29 lines as O), so they
// measure what training learnt. The two real games are far too big to solve; the small solved
// one shows it.
//
// Training runs threads side by side, so two runs are not identical, and the test holds only with
// a margin. Measured on a 2-core machine: judged at 200 simulations with no forced win missed, the
// test failed in about 1 run of 30 (once on CI, 2026-12-07: 1 of 682 missed). One run's
// checkpoints (2026-12-07) show why: from generation 20 on, every one of them was perfect but for
// a forced win or two, missed at 200 simulations by 7 of 69 checkpoints (gens 20-59 each, 60-200
// every fifth), at 400 by 2, and by none with one allowed. Hence 400 simulations and one miss.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arena/player.h"
#include "games/state_adapter.h"
#include "games/ttt/game.h"
#include "games/ttt/position.h"
#include "model/inference_server.h"
#include "tests/process_util.h"
#include "tests/ttt_solver.h"

namespace oppidum::ttt {
namespace {
namespace fs = std::filesystem;

const std::string kBinary = OPPIDUM_BINARY;
const std::string kConfig = OPPIDUM_TTT_CONFIG;
// The training budget: generations of training.steps_per_generation optimiser steps.
constexpr int kGenerations = 200;
// Simulations of the network player's search: with the untrained network it loses 29 lines as O
// (23 at 200 simulations); tic-tac-toe has 549,946 positions in its game tree.
constexpr int kSimulations = 400;
// Forced wins of the first four plies the trained network may miss (see the measurements above).
constexpr std::size_t kMissedWinsAllowed = 1;

// A network player that answers each position once (it is a pure function of the position and
// the seed, and the seed here is the position's hash).
class NetPlayer {
 public:
  explicit NetPlayer(const std::string& checkpoint) {
    arena::PlayerOptions options;
    options.net_factory = model::net_evaluator_factory({});
    player_ = arena::make_player(ttt_game(), "net:checkpoint=" + checkpoint + ",sims=" +
                                                 std::to_string(kSimulations), options);
  }
  Action move(const Position& p) {
    if (const auto it = moves_.find(p.hash()); it != moves_.end()) return it->second;
    const StateAdapter<Position> state(ttt_game(), p);
    const Action a = player_->choose_move(state, p.hash());
    moves_[p.hash()] = a;
    return a;
  }

 private:
  std::unique_ptr<arena::Player> player_;
  std::map<std::uint64_t, Action> moves_;
};

struct Verdict {
  int games = 0;                      // finished lines
  std::vector<std::string> losses;    // lines the network lost
  std::set<std::string> blunders;     // positions where its move gave away value, and the move
};

std::string describe(const Position& p, Action a) {
  return p.to_string() + " plays " + p.action_to_string(a);
}

// The network plays `side`; the opponent tries every legal move.
void explore(const Position& p, int side, NetPlayer& net, test_util::Solver& solver,
             const std::string& line, Verdict& v) {
  if (p.is_terminal()) {
    ++v.games;
    if (p.winner() == 1 - side) v.losses.push_back(line);
    return;
  }
  ActionList actions;
  if (p.side_to_move() == side) {
    actions.push_back(net.move(p));
    if (solver.value_of_move(p, actions[0]) < solver.value(p))
      v.blunders.insert(describe(p, actions[0]));
  } else {
    p.legal_actions(actions);
  }
  for (Action a : actions) {
    Position next = p;
    next.apply(a);
    explore(next, side, net, solver, line + " " + p.action_to_string(a), v);
  }
}

// Every position of plies 0..4 in which the side to move has a forced win.
std::vector<Position> early_forced_wins(test_util::Solver& solver) {
  std::vector<Position> out;
  std::set<std::uint64_t> seen;
  std::vector<Position> stack = {Position::initial()};
  while (!stack.empty()) {
    const Position p = stack.back();
    stack.pop_back();
    if (p.is_terminal() || p.ply() > 4 || !seen.insert(p.hash()).second) continue;
    if (solver.value(p) == 1) out.push_back(p);
    ActionList actions;
    p.legal_actions(actions);
    for (Action a : actions) {
      Position next = p;
      next.apply(a);
      stack.push_back(next);
    }
  }
  return out;
}

// What a checkpoint's play gets wrong: losses and blunders as either side, and forced wins missed.
struct Report {
  Verdict as_x, as_o;
  std::vector<std::string> missed_wins;
  int forced_win_positions = 0;
  bool good() const {
    return as_x.losses.empty() && as_o.losses.empty() && as_x.blunders.empty() &&
           as_o.blunders.empty() && missed_wins.size() <= kMissedWinsAllowed;
  }
};

Report judge(const std::string& checkpoint) {
  NetPlayer net(checkpoint);
  test_util::Solver solver;
  Report r;
  explore(Position::initial(), 0, net, solver, "", r.as_x);
  explore(Position::initial(), 1, net, solver, "", r.as_o);
  const std::vector<Position> wins = early_forced_wins(solver);
  r.forced_win_positions = static_cast<int>(wins.size());
  for (const Position& p : wins) {
    const Action a = net.move(p);
    if (solver.value_of_move(p, a) != 1) r.missed_wins.push_back(describe(p, a));
  }
  return r;
}

template <class C>
std::string first_few(const C& items) {
  std::string out;
  int n = 0;
  for (const auto& item : items) {
    if (n++ == 5) return out + "\n  ...";
    out += "\n  " + item;
  }
  return out;
}

TEST(TttLearning, ATrainedNetworkPlaysLikeMinimax) {
  const fs::path run = fs::path(::testing::TempDir()) / "ttt_learning";
  fs::remove_all(run);
  const std::string log = run.string() + ".log";
  // No anchor games: the network is judged against minimax here, after training.
  const auto trained = oppidum::test_util::run_shell(
      kBinary + " train --config " + kConfig + " --run " + run.string() +
      " --set run.max_generations=" + std::to_string(kGenerations) +
      " --set arena.anchor_games=0 --no-status 2>" + log);
  ASSERT_EQ(trained.status, 0) << oppidum::test_util::read_file(log);
  ASSERT_TRUE(fs::exists(run / "checkpoints/gen-0200.ckpt")) << oppidum::test_util::read_file(log);

  const Report untrained = judge((run / "checkpoints/gen-0000.ckpt").string());
  EXPECT_FALSE(untrained.good())
      << "the untrained network already plays this well with this search: the test shows nothing";

  const Report r = judge((run / "checkpoints/best.ckpt").string());
  EXPECT_GT(r.as_x.games, 50);
  EXPECT_GT(r.as_o.games, 200);
  EXPECT_TRUE(r.as_x.losses.empty()) << r.as_x.losses.size() << " lost lines as X:"
                                     << first_few(r.as_x.losses);
  EXPECT_TRUE(r.as_o.losses.empty()) << r.as_o.losses.size() << " lost lines as O:"
                                     << first_few(r.as_o.losses);
  EXPECT_TRUE(r.as_x.blunders.empty()) << "moves as X that give away the value:"
                                       << first_few(r.as_x.blunders);
  EXPECT_TRUE(r.as_o.blunders.empty()) << "moves as O that give away the value:"
                                       << first_few(r.as_o.blunders);
  EXPECT_GT(r.forced_win_positions, 100);
  EXPECT_LE(r.missed_wins.size(), kMissedWinsAllowed)
      << r.missed_wins.size() << " of " << r.forced_win_positions
                                     << " forced wins missed:" << first_few(r.missed_wins);
}

}  // namespace
}  // namespace oppidum::ttt
