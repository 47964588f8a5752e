#include "trainer/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "arena/elo.h"
#include "selfplay/resignation.h"
#include "util/log.h"
#include "util/text.h"

namespace oppidum::trainer {
namespace {

using Clock = std::chrono::steady_clock;
using util::fixed;

}  // namespace

std::optional<SelfplayRow> pipeline_row(const PipelineMark& from, const PipelineMark& to,
                                        const Progress& now, bool resign) {
  const double wall = std::chrono::duration<double>(to.at - from.at).count();
  const double positions =
      static_cast<double>(to.selfplay.moves) - static_cast<double>(from.selfplay.moves);
  const double evals =
      static_cast<double>(to.inference.positions) - static_cast<double>(from.inference.positions);
  const double batches =
      static_cast<double>(to.inference.batches) - static_cast<double>(from.inference.batches);
  const double forward = to.inference.forward_seconds - from.inference.forward_seconds;
  if (wall <= 0 || positions <= 0 || forward <= 0 || batches <= 0) return std::nullopt;
  SelfplayRow row;
  row.seconds = now.seconds;
  row.generation = now.generation;
  row.positions = now.positions;
  row.games = now.games;
  row.positions_per_second = positions / wall;
  row.evals_per_position = evals / positions;
  row.forward_busy = std::min(1.0, forward / (wall * to.inference.workers));
  row.forward_rate = evals / forward;
  row.mean_batch = evals / batches;
  row.bound = to.inference.workers * row.forward_rate / row.evals_per_position;
  if (resign) {
    row.resigned = to.selfplay.resign.resigned;
    row.resign_checks = to.selfplay.resign.checks;
    row.resign_false_rate = to.selfplay.resign.recent_false_rate;
  }
  return row;
}

std::string pipeline_line(const std::string& what, const SelfplayRow& row, int workers) {
  return fmt::format("{} self-play: {} positions/s, {} evaluations/position, forward busy {}% ({} "
                     "worker{}, mean batch {}), forward alone {} evaluations/s a worker, so the "
                     "bound is {} positions/s: {}% of it",
                     what, fixed(row.positions_per_second, 1), fixed(row.evals_per_position, 1),
                     fixed(100.0 * row.forward_busy, 0), workers, workers == 1 ? "" : "s",
                     fixed(row.mean_batch, 1), fixed(row.forward_rate, 0), fixed(row.bound, 1),
                     fixed(100.0 * row.positions_per_second / row.bound, 1));
}

std::string trainer_pace_line(const Progress& p, int batch_size, double sample_reuse,
                              std::int64_t min_positions) {
  const TrainerPace& pace = p.pace;
  if (pace.steps == 0 || pace.stepping_seconds <= 0)
    return p.positions < min_positions
               ? fmt::format("trainer this session: no step (the run has {} self-play positions; "
                             "training starts at {})",
                             p.positions, min_positions)
               : std::string("trainer this session: no step");
  const double rate = static_cast<double>(pace.steps) / pace.stepping_seconds;
  const double waited = pace.waiting_seconds / (pace.waiting_seconds + pace.stepping_seconds);
  return fmt::format(
      "trainer this session: {} steps, {} steps/s ({} samples/s) while stepping; waited for "
      "self-play's positions {}% of the time (sample_reuse {}); each position sampled {} times so "
      "far",
      pace.steps, fixed(rate, 2), fixed(rate * batch_size, 0), fixed(100.0 * waited, 0),
      fixed(sample_reuse, 2),
      p.positions > 0
          ? fixed(static_cast<double>(p.steps) * batch_size / static_cast<double>(p.positions), 2)
          : std::string("-"));
}

std::string status_text(const Progress& p, const selfplay::SelfPlayStats* selfplay,
                        const model::InferenceStats& inference, bool score_head,
                        const std::string& cluster) {
  const double secs = std::max(1e-9, p.seconds);
  std::string line =
      "gen " + std::to_string(p.generation) + " | games " + std::to_string(p.games) + " pos " +
      std::to_string(p.positions) +
      (selfplay ? " (" + fixed(static_cast<double>(selfplay->moves) / secs, 0) + "/s) | eval " +
                      fixed(inference.evals_per_second, 0) + "/s fill " +
                      fixed(inference.mean_fill, 2) + " fwd " +
                      fixed(100.0 * inference.forward_share, 0) + "%"
                : std::string()) +
      " | step " + std::to_string(p.steps) +
      // Zeros before this session's first step (a resumed run): no loss to show yet.
      (p.last_step.loss == 0.0 && p.last_step.policy_loss == 0.0
           ? std::string(" loss - (no step yet this session")
           : " loss " + fixed(p.last_step.loss, 3) + " (p " + fixed(p.last_step.policy_loss, 3) +
                 " v " + fixed(p.last_step.value_loss, 3) +
                 (score_head ? " s " + fixed(p.last_step.score_loss, 3) : "")) +
      ") | best gen " + std::to_string(p.best_generation) +
      // The chain of gate Elos from the initial network (biased upwards), where gates measured it.
      (std::isfinite(p.rating) ? " chained " + arena::format_elo(p.rating) + " Elo" : "");
  if (!cluster.empty()) line += " | " + cluster;
  if (!p.gate.empty()) line += " | gate " + p.gate;
  else if (!p.last_gate.empty()) line += " | last gate " + p.last_gate;
  return line;
}

std::string gate_summary(const GateRow& row) {
  // Only what was measured: no match, or a row rebuilt by --recover, has no estimate to show.
  std::string text = "gen " + std::to_string(row.generation);
  if (std::isfinite(row.elo)) {
    text += " " + arena::format_elo(row.elo);
    if (std::isfinite(row.elo_low) && std::isfinite(row.elo_high))
      text += " [" + arena::format_elo(row.elo_low) + ", " + arena::format_elo(row.elo_high) + "]";
  } else if (row.games == 0) {
    text += " no gate match";
  }
  if (row.games > 0) text += " over " + std::to_string(row.games) + " games";
  // A candidate refused (trainer/gate.h, GateMatches::refused): why, not a match it lost.
  const bool refused = row.verdict.rfind("not promoted: ", 0) == 0;
  text += std::string(": ") + (row.promoted ? "promoted"
                               : refused    ? "refused, its network computes nothing"
                                            : "rejected");
  if (!row.anchor.empty()) {
    // Its games and interval, as the gate's: "0.0% (-279.6 Elo)" of 2 games was the prior's
    // estimate alone, and read as a measurement.
    text += "; vs " + row.anchor + " " + fixed(100.0 * row.anchor_score, 1) + "% (" +
            arena::format_elo(row.anchor_elo) + " Elo";
    if (std::isfinite(row.anchor_elo_low) && std::isfinite(row.anchor_elo_high) &&
        row.anchor_elo_low < row.anchor_elo_high)
      text += " [" + arena::format_elo(row.anchor_elo_low) + ", " +
              arena::format_elo(row.anchor_elo_high) + "]";
    if (row.anchor_games > 0) text += " over " + std::to_string(row.anchor_games) + " games";
    text += ")";
  }
  return text;
}

ClusterMonitor::ClusterMonitor(store::RunChannel& channel, RunFolder& folder,
                               std::function<selfplay::SelfPlayStats()> selfplay,
                               Clock::time_point now)
    : channel_(channel), folder_(folder), selfplay_(std::move(selfplay)), last_rows_(now) {}

const std::string& ClusterMonitor::poll(const Progress& p, Clock::time_point now) {
  if (now - last_poll_ < std::chrono::seconds(5)) return text_;
  last_poll_ = now;
  if (selfplay_) {  // the trainer's own self-play threads are a node like any other
    const selfplay::SelfPlayStats s = selfplay_();
    channel_.heartbeat("trainer", ++own_beats_, s.games, s.positions);
  }
  for (const auto& [node, beat] : channel_.nodes()) {
    // The channel bounds the names and their number; this keeps the map bounded over time, when
    // nodes come and go (a worker's default name changes with its pid).
    if (!store::node_name_problem(node).empty()) continue;
    if (nodes_.size() >= store::kMaxNodes && nodes_.count(node) == 0) {
      forget_silent_nodes(now);
      if (nodes_.size() >= store::kMaxNodes) continue;
    }
    NodeSeen& seen = nodes_[node];
    if (beat.beats == seen.beats) continue;
    // A node's first beat seen may be one from before this trainer started, of a node long gone
    // (a trainer just started counted every worker of the run's past for a minute): a node is
    // alive once its beat changes, the trainer's own self-play at once.
    const bool alive = seen.beats >= 0 || (selfplay_ && node == "trainer");
    // Games arrive a chunk at a time: the rate is taken over 20 s or more.
    const double dt = std::chrono::duration<double>(now - seen.sampled).count();
    if (seen.beats < 0 || dt >= 20 || beat.games < seen.games) {
      // A worker restarted under the node's name counts its games from 0 again: its rate is
      // taken afresh from there (it was written negative), the last one kept meanwhile.
      if (seen.beats >= 0 && beat.games >= seen.games)
        seen.games_per_second = static_cast<double>(beat.games - seen.games) / dt;
      seen.games = beat.games;
      seen.sampled = now;
    }
    seen.beats = beat.beats;
    if (alive) seen.changed = now;
  }
  const bool record = now - last_rows_ >= std::chrono::seconds(30);
  if (record) last_rows_ = now;
  std::string rates;
  int active = 0;
  for (const auto& [node, seen] : nodes_) {
    if (now - seen.changed > std::chrono::minutes(1)) continue;
    // A silent node's last rate is not its rate now.
    const double rate = now - seen.changed >= kSilent ? 0.0 : seen.games_per_second;
    // The status line names the first few nodes: it is logged every 30 s.
    if (++active <= kNodesNamed)
      rates += (rates.empty() ? "" : ", ") + node + " " + fixed(rate, 1) + "/s";
    if (record) folder_.append_node({p.seconds, node, seen.games, rate});
  }
  if (active > kNodesNamed) rates += ", " + std::to_string(active - kNodesNamed) + " more";
  if (record)
    folder_.append_stream(
        {p.seconds, p.positions, p.games, active, p.stream_lag, p.stream_evicted});
  text_ = "nodes " + std::to_string(active) + (rates.empty() ? "" : " (" + rates + ")") + " lag " +
          std::to_string(p.stream_lag) + " evicted " + std::to_string(p.stream_evicted);
  return text_;
}

void ClusterMonitor::forget_silent_nodes(Clock::time_point now) {
  for (auto it = nodes_.begin(); it != nodes_.end();)
    it = now - it->second.changed > std::chrono::minutes(1) ? nodes_.erase(it) : std::next(it);
}

Telemetry::Telemetry(const config::RunConfig& config, bool status_line, Sources sources,
                     RunFolder& folder, store::RunChannel* channel,
                     util::LogLine log)
    : sources_(std::move(sources)), folder_(folder), log_(std::move(log)),
      score_head_(config.net.score_head), resign_(config.selfplay.resign_below < 0),
      search_only_targets_(config.selfplay.target_visits == "search"),
      terminal_(status_line && isatty(2)), batch_size_(config.training.batch_size),
      sample_reuse_(config.training.sample_reuse),
      min_positions_(config.training.min_positions) {
  if (channel) cluster_.emplace(*channel, folder, sources_.selfplay, Clock::now());
}

PipelineMark Telemetry::mark() const {
  PipelineMark m;
  m.at = Clock::now();
  m.inference = sources_.inference();
  if (sources_.selfplay) m.selfplay = sources_.selfplay();
  return m;
}

void Telemetry::update(const Progress& p) {
  if (sources_.selfplay && !marked_ && sources_.selfplay().moves > 0) {
    session_mark_ = generation_mark_ = mark();
    marked_ = true;
  }
  const auto now = Clock::now();
  if (now - last_status_ < std::chrono::seconds(1)) return;
  last_status_ = now;
  folder_.append_clock_if_quiet(p.seconds, now, std::chrono::seconds(60));
  std::optional<selfplay::SelfPlayStats> sp;
  if (sources_.selfplay) sp = sources_.selfplay();
  const model::InferenceStats inference = sources_.inference();
  const std::string cluster = cluster_ ? cluster_->poll(p, now) : "";
  const std::string line = status_text(p, sp ? &*sp : nullptr, inference, score_head_, cluster);
  if (terminal_) {
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    status_shown_ = true;
  } else if (now - last_status_log_ > std::chrono::seconds(30)) {
    last_status_log_ = now;
    log_(line);
  }
}

void Telemetry::report_pipeline(const PipelineMark& from, const std::string& what,
                                const Progress& p, bool record) {
  if (!sources_.selfplay) return;
  const PipelineMark to = mark();
  const std::optional<SelfplayRow> row = pipeline_row(from, to, p, resign_);
  if (!row) return;
  log_(pipeline_line(what, *row, to.inference.workers));
  if (record) folder_.append_selfplay(*row);
}

void Telemetry::end_generation(const Progress& p) {
  if (score_head_)
    log_(fmt::format("generation {}: step {} losses: policy {}, value {}, score margin {}",
                     p.generation, p.steps, fixed(p.last_step.policy_loss, 4),
                     fixed(p.last_step.value_loss, 4), fixed(p.last_step.score_loss, 4)));
  if (marked_) {
    report_pipeline(generation_mark_, "generation " + std::to_string(p.generation), p, true);
    generation_mark_ = mark();
  }
  if (!sources_.selfplay || !resign_) return;
  const selfplay::ResignControl::Stats r = sources_.selfplay().resign;
  log_(fmt::format("self-play resignations this session: {} games resigned; {} checked by playing "
                   "on, {} wrong ({:.1f}% of the last {}); resigning is {}",
                   r.resigned, r.checks, r.wrong, 100.0 * r.recent_false_rate,
                   std::min<std::int64_t>(r.checks, selfplay::ResignControl::kRecentChecks),
                   r.allowed ? "on" : "off"));
}

void Telemetry::end_session(const Progress& p) {
  if (marked_) report_pipeline(session_mark_, "session", p, false);
}

void Telemetry::end_selfplay(const Progress& p) {
  // (Read before the games in flight were taken in, "each position sampled" divided by fewer
  // positions than the "stopped: N positions" line after it gave.)
  log_(trainer_pace_line(p, batch_size_, sample_reuse_, min_positions_));
  if (!sources_.selfplay) return;
  const selfplay::SelfPlayStats sp = sources_.selfplay();
  if (sp.target_visits <= 0) return;
  log_(fmt::format("self-play this session: {} positions, {} with full searches; {:.1f}% of the "
                   "target visits of full PUCT searches were kept from earlier searches by tree "
                   "reuse{}", sp.positions, sp.policy_targets,
                   100.0 * static_cast<double>(sp.reused_target_visits) /
                       static_cast<double>(sp.target_visits),
                   search_only_targets_ ? " (not in the targets)" : ""));
}

void Telemetry::end_status_line() {
  // Cleared, not ended: the console's log lines clear it too (trainer/run.cpp), so a newline here
  // left a blank line under the session's last lines.
  if (status_shown_) std::fputs("\r\033[K", stderr);
  status_shown_ = false;
}

}  // namespace oppidum::trainer
