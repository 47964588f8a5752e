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
//   A search stops early once its root is proven. Its result's root value is then the proven
//   result, and its target keeps only what the proofs allow (settle_target).
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
// Gumbel root search (config.root = kGumbel; Danihelka et al., "Policy improvement by planning
// with Gumbel", ICLR 2022), PUCT below the root as above:
// - Each search draws g(a) ~ Gumbel(0, 1) for every root action (none when gumbel_noise is off)
//   and no Dirichlet noise. Logits are log(prior).
// - Sequential halving: simulation k of the search goes to the root child, among those whose
//   visits in THIS search equal schedule[k] (sequential_halving_schedule), with the highest
//   g(a) + logit(a) + sigma(completed Q(a)). So the first m = min(gumbel_considered, legal)
//   simulations visit the Gumbel-top-m actions once each, and each later phase halves them.
// - Completed Q: a visited child's mean value (a proven child's proven value); an unvisited one
//   gets the mixed value (v + N * sum_visited(p q) / sum_visited(p)) / (N + 1), v the network's
//   value of the root and N the root children's visits. The completed values are rescaled to
//   [0, 1] by their min and max (0 when all equal), and
//   sigma(q) = (gumbel_c_visit + max child visits) * gumbel_c_scale * q.
// - The improved policy, the training target, is softmax(logit + sigma(completed Q)) over the
//   legal actions. The move is the most visited (in this search) child with the highest
//   g + logit + sigma: deterministic given the noise; temperatures are not used. A proven win is
//   always taken.
//
// Memory: all nodes of a tree live in one vector; a node's children are one contiguous block
// allocated when it is expanded (32 bytes per child). A tree holds at most max_tree_nodes (1 GiB
// by default, 1.5 GiB while the vector doubles to it; the root's own expansion always fits): a
// search whose next expansion would pass it ends there, like one that reached its deadline
// (SearchResult::tree_full), so a long timed search cannot take the machine's memory. A search also ends before the root's visits would pass 2^31 - 1
// (they add up over tree reuse). advance() compacts the kept subtree. A
// simulation allocates nothing once the vectors have grown: its state is one GameState reused
// through copy_from, and the scratch buffers live in the tree.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "games/game.h"
#include "mcts/evaluator.h"
#include "mcts/rng.h"

namespace oppidum::mcts {

// How the root's simulations are spread and the move chosen (see the header comment).
enum class RootPolicy : std::uint8_t { kPuct, kGumbel };
const char* to_string(RootPolicy root);
// "puct" or "gumbel"; throws std::invalid_argument for anything else.
RootPolicy root_policy_from_string(const std::string& text);

struct SearchConfig {
  int simulations = 800;         // per search (the runner's budget; run() takes its own)
  float cpuct = 1.5f;            // exploration constant
  float cpuct_base = 0.0f;       // > 0 adds AlphaZero's log((1 + N + base) / base); 0 = off
  float fpu_reduction = 0.25f;   // first-play urgency: see the header comment
  float dirichlet_alpha_scale = 10.0f;  // alpha = scale / number of legal actions at the root
  float dirichlet_weight = 0.25f;       // share of noise in the root priors; 0 = no noise
  int temperature_plies = 20;    // positions with ply() < this use `temperature`, later ones
  float temperature = 1.0f;      // `final_temperature`; a temperature below kMinTemperature
  float final_temperature = 0.0f;  // means "the most visited move"
  std::uint64_t seed = 0;
  RootPolicy root = RootPolicy::kPuct;
  int gumbel_considered = 16;    // m: root actions sampled by Gumbel-top-m (at least 2)
  float gumbel_c_visit = 50.0f;  // sigma's constants (the paper's c_visit and c_scale)
  float gumbel_c_scale = 1.0f;
  bool gumbel_noise = true;      // false: g = 0, a deterministic search (arena players)
  // Most nodes of the tree (header comment, "Memory"): 2^25 nodes of 32 bytes are 1 GiB.
  std::int64_t max_tree_nodes = std::int64_t{1} << 25;

