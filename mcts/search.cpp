#include "mcts/search.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace oppidum::mcts {
namespace {

Proven flip(Proven p) {
  if (p == Proven::kWin) return Proven::kLoss;
  if (p == Proven::kLoss) return Proven::kWin;
  return p;
}

// `p`, stated for player `from`, restated for player `to` (two players, zero sum).
Proven orient(Proven p, int from, int to) { return from == to ? p : flip(p); }

// Gumbel's logit of a prior (a zero prior gets a very low logit rather than -inf).
double logit(float prior) { return std::log(std::max(prior, 1e-30f)); }

double proven_value(Proven p) {
  return p == Proven::kWin ? 1.0 : p == Proven::kLoss ? -1.0 : 0.0;
}

Proven proven_from_result(double result) {
  return result > 0 ? Proven::kWin : result < 0 ? Proven::kLoss : Proven::kDraw;
}

void require(bool condition, const char* what) {
  if (!condition) throw std::logic_error(std::string("SearchTree: ") + what);
}

void check_range(bool ok, const char* field, const char* rule, double value) {
  if (!ok)
    throw std::invalid_argument(std::string("search config: ") + field + " must be " + rule +
                                ", not " + std::to_string(value));
}

}  // namespace

const char* to_string(RootPolicy root) { return root == RootPolicy::kGumbel ? "gumbel" : "puct"; }

RootPolicy root_policy_from_string(const std::string& text) {
  if (text == "puct") return RootPolicy::kPuct;
  if (text == "gumbel") return RootPolicy::kGumbel;
  throw std::invalid_argument("root search must be puct or gumbel, not '" + text + "'");
}

std::vector<int> sequential_halving_schedule(int considered, int simulations) {
  std::vector<int> schedule;
  if (simulations <= 0) return schedule;
  schedule.reserve(static_cast<std::size_t>(simulations));
  if (considered <= 1) {
    for (int k = 0; k < simulations; ++k) schedule.push_back(k);
    return schedule;
  }
  const int phases = static_cast<int>(std::ceil(std::log2(static_cast<double>(considered))));
  int left = considered;
  int visits = 0;  // visits of each action still considered
  while (static_cast<int>(schedule.size()) < simulations) {
    const int extra = std::max(1, simulations / (phases * left));
    for (int e = 0; e < extra; ++e, ++visits)
      for (int a = 0; a < left; ++a) schedule.push_back(visits);
    left = std::max(2, left / 2);
  }
  schedule.resize(static_cast<std::size_t>(simulations));
  return schedule;
}

const char* to_string(Proven proven) {
  switch (proven) {
    case Proven::kWin: return "win";
    case Proven::kDraw: return "draw";
    case Proven::kLoss: return "loss";
    case Proven::kUnknown: break;
  }
  return "unknown";
}

void SearchConfig::validate() const {
  check_range(simulations >= 1, "simulations", "at least 1", simulations);
  check_range(std::isfinite(cpuct) && cpuct > 0, "cpuct", "positive", cpuct);
  check_range(std::isfinite(cpuct_base) && cpuct_base >= 0, "cpuct_base", "0 (off) or positive",
              cpuct_base);
  check_range(std::isfinite(fpu_reduction), "fpu_reduction", "finite", fpu_reduction);
  check_range(std::isfinite(dirichlet_alpha_scale) && dirichlet_alpha_scale > 0,
              "dirichlet_alpha_scale", "positive", dirichlet_alpha_scale);
  check_range(dirichlet_weight >= 0 && dirichlet_weight <= 1, "dirichlet_weight", "in [0, 1]",
              dirichlet_weight);
  check_range(temperature_plies >= 0, "temperature_plies", "0 or more", temperature_plies);
  check_range(std::isfinite(temperature) && temperature >= 0, "temperature", "0 or more",
              temperature);
  check_range(std::isfinite(final_temperature) && final_temperature >= 0, "final_temperature",
              "0 or more", final_temperature);
  check_range(gumbel_considered >= 2, "gumbel_considered", "at least 2", gumbel_considered);
  check_range(std::isfinite(gumbel_c_visit) && gumbel_c_visit >= 0, "gumbel_c_visit", "0 or more",
              gumbel_c_visit);
  check_range(std::isfinite(gumbel_c_scale) && gumbel_c_scale >= 0, "gumbel_c_scale", "0 or more",
              gumbel_c_scale);
  check_range(max_tree_nodes >= 2 && max_tree_nodes <= std::numeric_limits<std::int32_t>::max(),
              "max_tree_nodes", "in 2..2^31-1", max_tree_nodes);
}

