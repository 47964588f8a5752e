#include "web/game_service.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <system_error>
#include <thread>

#include "arena/alphabeta.h"
#include "arena/classic.h"
#include "arena/match.h"
#include "arena/spec.h"
#include "games/quote.h"
#include "mcts/search.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/inference_server.h"
#include "web/board_json.h"

namespace oppidum::web {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Holds one of the `max_searches` places for the duration of a search.
class SearchSlot {
 public:
  explicit SearchSlot(GameService& service) : service_(service) {
    std::lock_guard<std::mutex> lock(service_.searches_mutex_);
    if (service_.searches_ >= service_.limits_.max_searches)
      throw Busy("the server is busy: " + std::to_string(service_.searches_) +
                 " searches are running (the limit, --max-searches); try again in a moment");
    ++service_.searches_;
  }
  ~SearchSlot() {
    std::lock_guard<std::mutex> lock(service_.searches_mutex_);
    --service_.searches_;
  }
  SearchSlot(const SearchSlot&) = delete;
  SearchSlot& operator=(const SearchSlot&) = delete;

 private:
  GameService& service_;
};

namespace {

constexpr int kTopMoves = 10;
// Rollouts a leaf of a uct player (each a random game to its end; arena allows 1000).
constexpr long long kMaxRollouts = 20;

const json& field(const json& request, const char* key) {
  static const json kNull;
  if (!request.is_object()) throw BadRequest("the request body must be a JSON object");
  const auto it = request.find(key);
  return it == request.end() ? kNull : *it;
}

// Refuses a request that carries a field its call does not read (a misspelt "strat" would
// otherwise be ignored in silence, and the answer would be for another position than meant).
void only_fields(const json& request, std::initializer_list<const char*> known) {
  if (!request.is_object()) throw BadRequest("the request body must be a JSON object");
  for (auto it = request.begin(); it != request.end(); ++it) {
    if (std::any_of(known.begin(), known.end(),
                    [&](const char* k) { return it.key() == k; }))
      continue;
    std::string names;
    for (const char* k : known) names += std::string(names.empty() ? "" : ", ") + k;
    throw BadRequest("unknown field \"" + quote_input(it.key(), 40) + "\"; this call reads " +
                     names);
  }
}

std::string string_field(const json& request, const char* key, bool required) {
  const json& v = field(request, key);
  if (v.is_null()) {
    if (required) throw BadRequest(std::string("\"") + key + "\" is missing");
    return "";
  }
  if (!v.is_string()) throw BadRequest(std::string("\"") + key + "\" must be a string");
  return v.get<std::string>();
}

const Game& game_of(const json& request) {
  const std::string name = string_field(request, "game", true);
  try {
    return game_by_name(name);
  } catch (const GameError& e) {
    throw BadRequest(std::string("game: ") + e.what());
  }
}

// The position of a request: its start (or the game's initial position) and its moves applied.
std::unique_ptr<GameState> state_of(const Game& game, const json& request) {
  std::unique_ptr<GameState> state;
  const std::string start = string_field(request, "start", false);
  try {
    state = start.empty() ? game.initial_state() : game.parse_state(start);
  } catch (const GameError& e) {
    throw BadRequest(std::string("start position: ") + e.what());
  }
  const json& moves = field(request, "moves");
  if (moves.is_null()) return state;
  if (!moves.is_array()) throw BadRequest("\"moves\" must be an array of moves in notation");
  if (moves.size() > static_cast<std::size_t>(game.max_game_length()))
    throw BadRequest("\"moves\" holds " + std::to_string(moves.size()) + " moves; this server " +
                     "plays and replays at most " + std::to_string(game.max_game_length()) +
                     " of " + game.name() + " (the engines' ply limit, where a game is drawn)");
  for (std::size_t i = 0; i < moves.size(); ++i) {
    if (!moves[i].is_string())
      throw BadRequest("move " + std::to_string(i + 1) + " must be a string in notation");
    const std::string text = moves[i].get<std::string>();
    if (state->is_terminal())
      throw BadRequest("move " + std::to_string(i + 1) + " (\"" + quote_input(text) +
                       "\"): the game is already over");
    try {
      state->apply(state->parse_action(text));
    } catch (const GameError& e) {
      throw BadRequest("move " + std::to_string(i + 1) + " (\"" + quote_input(text) +
                       "\"): " + e.what());
    }
  }
  return state;
}

json describe(const GameState& s) {
  ActionList legal;
  s.legal_actions(legal);
  json moves = json::array();
  for (const Action a : legal) moves.push_back(move_json(s, a));
  std::sort(moves.begin(), moves.end(),
            [](const json& a, const json& b) { return a["move"] < b["move"]; });
  json out = {{"game", s.game().name()},
              {"position", s.to_string()},
              {"to_move", s.current_player()},
              {"ply", s.ply()},
              {"terminal", s.is_terminal()},
              {"scores", {s.score(0), s.score(1)}},
              {"board", board_json(s)},
              {"legal", moves}};
  if (s.is_terminal()) out["result"] = s.result(0);
  return out;
}

std::uint64_t seed_of(const json& request, const GameState& state) {
  const json& v = field(request, "seed");
  if (v.is_null()) return state.hash() ^ static_cast<std::uint64_t>(state.ply());
  if (!v.is_number_unsigned()) throw BadRequest("\"seed\" must be a whole number, 0 or more");
  return v.get<std::uint64_t>();
}

void require_playable(const GameState& state) {
  if (state.is_terminal()) throw BadRequest("the game is over: there is no move to find");
}

struct TimedSearch {
  mcts::SearchResult result;
  std::vector<mcts::ChildStats> children;
  double ms = 0;
  bool out_of_time = false;
};

[[noreturn]] void cancelled() {
  throw Cancelled("the search was stopped: its client left or the server is stopping");
}

// A search of `simulations` that stops at the deadline with what it has, or, when `stop` says so,
// throws Cancelled. Its `ms` counts from the request's start (a network's load included).
TimedSearch timed_search(const GameState& state, const arena::SearchAgent& agent, int simulations,
                         Clock::time_point start, Clock::time_point deadline,
                         const StopCheck& stop) {
  mcts::SearchTree tree(state, agent.search);
  tree.start_search(simulations, /*root_noise=*/false);
  TimedSearch out;
  mcts::EvalResult evaluation;
  while (const mcts::PendingLeaf* leaf = tree.select_leaf()) {
    const mcts::EvalRequest request = leaf->request();
    agent.evaluator->evaluate(&request, 1, &evaluation);
    tree.receive(evaluation);
    if (stop && stop()) cancelled();
    if (Clock::now() >= deadline) {
      out.out_of_time = !tree.search_finished();
      break;
    }
  }
  out.result = tree.result();
  out.children = tree.children();
  out.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return out;
}

// What a depth-first search (alpha-beta or the classical engine) found within the server's time.
struct DepthSearch {
  Action action = -1;
  int score = 0;
  int depth = 0;
  std::int64_t nodes = 0;
  bool out_of_time = false;  // the server's deadline, not the spec's budget, ended the search
  double ms = 0;
};

// Runs `player`'s search when it is alpha-beta or the classical engine (nullopt for any other
// player) with its own depth (and node) budget, stopped at the server's deadline; throws
// Cancelled when `stop` ended it. The classical engine gets a fresh table.
std::optional<DepthSearch> depth_search(const arena::Player& player, const GameState& state,
                                        Clock::time_point start, Clock::time_point deadline,
                                        const StopCheck& stop) {
  DepthSearch out;
  bool stopped = false;
  if (const auto* alphabeta = dynamic_cast<const arena::AlphaBetaPlayer*>(&player)) {
    arena::AlphaBetaOptions options;
    options.depth = alphabeta->depth();
    options.deadline = deadline;
    options.stop = stop;
    const arena::AlphaBetaResult r = arena::alphabeta_search(state, options);
    out = {r.action, r.score, r.depth, r.nodes, r.stopped, 0};
    stopped = r.stopped;
  } else if (const auto* classic = dynamic_cast<const arena::ClassicPlayer*>(&player)) {
    const arena::ClassicSettings& settings = classic->settings();
    arena::ClassicOptions options;
    if (settings.depth > 0) options.depth = settings.depth;
    options.nodes = settings.nodes;
    options.deadline = deadline;
    options.stop = stop;
    arena::ClassicTable table(settings.hash_mb);
    const arena::ClassicResult r = arena::classic_search(state, options, table);
    // `stopped` also says the node budget ended it: that is the spec's own budget, not time.
    const bool out_of_time = r.stopped && (settings.nodes == 0 || r.nodes < settings.nodes);
    out = {r.action, r.score, r.depth, r.nodes, out_of_time, 0};
    stopped = r.stopped;
  } else {
    return std::nullopt;
  }
  if (stopped && stop && stop()) cancelled();
  out.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return out;
}

// An integer parameter of a spec, if present and numeric (the arena checks the rest).
std::optional<long long> spec_int(const arena::PlayerSpec& spec, const std::string& key) {
  for (const auto& [k, v] : spec.params) {
    if (k != key) continue;
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (!v.empty() && end && *end == '\0') return n;
  }
  return std::nullopt;
}

}  // namespace

GameService::GameService(CheckpointResolver resolve_checkpoint, Limits limits)
    : resolve_(std::move(resolve_checkpoint)), limits_(limits) {
  if (limits_.max_searches < 1 || limits_.search_ms < 1 || limits_.max_simulations < 1 ||
      limits_.max_alphabeta_depth < 1 || limits_.max_alphabeta_depth > arena::kMaxAlphaBetaDepth)
    throw std::invalid_argument("web limits: searches, time and simulations must be 1 or more, "
                                "alpha-beta depth 1.." + std::to_string(arena::kMaxAlphaBetaDepth));
}

std::shared_ptr<mcts::Evaluator> GameService::network(const Game& game, const std::string& name,
                                                      const Budget& budget) {
  const fs::path path = resolve_(name);
  // The file's identity: a checkpoint replaced by another file (a rename, as train writes them)
  // has another inode, also when its time and size were made equal.
  struct stat st {};
  const std::array<std::int64_t, 4> version =
      ::stat(path.c_str(), &st) == 0
          ? std::array<std::int64_t, 4>{static_cast<std::int64_t>(st.st_ino),
                                        static_cast<std::int64_t>(st.st_size),
                                        static_cast<std::int64_t>(st.st_mtim.tv_sec),
                                        static_cast<std::int64_t>(st.st_mtim.tv_nsec)}
          : std::array<std::int64_t, 4>{-1, -1, -1, -1};
  // A file is loaded once for each version of it, one load at a time (a large file takes seconds
  // and memory: requests that need it wait for the one load, not each for its own), while other
  // requests find their networks in the cache meanwhile. A file whose content fails (a damaged
  // checkpoint) is remembered too, so that it is not read again for every request that names it;
  // a failure of the moment (memory) is not.
  const auto cached = [&]() -> std::shared_ptr<mcts::Evaluator> {
    std::lock_guard<std::mutex> lock(nets_mutex_);
    for (auto it = nets_.begin(); it != nets_.end(); ++it) {
      if (it->path != path || it->game != game.name()) continue;
      if (it->version == version) {
        nets_.splice(nets_.begin(), nets_, it);
        if (!nets_.front().evaluator) throw BadRequest(nets_.front().error);
        return nets_.front().evaluator;
      }
      nets_.erase(it);  // the file was replaced (a new best network)
      break;
    }
    return nullptr;
  };
  if (auto evaluator = cached()) return evaluator;
  // Polled with try_lock (a timed lock's wait is not seen by ThreadSanitizer, which then takes
  // its unlock for a bug).
  std::unique_lock<std::mutex> loading(load_mutex_, std::defer_lock);
  while (!loading.try_lock()) {
    if (budget.stop && budget.stop()) cancelled();
    if (Clock::now() >= budget.deadline)
      throw Busy("the server is busy loading another network (the time limit, --search-ms, "
                 "passed while this request waited); try again in a moment");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (auto evaluator = cached()) return evaluator;  // loaded while this request waited
  CachedNet loaded{path, game.name(), version, nullptr, ""};
  // Said by the name asked for: the server's own paths are nobody's business.
  const auto said = [&](const std::exception& e) {
    std::string why = e.what();
    for (std::size_t at; (at = why.find(path.string())) != std::string::npos;)
      why.replace(at, path.string().size(), quote_input(name));
    const std::string prefix = "checkpoint " + quote_input(name) + ": ";
    return why.rfind(prefix, 0) == 0 ? why : prefix + why;
  };
  try {
    const model::Checkpoint checkpoint = model::load_checkpoint(path.string(), game);
    auto backend = model::make_backend(checkpoint, model::BackendOptions{});
    model::check_finite_outputs(game, *backend, path.string());
    loaded.evaluator =
        std::make_shared<model::DirectEvaluator>(game, std::move(backend),
                                                 "checkpoint " + quote_input(name));
  } catch (const model::CheckpointError& e) {
    loaded.error = said(e);
  } catch (const std::exception& e) {
    throw BadRequest(said(e));
  }
  constexpr std::size_t kMaxNets = 6;
  std::lock_guard<std::mutex> lock(nets_mutex_);
  nets_.push_front(loaded);
  if (nets_.size() > kMaxNets) nets_.pop_back();
  if (!loaded.evaluator) throw BadRequest(loaded.error);
  return loaded.evaluator;
}

std::unique_ptr<arena::Player> GameService::make_player(const Game& game, const std::string& text,
                                                        const Budget& budget) {
  try {
    const arena::PlayerSpec spec = arena::parse_player_spec(text);
    if (spec.name != "random" && spec.name != "uct" && spec.name != "alphabeta" &&
        spec.name != "classic" && spec.name != "net")
      throw BadRequest("player \"" + quote_input(text) + "\": the page plays random, "
                       "uct:sims=N, alphabeta:depth=N, classic:depth=N or nodes=N and "
                       "net:checkpoint=RUN/NAME,sims=N");
    // A time key would bypass the server's own limit on a search (--search-ms).
    for (const auto& param : spec.params)
      if (param.first == "ms" || param.first == "clock")
        throw BadRequest("player \"" + quote_input(text) + "\": no " + param.first +
                         "= here: the server times the page's searches (--search-ms)");
    const auto sims = spec_int(spec, "sims");
    if (sims && *sims > limits_.max_simulations)
      throw BadRequest("player \"" + quote_input(text) + "\": at most " +
                       std::to_string(limits_.max_simulations) +
                       " simulations here (--max-sims)");
    const auto hash = spec_int(spec, "hash");
    if (hash && *hash > arena::kDefaultClassicHashMb)
      throw BadRequest("player \"" + quote_input(text) + "\": a table of at most " +
                       std::to_string(arena::kDefaultClassicHashMb) + " MB here (hash=)");
    // A rollout is not cut short: many of them would run one leaf far past the time limit.
    const auto rollouts = spec_int(spec, "rollouts");
    if (rollouts && *rollouts > kMaxRollouts)
      throw BadRequest("player \"" + quote_input(text) + "\": at most " +
                       std::to_string(kMaxRollouts) + " rollouts a leaf here");
    const auto depth = spec_int(spec, "depth");
    if (spec.name == "alphabeta" && depth && *depth > limits_.max_alphabeta_depth)
      throw BadRequest("player \"" + quote_input(text) + "\": alpha-beta depth at most " +
                       std::to_string(limits_.max_alphabeta_depth) + " here (--max-depth)");
    arena::PlayerOptions options;
    options.net_factory = [this, &budget](const Game& g, const std::string& checkpoint) {
      return network(g, checkpoint, budget);
    };
    return arena::make_player(game, text, options);
  } catch (const arena::PlayerSpecError& e) {
    throw BadRequest(std::string("player: ") + e.what());
  }
}

json GameService::position(const json& request) {
  only_fields(request, {"game", "start", "moves"});
  const Game& game = game_of(request);
  return describe(*state_of(game, request));
}

json GameService::move(const json& request, const StopCheck& stop) {
  only_fields(request, {"game", "start", "moves", "player", "seed"});
  const Game& game = game_of(request);
  std::unique_ptr<GameState> state = state_of(game, request);
  require_playable(*state);
  const std::string spec = string_field(request, "player", true);
  const std::uint64_t seed = seed_of(request, *state);
  SearchSlot slot(*this);  // before anything is built: a busy server makes nothing
  const Budget budget = budget_from_now(stop);
  const auto player = make_player(game, spec, budget);
  json out = {{"player", player->spec()}};
  Action action = -1;
  if (const auto agent = player->search_agent(seed)) {
    const TimedSearch search = timed_search(*state, *agent, agent->search.simulations,
                                            budget.start, budget.deadline, stop);
    action = search.result.action;
    out["simulations"] = search.result.simulations;
    out["value"] = search.result.root_value;
    out["ms"] = search.ms;
    out["out_of_time"] = search.out_of_time;
  } else if (const auto r = depth_search(*player, *state, budget.start, budget.deadline, stop)) {
    action = r->action;
    out["score"] = r->score;
    out["depth"] = r->depth;
    out["ms"] = r->ms;
    out["out_of_time"] = r->out_of_time;
  } else {
    action = player->choose_move(*state, seed);
    out["ms"] = std::chrono::duration<double, std::milli>(Clock::now() - budget.start).count();
  }
  out.update(move_json(*state, action));
  state->apply(action);
  out["after"] = describe(*state);
  return out;
}

json GameService::analyse(const json& request, const StopCheck& stop) {
  only_fields(request, {"game", "start", "moves", "player", "seed"});
  const Game& game = game_of(request);
  const std::unique_ptr<GameState> state = state_of(game, request);
  require_playable(*state);
  const std::string spec = string_field(request, "player", true);
  SearchSlot slot(*this);  // before anything is built: a busy server makes nothing
  const Budget budget = budget_from_now(stop);
  const auto player = make_player(game, spec, budget);
  json out = {{"player", player->spec()}, {"position", state->to_string()},
              {"to_move", state->current_player()}};
  if (const auto agent = player->search_agent(seed_of(request, *state))) {
    const TimedSearch search = timed_search(*state, *agent, agent->search.simulations,
                                            budget.start, budget.deadline, stop);
    std::vector<mcts::ChildStats> children = search.children;
    std::stable_sort(children.begin(), children.end(), [](const auto& a, const auto& b) {
      return a.visits != b.visits ? a.visits > b.visits : a.prior > b.prior;
    });
    json top = json::array();
    for (std::size_t i = 0; i < children.size() && i < static_cast<std::size_t>(kTopMoves); ++i)
      top.push_back({{"move", state->action_to_string(children[i].action)},
                     {"cells", cells_json(*state, children[i].action)},
                     {"visits", children[i].visits},
                     // An unvisited move's value is unknown, not a draw.
                     {"q", children[i].visits > 0 ? json(children[i].value) : json(nullptr)},
                     {"prior", children[i].prior},
                     {"proven", mcts::to_string(children[i].proven)}});
    json pv = json::array();
    const auto line = state->clone();
    for (const Action a : search.result.principal_variation) {
      if (!line->is_legal(a)) break;
      pv.push_back(line->action_to_string(a));
      line->apply(a);
    }
    out["kind"] = "search";
    out["best"] = state->action_to_string(search.result.action);
    out["best_cells"] = cells_json(*state, search.result.action);
    out["value"] = search.result.root_value;
    out["proven"] = mcts::to_string(search.result.proven);
    out["simulations"] = search.result.simulations;
    out["ms"] = search.ms;
    out["out_of_time"] = search.out_of_time;
    out["top"] = top;
    out["pv"] = pv;
  } else if (const auto r = depth_search(*player, *state, budget.start, budget.deadline, stop)) {
    out["kind"] = "alphabeta";  // the page shows a score, a depth and nodes for both searches
    out["best"] = state->action_to_string(r->action);
    out["best_cells"] = cells_json(*state, r->action);
    out["score"] = r->score;
    out["depth"] = r->depth;
    out["nodes"] = r->nodes;
    out["ms"] = r->ms;
    out["out_of_time"] = r->out_of_time;
  } else {
    throw BadRequest("player \"" + quote_input(spec) + "\" does not search; analyse with "
                     "uct:sims=N, net:checkpoint=RUN/NAME,sims=N, alphabeta:depth=N or "
                     "classic:depth=N");
  }
  return out;
}

json GameService::evaluate(const json& request, const StopCheck& stop) {
  only_fields(request, {"game", "start", "moves", "checkpoint"});
  const Game& game = game_of(request);
  const std::unique_ptr<GameState> state = state_of(game, request);
  require_playable(*state);
  const std::string checkpoint = string_field(request, "checkpoint", true);
  const auto evaluator = network(game, checkpoint, budget_from_now(stop));
  ActionList legal;
  state->legal_actions(legal);
  const mcts::EvalRequest eval_request{state.get(), &legal};
  mcts::EvalResult result;
  evaluator->evaluate(&eval_request, 1, &result);
  std::vector<int> order(static_cast<std::size_t>(legal.size()));
  for (int i = 0; i < legal.size(); ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return result.priors[static_cast<std::size_t>(a)] > result.priors[static_cast<std::size_t>(b)];
  });
  json top = json::array();
  for (std::size_t k = 0; k < order.size() && k < static_cast<std::size_t>(kTopMoves); ++k)
    top.push_back({{"move", state->action_to_string(legal[order[k]])},
                   {"cells", cells_json(*state, legal[order[k]])},
                   {"prior", result.priors[static_cast<std::size_t>(order[k])]}});
  return {{"checkpoint", checkpoint},
          {"position", state->to_string()},
          {"to_move", state->current_player()},
          {"value", result.value},
          {"top", top}};
}

json GameService::match(const json& request, const StopCheck& stop) {
  only_fields(request, {"game", "a", "b", "games", "seed"});
  const Game& game = game_of(request);
  const std::string a_spec = string_field(request, "a", true);
  const std::string b_spec = string_field(request, "b", true);
  const json& count = field(request, "games");
  int games = 10;
  if (!count.is_null()) {
    if (!count.is_number_integer() || count.get<long long>() < 2 ||
        count.get<long long>() > kMaxMatchGames || count.get<long long>() % 2 != 0)
      throw BadRequest("\"games\" must be an even number 2.." + std::to_string(kMaxMatchGames) +
                       " (games are played in pairs, each opening with colours swapped)");
    games = count.get<int>();
  }
  arena::MatchConfig config;
  config.games = games;
  config.threads = 1;
  const json& seed = field(request, "seed");
  if (!seed.is_null()) {
    if (!seed.is_number_unsigned()) throw BadRequest("\"seed\" must be a whole number, 0 or more");
    config.seed = seed.get<std::uint64_t>();
  }
  SearchSlot slot(*this);  // before anything is built: a busy server makes nothing
  const Budget budget = budget_from_now(stop);
  const auto a = make_player(game, a_spec, budget);
  const auto b = make_player(game, b_spec, budget);
  // The match polls `halt`; a watcher sets it when the client leaves, the server stops, or the
  // time is up.
  std::atomic<bool> halt{false}, done{false}, cancel{false}, late{false};
  const auto deadline = budget.deadline;
  std::thread watcher([&] {
    while (!done.load()) {
      if (stop && stop()) cancel = true;
      if (Clock::now() >= deadline) late = true;
      if (cancel.load() || late.load()) {
        halt = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  arena::MatchHooks hooks;
  hooks.stop = &halt;
  arena::MatchStatus status;
  try {
    status = arena::run_match(game, *a, *b, config, hooks);
  } catch (...) {
    done = true;
    watcher.join();
    throw;
  }
  done = true;
  watcher.join();
  if (cancel.load()) cancelled();
  // No game counted, no result: the estimate would be the prior's alone (50%, +-606).
  const bool counted = status.games_counted > 0;
  const auto end = [&](double v) { return counted && std::isfinite(v) ? json(v) : json(nullptr); };
  const bool interval = counted && std::isfinite(status.elo.elo_low) &&
                        std::isfinite(status.elo.elo_high) &&
                        status.elo.elo_low < status.elo.elo_high;
  return {{"game", game.name()},
          {"a", a->spec()},
          {"b", b->spec()},
          {"games", status.games_counted},
          {"games_cap", status.games_cap},
          {"wins", status.wins},
          {"draws", status.draws},
          {"losses", status.losses},
          {"score", counted ? json(status.elo.score) : json(nullptr)},
          {"elo", end(status.elo.elo)},
          {"elo_low", interval ? json(status.elo.elo_low) : json(nullptr)},
          {"elo_high", interval ? json(status.elo.elo_high) : json(nullptr)},
          // The counts the interval comes from (one 5-0-5 is +-163 in five split pairs and +-244
          // in 2/0/1/0/2): as `arena` prints them, "n0/n0.5/n1/n1.5/n2".
          {"pairs", counted ? json(arena::format_pair_counts(status.pairs)) : json(nullptr)},
          {"caveats", counted ? arena::elo_caveats(status) : std::vector<std::string>{}},
          {"seconds", status.seconds},
          {"out_of_time", status.stopped}};
}

}  // namespace oppidum::web
