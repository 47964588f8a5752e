// Arena record files (`--record FILE`, arena/game_record.h), as the web page reads them
// (web/arena_reader.h): info, listings, every game replayed, the results and their rating ladder.
// Input: the file. Refusals may only be BadRequest or NotFound; the JSON must dump.
#include <nlohmann/json.hpp>

#include "common.h"
#include "web/arena_reader.h"
#include "web/errors.h"
#include "web/ladder.h"

using namespace oppidum;
using json = nlohmann::json;

namespace {
void dump(const json& j) { (void)j.dump(-1, ' ', false, json::error_handler_t::replace); }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::scratch_dir() + "/record.txt";
  fuzz::write_file(path, data, size);
  web::ArenaReader reader("fuzz", path);  // a new reader per input: nothing cached
  const json info = reader.info();
  dump(info);
  const int games = info.value("games", 0);
  try {
    dump(reader.list_games(0, 50, "", ""));
    dump(reader.list_games(0, 5, "uct", "1-0"));
    dump(reader.list_games(1, 1, "", "1/2-1/2"));
  } catch (const web::BadRequest&) {
  }
  for (int i = 0; i < games && i < 8; ++i) {
    try {
      dump(reader.game_record(i));
    } catch (const web::NotFound& e) {
      fuzz::fail(std::string("a listed game is not found: ") + e.what());
    }
  }
  try {
    (void)reader.game_record(games);
  } catch (const web::NotFound&) {
  }
  const auto results = reader.results();
  dump(web::rating_ladders(results));
  return 0;
}