double SearchTree::Node::value_for(int player) const {
  if (visits == 0) return 0.0;
  const double q = value_sum / visits;
  return player == mover ? q : -q;
}

SearchTree::SearchTree(const GameState& root, const SearchConfig& config)
    : config_(config), rng_(config.seed), root_state_(root.clone()) {
  config_.validate();
  leaf_.state = root.clone();
  reset_tree();
}

void SearchTree::reset_tree() {
  nodes_.clear();
  root_priors_before_noise_.clear();
  Node root;
  root.to_move = static_cast<std::int8_t>(root_state_->current_player());
  // Only a sign convention: the root's own value is always read for its side to move.
  root.mover = static_cast<std::int8_t>(1 - root.to_move);
  if (root_state_->is_terminal()) root.proven = proven_from_result(root_state_->result(root.mover));
  nodes_.push_back(root);
}

void SearchTree::start_search(int simulations, bool root_noise) {
  require(!pending_, "start_search while a leaf is pending: call receive first");
  require(simulations >= 1, "start_search needs at least 1 simulation");
  require(!root_state_->is_terminal(), "start_search on a terminal position");
  restore_root_priors();
  searching_ = true;
  root_prepared_ = false;
  noise_enabled_ = root_noise;
  // Visits are 32-bit and add up over tree reuse: a search never takes the root past 2^31 - 1.
  simulations_target_ =
      std::min(simulations, std::numeric_limits<std::int32_t>::max() - node(kRoot).visits);
  simulations_done_ = 0;
  tree_full_ = false;
  search_visits_.clear();
  if (node(kRoot).expanded()) prepare_root();
}

void SearchTree::prepare_root() {
  if (root_prepared_) return;
  root_prepared_ = true;
  const int n = node(kRoot).num_children;
  search_visits_.assign(static_cast<std::size_t>(n), 0);
  if (config_.root == RootPolicy::kPuct) {
    apply_root_noise();
    return;
  }
  gumbel_.assign(static_cast<std::size_t>(n), 0.0);
  if (config_.gumbel_noise)
    for (double& g : gumbel_) {
      const double u = std::max(rng_.uniform(), std::numeric_limits<double>::min());
      g = -std::log(-std::log(u));
    }
  schedule_ = sequential_halving_schedule(std::min(config_.gumbel_considered, n),
                                          simulations_target_);
}

bool SearchTree::search_finished() const {
  const Node& root = node(kRoot);
  return !searching_ || root.proven != Proven::kUnknown ||
         (root.expanded() && (simulations_done_ >= simulations_target_ || tree_full_ ||
                              (deadline_ != std::chrono::steady_clock::time_point::max() &&
                               std::chrono::steady_clock::now() >= deadline_)));
}

const PendingLeaf* SearchTree::select_leaf() {
  require(searching_, "select_leaf outside a search: call start_search first");
  require(!pending_, "select_leaf while a leaf is pending: call receive first");
  GameState& state = *leaf_.state;
  while (!search_finished()) {
    path_.assign(1, kRoot);
    state.copy_from(*root_state_);
    int current = kRoot;
    while (node(current).expanded() && node(current).proven == Proven::kUnknown) {
      current = select_child(current);
      state.apply(node(current).action);
      path_.push_back(current);
    }
    Node& leaf = node(current);
    if (leaf.proven == Proven::kUnknown) {
      leaf.to_move = static_cast<std::int8_t>(state.current_player());
      if (!state.is_terminal()) {
        state.legal_actions(leaf_.legal);
        if (current != kRoot && static_cast<std::int64_t>(nodes_.size()) + leaf_.legal.size() >
                                    config_.max_tree_nodes) {
          tree_full_ = true;  // this simulation is dropped: nothing was backed up yet
          break;
        }
        pending_ = true;
        return &leaf_;
      }
      leaf.proven = proven_from_result(state.result(leaf.mover));
    }
    finish_at_proven(current);
  }
  return nullptr;
}

