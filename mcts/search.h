// PUCT search (AlphaZero) over one game tree, driven by one thread.
//
// The search is split into two steps so that one thread can advance many trees in lock-step and
// send all their leaves to the evaluator as one batch (mcts/runner.h does this):
//   tree.start_search(simulations);
//   while (const PendingLeaf* leaf = tree.select_leaf()) {   // nullptr: this search is finished
//     EvalResult r; evaluator.evaluate(&leaf->request(), 1, &r) ... tree.receive(r);
//   }
//   SearchResult result = tree.result();  tree.advance(result.action);
// `run(evaluator, simulations)` is that loop with batches of one.
//
// What a search does:
// - A simulation descends from the root by PUCT, score = Q + c * P * sqrt(N_parent) / (1 + N),
//   c = cpuct (+ log((1 + N_parent + cpuct_base) / cpuct_base) when cpuct_base > 0). An unvisited
//   child's Q is the parent's Q minus fpu_reduction * sqrt(sum of the priors of visited children).
// - It ends at a node never reached before: a terminal position is scored by GameState::result
//   with no evaluation; any other position becomes the pending leaf, and its evaluation expands it
//   (one child per legal action, in legal_actions order) and is backed up the path. A simulation
//   that reaches a proven node backs up the proven result, again with no evaluation.
// - Values are stored per node from the view of the player who moved into it, and every value is
//   oriented with GameState::current_player(), never by assuming that players alternate.
// - Proven results: a terminal node is proven by its result; a node with a child that is a proven
//   win for the side to move there is a proven win for that side; a node whose children are all
//   proven is proven with the best of them (all losses: lost; else a draw). Selection takes a proven
//   winning child at once and skips proven losing children; the final choice takes a proven win.
//   A search stops early once its root is proven.
// - The root's first evaluation expands it and is not counted as a simulation, so on a fresh tree
//   the root's child visits sum to the simulations of the search (fewer if the root got proven).
// - Root Dirichlet noise, when dirichlet_weight > 0: each search mixes
//   prior' = (1 - w) prior + w Dir(alpha), alpha = dirichlet_alpha_scale / num_legal, into the
//   root's priors only; the previous search's noise is undone first, deeper priors never change.
// - Tree reuse: advance(action) keeps the chosen child's subtree (its visits stay, so after reuse
//   the reported child visits are the reused ones plus this search's simulations), or starts a
//   fresh tree when that child was never expanded.
// - All randomness (noise, temperature sampling) comes from config.seed: the same seed, position
//   and evaluator results give the same search.
//
// Memory: all nodes of a tree live in one vector; a node's children are one contiguous block
// allocated when it is expanded (about 32 bytes per child). advance() compacts the kept subtree.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "games/game.h"
#include "mcts/evaluator.h"
#include "mcts/rng.h"

namespace oppidum::mcts {

struct SearchConfig {
  int simulations = 800;         // per search (the runner's budget; run() takes its own)
  float cpuct = 1.5f;            // exploration constant
  float cpuct_base = 0.0f;       // > 0 adds AlphaZero's log((1 + N + base) / base); 0 = off
  float fpu_reduction = 0.25f;   // first-play urgency: see the header comment
  float dirichlet_alpha_scale = 10.0f;  // alpha = scale / number of legal actions at the root
  float dirichlet_weight = 0.25f;       // share of noise in the root priors; 0 = no noise
  int temperature_plies = 30;    // positions with ply() < this use `temperature`, later ones
  float temperature = 1.0f;      // `final_temperature`; a temperature below kMinTemperature
  float final_temperature = 0.0f;  // means "the most visited move"
  std::uint64_t seed = 0;

  // Throws std::invalid_argument naming the first out-of-range field.
  void validate() const;
};

// Temperatures below this pick the most visited move instead of sampling.
inline constexpr float kMinTemperature = 1e-3f;

// A game-theoretic result known for sure, for a stated player.
enum class Proven : std::int8_t { kUnknown = 0, kWin, kDraw, kLoss };

const char* to_string(Proven proven);

// A position waiting for the evaluator: an owned copy of the leaf and its legal actions.
struct PendingLeaf {
  std::unique_ptr<GameState> state;
  ActionList legal;
  EvalRequest request() const { return {state.get(), &legal}; }
};

// What one search found at the root; per-action vectors are aligned with `legal`.
struct SearchResult {
  ActionList legal;             // the root's legal actions, in legal_actions order
  std::vector<int> visits;      // child visit counts (reused visits included)
  std::vector<float> policy;    // visits normalised: the improved policy, a training target
  std::vector<float> sampling;  // the temperature-applied distribution `action` was drawn from
  float temperature = 0.0f;     // the temperature used for this ply
  float root_value = 0.0f;      // mean backed-up value for the side to move at the root
  Proven proven = Proven::kUnknown;  // for the side to move at the root
  int simulations = 0;          // simulations run by this search (not counting reused visits)
  std::vector<Action> principal_variation;  // most visited line from the root
  Action action = -1;           // the chosen move
};

// One child of a node, for inspection (tests, analysis output).
struct ChildStats {
  Action action = -1;
  float prior = 0.0f;
  int visits = 0;
  float value = 0.0f;  // mean value for the side to move at the parent (0 when unvisited)
  Proven proven = Proven::kUnknown;  // for the side to move at the parent
};

class SearchTree {
 public:
  // Copies `root`. Throws std::invalid_argument when config.validate() does.
  SearchTree(const GameState& root, const SearchConfig& config);

