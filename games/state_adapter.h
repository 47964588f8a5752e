// Wraps a concrete position type P (a small value type with fast, non-virtual methods) behind the
// GameState interface. P provides the methods named below; the adapter adds nothing but the
// virtual dispatch, so search and self-play pay one indirect call per operation.
#pragma once

#include <cassert>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "games/game.h"

namespace oppidum {

template <class P>
class StateAdapter final : public GameState {
 public:
  StateAdapter(const Game& game, P position) : game_(&game), pos_(std::move(position)) {}

  const P& position() const { return pos_; }

  std::unique_ptr<GameState> clone() const override { return std::make_unique<StateAdapter>(*this); }
  void copy_from(const GameState& other) override {
    assert(dynamic_cast<const StateAdapter*>(&other) != nullptr);
    const auto& same = static_cast<const StateAdapter&>(other);
    game_ = same.game_;
    pos_ = same.pos_;
  }
  const Game& game() const override { return *game_; }
  int current_player() const override { return pos_.side_to_move(); }
  int ply() const override { return pos_.ply(); }
  void legal_actions(ActionList& out) const override { pos_.legal_actions(out); }
  bool is_legal(Action action) const override { return pos_.is_legal(action); }
  void apply(Action action) override {
    if (!pos_.is_legal(action))
      throw std::logic_error(game_->name() + ": action " + std::to_string(action) +
                             " is not legal in " + pos_.to_string());
    pos_.apply(action);
  }
  bool is_terminal() const override { return pos_.is_terminal(); }
  double result(int player) const override { return pos_.result(player); }
  int score(int player) const override { return pos_.score(player); }
  std::string to_string() const override { return pos_.to_string(); }
  std::string action_to_string(Action action) const override {
    return pos_.action_to_string(action);
  }
  Action parse_action(std::string_view move) const override { return pos_.parse_action(move); }
  std::uint64_t hash() const override { return pos_.hash(); }
  void encode(float* planes) const override { pos_.encode(planes); }
  std::unique_ptr<GameState> transformed(int symmetry) const override {
    return std::make_unique<StateAdapter>(*game_, pos_.transformed(symmetry));
  }
  std::string pretty() const override { return pos_.pretty(); }
  std::vector<CellView> board_view() const override { return pos_.board_view(); }
  std::vector<int> action_cells(Action action) const override {
    if (!pos_.is_legal(action))
      throw std::logic_error(game_->name() + ": action " + std::to_string(action) +
                             " is not legal in " + pos_.to_string() + ", so it has no cells");
    return pos_.action_cells(action);
  }

 private:
  const Game* game_;
  P pos_;
};

}  // namespace oppidum
