// `oppidum report`: a self-contained HTML page (inline SVG, no scripts, no network) with the
// curves of a run: training losses by step; by generation (which only grows, across the sessions
// of a resumed run) the best network's rating, each gate's Elo and the anchor's (arena.csv), and
// self-play speed (metrics.csv's `selfplay` rows); the mean game length per replay chunk. Reads
// the run folder's tables through trainer/run_folder.h; damaged rows and records are skipped and
// counted.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace oppidum::trainer {

// At most about `max_points` points of a curve, by averaging x and y over consecutive groups (a
// chart of thousands of steps stays readable), each point weighted by what it stands for (a train
// row's steps, a chunk's games; 1 each where `weights` is empty), so that a group means what its
// points together mean.
std::vector<std::pair<double, double>> smooth(const std::vector<std::pair<double, double>>& p,
                                              const std::vector<double>& weights,
                                              std::size_t max_points);

// Writes the page to `out_path` (atomically) and returns a one-line summary.
std::string write_report(const std::string& run_dir, const std::string& out_path);

}  // namespace oppidum::trainer
