// Self-play workers and the replay store: games reach the store as readable, legal records with
// policy targets in the configured share; the store keeps numbering across reopenings.
#include <algorithm>
#include <map>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "games/registry.h"
#include "mcts/evaluator.h"
#include "selfplay/replay_store.h"
#include "selfplay/selfplay.h"

namespace oppidum::selfplay {
namespace {

std::string temp_folder(const std::string& name) {
  const auto path = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(path);
  return path.string();
}

SelfPlaySettings small_settings(const std::string& game) {
  SelfPlaySettings s;
  s.game = game;
  s.threads = 2;
  s.concurrent_games = 4;
  s.simulations = 12;
  s.fast_simulations = 3;
  s.full_search_fraction = 0.25;
  s.max_plies = 60;
  s.games_per_chunk = 3;
  s.seed = 7;
  return s;
}

void run_until(SelfPlay& sp, std::int64_t games) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sp.stats().games < games && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// A record with no moves (the store does not look inside records).
GameRecord empty_mg_record() {
  GameRecord r;
  r.game = "mg";
  r.start = "tttttttt/......../......../......../......../......../TTTTTTTT L";
  return r;
}

class SelfPlayTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SelfPlayTest, GamesReachTheStoreAsLegalRecords) {
  mcts::UniformEvaluator uniform;
  FolderReplayStore store(temp_folder("selfplay_" + GetParam()), FolderReplayStore::Mode::kOwner);
  SelfPlay sp(uniform, store, small_settings(GetParam()), [] { return std::int64_t{42}; });
  sp.start();
  run_until(sp, 9);
  sp.stop();
  EXPECT_EQ(sp.error(), "");
  const SelfPlayStats stats = sp.stats();
  ASSERT_GE(stats.games, 9);
  std::int64_t games = 0, positions = 0, targets = 0;
  for (const std::string& chunk : store.chunks()) {
    const ReadResult read = selfplay::read_game_file(chunk);
    EXPECT_TRUE(read.problems.empty());
    for (const GameRecord& r : read.records) {
      ++games;
      EXPECT_EQ(r.game, GetParam());
      EXPECT_EQ(r.network_step, 42);
      const auto states = replay(r);
      EXPECT_TRUE(states.back()->is_terminal() || r.adjudicated);
      if (!r.adjudicated) {
        EXPECT_EQ(r.result, states.back()->result(0));
      }
      for (const MoveRecord& m : r.moves) {
        positions++;
        targets += m.policy_target;
        std::uint32_t visits = 0;
        for (const VisitCount& v : m.visits) visits += v.visits;
        EXPECT_GE(visits, 1u);
      }
    }
  }
  EXPECT_EQ(games, stats.games);
  EXPECT_EQ(positions, stats.positions);
  EXPECT_EQ(targets, stats.policy_targets);
  EXPECT_GE(stats.moves, stats.positions) << "the written games' moves, and those of games cut off";
  // About a quarter of the moves are full searches.
  EXPECT_GT(targets, positions / 10);
  EXPECT_LT(targets, positions / 2);
}

// Uniform priors, 2 ms per batch: games that take a while (a second or so).
class SlowUniformEvaluator final : public mcts::Evaluator {
 public:
  void evaluate(const mcts::EvalRequest* requests, int n, mcts::EvalResult* results) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    uniform_.evaluate(requests, n, results);
  }
  std::string describe() const override { return "slow uniform"; }

 private:
  mcts::UniformEvaluator uniform_;
};

