// The web page's JSON API over positions and players (web/game_service.h): the request bodies of
// POST /api/position, /api/move, /api/analyse, /api/evaluate and /api/match, with small limits
// (searches of 30 ms, 16 simulations, depth 2). Input: the request body (JSON). A request may be
// refused only as the server answers 4xx/503 (BadRequest, NotFound, Busy, Cancelled, a JSON
// error); anything else would be a 500. Answers must dump as the server sends them. Also
// util::is_loopback_host on the raw bytes. One checkpoint is served: "run/best", a tiny ttt network.
#include <nlohmann/json.hpp>

#include "common.h"
#include "games/registry.h"
#include "model/checkpoint.h"
#include "util/host.h"
#include "web/errors.h"
#include "web/game_service.h"
#include "web/server.h"

using namespace oppidum;
using json = nlohmann::json;

namespace {

web::GameService& service() {
  static const std::string ckpt = [] {
    model::NetConfig c;
    c.blocks = 1;
    c.filters = 4;
    c.policy_channels = 1;
    c.value_channels = 1;
    c.value_hidden = 8;
    const std::string path = fuzz::scratch_dir() + "/best.ckpt";
    model::save_checkpoint(model::random_checkpoint(game_by_name("ttt"), c, 1), path);
    return path;
  }();
  web::Limits limits;
  limits.max_searches = 2;
  limits.search_ms = 30;
  limits.max_simulations = 16;
  limits.max_alphabeta_depth = 2;
  static web::GameService s(
      [](const std::string& name) -> std::filesystem::path {
        if (name == "run/best") return ckpt;
        throw web::NotFound("no checkpoint " + name);
      },
      limits);
  return s;
}

template <class F>
void call(const char* what, F&& f) {
  try {
    const json answer = f();
    (void)answer.dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const web::BadRequest&) {
  } catch (const web::NotFound&) {
  } catch (const web::Busy&) {
  } catch (const web::Cancelled&) {
  } catch (const json::exception&) {
  } catch (const std::exception& e) {
    fuzz::fail(std::string(what) + ": a 500 (" + typeid(e).name() + "): " + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  (void)util::is_loopback_host(body);
  if (body.find('\0') != std::string::npos) return 0;  // the server refuses NUL bytes first
  json request;
  try {
    request = json::parse(body);
  } catch (const json::exception&) {
    return 0;
  }
  web::GameService& s = service();
  call("position", [&] { return s.position(request); });
  call("move", [&] { return s.move(request); });
  call("analyse", [&] { return s.analyse(request); });
  call("evaluate", [&] { return s.evaluate(request); });
  call("match", [&] { return s.match(request); });
  return 0;
}