void SearchTree::receive(const EvalResult& evaluation) {
  require(pending_, "receive with no leaf pending");
  const ActionList& legal = leaf_.legal;
  require(evaluation.priors.size() == static_cast<std::size_t>(legal.size()),
          "receive: the priors do not match the leaf's legal actions");
  require(std::isfinite(evaluation.value), "receive: the value is not a finite number");
  double sum = 0.0;
  for (float p : evaluation.priors) {
    require(std::isfinite(p) && p >= 0, "receive: a prior is negative or not finite");
    sum += p;
  }
  priors_.resize(evaluation.priors.size());
  for (std::size_t i = 0; i < priors_.size(); ++i)
    priors_[i] = sum > 0 ? static_cast<float>(evaluation.priors[i] / sum)
                         : 1.0f / static_cast<float>(priors_.size());

  const int leaf = path_.back();
  expand(leaf, legal, priors_);
  const double value = std::clamp(static_cast<double>(evaluation.value), -1.0, 1.0);
  node(leaf).net_value = static_cast<float>(value);
  backup(node(leaf).to_move == 0 ? value : -value);
  pending_ = false;
  if (leaf == kRoot) prepare_root();
}

void SearchTree::expand(int index, const ActionList& legal, const std::vector<float>& priors) {
  require(legal.size() <= std::numeric_limits<std::uint16_t>::max(), "too many children");
  const std::int8_t mover = node(index).to_move;
  const auto first = static_cast<std::int32_t>(nodes_.size());
  const std::size_t needed = nodes_.size() + static_cast<std::size_t>(legal.size());
  if (needed > nodes_.capacity())  // doubling, but never reserving past the tree's limit
    nodes_.reserve(std::max(needed, std::min(2 * nodes_.capacity(),
                                             static_cast<std::size_t>(config_.max_tree_nodes))));
  nodes_.resize(needed);
  for (int i = 0; i < legal.size(); ++i) {
    Node& child = node(first + i);
    child.action = static_cast<std::uint16_t>(legal[i]);
    child.prior = priors[static_cast<std::size_t>(i)];
    child.mover = mover;
  }
  Node& parent = node(index);
  parent.first_child = first;
  parent.num_children = static_cast<std::uint16_t>(legal.size());
}

int SearchTree::select_child(int index) {
  if (index == kRoot && config_.root == RootPolicy::kGumbel && root_prepared_)
    return gumbel_root_child();
  const Node& parent = node(index);
  const int player = parent.to_move;
  const int first = parent.first_child;
  const double n = std::max(1, parent.visits);
  double c = config_.cpuct;
  if (config_.cpuct_base > 0) c += std::log((1.0 + n + config_.cpuct_base) / config_.cpuct_base);
  const double explore = c * std::sqrt(n);

  // One pass: the best visited child by its score, and the unvisited child with the highest
  // prior (all unvisited children share the first-play value, so it has their best score).
  double visited_prior = 0.0;
  int best = -1, best_unvisited = -1;
  double best_score = -std::numeric_limits<double>::infinity();
  float best_prior = -1.0f;
  for (int i = 0; i < parent.num_children; ++i) {
    const Node& child = node(first + i);  // child.mover == player
    if (child.proven == Proven::kWin) return first + i;
    if (child.visits > 0) visited_prior += child.prior;
    if (child.proven == Proven::kLoss) continue;
    if (child.visits > 0) {
      const double score =
          child.value_sum / child.visits + explore * child.prior / (1.0 + child.visits);
      if (score > best_score) {
        best_score = score;
        best = first + i;
      }
    } else if (child.prior > best_prior) {
      best_prior = child.prior;
      best_unvisited = first + i;
    }
  }
  if (best_unvisited >= 0) {
    const double fpu =
        parent.value_for(player) - config_.fpu_reduction * std::sqrt(visited_prior);
    const double score = fpu + explore * best_prior;
    if (best < 0 || score > best_score || (score == best_score && best_unvisited < best))
      best = best_unvisited;
  }
  assert(best >= 0);  // a node whose children are all proven losses is itself proven
  return best >= 0 ? best : first;
}

void SearchTree::backup(double value_p0) {
  for (int index : path_) {
    Node& n = node(index);
    ++n.visits;
    n.value_sum += n.mover == 0 ? value_p0 : -value_p0;
  }
  if (path_.size() > 1) {
    ++simulations_done_;
    const auto child = static_cast<std::size_t>(path_[1] - node(kRoot).first_child);
    if (child < search_visits_.size()) ++search_visits_[child];
  }
}

