// The trainer node's intake: new self-play games into the replay window.
//
// One-process run: the run's chunk files (games/, written by the trainer's own self-play writer)
// are read as they appear. Distributed run (a Redis store): the run's stream is read after the
// cursor kept in state.yaml; each batch's good games go into the window and, as one chunk, into
// the run folder (so a restart rebuilds the window from the folder, never from the stream), and
// then the cursor moves past the batch. A kill between those two writes re-reads the batch, but
// the games already in a chunk (up to the newest stream id in the chunks) are not kept twice.
// When the trainer has read all the stream holds, the stream's entries-added minus the entries
// read is the number of entries evicted by the cap before they were read (never below 0).
//
// A stream that holds fewer entries than were read, or ends before the cursor, is not the stream
// the cursor was in (the server lost its data): it is read again from its start, its count from 0.
//
// Every game is replayed and checked by the window (selfplay::replay); one that does not hold up,
// or a stream entry that is damaged, is dropped, counted and logged (each of the first
// kDropsLogged, then every 1000th), never trained on. An entry pushed for another run (its run id
// is not state.run_id) is skipped and counted, with one log line per such run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "selfplay/replay_store.h"
#include "store/run_channel.h"
#include "trainer/replay_window.h"
#include "trainer/run_folder.h"
#include "util/log.h"

namespace oppidum::trainer {

class Intake {
 public:

  // `state` is the run's state (its stream cursor is moved and saved through `folder`; its run id
  // is the one stream entries must carry); `channel` is null for a one-process run.
  Intake(RunFolder& folder, RunState& state, ReplayWindow& window,
         selfplay::FolderReplayStore& store, store::RunChannel* channel, util::LogLine warn);

  // At the start of a session: reads the newest chunks, enough for `window_rows` rows of the
  // window, and counts the older ones from the folder's index without reading them (a chunk the
  // index does not list is read). Where every position is a row the index's positions say how
  // many chunks that is; with fast-search rows dropped, the chunks' records are counted (a window
  // filled by positions would hold only about full_search_fraction of its rows after a restart).
  // Logs a rebuilt index (FolderReplayStore::index_repair).
  void load_window(std::int64_t window_rows);
  // Reads the run folder's chunks not read yet.
  void read_folder();
  // New games: from the folder, or from the stream with a store.
  void poll();
  // At a clean stop: reads the stream until caught up, for at most `seconds`.
  void drain(double seconds);
  // The stream is read from its start again, its entries counted from 0 (a server that lost its
  // data holds a new stream); games already kept are not kept twice. `why` goes to the log. With
  // `data_lost`, the entries the old stream held unread (its last lag known, a lower bound) are
  // counted as lost with it (about: see the summary).
  void restart_stream(const std::string& why, bool data_lost = true);

  std::int64_t games() const { return games_; }              // games of the run so far
  std::size_t chunks() const { return chunks_read_; }  // chunks read or counted
  std::int64_t stream_lag() const { return lag_; }           // entries not read yet (estimate)
  std::int64_t stream_evicted() const { return evicted_; }   // known when last caught up
  // "stream: N entries read in all, E evicted unread; this session kept K games and dropped D",
  // ", skipped F of other runs" when there were any, and ", about L unread lost with a stream
  // the server lost" when a stream was lost with entries unread.
  std::string summary() const;

  static constexpr std::int64_t kDropsLogged = 100;
  static constexpr std::size_t kForeignRunsLogged = 8;  // other runs named in the log, at most

 private:
  void read_stream();
  void drop(const std::string& where, const std::string& why);

  RunFolder& folder_;
  RunState& state_;
  ReplayWindow& window_;
  selfplay::FolderReplayStore& store_;
  store::RunChannel* channel_;
  util::LogLine warn_;
  std::size_t chunks_read_ = 0;
  // The folder's chunks read (or counted from the index), by number: every number below
  // `read_below_`, and those in `read_above_` (numbers past a gap). By number, not by place in a
  // listing: a listing taken while chunks were added once lacked one and held the next, which took
  // the missing one's place, was read twice while the other was never read.
  std::uint64_t read_below_ = 0;
  std::set<std::uint64_t> read_above_;
  bool was_read(std::uint64_t number) const;
  void mark_read(std::uint64_t number);
  std::set<std::string> problems_logged_, foreign_runs_logged_;
  bool more_foreign_runs_said_ = false;  // the line for the runs past kForeignRunsLogged
  std::string stored_until_ = "0-0";  // the newest stream entry kept in a chunk
  std::int64_t games_ = 0, from_stream_ = 0, dropped_ = 0, foreign_ = 0, lag_ = 0, evicted_ = 0,
               already_kept_ = 0, lost_unread_ = 0;
  bool clock_checked_ = false;  // the newest game kept was checked against the server's clock
  // Whether the newest game kept has an id more than `margin_ms` ahead of the server's clock
  // (read_stream).
  bool kept_id_ahead_of_clock(std::uint64_t margin_ms);
  // How far ahead of the server's clock an id the server gave can be (its ids keep rising when
  // its clock is set back; read_stream).
  static constexpr std::uint64_t kIdAheadOfClockMs = 24ull * 3600 * 1000;
};

}  // namespace oppidum::trainer
