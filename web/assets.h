// The page of `oppidum serve`: the files of web/page/, and the baselines' match results
// (docs/baselines/GAME-results.txt, served as /GAME-results.txt and read by the ratings tab),
// compiled into the program by web/embed_page.cmake (nothing is read from disk or fetched at run
// time).
#pragma once

#include <cstddef>
#include <vector>

namespace oppidum::web {

struct Asset {
  const char* path;          // "/index.html", "/app.js", "/mg-results.txt", ...
  const char* content_type;  // "text/html; charset=utf-8", ...
  const char* data;
  std::size_t size;
};

const std::vector<Asset>& page_assets();

}  // namespace oppidum::web