// A chunk that fills slowly (games_per_chunk far above the games played) is written once its first
// game has waited max_chunk_seconds: before, the trainer saw no game until the chunk was full
// (hours with games_per_chunk 100000), and a kill lost them all.
TEST_P(SelfPlayTest, AChunkIsWrittenWhenItsFirstGameHasWaitedLongEnough) {
  mcts::UniformEvaluator uniform;
  FolderReplayStore store(temp_folder("selfplay_age_" + GetParam()), FolderReplayStore::Mode::kOwner);
  SelfPlaySettings settings = small_settings(GetParam());
  settings.games_per_chunk = 100000;
  settings.max_chunk_seconds = 0.3;
  SelfPlay sp(uniform, store, settings, [] { return std::int64_t{1}; });
  sp.start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (store.chunks().size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE(store.chunks().size(), 2u) << "chunks written while the run goes on";
  EXPECT_GT(sp.stats().games, 0);
  sp.stop();
  EXPECT_EQ(sp.error(), "");
}

TEST_P(SelfPlayTest, MovesCountAsTheyArePlayedBeforeAnyGameEnds) {
  SlowUniformEvaluator slow;
  FolderReplayStore store(temp_folder("selfplay_moves_" + GetParam()),
                          FolderReplayStore::Mode::kOwner);
  SelfPlaySettings settings = small_settings(GetParam());
  settings.threads = 1;
  SelfPlay sp(slow, store, settings, [] { return std::int64_t{1}; });
  sp.start();
  // A move of the four games takes a few batches (about 10 ms); a game takes tens of moves.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sp.stats().moves < 8 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const SelfPlayStats early = sp.stats();
  sp.stop();
  EXPECT_EQ(sp.error(), "");
  EXPECT_GE(early.moves, 8);
  EXPECT_EQ(early.games, 0) << "no game can be over after a few plies";
  EXPECT_EQ(early.positions, 0) << "positions count when their game is written";
}

TEST_P(SelfPlayTest, GumbelRootRecordsTheImprovedPolicy) {
  mcts::UniformEvaluator uniform;
  FolderReplayStore store(temp_folder("selfplay_gumbel_" + GetParam()),
                          FolderReplayStore::Mode::kOwner);
  SelfPlaySettings settings = small_settings(GetParam());
  settings.search.root = mcts::RootPolicy::kGumbel;
  settings.search.gumbel_considered = 4;
  SelfPlay sp(uniform, store, settings, [] { return std::int64_t{1}; });
  sp.start();
  run_until(sp, 4);
  sp.stop();
  EXPECT_EQ(sp.error(), "");
  int targets = 0;
  for (const std::string& chunk : store.chunks())
    for (const GameRecord& r : selfplay::read_game_file(chunk).records) {
      const auto states = replay(r);  // legal moves, weights only for legal actions
      for (std::size_t i = 0; i < r.moves.size(); ++i) {
        const MoveRecord& m = r.moves[i];
        if (!m.policy_target) continue;
        ++targets;
        // The improved policy scaled to about 65536 (each weight rounded; those that round to 0
        // are left out); a count of visits would sum to the simulations (12).
        double sum = 0;
        for (const VisitCount& v : m.visits) sum += v.visits;
        ActionList legal;
        states[i]->legal_actions(legal);
        EXPECT_NEAR(sum, kPolicyWeightScale, legal.size());
        EXPECT_LE(static_cast<int>(m.visits.size()), legal.size());
      }
    }
  EXPECT_GT(targets, 0);
}

// Sums each full-search record's visit counts: (sum over all, largest single move).
std::pair<std::int64_t, std::int64_t> target_visit_sums(FolderReplayStore& store) {
  std::int64_t all = 0, largest = 0;
  for (const std::string& chunk : store.chunks())
    for (const GameRecord& r : selfplay::read_game_file(chunk).records)
      for (const MoveRecord& m : r.moves) {
        if (!m.policy_target) continue;
        std::int64_t sum = 0;
        for (const VisitCount& v : m.visits) sum += v.visits;
        all += sum;
        largest = std::max(largest, sum);
      }
  return {all, largest};
}

TEST_P(SelfPlayTest, PuctTargetsCountReusedVisitsOnlyWhenAsked) {
  mcts::UniformEvaluator uniform;
  // Default: the target is the root's visits, those kept by tree reuse included.
  FolderReplayStore tree_store(temp_folder("selfplay_tree_" + GetParam()),
                               FolderReplayStore::Mode::kOwner);
  SelfPlay tree(uniform, tree_store, small_settings(GetParam()), [] { return std::int64_t{1}; });
  tree.start();
  run_until(tree, 6);
  tree.stop();
  const SelfPlayStats ts = tree.stats();
  const auto [tree_all, tree_largest] = target_visit_sums(tree_store);
  EXPECT_EQ(tree_all, ts.target_visits);
  EXPECT_GT(ts.reused_target_visits, 0);
  EXPECT_GT(tree_largest, 12) << "some target holds reused visits beyond this search's 12";

  // This search's visits only: no target sums to more than the 12 simulations.
  FolderReplayStore search_store(temp_folder("selfplay_search_" + GetParam()),
                                 FolderReplayStore::Mode::kOwner);
  SelfPlaySettings settings = small_settings(GetParam());
  settings.target_this_search_only = true;
  SelfPlay search(uniform, search_store, settings, [] { return std::int64_t{1}; });
  search.start();
  run_until(search, 6);
  search.stop();
  const SelfPlayStats ss = search.stats();
  const auto [search_all, search_largest] = target_visit_sums(search_store);
  // This search's visits, but for the weight of 1 a move that keeps a proof gets where this
  // search made no visit (a root proven by an earlier one: mcts::settle_target).
  EXPECT_GE(search_all, ss.target_visits - ss.reused_target_visits);
  EXPECT_GT(ss.reused_target_visits, 0);
  EXPECT_LE(search_largest, 12);
}

// The record's targets carry what the search proved (mcts::settle_target), whichever visits they
// count; Gumbel's improved policy is recorded as the search settled it.
TEST(ToRecord, VisitTargetsCarryTheProofs) {
  using mcts::Proven;
  constexpr Proven U = Proven::kUnknown, W = Proven::kWin, L = Proven::kLoss;
  const Game& ttt = game_by_name("ttt");
  const auto record_of = [&](const mcts::MoveStats& stats, bool this_search_only) {
    mcts::FinishedGame game;
    game.start = ttt.initial_state();
    game.final_state = ttt.initial_state();
    ActionList legal;
    game.start->legal_actions(legal);
    mcts::MoveStats m = stats;
    m.legal.assign(legal.begin(), legal.end());
    m.action = legal[0];
    game.final_state->apply(m.action);
    game.moves.push_back(m);
    const GameRecord r = to_record(game, 1, 0, this_search_only);
    std::map<int, std::uint32_t> weights;  // by index in `legal`
    for (const VisitCount& v : r.moves.at(0).visits)
      weights[static_cast<int>(std::find(legal.begin(), legal.end(), v.action) - legal.begin())] =
          v.visits;
    return weights;
  };
  mcts::MoveStats won;  // won at index 2 (one visit), index 4 proven won by an earlier search
  won.visits = {5, 3, 1, 0, 2, 0, 0, 0, 0};
  won.search_visits = {5, 3, 0, 0, 0, 0, 0, 0, 0};
  won.proven = W;
  won.child_proven = {U, U, W, U, W, U, U, U, U};
  EXPECT_EQ(record_of(won, false), (std::map<int, std::uint32_t>{{2, 1}, {4, 2}}));
  EXPECT_EQ(record_of(won, true), (std::map<int, std::uint32_t>{{2, 1}, {4, 1}}))
      << "this search made no visit to either: 1 each";
  mcts::MoveStats open = won;  // a root not proven: the move proven lost gets nothing
  open.proven = U;
  open.child_proven = {U, L, U, U, U, U, U, U, U};
  EXPECT_EQ(record_of(open, false), (std::map<int, std::uint32_t>{{0, 5}, {2, 1}, {4, 2}}));
  EXPECT_EQ(record_of(open, true), (std::map<int, std::uint32_t>{{0, 5}}));
  mcts::MoveStats gumbel = open;  // its policy is the search's, settled there
  gumbel.improved_policy = true;
  gumbel.policy = {0.5f, 0.25f, 0.25f, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(record_of(gumbel, false),
            (std::map<int, std::uint32_t>{{0, 32768}, {1, 16384}, {2, 16384}}));
}

INSTANTIATE_TEST_SUITE_P(BothGames, SelfPlayTest, ::testing::Values("mg", "dvonn"),
                         [](const auto& param_info) { return param_info.param; });

TEST(FolderReplayStore, ContinuesNumberingAndDropsInterruptedWrites) {
  const std::string folder = temp_folder("store_numbering");
  const GameRecord r = empty_mg_record();
  {
    FolderReplayStore store(folder, FolderReplayStore::Mode::kOwner);
    store.append({r});
    store.append({r, r});
  }
  std::ofstream(std::filesystem::path(folder) / "chunk-00000002.bin.tmp") << "half written";
  FolderReplayStore again(folder, FolderReplayStore::Mode::kOwner);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder) / "chunk-00000002.bin.tmp"));
  again.append({r});
  const auto chunks = again.chunks();
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_NE(chunks[2].find("chunk-00000002.bin"), std::string::npos);
  EXPECT_EQ(selfplay::read_game_file(chunks[1]).records.size(), 2u);
}

