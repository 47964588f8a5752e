#include "worker/worker.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "model/checkpoint.h"
#include "model/cpu_tuning.h"
#include "model/inference_server.h"
#include "selfplay/selfplay.h"
#include "store/redis_game_sink.h"
#include "store/run_channel.h"
#include "trainer/config.h"
#include "games/quote.h"
#include "trainer/settings.h"
#include "util/stop_watch.h"

namespace oppidum::worker {
namespace {

// How long the run's keys may be gone from the server before a worker's session ends.
constexpr std::chrono::seconds kKeysGoneEndSession{30};

using Clock = std::chrono::steady_clock;

std::string default_node_name() {
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  return std::string(host) + "-" + std::to_string(getpid());
}

// A published network for another game or input encoding: a worker of another version, which no
// later network mends (unlike a damaged one).
class WrongVersion : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The server's run is another one now: the worker stops.
class RunGone : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Checks that the published network is for the run's `game` (from its config: one for another
// game is not the run's network, whatever put it there) with this program's encoding (else
// WrongVersion) and has the run's architecture (`net`: a network of another size is none the
// trainer published); loads it.
model::Checkpoint checked_network(const store::PublishedNetwork& n, const Game& game,
                                  const model::NetConfig& net, const std::string& key) {
  if (n.info.game != game.name())
    throw std::runtime_error(key + " holds a network for " + quote_input(n.info.game, 40) +
                             ", but the run's config is for " + game.name() +
                             ": not the run's network");
  if (n.info.encoding_version != game.encoding_version())
    throw WrongVersion("the run's network is for " + quote_input(n.info.game, 40) +
                             " with encoding version " +
                             std::to_string(n.info.encoding_version) + "; this program plays " +
                             game.name() + " with encoding version " +
                             std::to_string(game.encoding_version()) +
                             ": use a worker of the trainer's version");
  model::Checkpoint c = model::parse_checkpoint(n.checkpoint.data(), n.checkpoint.size(),
                                                key);
  model::check_compatible(c, game, key, &net);
  return c;
}

// The most bytes the run's network can have: what a worker reads of the network the server holds.
std::uint64_t max_network_bytes(const model::NetConfig& net, const Game& game) {
  return model::max_checkpoint_bytes(net, game.input_shape(), game.num_actions());
}

// What the sessions of a worker's life count together (its heartbeats carry the totals).
struct Totals {
  std::int64_t beats = 0, games_played = 0;
};

// One session of play: self-play by `config` with the run's network until `quit` is set (false)
// or the run's config on the server is no longer `config_text` (true). Adds what it pushed to
// `summary`.
bool play(store::RunChannel& channel, const store::RedisUrl& url, const std::string& node,
          int threads, const std::string& run_id, const std::string& config_text,
          const config::RunConfig& config, store::PublishedNetwork published,
          const model::Checkpoint& network, const std::atomic<bool>& quit,
          const util::LogLine& log, WorkerSummary& summary, Totals& totals) {
  const Game& game = game_by_name(config.run.game);
  std::int64_t version = published.info.version;
  std::int64_t refused_version = 0;  // a published version found unusable (damaged)
  std::atomic<std::int64_t> network_step{published.info.step};

  model::BackendOptions backend = trainer::backend_options(config.inference);
  backend.kind = model::BackendKind::kEigen;  // a worker runs on the CPU, without LibTorch
  backend.device = model::Device::kCpu;
  backend.precision = model::Precision::kFloat32;
  model::InferenceServerOptions server_options =
      trainer::selfplay_server_options(config.inference);
  server_options.cuda_devices.clear();
  model::InferenceServer server(game, network, backend, server_options);
  server.set_source("the run's network from " + url.to_string());
  std::uint64_t session = 0;
  try {
    session = channel.new_session();
  } catch (const store::RedisStopped&) {
    return false;
  }
  selfplay::SelfPlaySettings settings = trainer::selfplay_settings(config, session);
  settings.seed = store::node_seed(config.run.seed, node);
  settings.threads = threads > 0 ? threads : std::max(1, config.selfplay.threads);
  std::atomic<bool> closing{false};
  store::RedisGameSink sink(url, node, run_id, config.run.stream_max_games, log, &closing);
  selfplay::SelfPlay selfplay(server, sink, settings, [&] { return network_step.load(); });
  log("playing " + game.name() + " with generation " + std::to_string(published.info.generation) +
      " (step " + std::to_string(published.info.step) + "), " + std::to_string(settings.threads) +
      " thread(s), session " + std::to_string(session));
  log("run id " + run_id);
  selfplay.start();

  bool config_changed = false;
  trainer::NonFiniteNotice non_finite_notice;  // positions with outputs not finite
  // Since when the run's owner and config are both gone from the server (max: they are there).
  Clock::time_point keys_gone_since = Clock::time_point::max();
  auto last_beat = Clock::now() - std::chrono::seconds(10);
  auto last_poll = Clock::now();
  while (!quit.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::string error = selfplay.error();
    if (!error.empty()) {
      closing = true;
      throw std::runtime_error("self-play failed: " + error);
    }
    try {
      if (Clock::now() - last_poll >= std::chrono::seconds(1)) {
        last_poll = Clock::now();
        if (const std::string line = non_finite_notice(server.stats().non_finite);
            !line.empty())
          log(line);
        const std::string owner = channel.owner();
        if (!owner.empty() && owner != run_id) {
          closing = true;
          throw RunGone(url.to_string() + " now belongs to another run (run id " +
                                   quote_input(owner, 60) + ", not " + run_id +
                                   "); this worker stops: start it again to join that run");
        }
        // The config the worker plays by is the server's (see run_worker).
        const auto now_config = channel.config(config::kMaxConfigBytes);
        // The run's keys gone, and not put back by its trainer (which renews them every few
        // seconds): the run was deleted, or its trainer is away and the server lost its data.
        // Games pushed now go to a stream nobody reads, and their stream would refuse a new run
        // of the name ("in use"): the session ends, and the worker waits for a trainer.
        if (owner.empty() && !now_config) {
          if (keys_gone_since == Clock::time_point::max()) keys_gone_since = Clock::now();
          if (Clock::now() - keys_gone_since >= kKeysGoneEndSession) {
            log("the run's keys (" + url.key("owner") + ", " + url.key("config") +
                ") have been gone from the server for " +
                std::to_string(kKeysGoneEndSession.count()) +
                " s (the run deleted, or the server lost its data while its trainer was away): "
                "this session ends, pushing nothing more");
            config_changed = true;
            break;
          }
          continue;
        }
        keys_gone_since = Clock::time_point::max();
        if (now_config && *now_config != config_text) {
          log("the run's config on the server changed: this session ends, and the next plays by "
              "the new one");
          config_changed = true;
          break;
        }
        const std::int64_t now_version = channel.network_version();
        // 0: lost, until it is published again. A version found damaged is tried again only once
        // another replaces it (the trainer publishes its network again when it sees it changed).
        if (now_version > 0 && now_version != version && now_version != refused_version) {
          std::optional<store::PublishedNetwork> next_published;
          std::optional<model::Checkpoint> next;
          try {
            next_published = channel.network(max_network_bytes(config.net, game));
            if (next_published)
              next = checked_network(*next_published, game, config.net, url.key("network"));
          } catch (const store::RedisStopped&) {
            throw;
          } catch (const WrongVersion&) {
            closing = true;
            throw;
          } catch (const std::exception& e) {  // damaged, or not this run's kind of network
            refused_version = now_version;
            log("network version " + std::to_string(now_version) + " is unusable (" +
                quote_input(e.what(), 300) + "); playing on with generation " +
                std::to_string(published.info.generation) + " until the trainer publishes "
                "it again");
            continue;
          }
          if (!next) continue;
          published = std::move(*next_published);
          server.swap_weights(*next);
          version = published.info.version;
          network_step = published.info.step;
          ++summary.network_swaps;
          log("switched to generation " + std::to_string(published.info.generation) + " (step " +
              std::to_string(published.info.step) + ")");
        }
      }
      if (Clock::now() - last_beat >= std::chrono::seconds(2)) {
        last_beat = Clock::now();
        const selfplay::SelfPlayStats s = selfplay.stats();
        channel.heartbeat(node, ++totals.beats, totals.games_played + s.games,
                          summary.positions + s.positions);
      }
    } catch (const store::RedisStopped&) {
      break;
    } catch (const RunGone&) {
      throw;
    } catch (const WrongVersion&) {
      throw;
    } catch (const std::exception& e) {
      // What the server holds at the run's keys is no run's (a key of another type, a config too
      // long, a version that is no number): the session ends, and the next waits until the
      // trainer puts the run's back (one such write ended every worker of the run for good).
      log("the run's keys on the server cannot be read (" + quote_input(e.what(), 300) +
          "): this session ends, and the next waits for the trainer to publish the run's again");
      config_changed = true;
      break;
    }
  }
  closing = true;  // a push still waiting for the server gives up: those games were in flight
  selfplay.stop();
  summary.games += sink.pushed();
  const selfplay::SelfPlayStats played = selfplay.stats();
  // Games finished and never acknowledged: queued, or in flight, at the end of the session (they
  // were dropped without a word). A batch in flight may still have reached the server.
  const std::int64_t unpushed = played.finished - sink.pushed();
  if (unpushed > 0) {
    summary.not_pushed += unpushed;
    log(std::to_string(unpushed) + " finished game(s) of this session were not pushed (queued or "
        "in flight as it ended; a batch in flight may still have reached the server)");
  }
  summary.positions += played.positions;
  totals.games_played += played.games;
  return config_changed && !quit.load();
}

}  // namespace

WorkerSummary run_worker(const WorkerOptions& options, const std::atomic<bool>& stop,
                         std::function<void(const std::string&)> log) {
  if (!log) log = [](const std::string& line) { std::cerr << "selfplay: " << line << std::endl; };
  const store::RedisUrl url = store::node_url(options.store, "", options.insecure);
  const std::string node = options.node.empty() ? default_node_name() : options.node;
  // Refused now, not at the first heartbeat after self-play has started.
  if (const std::string problem = store::node_name_problem(node); !problem.empty())
    throw std::invalid_argument("--node: " + problem);
  // Every wait and every Redis retry of the worker reads quit(), so --minutes holds while the
  // worker waits for the server or the trainer too, not only while it plays.
  util::StopWatch watch(stop);
  watch.set_deadline_in(options.stop_after_minutes * 60.0);
  const std::atomic<bool>& quit = watch.quit();
  store::RunChannel channel(url, log, &quit);
  WorkerSummary summary;
  const auto start = Clock::now();

  const auto stopped_waiting = [&] {
    summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    log("stopped before playing, after " + std::to_string(static_cast<long long>(summary.seconds)) +
        " s of waiting");
    return summary;
  };

  log("node " + node + " joining " + url.to_string() + "; " + model::tune_cpu_runtime());
  // Played in sessions: one for each config the server holds while the worker lives. A config
  // changed on the server ends the session (after its games in flight) and the next plays by it:
  // a worker that joined while the config was not the run's (the trainer puts the run's back
  // within seconds) played by it for as long as it lived, and its games went into training.
  bool played = false;
  Totals totals;
  while (!quit.load()) {
    // The run's config, network and id, once the trainer has published them. A network for
    // another game or encoding is refused at once, before the run id is waited for.
    std::string run_id, config_text;
    std::optional<config::RunConfig> config;
    std::optional<store::PublishedNetwork> published;
    std::optional<model::Checkpoint> network;
    try {
      for (bool said = false, said_owner = false, said_unplayable = false; !quit.load();) {
        published.reset();
        try {
          const auto text = channel.config(config::kMaxConfigBytes);
          if (text) {
            config_text = *text;
            config = config::parse_config(*text, url.key("config"));
            const Game& game = game_by_name(config->run.game);
            published = channel.network(max_network_bytes(config->net, game));
            if (published)
              network = checked_network(*published, game, config->net, url.key("network"));
          }
          if (published) run_id = channel.owner();
        } catch (const WrongVersion&) {
          throw;
        } catch (const store::RedisStopped&) {
          throw;
        } catch (const std::exception& e) {
          // Between sessions, what the server holds may be no run's (changed there, a key of
          // another type; the trainer puts the run's back within seconds): waited out, not taken
          // for the end.
          if (!played) throw;
          if (!said_unplayable)
            log("the config or network on the server cannot be played (" +
                quote_input(e.what(), 300) + "): waiting for the trainer to publish the "
                "run's again");
          said_unplayable = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
          continue;
        }
        if (published) {
          if (!run_id.empty()) break;
          if (!said_owner)
            log("the run's config and network are there but not its run id (" + url.key("owner") +
                "): waiting for its trainer (one of a version before run ids never writes it: "
                "use a worker of the trainer's version)");
          said_owner = true;
        } else if (!said) {
          log("waiting for the trainer to publish the run's config and network");
          said = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    } catch (const store::RedisStopped&) {
    }
    if (quit.load()) {
      if (!played) return stopped_waiting();
      break;
    }
    played = true;
    if (!play(channel, url, node, options.threads, run_id, config_text, *config, *published,
              *network, quit, log, summary, totals))
      break;
  }
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  log("stopped: " + std::to_string(summary.games) + " games (" +
      std::to_string(summary.positions) + " positions) pushed in " +
      std::to_string(static_cast<long long>(summary.seconds)) + " s, " +
      std::to_string(summary.network_swaps) + " network switch(es)" +
      (summary.not_pushed > 0
           ? ", " + std::to_string(summary.not_pushed) + " finished game(s) not pushed"
           : ""));
  return summary;
}

}  // namespace oppidum::worker