void SearchTree::finish_at_proven(int index) {
  const Node& n = node(index);
  const double value = proven_value(n.proven);
  backup(n.mover == 0 ? value : -value);
  update_proofs();
}

void SearchTree::update_proofs() {
  for (auto i = static_cast<int>(path_.size()) - 2; i >= 0; --i)
    if (!update_proof(path_[static_cast<std::size_t>(i)])) break;
}

bool SearchTree::update_proof(int index) {
  Node& n = node(index);
  if (n.proven != Proven::kUnknown || !n.expanded()) return false;
  const int player = n.to_move;
  bool all_proven = true;
  Proven best = Proven::kLoss;  // best proven outcome for `player` among the children
  for (int i = 0; i < n.num_children; ++i) {
    const Proven p = node(n.first_child + i).proven;  // for `player`, who moved into the child
    if (p == Proven::kWin) {
      n.proven = orient(Proven::kWin, player, n.mover);
      return true;
    }
    if (p == Proven::kUnknown) all_proven = false;
    else if (p == Proven::kDraw) best = Proven::kDraw;
  }
  if (!all_proven) return false;
  n.proven = orient(best, player, n.mover);
  return true;
}

void SearchTree::apply_root_noise() {
  Node& root = node(kRoot);
  if (!noise_enabled_ || config_.dirichlet_weight <= 0 || !root.expanded()) return;
  const int n = root.num_children;
  if (n < 2) return;
  const double alpha = config_.dirichlet_alpha_scale / n;
  std::vector<double> noise(static_cast<std::size_t>(n));
  double sum = 0.0;
  for (double& x : noise) sum += x = rng_.gamma(alpha);
  if (!(sum > 0)) return;  // every draw underflowed: no usable noise this time
  const double w = config_.dirichlet_weight;
  root_priors_before_noise_.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Node& child = node(root.first_child + i);
    root_priors_before_noise_[static_cast<std::size_t>(i)] = child.prior;
    child.prior = static_cast<float>((1.0 - w) * child.prior +
                                     w * noise[static_cast<std::size_t>(i)] / sum);
  }
}

void SearchTree::restore_root_priors() {
  const Node& root = node(kRoot);
  for (std::size_t i = 0; i < root_priors_before_noise_.size(); ++i)
    node(root.first_child + static_cast<int>(i)).prior = root_priors_before_noise_[i];
  root_priors_before_noise_.clear();
}

void SearchTree::compute_sigma() {
  const Node& root = node(kRoot);
  const int player = root.to_move;
  const auto n = static_cast<std::size_t>(root.num_children);
  sigma_.resize(n);
  double visits = 0.0, visited_prior = 0.0, weighted_q = 0.0;
  int max_visits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Node& child = node(root.first_child + static_cast<int>(i));
    max_visits = std::max(max_visits, child.visits);
    if (child.visits == 0) continue;
    visits += child.visits;
    visited_prior += child.prior;
    weighted_q += child.prior * child.value_for(player);
  }
  const double mixed = visited_prior > 0
                           ? (root.net_value + visits * weighted_q / visited_prior) / (visits + 1.0)
                           : static_cast<double>(root.net_value);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = 0; i < n; ++i) {
    const Node& child = node(root.first_child + static_cast<int>(i));  // child.mover == player
    double q = mixed;
    if (child.proven != Proven::kUnknown) q = proven_value(child.proven);
    else if (child.visits > 0) q = child.value_for(player);
    sigma_[i] = q;
    lo = std::min(lo, q);
    hi = std::max(hi, q);
  }
  const double scale = (config_.gumbel_c_visit + max_visits) * config_.gumbel_c_scale;
  for (double& s : sigma_) s = hi - lo > 1e-8 ? scale * (s - lo) / (hi - lo) : 0.0;
}

double SearchTree::gumbel_score(int i) const {
  const Node& child = node(node(kRoot).first_child + i);
  return gumbel_[static_cast<std::size_t>(i)] + logit(child.prior) +
         sigma_[static_cast<std::size_t>(i)];
}

