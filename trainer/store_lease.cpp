#include "trainer/store_lease.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "model/checkpoint.h"
#include "util/file_io.h"
#include "util/log.h"

namespace oppidum::trainer {

StoreLease::StoreLease(const store::RedisUrl& url, RunState& state, const RunPaths& paths,
                       const Game& game, std::string config_yaml,
                       util::LogLine info,
                       util::LogLine warn,
                       const std::atomic<bool>& stop)
    : channel_(url, [warn](const std::string& line) { warn("redis: " + line); }, &stop),
      paths_(paths), game_(game), config_yaml_(std::move(config_yaml)), run_id_(state.run_id),
      lease_(store::lease_value(state.run_id)), info_(std::move(info)), warn_(std::move(warn)) {
  const store::Claim claim = channel_.claim(run_id_, lease_, 0);
  if (!claim.replaced.empty())
    info_(fmt::format("redis: took over the lease of this run's last trainer, whose process is "
                      "gone ({})", claim.replaced));
  sessions_seen_ = claim.sessions;
  if (claim.claimed && (state.stream_cursor != "0-0" || state.stream_read != 0)) {
    warn_(fmt::format("redis: {} held no owner for this run, which read {} entries from it before "
                      "(the server lost its data, the run moved to this key, or it last ran with a "
                      "version before run ids): reading its stream from the start (games already "
                      "kept are not kept twice)", url.to_string(), state.stream_read));
    state.stream_cursor = "0-0";
    state.stream_read = 0;
  }
}

std::uint64_t StoreLease::open_session(std::int64_t best_step, int best_generation) {
  const std::string url = channel_.url().to_string();
  info_(fmt::format("store {}: publishing the config and generation {}; workers join with "
                    "`oppidum selfplay --store {}`", url, best_generation, url));
  channel_.publish_config(config_yaml_);
  publish_best(best_step, best_generation);
  const std::uint64_t session = channel_.new_session();
  sessions_seen_ = std::max(sessions_seen_, static_cast<std::int64_t>(session));
  return session;
}

void StoreLease::publish_best(std::int64_t best_step, int best_generation) {
  const std::string bytes =
      util::read_regular_file(paths_.best().string(), model::kMaxCheckpointBytes);
  const store::NetworkPublication published = channel_.publish_network(
      bytes, best_step, best_generation, game_.name(), game_.encoding_version());
  network_signature_ = published.signature;
  info_(fmt::format("published generation {} as network version {}", best_generation,
                    published.version));
}

void StoreLease::renew(Intake& intake, std::int64_t best_step, int best_generation) {
  const store::Claim claim =
      channel_.claim(run_id_, lease_, sessions_seen_, config_yaml_, network_signature_);
  sessions_seen_ = std::max(sessions_seen_, claim.sessions);
  if (claim.claimed)
    intake.restart_stream("the run's keys were gone from " + channel_.url().to_string() +
                          " (the server lost its data?); the config and network are published "
                          "again");
  if (!claim.config_published) {
    channel_.publish_config(config_yaml_);
    // (After keys found gone, the line above said so already: not "changed on the server".)
    if (!claim.claimed)
      warn_("redis: the run's config was missing or not the run's (changed on the server); "
            "published it again");
  }
  if (claim.network_step != best_step) {
    publish_best(best_step, best_generation);
  } else if (!claim.network_published) {
    warn_("redis: the run's network on the server is not the one it published (changed or "
          "damaged there); published it again");
    publish_best(best_step, best_generation);
  }
}

void StoreLease::release() {
  try {
    channel_.release(lease_);
  } catch (const store::RedisError&) {  // it expires by itself
  }
}

}  // namespace oppidum::trainer