  // Throws std::invalid_argument naming the first out-of-range field.
  void validate() const;
};

// The considered visit count of every simulation index of a Gumbel search of `simulations` over
// `considered` root actions: ceil(log2(considered)) phases; a phase with r actions left gives each
// max(1, floor(simulations / (r * phases))) more visits, then keeps the better half (at least 2);
// after the last phase the two best share what is left. One action: 0, 1, 2, ...
std::vector<int> sequential_halving_schedule(int considered, int simulations);

// Temperatures below this pick the most visited move instead of sampling.
inline constexpr float kMinTemperature = 1e-3f;

// A game-theoretic result known for sure, for a stated player.
enum class Proven : std::int8_t { kUnknown = 0, kWin, kDraw, kLoss };

const char* to_string(Proven proven);

// A position waiting for the evaluator: the leaf and its legal actions (owned by the tree, which
// reuses them for every simulation).
struct PendingLeaf {
  std::unique_ptr<GameState> state;
  ActionList legal;
  EvalRequest request() const { return {state.get(), &legal}; }
};

// What one search found at the root; per-action vectors are aligned with `legal`.
struct SearchResult {
  ActionList legal;             // the root's legal actions, in legal_actions order
  std::vector<int> visits;      // child visit counts (reused visits included)
  std::vector<int> search_visits;  // child visits of this search alone
  // The training target. PUCT: `visits` normalised; Gumbel: the improved policy (header comment);
  // either with what the search proved (settle_target).
  std::vector<float> policy;
  bool improved_policy = false;  // `policy` is Gumbel's improved policy, not visit counts
  std::vector<float> sampling;  // the temperature-applied distribution `action` was drawn from
  float temperature = 0.0f;     // the temperature used for this ply
  float root_value = 0.0f;      // mean backed-up value for the side to move at the root; a
                                // proven root's: its result (1, 0, -1)
  Proven proven = Proven::kUnknown;  // for the side to move at the root
  std::vector<Proven> child_proven;  // each child's, for the side to move at the root
  int simulations = 0;          // simulations run by this search (not counting reused visits)
  bool tree_full = false;       // the search ended early: its tree reached max_tree_nodes
  std::vector<Action> principal_variation;  // most visited line from the root
  Action action = -1;           // the chosen move
};

// The one rule for what a search proved, applied to the weights of a training target aligned
// with its children (visit counts, or Gumbel's improved policy): a root proven won or drawn keeps
// the weights of the children that keep that result (1 each where all of theirs are 0, e.g. this
// search's visits of a root proven by an earlier one); a root not proven loses the weights of its
// children proven lost, unless nothing else has weight; a lost root keeps all. (The search stops
// at a proof, often on the winning move's first visit: visits alone would spread a won root's
// target over the moves tried before it.)
void settle_target(std::vector<double>& weights, const std::vector<Proven>& child_proven,
                   Proven root);

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
  // True once the search's simulations are done, the root is proven or the tree is full (or, in
  // run_until, its deadline has passed and the root is evaluated).
  bool search_finished() const;

  // The statistics of the current root and the chosen move (consumes randomness when the
  // temperature samples). Throws std::logic_error before the root was ever evaluated.
  SearchResult result();
  // start_search + select/evaluate/receive with batches of one + result().
  SearchResult run(Evaluator& evaluator, int simulations);
  // run() to a deadline (steady clock): simulations until `deadline`, `max_simulations`, a
  // proven root, a root with one legal action or `stop()` (when given) returning true, with at
  // least one evaluation (the root's on a fresh tree). The clock and `stop` are read before every
  // simulation (also those that end at a terminal or proven node without an evaluation), so the
  // search ends within one simulation of either. A PUCT root only (a Gumbel root plans its
  // simulations in advance): std::logic_error otherwise.
  SearchResult run_until(Evaluator& evaluator, std::chrono::steady_clock::time_point deadline,
                         int max_simulations, const std::function<bool()>& stop = {});

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
    float net_value = 0.0f;    // the evaluator's value for `to_move`, once expanded
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
  int select_child(int node);
  // Gives the node its children, one per legal action, with the given (normalised) priors.
  void expand(int node, const ActionList& legal, const std::vector<float>& priors);
  // Adds `value_p0` (a value for player 0) to every node of path_, and counts the simulation.
  void backup(double value_p0);
  // Re-derives proven status bottom-up along path_ after a proven leaf was backed up.
  void update_proofs();
  bool update_proof(int node);
  // Ends a simulation at a terminal or proven node: scores it and backs it up.
  void finish_at_proven(int node);
  // Once per search, when the root is expanded: root noise, this search's visit counters, and
  // the Gumbel draws and schedule.
  void prepare_root();
  void apply_root_noise();
  void restore_root_priors();
  // Gumbel: fills sigma_ with sigma(completed Q) of every root child.
  void compute_sigma();
  double gumbel_score(int child_offset) const;  // g + logit + sigma_ of a root child
  int gumbel_root_child();
  int gumbel_choice() const;  // the move: the root child offset
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
  PendingLeaf leaf_;                         // the simulation's state, reused (no allocation)
  bool pending_ = false;                     // leaf_ awaits its evaluation
  std::vector<float> priors_;                // scratch: the normalised priors of receive()
  std::vector<float> root_priors_before_noise_;  // empty when the root priors are noise-free
  std::vector<int> search_visits_;           // root child visits in this search
  std::vector<double> gumbel_;               // root child Gumbel draws (Gumbel root only)
  std::vector<double> sigma_;                // scratch: sigma(completed Q) per root child
  std::vector<int> schedule_;                // considered visits per simulation index
  bool searching_ = false;
  bool tree_full_ = false;  // this search stopped at max_tree_nodes
  bool root_prepared_ = false;  // prepare_root ran for this search
  bool noise_enabled_ = true;  // this search may add root noise
  int simulations_target_ = 0;
  int simulations_done_ = 0;
  // run_until's deadline while it runs (max: none).
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace oppidum::mcts