// Anything but a file or a link at a chunk's temporary name (a directory, a FIFO) where a write is
// still to come is named when the owner opens the store: a FIFO and an empty directory were
// removed unseen, and a directory with a file in it failed that chunk's write mid-session.
TEST(FolderReplayStore, AnOddEntryAtATemporaryNameIsNamedAtTheStart) {
  namespace fs = std::filesystem;
  for (const std::string kind : {"directory", "FIFO"}) {
    const std::string folder =
        temp_folder(kind == "FIFO" ? "store_odd_tmp_fifo" : "store_odd_tmp_dir");
    { FolderReplayStore store(folder, FolderReplayStore::Mode::kOwner); }
    const fs::path odd = fs::path(folder) / "chunk-00000007.bin.tmp";
    if (kind == "directory") {
      fs::create_directories(odd);
      std::ofstream(odd / "x") << "x";
    } else {
      ASSERT_EQ(::mkfifo(odd.c_str(), 0644), 0);
    }
    try {
      FolderReplayStore store(folder, FolderReplayStore::Mode::kOwner);
      ADD_FAILURE() << kind << ": opened";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(odd.string() + " is a " + kind), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(fs::exists(fs::symlink_status(odd))) << kind << ": removed unseen";
  }
  // One below the next chunk's number is in no write's way: left alone, the store opens.
  const std::string folder = temp_folder("store_odd_tmp_below");
  {
    FolderReplayStore store(folder, FolderReplayStore::Mode::kOwner);
    store.append({empty_mg_record()});
    store.append({empty_mg_record()});
  }
  const fs::path below = fs::path(folder) / "chunk-00000001.bin.tmp";
  fs::create_directories(below);
  std::ofstream(below / "x") << "x";
  FolderReplayStore store(folder, FolderReplayStore::Mode::kOwner);
  EXPECT_TRUE(fs::exists(below / "x"));
  store.append({empty_mg_record()});
  EXPECT_EQ(store.chunks().size(), 3u);
}

// Readers never touch a live run: a read-only store leaves the owner's temporary files (a chunk
// being written) alone, creates nothing and refuses to write.
TEST(FolderReplayStore, ReadOnlyStoreNeverWrites) {
  namespace fs = std::filesystem;
  const std::string folder = temp_folder("store_read_only");
  const GameRecord r = empty_mg_record();
  FolderReplayStore owner(folder, FolderReplayStore::Mode::kOwner);
  owner.append({r});
  const fs::path in_flight = fs::path(folder) / "chunk-00000001.bin.tmp";
  std::ofstream(in_flight) << "being written";
  FolderReplayStore reader(folder, FolderReplayStore::Mode::kReadOnly);
  EXPECT_TRUE(fs::exists(in_flight)) << "a reader deleted the writer's temporary file";
  EXPECT_EQ(reader.chunks().size(), 1u);
  EXPECT_THROW(reader.append({r}), std::logic_error);
  EXPECT_THROW(FolderReplayStore(temp_folder("store_missing") + "/nope",
                                 FolderReplayStore::Mode::kReadOnly),
               std::runtime_error);
  EXPECT_FALSE(fs::exists(temp_folder("store_missing") + "/nope"));
}

// Odd entries named like chunks are skipped and named, never a crash or a hang: a number too large
// for any counter, a directory, and a symlink to /dev/zero.
TEST(FolderReplayStore, SkipsOddEntriesNamingThem) {
  namespace fs = std::filesystem;
  const std::string folder = temp_folder("store_odd");
  const GameRecord r = empty_mg_record();
  FolderReplayStore owner(folder, FolderReplayStore::Mode::kOwner);
  owner.append({r});
  std::ofstream(fs::path(folder) / "chunk-99999999999999999999.bin") << "x";
  fs::create_directory(fs::path(folder) / "chunk-00000007.bin");
  fs::create_symlink("/dev/zero", fs::path(folder) / "chunk-00000008.bin");
  FolderReplayStore reader(folder, FolderReplayStore::Mode::kReadOnly);
  const auto chunks = reader.chunks();
  ASSERT_EQ(chunks.size(), 1u);
  const auto problems = reader.problems();
  ASSERT_EQ(problems.size(), 3u);
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  for (const char* name : {"chunk-99999999999999999999.bin", "chunk-00000007.bin",
                           "chunk-00000008.bin"})
    EXPECT_NE(all.find(name), std::string::npos) << all;
  // The owner's numbering is not thrown off by them either.
  FolderReplayStore again(folder, FolderReplayStore::Mode::kOwner);
  again.append({r});
  EXPECT_EQ(again.chunks().size(), 2u);
  // Reading such a file directly is an error naming it, not a hang.
  const ReadResult zero = read_game_file((fs::path(folder) / "chunk-00000008.bin").string());
  ASSERT_EQ(zero.problems.size(), 1u);
  EXPECT_NE(zero.problems[0].find("chunk-00000008.bin: not a regular file"), std::string::npos)
      << zero.problems[0];
}

// Chunk numbers the readers refuse are never written, and one number under two names counts
// once (before: a chunk at the 18-digit limit made the owner number on past it, writing chunks
// nobody read, and rebuild the index over them; chunk-5.bin beside chunk-00000005.bin was read
// twice).
TEST(FolderReplayStore, NumbersStayReadableAndCountOnce) {
  namespace fs = std::filesystem;
  const GameRecord r = empty_mg_record();
  {
    const std::string folder = temp_folder("store_number_limit");
    fs::create_directories(folder);
    std::ofstream(fs::path(folder) / "chunk-999999999999999.bin") << "x";  // the largest number
    FolderReplayStore owner(folder, FolderReplayStore::Mode::kOwner);
    try {
      owner.append({r});
      ADD_FAILURE() << "a chunk numbered past the largest was written";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("no chunk can follow it"), std::string::npos)
          << e.what();
    }
    std::ofstream(fs::path(folder) / "chunk-1000000000000000.bin") << "x";  // 16 digits: skipped
    FolderReplayStore reader(folder, FolderReplayStore::Mode::kReadOnly);
    EXPECT_EQ(reader.chunks().size(), 1u);
  }
  const std::string folder = temp_folder("store_same_number");
  {
    FolderReplayStore owner(folder, FolderReplayStore::Mode::kOwner);
    for (int i = 0; i < 6; ++i) owner.append({r});
  }
  fs::copy_file(fs::path(folder) / "chunk-00000005.bin", fs::path(folder) / "chunk-5.bin");
  FolderReplayStore reader(folder, FolderReplayStore::Mode::kReadOnly);
  const auto chunks = reader.chunks();
  ASSERT_EQ(chunks.size(), 6u);
  EXPECT_NE(chunks[5].find("chunk-00000005.bin"), std::string::npos) << chunks[5];
  ASSERT_EQ(reader.problems().size(), 1u);
  EXPECT_NE(reader.problems()[0].find("chunk-5.bin: the same chunk number as"), std::string::npos)
      << reader.problems()[0];
}

