#include "trainer/intake.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include "games/quote.h"
#include "selfplay/game_record.h"

namespace oppidum::trainer {
namespace {

constexpr int kBatch = 512;  // stream entries per read
constexpr int kReadsPerPoll = 8;

}  // namespace

Intake::Intake(RunFolder& folder, RunState& state, ReplayWindow& window,
               selfplay::FolderReplayStore& store, store::RunChannel* channel, util::LogLine warn)
    : folder_(folder), state_(state), window_(window), store_(store), channel_(channel),
      warn_(std::move(warn)) {}

void Intake::drop(const std::string& where, const std::string& why) {
  ++dropped_;
  // The why may hold what a hostile record carried: one printable line, cut short, never raw
  // (a forged game name wrote lines of its own and terminal escapes into log.txt).
  if (dropped_ <= kDropsLogged || dropped_ % 1000 == 0)
    warn_("dropped game " + where + " (" + std::to_string(dropped_) + " dropped so far" +
          (dropped_ == kDropsLogged ? "; from now on only every 1000th is logged" : "") +
          "): " + quote_input(why, 400));
}

void Intake::poll() {
  if (channel_ != nullptr) read_stream();
  else read_folder();
}

void Intake::load_window(std::int64_t window_rows) {
  if (!store_.index_repair().empty()) warn_("repaired " + store_.index_repair());
  const auto chunks = store_.chunks();
  const auto sizes = store_.sizes();
  // The rows a chunk gives the window (what its records say where not every position is one: the
  // chunk is then read twice, and records add_game would refuse are counted too).
  const auto rows_of = [&](const std::string& chunk) -> std::int64_t {
    if (window_.rows_are_positions()) {
      const auto it = sizes.find(chunk);
      return it == sizes.end() ? 0 : it->second.positions;
    }
    std::int64_t rows = 0;
    selfplay::for_each_game(chunk, [&](selfplay::GameRecord&& r, const selfplay::RecordPlace&) {
      for (const selfplay::MoveRecord& m : r.moves) rows += window_.makes_row(m);
      return true;
    });
    return rows;
  };
  std::size_t first = chunks.size();
  for (std::int64_t needed = window_rows; first > 0 && needed > 0;)
    needed -= rows_of(chunks[--first]);
  // Older chunks are counted from the index; from the oldest one it does not list on, read.
  std::int64_t games = 0, positions = 0;
  std::size_t counted = 0;
  for (; counted < first; ++counted) {
    const auto it = sizes.find(chunks[counted]);
    const auto number = selfplay::FolderReplayStore::number_of(chunks[counted]);
    if (it == sizes.end() || !number) break;
    games += it->second.games;
    positions += it->second.positions;
    mark_read(*number);
  }
  window_.count_unloaded(positions);
  games_ += games;
  chunks_read_ = counted;
  if (counted > 0)
    warn_("replay: counted the " + std::to_string(counted) + " oldest chunks (" +
          std::to_string(games) + " games) from games/index.csv without reading them");
  read_folder();
  // Nothing else writes chunks yet, and the store numbers new ones above every number there: a
  // gap below the highest (a chunk moved away) stays one, and need not be remembered.
  if (!read_above_.empty()) {
    read_below_ = *read_above_.rbegin() + 1;
    read_above_.clear();
  }
}

void Intake::read_folder() {
  const auto chunks = store_.chunks();
  for (const std::string& p : store_.problems())
    if (problems_logged_.insert(p).second) warn_("games: " + p);
  for (const std::string& chunk : chunks) {
    const auto number = selfplay::FolderReplayStore::number_of(chunk);
    if (!number || was_read(*number)) continue;
    mark_read(*number);
    ++chunks_read_;
    std::size_t i = 0;
    const selfplay::ReadResult read =
        selfplay::for_each_game(chunk, [&](selfplay::GameRecord&& r, const selfplay::RecordPlace&) {
          std::string why;
          if (!window_.add_game(r, &why)) {
            drop(std::to_string(i++) + " of " + chunk, why);
            return true;
          }
          ++i;
          ++games_;
          if (!r.origin.empty() && store::compare_stream_ids(r.origin, stored_until_) > 0)
            stored_until_ = r.origin;
          return true;
        });
    for (const std::string& p : read.problems) warn_("skipping damaged data: " + p);
  }
}

bool Intake::was_read(std::uint64_t number) const {
  return number < read_below_ || read_above_.count(number) > 0;
}

void Intake::mark_read(std::uint64_t number) {
  if (was_read(number)) return;
  read_above_.insert(number);
  while (!read_above_.empty() && *read_above_.begin() == read_below_) {
    read_above_.erase(read_above_.begin());
    ++read_below_;
  }
}

bool Intake::kept_id_ahead_of_clock(std::uint64_t margin_ms) {
  return store::stream_id_ms(stored_until_) > channel_->server_time_ms() + margin_ms;
}

void Intake::read_stream() {
  // Once a session (and after a new stream, below): the newest game kept, far ahead of the
  // server's clock, was no id the clock gave. Entries after the cursor were never read, so none
  // of them is kept already: what the cursor has passed is all such an id can still stand for.
  if (!clock_checked_) {
    clock_checked_ = true;
    if (kept_id_ahead_of_clock(kIdAheadOfClockMs) &&
        store::compare_stream_ids(state_.stream_cursor, stored_until_) < 0) {
      warn_("stream: the newest game kept has the id " + stored_until_ +
            ", more than a day ahead of the server's clock; entries after the cursor " +
            state_.stream_cursor + " are new");
      stored_until_ = state_.stream_cursor;
    }
  }
  for (int round = 0; round < kReadsPerPoll; ++round) {
    if (state_.stream_cursor == store::kLastStreamId) {
      // No entry can follow the largest id, and XADD refuses every new game: the games before it
      // are read, so the stream is deleted (the nodes' next games make a new one) and read from
      // its start, none of its games kept yet. A stream made again meanwhile (the old one deleted
      // by hand while the trainer was away) is new: read from its start, never deleted.
      const bool deleted = channel_->delete_games_at_last_id();
      stored_until_ = "0-0";
      restart_stream(std::string("the stream reached the largest id an entry can have (") +
                         store::kLastStreamId + ", an id no server gives), after which no game "
                         "can be added; its games were read, and " +
                         (deleted ? "it was deleted" : "a new stream has taken its place"),
                     false);
      return;
    }
    bool more = false;  // a read cut short by its size: more are waiting
    const auto entries = channel_->read_games(state_.stream_cursor, kBatch, &more);
    if (entries.empty()) break;
    std::vector<selfplay::GameRecord> kept;
    for (const store::StreamEntry& e : entries) {
      ++state_.stream_read;
      const std::string where = "entry " + e.id + " from " + e.node;
      // An entry too big to read has no fields but its size: no run to tell, dropped below.
      if (e.run != state_.run_id && !(e.run.empty() && !e.problem.empty())) {
        ++foreign_;
        // A few runs named, then one line: a stream of entries each of a run of its own once
        // wrote a log line each, past every bound on the drops logged.
        if (foreign_runs_logged_.count(e.run) == 0 &&
            foreign_runs_logged_.size() == kForeignRunsLogged) {
          if (!more_foreign_runs_said_)
            warn_("stream: skipping entries of more runs than " +
                  std::to_string(kForeignRunsLogged) + ", no longer named; they are counted in "
                  "the summary");
          more_foreign_runs_said_ = true;
        } else if (foreign_runs_logged_.insert(e.run).second)
          warn_("stream: skipping entries of " +
                (e.run.empty() ? std::string("no run (a node of an older version)")
                               : "another run (run id " + e.run + ")") +
                ", first " + where + "; this is run " + state_.run_id +
                "; they are counted in the summary");
        continue;
      }
      if (!e.problem.empty()) {
        drop(where, e.problem);
        continue;
      }
      if (store::compare_stream_ids(e.id, stored_until_) <= 0) {  // already in a chunk
        ++already_kept_;
        continue;
      }
      // A record the chunk cannot hold (a field over its limit) would stop the trainer at every
      // start, the cursor never past it: it is dropped like a damaged entry.
      try {
        selfplay::encode_record(e.record);
      } catch (const std::exception& ex) {
        drop(where, std::string("cannot be stored: ") + ex.what());
        continue;
      }
      std::string why;
      if (!window_.add_game(e.record, &why)) {
        drop(where, why);
        continue;
      }
      ++games_;
      ++from_stream_;
      kept.push_back(e.record);
    }
    if (!kept.empty()) {
      store_.append(kept);  // durable before the cursor moves past these games (the folder is
      ++chunks_read_;       // not followed with a stream: its chunk is not marked read)
      stored_until_ = kept.back().origin;
    }
    state_.stream_cursor = entries.back().id;
    folder_.save_state(state_);
    if (entries.size() < static_cast<std::size_t>(kBatch) && !more) break;
  }
  const store::StreamInfo info = channel_->stream_info();
  if (info.entries_added < state_.stream_read ||
      store::compare_stream_ids(info.last_id, state_.stream_cursor) < 0) {
    restart_stream("the stream holds " + std::to_string(info.entries_added) +
                   " entries in all and ends at " + info.last_id + ", but this run has read " +
                   std::to_string(state_.stream_read) + " up to " + state_.stream_cursor +
                   ": it is a new stream (the server lost its data?)");
    // Its entries up to the newest one kept are taken for the games kept already (a server
    // restored from an older copy). An id kept that is ahead of the server's clock, by any
    // amount, was not the clock's (XADD with an id of the writer's choosing, or a server whose
    // clock went back: its ids rose on from its last, while a new stream's start from its
    // clock): every new game would read as kept (a clock 120 s behind hid every game for 120 s),
    // so only those the new stream holds now are taken so.
    if (kept_id_ahead_of_clock(0) && store::compare_stream_ids(info.last_id, stored_until_) < 0) {
      warn_("stream: the newest game kept has the id " + stored_until_ +
            ", ahead of the server's clock; the new stream's entries up to " + info.last_id +
            " are taken for games kept already, those after it are new");
      stored_until_ = info.last_id;
    }
    return;
  }
  // Caught up, every entry ever added was either read or evicted unread.
  if (info.entries_added == 0 || info.last_id == state_.stream_cursor) {
    evicted_ = info.entries_added - state_.stream_read;
    lag_ = 0;
  } else {
    lag_ = std::max<std::int64_t>(1, info.entries_added - state_.stream_read - evicted_);
  }
}

void Intake::restart_stream(const std::string& why, bool data_lost) {
  // What the old stream held unread when last looked at (its lag then: entries added after it
  // are not known, entries evicted since are among them) went with it: counted, so that kept =
  // pushed - evicted - dropped - lost about adds up (it was said nowhere).
  const std::int64_t lost = data_lost ? std::max<std::int64_t>(0, lag_) : 0;
  lost_unread_ += lost;
  state_.stream_cursor = "0-0";
  state_.stream_read = 0;
  lag_ = evicted_ = 0;
  folder_.save_state(state_);
  warn_("stream: " + why + "; reading it from its start (games already kept are not kept twice)" +
        (lost > 0 ? "; about " + std::to_string(lost) + " entries it held unread are lost" : ""));
}

void Intake::drain(double seconds) {
  if (channel_ == nullptr) {
    read_folder();
    return;
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  try {
    do {
      read_stream();
    } while (lag_ != 0 && std::chrono::steady_clock::now() < until);
  } catch (const store::RedisStopped&) {
  }
}

std::string Intake::summary() const {
  return "stream: " + std::to_string(state_.stream_read) + " entries read in all, " +
         std::to_string(evicted_) + " evicted unread" + (lag_ == 0 ? "" : " (not caught up)") +
         "; this session kept " + std::to_string(from_stream_) + " games and dropped " +
         std::to_string(dropped_) +
         (foreign_ > 0 ? ", skipped " + std::to_string(foreign_) + " of other runs" : "") +
         (lost_unread_ > 0 ? ", about " + std::to_string(lost_unread_) +
                                 " unread lost with a stream the server lost"
                           : "") +
         (already_kept_ > 0
              ? ", skipped " + std::to_string(already_kept_) + " kept before (up to " +
                    stored_until_ + ")"
              : "");
}

}  // namespace oppidum::trainer
