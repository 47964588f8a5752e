#include "trainer/replay_window.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <utility>

#include "games/playout.h"
#include "games/quote.h"

namespace oppidum::trainer {

void TrainingBatch::clear(int rows, int plane_size, int actions) {
  const auto r = static_cast<std::size_t>(rows);
  n = rows;
  planes.assign(r * static_cast<std::size_t>(plane_size), 0.0f);
  policy.assign(r * static_cast<std::size_t>(actions), 0.0f);
  legal_mask.assign(r * static_cast<std::size_t>(actions), 0.0f);
  policy_weight.assign(r, 0.0f);
  value.assign(r, 0.0f);
  score.assign(r, 0.0f);
  score_weight.assign(r, 0.0f);
}

std::vector<TrainingBatch> learnable_batches(const Game& game, int count, int n,
                                             std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int plane_size = game.input_shape().size();
  const int actions = game.num_actions();
  std::vector<TrainingBatch> batches(static_cast<std::size_t>(count));
  ActionList legal;
  for (TrainingBatch& b : batches) {
    b.clear(n, plane_size, actions);
    for (int i = 0; i < n;) {
      const auto state = random_position(game, rng, 60, legal);
      if (legal.empty()) continue;
      const std::size_t row = static_cast<std::size_t>(i) * static_cast<std::size_t>(actions);
      state->encode(b.planes.data() + static_cast<std::size_t>(i) * plane_size);
      const int favourite = static_cast<int>(rng() % static_cast<unsigned>(legal.size()));
      for (int k = 0; k < legal.size(); ++k) {
        b.legal_mask[row + static_cast<std::size_t>(legal[k])] = 1.0f;
        b.policy[row + static_cast<std::size_t>(legal[k])] =
            0.5f / static_cast<float>(legal.size()) + (k == favourite ? 0.5f : 0.0f);
      }
      b.policy_weight[static_cast<std::size_t>(i)] = 1.0f;
      b.value[static_cast<std::size_t>(i)] = rng() % 2 == 0 ? 1.0f : -1.0f;
      ++i;
    }
  }
  return batches;
}

ReplayWindow::ReplayWindow(const Game& game, WindowSettings settings)
    : game_(game), settings_(settings) {}

std::int64_t ReplayWindow::window_size() const {
  if (total_ <= settings_.window_min) return settings_.window_min;
  const double grown = static_cast<double>(settings_.window_min) +
                       settings_.window_growth * static_cast<double>(total_ - settings_.window_min);
  return std::min<std::int64_t>(settings_.window_max, static_cast<std::int64_t>(grown));
}

bool ReplayWindow::add_game(const selfplay::GameRecord& record, std::string* why) {
  if (record.game != game_.name()) {
    if (why) *why = "a \"" + quote_input(record.game, 40) + "\" game in a " + game_.name() + " run";
    return false;
  }
  std::vector<std::unique_ptr<GameState>> states;
  try {
    states = selfplay::replay(record);
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return false;
  }
  const bool final_scores = !record.adjudicated && !record.resigned;
  std::vector<Sample> added;
  added.reserve(record.moves.size());
  for (std::size_t i = 0; i < record.moves.size(); ++i) {
    const selfplay::MoveRecord& m = record.moves[i];
    if (!makes_row(m)) continue;
    Sample s;
    const int player = states[i]->current_player();
    const double result = player == 0 ? record.result : -record.result;
    s.value = static_cast<float>((1.0 - settings_.value_q_weight) * result +
                                 settings_.value_q_weight * m.root_value);
    if (final_scores) {
      const int own = record.score[player], other = record.score[1 - player];
      s.score = own + other > 0 ? static_cast<float>(own - other) / static_cast<float>(own + other)
                                : 0.0f;
      s.has_score = true;
    }
    if (m.policy_target) s.visits = m.visits;
    s.state = std::move(states[i]);
    added.push_back(std::move(s));
  }
  total_ += static_cast<std::int64_t>(record.moves.size());
  const auto keep = static_cast<std::size_t>(window_size());
  const std::lock_guard<std::mutex> lock(mutex_);  // a draw in progress ends first
  for (Sample& s : added) samples_.push_back(std::move(s));
  while (samples_.size() > keep) samples_.pop_front();
  return true;
}

void ReplayWindow::sample(int n, mcts::Rng& rng, TrainingBatch& batch) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (samples_.empty()) throw std::logic_error("ReplayWindow::sample on an empty window");
  const int plane_size = game_.input_shape().size();
  const int actions = game_.num_actions();
  batch.clear(n, plane_size, actions);
  ActionList legal;
  for (int i = 0; i < n; ++i) {
    const Sample& s =
        samples_[static_cast<std::size_t>(rng.uniform_int(static_cast<int>(samples_.size())))];
    const int symmetry = rng.uniform_int(game_.num_symmetries());
    const auto state = s.state->transformed(symmetry);
    state->encode(batch.planes.data() + static_cast<std::size_t>(i) * plane_size);
    float* mask = batch.legal_mask.data() + static_cast<std::size_t>(i) * actions;
    state->legal_actions(legal);
    for (Action a : legal) mask[a] = 1.0f;
    batch.value[static_cast<std::size_t>(i)] = s.value;
    batch.score[static_cast<std::size_t>(i)] = s.score;
    batch.score_weight[static_cast<std::size_t>(i)] = s.has_score ? 1.0f : 0.0f;
    if (s.visits.empty()) continue;
    double total = 0.0;
    for (const auto& v : s.visits) total += v.visits;
    if (total <= 0) continue;
    float* policy = batch.policy.data() + static_cast<std::size_t>(i) * actions;
    for (const auto& v : s.visits)
      policy[game_.transform_action(symmetry, v.action)] = static_cast<float>(v.visits / total);
    batch.policy_weight[static_cast<std::size_t>(i)] = 1.0f;
  }
}

BatchPrefetcher::BatchPrefetcher(const ReplayWindow& window, int n, std::uint64_t seed)
    : window_(window), n_(n), rng_(seed) {}

BatchPrefetcher::~BatchPrefetcher() {
  if (!drawing_.valid()) return;
  try {
    drawing_.get();
  } catch (const std::exception&) {  // a draw nobody asked for any more
  }
}

const TrainingBatch& BatchPrefetcher::next() {
  if (drawing_.valid()) {
    drawing_.get();  // rethrows what the draw threw
    std::swap(ready_, ahead_);
  } else {
    window_.sample(n_, rng_, ready_);
  }
  drawing_ = std::async(std::launch::async, [this] { window_.sample(n_, rng_, ahead_); });
  return ready_;
}

}  // namespace oppidum::trainer