  const GameState& root_state() const { return *root_state_; }
  const SearchConfig& config() const { return config_; }

  // Begins a search that runs `simulations` (>= 1) new simulations; `root_noise` false leaves the
  // root priors clean even when the config has noise (the fast searches of playout-cap
  // randomisation). Throws std::logic_error when the root is terminal or a leaf is still pending.
  void start_search(int simulations, bool root_noise = true);
  // Runs simulations until one needs the evaluator and returns that leaf (owned by the tree, valid
  // until receive()), or nullptr when the search is finished. Throws std::logic_error outside a
  // search or while a leaf is pending.
  const PendingLeaf* select_leaf();
  // Backs up the evaluation of the pending leaf. Throws std::logic_error with no leaf pending or
  // when the priors do not match its legal actions; priors are renormalised, the value clamped.
  void receive(const EvalResult& evaluation);
  // True once the search's simulations are done or the root is proven.
  bool search_finished() const;

  // The statistics of the current root and the chosen move (consumes randomness when the
  // temperature samples). Throws std::logic_error before the root was ever evaluated.
  SearchResult result();
  // start_search + select/evaluate/receive with batches of one + result().
  SearchResult run(Evaluator& evaluator, int simulations);

  // Plays `action` at the root and keeps its subtree. Throws std::logic_error if it is illegal
  // or a leaf is pending. Ends any search in progress.
  void advance(Action action);

  // Inspection: the children of the node reached from the root by `path` (empty when that node is
  // not expanded). Throws std::logic_error when the path leaves the tree.
  std::vector<ChildStats> children(const std::vector<Action>& path = {}) const;
  Proven root_proven() const;  // for the side to move at the root
  int root_visits() const;
  int node_count() const { return static_cast<int>(nodes_.size()); }

 private:
  struct Node {
    double value_sum = 0.0;    // sum of backed-up values, for `mover`
    std::int32_t visits = 0;
    std::int32_t first_child = -1;  // index of the first child; -1 until expanded
    float prior = 0.0f;
    std::uint16_t action = 0;  // the action that leads here from the parent
    std::uint16_t num_children = 0;
    std::int8_t mover = 0;     // the player who moved into this node
    std::int8_t to_move = -1;  // the side to move here; -1 until first reached
    Proven proven = Proven::kUnknown;  // for `mover`

    bool expanded() const { return first_child >= 0; }
    // Mean value for `player` (0 when unvisited).
    double value_for(int player) const;
  };
  static constexpr int kRoot = 0;

  void reset_tree();
  int select_child(int node) const;
  // Gives the node its children, one per legal action, with the given (normalised) priors.
  void expand(int node, const ActionList& legal, const std::vector<float>& priors);
  // Adds `value_p0` (a value for player 0) to every node of path_, and counts the simulation.
  void backup(double value_p0);
  // Re-derives proven status bottom-up along path_ after a proven leaf was backed up.
  void update_proofs();
  bool update_proof(int node);
  // Ends a simulation at a terminal or proven node: scores it and backs it up.
  void finish_at_proven(int node);
  void apply_root_noise();
  void restore_root_priors();
  int most_visited_child(int node) const;
  // The chosen root child given the temperature; fills result.sampling.
  int choose_root_child(SearchResult& result);
  Node& node(int index) { return nodes_[static_cast<std::size_t>(index)]; }
  const Node& node(int index) const { return nodes_[static_cast<std::size_t>(index)]; }

  SearchConfig config_;
  Rng rng_;
  std::unique_ptr<GameState> root_state_;
  std::vector<Node> nodes_;
  std::vector<int> path_;                    // node indices of the current simulation
  std::unique_ptr<PendingLeaf> pending_;     // the leaf awaiting evaluation, if any
  std::vector<float> root_priors_before_noise_;  // empty when the root priors are noise-free
  bool searching_ = false;
  bool noise_applied_ = false;
  bool noise_enabled_ = true;  // this search may add root noise
  int simulations_target_ = 0;
  int simulations_done_ = 0;
};

}  // namespace oppidum::mcts