// Sequential halving: among the children whose visits in this search equal the schedule's count
// for this simulation, the best score; when proven losses left none, the least visited.
int SearchTree::gumbel_root_child() {
  const Node& root = node(kRoot);
  const int first = root.first_child;
  for (int i = 0; i < root.num_children; ++i)
    if (node(first + i).proven == Proven::kWin) return first + i;
  compute_sigma();
  const int target = schedule_.empty()
                         ? 0
                         : schedule_[static_cast<std::size_t>(std::min<int>(
                               simulations_done_, static_cast<int>(schedule_.size()) - 1))];
  int best = -1, fallback = -1;
  double best_score = -std::numeric_limits<double>::infinity(), fallback_score = best_score;
  for (int i = 0; i < root.num_children; ++i) {
    if (node(first + i).proven == Proven::kLoss) continue;
    const double score = gumbel_score(i);
    const int v = search_visits_[static_cast<std::size_t>(i)];
    if (v == target && score > best_score) {
      best = i;
      best_score = score;
    }
    const int fv = fallback < 0 ? 0 : search_visits_[static_cast<std::size_t>(fallback)];
    if (fallback < 0 || v < fv || (v == fv && score > fallback_score)) {
      fallback = i;
      fallback_score = score;
    }
  }
  if (best < 0) best = fallback;
  return first + std::max(best, 0);
}

