// `oppidum report`: a self-contained HTML page (inline SVG, no scripts, no network) with the
// curves of a run: training losses by step, the best network's rating and each gate's Elo against
// time, self-play speed, and the mean game length per replay chunk. Reads metrics.csv, arena.csv
// and the game chunks of the run folder; damaged rows and records are skipped and counted.
#pragma once

#include <string>

namespace oppidum::trainer {

// Writes the page to `out_path` (atomically) and returns a one-line summary.
std::string write_report(const std::string& run_dir, const std::string& out_path);

}  // namespace oppidum::trainer