// An index row may not count more games than its chunk's header announces (before: any count the
// chunk's bytes could hold was trusted, skewing the window and the run's totals).
TEST(FolderReplayStore, AnIndexRowCountsNoMoreGamesThanItsChunkHolds) {
  namespace fs = std::filesystem;
  const std::string folder = temp_folder("store_inflated_index");
  {
    FolderReplayStore owner(folder, FolderReplayStore::Mode::kOwner);
    owner.append({empty_mg_record()});
  }
  const fs::path index = fs::path(folder) / "index.csv";
  std::ifstream in(index);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t row = text.find("\n0,1,0,");
  ASSERT_NE(row, std::string::npos) << text;
  text.replace(row, 7, "\n0,2,0,");
  std::ofstream(index, std::ios::trunc) << text;
  FolderReplayStore again(folder, FolderReplayStore::Mode::kOwner);
  EXPECT_NE(again.index_repair().find("counts 2 games in chunk-00000000.bin, whose header holds 1"),
            std::string::npos)
      << again.index_repair();
  EXPECT_EQ(again.sizes().begin()->second.games, 1);
}

// A chunk the index does not list (a kill between a chunk and its row, an index deleted) gets its
// row back from the chunk; a name like a chunk's that is no file of games keeps its number, so the
// writer never meets it (both once stopped a run: a chunk left out for good, or self-play failing
// at that number with "appeared while this run owned the folder").
TEST(FolderReplayStore, UnlistedChunksAreListedAndEveryChunkNameKeepsItsNumber) {
  namespace fs = std::filesystem;
  const std::string folder = temp_folder("store_unlisted");
  {
    FolderReplayStore owner(folder, FolderReplayStore::Mode::kOwner);
    owner.append({empty_mg_record()});
    owner.append({empty_mg_record(), empty_mg_record()});
  }
  fs::remove(fs::path(folder) / "index.csv");
  fs::create_symlink("/dev/zero", fs::path(folder) / "chunk-00000005.bin");
  FolderReplayStore again(folder, FolderReplayStore::Mode::kOwner);
  EXPECT_NE(again.index_repair().find("listed 2 chunk(s) it did not list"), std::string::npos)
      << again.index_repair();
  const auto sizes = again.sizes();
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes.rbegin()->second.games, 2);
  again.append({empty_mg_record()});
  EXPECT_TRUE(fs::exists(fs::path(folder) / "chunk-00000006.bin"));
}

