#include "arena/time_control.h"

#include <algorithm>
#include <cmath>

namespace oppidum::arena {

std::string TimeControl::spec_suffix() const {
  if (move_ms > 0) return ",ms=" + std::to_string(move_ms);
  if (clock_seconds > 0) return ",clock=" + format_number(clock_seconds);
  return "";
}

double TimeControl::move_limit_seconds() const {
  return move_ms > 0 ? move_ms * 1e-3 + kTimeGrace : 0.0;
}

double TimeControl::game_limit_seconds() const {
  return clock_seconds > 0 ? clock_seconds + kTimeGrace : 0.0;
}

TimeControl read_time_control(SpecReader& reader) {
  TimeControl control;
  if (reader.has("ms") && reader.has("clock"))
    throw PlayerSpecError(reader.name() + ": give ms= (time per move) or clock= (seconds per "
                          "game), not both");
  control.move_ms = static_cast<int>(reader.get_int_or("ms", 1, kMaxMoveMs, 0));
  control.clock_seconds = reader.get_double_or("clock", kMinClockSeconds, kMaxClockSeconds, 0.0);
  return control;
}

double move_budget(const TimeControl& control, const GameState& state, double clock_left,
                   bool decided) {
  if (control.move_ms > 0) return control.move_ms * 1e-3;
  if (control.clock_seconds <= 0) return 0.0;
  const double reserve = kReserveShare * control.clock_seconds + kReserveSeconds;
  const double usable = clock_left - reserve;
  if (usable <= kMinBudgetSeconds) return kMinBudgetSeconds;
  const Game::ClockFacts facts = state.game().clock_facts();
  const int plies_left = std::max(facts.typical_plies - state.ply(), facts.typical_plies / 4);
  const int moves_left = std::max(kMinMovesLeft, (plies_left + 1) / 2);
  double budget = usable / moves_left;
  if (facts.phase_start_ply >= 0 && state.ply() >= facts.phase_start_ply &&
      state.ply() < facts.phase_start_ply + 2)
    budget *= kPhaseFactor;
  if (decided) budget *= kDecidedFactor;
  return std::max(kMinBudgetSeconds, budget);
}

GameClocks::Game& GameClocks::game(int game_id) {
  auto [it, added] = games_.try_emplace(game_id);
  if (added) it->second.seconds_left = control_.clock_seconds;
  return it->second;
}

SteadyClock::time_point GameClocks::deadline(int game_id, const GameState& state,
                                             SteadyClock::time_point start) {
  double left = 0;
  bool decided = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Game& g = game(game_id);
    left = g.seconds_left;
    decided = g.decided;
  }
  const double budget = move_budget(control_, state, left, decided);
  return start + std::chrono::duration_cast<SteadyClock::duration>(
                     std::chrono::duration<double>(budget));
}

void GameClocks::charge(int game_id, SteadyClock::time_point start, bool decided) {
  const double used = std::chrono::duration<double>(SteadyClock::now() - start).count();
  std::lock_guard<std::mutex> lock(mutex_);
  Game& g = game(game_id);
  g.seconds_left -= used;
  g.decided = decided;
}

void GameClocks::charge_seconds(int game_id, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  game(game_id).seconds_left -= seconds;
}

void GameClocks::end_game(int game_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  games_.erase(game_id);
}

double GameClocks::seconds_left(int game_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  return game(game_id).seconds_left;
}

}  // namespace oppidum::arena
