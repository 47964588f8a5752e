// `oppidum report`: a self-contained HTML page (inline SVG, no scripts, no network) with the
// curves of a run: training losses by step; by generation (which only grows, across the sessions
// of a resumed run) the best network's rating, each gate's Elo and the anchor's (arena.csv), and
// self-play speed (metrics.csv's `selfplay` rows); the mean game length per replay chunk. Reads
// the run folder's tables through trainer/run_folder.h, a row at a time; damaged rows and records
// are skipped and counted. Each curve has at most 300 points, each the mean of consecutive rows
// weighed by what they stand for (a train row's steps, a chunk's games: util::BoundedCurve), so
// the page and the memory it takes to write stay small however long the run.
#pragma once

#include <string>

namespace oppidum::trainer {

// Writes the page to `out_path` (atomically) and returns a one-line summary.
std::string write_report(const std::string& run_dir, const std::string& out_path);

}  // namespace oppidum::trainer
