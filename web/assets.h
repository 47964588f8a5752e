// The page of `oppidum serve`: the files of web/page/, compiled into the program by
// web/embed_page.cmake (nothing is read from disk or fetched at run time).
#pragma once

#include <cstddef>
#include <vector>

namespace oppidum::web {

struct Asset {
  const char* path;          // "/index.html", "/app.js", ...
  const char* content_type;  // "text/html; charset=utf-8", ...
  const char* data;
  std::size_t size;
};

const std::vector<Asset>& page_assets();

}  // namespace oppidum::web
