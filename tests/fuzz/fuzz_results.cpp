// Results files of `oppidum arena --results` / `oppidum ratings` (arena/ratings.h): read_results,
// then the fit. Input: the file's text. Every line read must format back to a line that reads
// the same; the fit may refuse only with std::invalid_argument, and its ratings must be finite.
#include <cmath>
#include <sstream>

#include "arena/ratings.h"
#include "common.h"

using namespace oppidum::arena;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::vector<MatchLine> lines;
  try {
    lines = read_results(in, "fuzz.txt");
  } catch (const ResultsFileError&) {
    return 0;
  }
  for (const MatchLine& l : lines) {
    const std::string text = format_result_line(l);
    std::istringstream again(text + "\n");
    std::vector<MatchLine> back;
    try {
      back = read_results(again, "again");
    } catch (const ResultsFileError& e) {
      fuzz::fail(std::string("a line read formats to one that is refused: ") + e.what());
    }
    FUZZ_CHECK(back.size() == 1 && format_result_line(back[0]) == text, "line round trip: " + text);
  }
  if (lines.empty() || lines.size() > 64) return 0;  // the fit is cubic in the players
  for (double prior : {1.0, 0.0}) {
    RatingOptions options;
    options.anchor = lines[0].a;
    options.prior_draws = prior;
    try {
      const auto ratings = fit_ratings(lines, options);
      for (const Rating& r : ratings)
        FUZZ_CHECK(std::isfinite(r.elo) && std::isfinite(r.half_width),
                   "finite rating for " + r.player);
      (void)format_ratings(ratings, options);
    } catch (const std::invalid_argument&) {
    }
  }
  return 0;
}