// The move of a Gumbel search: the best score among the children most visited in this search.
int SearchTree::gumbel_choice() const {
  const Node& root = node(kRoot);
  int max_visits = -1;
  for (int i = 0; i < root.num_children; ++i)
    if (node(root.first_child + i).proven != Proven::kLoss)
      max_visits = std::max(max_visits, search_visits_[static_cast<std::size_t>(i)]);
  int best = -1;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < root.num_children; ++i) {
    if (node(root.first_child + i).proven == Proven::kLoss ||
        search_visits_[static_cast<std::size_t>(i)] != max_visits)
      continue;
    const double score = gumbel_score(i);
    if (best < 0 || score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;  // -1: every child is a proven loss
}

// A proven win for the side to move first, then the most visited child that is not a proven loss
// (ties: the higher value), then the most visited of all.
int SearchTree::most_visited_child(int index) const {
  const Node& parent = node(index);
  const int player = parent.to_move;
  int best = -1;
  auto better = [&](const Node& a, const Node& b) {
    if (a.visits != b.visits) return a.visits > b.visits;
    return a.value_for(player) > b.value_for(player);
  };
  for (int pass = 0; pass < 3 && best < 0; ++pass) {
    for (int i = 0; i < parent.num_children; ++i) {
      const Node& child = node(parent.first_child + i);
      if (pass == 0 && child.proven != Proven::kWin) continue;
      if (pass == 1 && child.proven == Proven::kLoss) continue;
      if (best < 0 || better(child, node(best))) best = parent.first_child + i;
    }
  }
  return best;
}

int SearchTree::choose_root_child(SearchResult& result) {
  const Node& root = node(kRoot);
  const int first = root.first_child;
  const int n = root.num_children;
  result.sampling.assign(static_cast<std::size_t>(n), 0.0f);
  const int best = most_visited_child(kRoot);
  const bool proven_win = node(best).proven == Proven::kWin;
  if (proven_win || result.temperature < kMinTemperature) {
    result.sampling[static_cast<std::size_t>(best - first)] = 1.0f;
    return best;
  }
  // Sample proportionally to visits^(1 / T), leaving out proven losses unless all are.
  bool any_open = false;
  int max_visits = 0;
  for (int i = 0; i < n; ++i) any_open |= node(first + i).proven != Proven::kLoss;
  for (int i = 0; i < n; ++i) {
    const Node& child = node(first + i);
    if (!any_open || child.proven != Proven::kLoss) max_visits = std::max(max_visits, child.visits);
  }
  std::vector<double> weight(static_cast<std::size_t>(n), 0.0);
  double total = 0.0;
  for (int i = 0; i < n; ++i) {
    const Node& child = node(first + i);
    if (any_open && child.proven == Proven::kLoss) continue;
    const double w = max_visits > 0
                         ? std::pow(static_cast<double>(child.visits) / max_visits,
                                    1.0 / result.temperature)
                         : child.prior;
    weight[static_cast<std::size_t>(i)] = w;
    total += w;
  }
  if (!(total > 0)) {
    result.sampling[static_cast<std::size_t>(best - first)] = 1.0f;
    return best;
  }
  for (int i = 0; i < n; ++i)
    result.sampling[static_cast<std::size_t>(i)] =
        static_cast<float>(weight[static_cast<std::size_t>(i)] / total);
  double draw = rng_.uniform() * total;
  int chosen = -1;
  for (int i = 0; i < n; ++i) {
    if (weight[static_cast<std::size_t>(i)] <= 0) continue;
    chosen = first + i;
    draw -= weight[static_cast<std::size_t>(i)];
    if (draw < 0) break;
  }
  return chosen;
}

SearchResult SearchTree::result() {
  const Node& root = node(kRoot);
  require(root.expanded(), "result before the root was evaluated");
  SearchResult r;
  int total = 0;
  for (int i = 0; i < root.num_children; ++i) {
    const Node& child = node(root.first_child + i);
    r.legal.push_back(child.action);
    r.visits.push_back(child.visits);
    total += child.visits;
  }
  r.policy.resize(r.visits.size());
  for (std::size_t i = 0; i < r.visits.size(); ++i)
    r.policy[i] = total > 0 ? static_cast<float>(r.visits[i]) / static_cast<float>(total)
                            : node(root.first_child + static_cast<int>(i)).prior;
  r.search_visits = search_visits_;
  r.search_visits.resize(r.visits.size(), 0);  // empty before the first search
  r.root_value = static_cast<float>(root.value_for(root.to_move));
  r.proven = root_proven();
  r.simulations = simulations_done_;
  r.tree_full = tree_full_;
  const bool gumbel = config_.root == RootPolicy::kGumbel && root_prepared_;
  if (!gumbel) {
    r.temperature = root_state_->ply() < config_.temperature_plies ? config_.temperature
                                                                   : config_.final_temperature;
    r.action = node(choose_root_child(r)).action;
  } else {
    // The improved policy softmax(logit + sigma) and the deterministic choice.
    compute_sigma();
    double max_z = -std::numeric_limits<double>::infinity(), sum = 0.0;
    std::vector<double> z(r.visits.size());
    for (std::size_t i = 0; i < z.size(); ++i) {
      const Node& child = node(root.first_child + static_cast<int>(i));
      z[i] = logit(child.prior) + sigma_[i];
      max_z = std::max(max_z, z[i]);
    }
    for (double& x : z) sum += x = std::exp(x - max_z);
    for (std::size_t i = 0; i < z.size(); ++i) r.policy[i] = static_cast<float>(z[i] / sum);
    r.improved_policy = true;
    r.temperature = 0.0f;
    int chosen = most_visited_child(kRoot);
    if (node(chosen).proven != Proven::kWin) {
      const int offset = gumbel_choice();
      if (offset >= 0) chosen = root.first_child + offset;
    }
    r.sampling.assign(r.visits.size(), 0.0f);
    r.sampling[static_cast<std::size_t>(chosen - root.first_child)] = 1.0f;
    r.action = node(chosen).action;
  }
  // What the search proved: the value, and the target (settle_target).
  for (int i = 0; i < root.num_children; ++i) {
    const Node& child = node(root.first_child + i);
    r.child_proven.push_back(orient(child.proven, child.mover, root.to_move));
  }
  if (r.proven != Proven::kUnknown) r.root_value = static_cast<float>(proven_value(r.proven));
  std::vector<double> target(r.policy.begin(), r.policy.end());
  settle_target(target, r.child_proven, r.proven);
  const double sum = std::accumulate(target.begin(), target.end(), 0.0);
  for (std::size_t i = 0; i < target.size(); ++i)
    r.policy[i] = static_cast<float>(target[i] / sum);
  for (int at = kRoot; node(at).expanded();) {
    at = most_visited_child(at);
    if (node(at).visits == 0) break;
    r.principal_variation.push_back(node(at).action);
  }
  return r;
}

void settle_target(std::vector<double>& weights, const std::vector<Proven>& child_proven,
                   Proven root) {
  if (root == Proven::kLoss || weights.size() != child_proven.size()) return;
  // Whether child i keeps a share: not proven lost below a root not proven, else of the root's
  // proven result.
  const auto keeps = [&](std::size_t i) {
    return root == Proven::kUnknown ? child_proven[i] != Proven::kLoss : child_proven[i] == root;
  };
  std::vector<double> kept(weights.size(), 0.0);
  double total = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (keeps(i)) total += kept[i] = weights[i];
  if (total <= 0 && root != Proven::kUnknown)  // the kept children have no weight here: 1 each
    for (std::size_t i = 0; i < weights.size(); ++i) total += kept[i] = keeps(i) ? 1.0 : 0.0;
  if (total > 0) weights = std::move(kept);
}

SearchResult SearchTree::run(Evaluator& evaluator, int simulations) {
  start_search(simulations);
  EvalResult evaluation;
  while (const PendingLeaf* leaf = select_leaf()) {
    const EvalRequest request = leaf->request();
    evaluator.evaluate(&request, 1, &evaluation);
    receive(evaluation);
  }
  return result();
}

SearchResult SearchTree::run_until(Evaluator& evaluator,
                                   std::chrono::steady_clock::time_point deadline,
                                   int max_simulations, const std::function<bool()>& stop) {
  require(config_.root == RootPolicy::kPuct,
          "run_until needs a PUCT root (a Gumbel search plans its simulations in advance)");
  start_search(max_simulations);
  deadline_ = deadline;  // search_finished() reads it, once per simulation
  EvalResult evaluation;
  // A root with one legal action has nothing to decide: once it is evaluated, the time is saved
  // for the moves that have (a timed search only; a search of fixed simulations, self-play's,
  // keeps its statistics as they were).
  const auto forced = [&] {
    const Node& root = node(kRoot);
    return root.expanded() && root.num_children == 1;
  };
  try {
    while (!forced()) {
      if (stop && stop() && node(kRoot).expanded()) break;
      const PendingLeaf* leaf = select_leaf();
      if (leaf == nullptr) break;
      EvalRequest request = leaf->request();
      request.deadline = deadline;
      evaluator.evaluate(&request, 1, &evaluation);
      receive(evaluation);
    }
  } catch (...) {
    deadline_ = std::chrono::steady_clock::time_point::max();
    throw;
  }
  deadline_ = std::chrono::steady_clock::time_point::max();
  return result();
}

void SearchTree::advance(Action action) {
  require(!pending_, "advance while a leaf is pending: call receive first");
  root_state_->apply(action);  // throws std::logic_error when illegal
  searching_ = false;
  root_prepared_ = false;
  search_visits_.clear();
  root_priors_before_noise_.clear();  // they belonged to the old root
  const Node& root = node(kRoot);
  int kept = -1;
  for (int i = 0; root.expanded() && i < root.num_children; ++i)
    if (node(root.first_child + i).action == action) kept = root.first_child + i;
  if (kept < 0 || !node(kept).expanded()) {
    reset_tree();
    return;
  }
  // Copy the kept subtree breadth-first; each block of siblings stays contiguous.
  std::vector<Node> compact;
  compact.push_back(node(kept));
  for (std::size_t i = 0; i < compact.size(); ++i) {
    const std::int32_t old_first = compact[i].first_child;
    if (old_first < 0) continue;
    const int count = compact[i].num_children;
    compact[i].first_child = static_cast<std::int32_t>(compact.size());
    for (int k = 0; k < count; ++k) compact.push_back(node(old_first + k));
  }
  nodes_.swap(compact);
}

std::vector<ChildStats> SearchTree::children(const std::vector<Action>& path) const {
  int at = kRoot;
  for (Action action : path) {
    const Node& n = node(at);
    require(n.expanded(), "children: the path leaves the tree");
    int next = -1;
    for (int i = 0; i < n.num_children; ++i)
      if (node(n.first_child + i).action == action) next = n.first_child + i;
    require(next >= 0, "children: the path plays an action that is not in the tree");
    at = next;
  }
  const Node& parent = node(at);
  std::vector<ChildStats> out;
  for (int i = 0; parent.expanded() && i < parent.num_children; ++i) {
    const Node& child = node(parent.first_child + i);
    ChildStats s;
    s.action = child.action;
    s.prior = child.prior;
    s.visits = child.visits;
    s.value = static_cast<float>(child.value_for(parent.to_move));
    s.proven = orient(child.proven, child.mover, parent.to_move);
    out.push_back(s);
  }
  return out;
}

Proven SearchTree::root_proven() const {
  const Node& root = node(kRoot);
  return orient(root.proven, root.mover, root.to_move);
}

int SearchTree::root_visits() const { return node(kRoot).visits; }

}  // namespace oppidum::mcts