// Self-play can be started again after a stop, and then plays and stores games as before.
// Search trees no machine holds (the fewest nodes they make, one per simulation, already far past
// its memory) are refused when self-play is made, naming the keys, not killed for memory later.
TEST(SelfPlay, SearchTreesNoMachineHoldsAreRefused) {
  SelfPlaySettings settings = small_settings("mg");
  settings.threads = 256;
  settings.concurrent_games = 4096;
  settings.simulations = 1000000;
  try {
    check_search_memory(settings);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("256 threads x 4096 concurrent games of 1000000 "
                                         "simulations (of about"),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("selfplay.concurrent_games"), std::string::npos);
  }
  mcts::UniformEvaluator uniform;
  FolderReplayStore store(temp_folder("selfplay_memory"), FolderReplayStore::Mode::kOwner);
  EXPECT_THROW(SelfPlay(uniform, store, settings, [] { return std::int64_t{1}; }),
               std::invalid_argument);
  EXPECT_NO_THROW(check_search_memory(small_settings("mg")));
  // Each simulation makes a node per child, not one: 16 trees of 10^6 simulations in Murus
  // Gallicus (some 30 children each: 1 GiB a tree, the most one holds) passed as 0.5 GiB, then
  // ran the machine out of memory.
  settings = small_settings("mg");
  settings.threads = 16;
  settings.concurrent_games = 4096;
  settings.simulations = settings.fast_simulations = 10000;
  EXPECT_THROW(check_search_memory(settings), std::invalid_argument)
      << "65536 trees of 10^4 simulations of about 30 children: some 600 GiB (one node each "
         "simulation: 20 GiB)";
  // A game holds more than its tree: 256 x 4096 Tic-tac-toe games of one simulation passed as
  // 0.3 GiB of trees, then ran out of memory before a move (24 KB a game measured).
  settings = small_settings("ttt");
  settings.threads = 256;
  settings.concurrent_games = 4096;
  settings.simulations = settings.fast_simulations = 1;
  const double gib = 1024.0 * 1024 * 1024;
  EXPECT_GT(search_memory_bytes(settings), 1048576 * kGameBytes);
  EXPECT_THROW(check_search_memory(settings, 8 * gib), std::invalid_argument);
  EXPECT_NO_THROW(check_search_memory(settings, 24 * gib));
}

TEST(SelfPlay, StartsAgainAfterStop) {
  mcts::UniformEvaluator uniform;
  FolderReplayStore store(temp_folder("selfplay_restart"), FolderReplayStore::Mode::kOwner);
  SelfPlay sp(uniform, store, small_settings("mg"), [] { return std::int64_t{1}; });
  sp.start();
  run_until(sp, 3);
  sp.stop();
  const std::int64_t first = sp.stats().games;
  ASSERT_GE(first, 3);
  sp.start();
  run_until(sp, first + 3);
  sp.stop();
  EXPECT_EQ(sp.error(), "");
  EXPECT_GE(sp.stats().games, first + 3) << "games after a restart were dropped";
  std::int64_t stored = 0;
  for (const std::string& chunk : store.chunks())
    stored += static_cast<std::int64_t>(read_game_file(chunk).records.size());
  EXPECT_EQ(stored, sp.stats().games);
}

}  // namespace
}  // namespace oppidum::selfplay
