// Writes the generated seeds of the fuzz harnesses (scripts/fuzz.sh runs it before fuzzing):
// positions and moves along random games of every game (fuzz_position, fuzz_move), engine sessions
// (fuzz_engine), arena records (fuzz_arena_record), game files and records (fuzz_game_file),
// checkpoints (fuzz_checkpoint), run-folder files (fuzz_run_folder), tables (fuzz_csv), index.csv
// (fuzz_replay_index), and copies of the project's configs (fuzz_config) and baseline results
// (fuzz_results). Each seed starts with its harness's selector or flags byte where it has one
// (tests/fuzz/fuzz_*.cpp). Deterministic. Usage: fuzz_seeds OUTDIR (writes OUTDIR/<harness>/).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include "games/registry.h"
#include "model/checkpoint.h"
#include "selfplay/game_record.h"
#include "trainer/run_folder.h"
#include "ttt_chunk.h"
#include "util/csv_table.h"
#include "util/file_io.h"

using namespace oppidum;
namespace fs = std::filesystem;

namespace {

void put(const std::string& path, char prefix, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << prefix << bytes;
}

// Copies the project's files of one kind (configs, results) as seeds.
void copy_files(const fs::path& from, const std::string& suffix, const fs::path& to) {
  for (const auto& e : fs::directory_iterator(from)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      fs::copy_file(e.path(), to / name, fs::copy_options::overwrite_existing);
  }
}

void games_seeds(const std::string& out) {
  std::mt19937 rng(1);
  int n = 0;
  for (std::size_t g = 0; g < all_games().size(); ++g) {
    const Game& game = *all_games()[g];
    for (int round = 0; round < 6; ++round) {
      auto s = game.initial_state();
      for (int ply = 0; !s->is_terminal() && ply < 400; ++ply) {
        ActionList legal;
        s->legal_actions(legal);
        const Action a = legal[static_cast<int>(rng() % legal.size())];
        if (ply % 9 == round) {
          std::ofstream(out + "/position/" + std::to_string(n)) << char(g) << s->to_string();
          std::ofstream(out + "/move/" + std::to_string(n))
              << char(g) << char(ply % 3) << s->action_to_string(a);
          ++n;
        }
        s->apply(a);
      }
      std::ofstream(out + "/position/" + std::to_string(n++)) << char(g) << s->to_string();
    }
  }
  // Engine protocol (fuzz_engine): "Opening <moves>" then Start or a move, and plain starts.
  for (std::size_t g = 0; g < all_games().size(); ++g) {
    const Game& game = *all_games()[g];
    for (int k : {0, 1, 3, 10, 50}) {
      auto s = game.initial_state();
      std::string opening = "Opening";
      for (int ply = 0; ply < k && !s->is_terminal(); ++ply) {
        ActionList legal;
        s->legal_actions(legal);
        const Action a = legal[static_cast<int>(rng() % legal.size())];
        opening += " " + s->action_to_string(a);
        s->apply(a);
      }
      std::ofstream(out + "/engine/" + std::to_string(g) + "-" + std::to_string(k) + "s")
          << char(g) << opening << "\nStart\nQuit\n";
      if (!s->is_terminal()) {
        ActionList legal;
        s->legal_actions(legal);
        std::ofstream(out + "/engine/" + std::to_string(g) + "-" + std::to_string(k) + "m")
            << char(g) << opening << "\n"
            << s->action_to_string(legal[0]) << "\n\nquit\r\n";
      }
    }
    std::ofstream(out + "/engine/" + std::to_string(g) + "-start") << char(g) << "Start\n";
  }
  // Arena record files (fuzz_arena_record): whole random games, one per line, old and new layout.
  for (std::size_t g = 0; g < all_games().size(); ++g) {
    const Game& game = *all_games()[g];
    std::string file;
    for (int round = 0; round < 3; ++round) {
      auto s = game.initial_state();
      std::string moves;
      for (int ply = 0; !s->is_terminal() && ply < 300; ++ply) {
        ActionList legal;
        s->legal_actions(legal);
        const Action a = legal[static_cast<int>(rng() % legal.size())];
        moves += " " + s->action_to_string(a);
        s->apply(a);
      }
      const double r = s->is_terminal() ? s->result(0) : 0.0;
      const char* result = r > 0 ? "1-0" : r < 0 ? "0-1" : "1/2-1/2";
      file += (round == 2 ? std::string() : game.name() + " ") +
              "random uct:sims=" + std::to_string(round + 1) + " " + result + moves + "\n";
    }
    std::ofstream(out + "/arena_record/" + game.name()) << file;
  }
}

void file_seeds(const std::string& out) {
  std::mt19937 rng(7);
  int n = 0;
  // Game files: a few random games of each game, with visits; one record per file and three.
  std::vector<selfplay::GameRecord> all;
  for (const Game* game : all_games()) {
    for (int g = 0; g < 2; ++g) {
      selfplay::GameRecord r;
      r.game = game->name();
      auto s = game->initial_state();
      if (g == 1 && game->name() != "ttt") {  // a start after a few plies
        for (int i = 0; i < 5; ++i) {
          ActionList legal;
          s->legal_actions(legal);
          s->apply(legal[static_cast<int>(rng() % legal.size())]);
        }
      }
      r.start = s->to_string();
      auto start = game->parse_state(r.start);
      s = std::move(start);
      r.seed = rng();
      r.network_step = g ? 100 : -1;
      r.node = g ? "node-1" : "";
      r.origin = g ? "1700000000000-0" : "";
      int ply = 0;
      for (; !s->is_terminal() && ply < 40; ++ply) {
        ActionList legal;
        s->legal_actions(legal);
        selfplay::MoveRecord m;
        m.action = static_cast<std::uint16_t>(legal[static_cast<int>(rng() % legal.size())]);
        m.root_value = 0.25f;
        m.policy_target = ply % 2 == 0;
        for (int i = 0; i < std::min(3, legal.size()); ++i)
          m.visits.push_back(
              {static_cast<std::uint16_t>(legal[i]), static_cast<std::uint32_t>(i + 1)});
        r.moves.push_back(m);
        s->apply(m.action);
      }
      if (s->is_terminal()) {
        r.result = static_cast<std::int8_t>(s->result(0));
      } else {
        r.adjudicated = true;
      }
      r.score[0] = static_cast<std::int16_t>(s->score(0));
      r.score[1] = static_cast<std::int16_t>(s->score(1));
      all.push_back(r);
      const std::string tmp = out + "/tmp.bin";
      selfplay::write_game_file(tmp, {r});
      put(out + "/game_file/" + std::to_string(n) + "f", '\1', util::read_regular_file(tmp));
      put(out + "/game_file/" + std::to_string(n) + "r", '\6', selfplay::encode_record(r));
      ++n;
    }
  }
  {
    const std::string tmp = out + "/tmp.bin";
    selfplay::write_game_file(tmp, all);
    put(out + "/game_file/all", '\1', util::read_regular_file(tmp));
    std::filesystem::remove(tmp);
  }
  // Checkpoints: the smallest nets of each game, with and without pooling and the score head.
  for (const Game* game : all_games()) {
    for (int v = 0; v < 3; ++v) {
      model::NetConfig c;
      c.blocks = v;
      c.filters = 4;
      c.policy_channels = 1;
      c.value_channels = 1;
      c.value_hidden = 8;
      c.global_pooling = v == 2;
      c.score_head = v == 1;
      auto ck = model::random_checkpoint(*game, c, 3);
      ck.metadata = "fuzz";
      put(out + "/checkpoint/" + game->name() + std::to_string(v), '\0',
          model::serialize_checkpoint(ck));
    }
  }
  // Run folder: state.yaml, log.txt, arena.csv, metrics.csv.
  put(out + "/run_folder/state", '\0',
      "sessions: 3\nstream_cursor: \"1700000000000-5\"\nstream_read: 12\nrun_id: "
      "\"0123456789abcdef0123456789abcdef\"\n");
  put(out + "/run_folder/log", '\1',
      "[2024-01-01 00:00:00] starting run x (session 1): mg; run id "
      "0123456789abcdef0123456789abcdef\n"
      "[2024-01-02 00:00:00] resuming run x (session 2): mg; run id "
      "0123456789abcdef0123456789abcdef\n");
  trainer::GateRow g1;
  g1.generation = 1;
  g1.step = 10;
  g1.games = 20;
  g1.wins = 12;
  g1.draws = 2;
  g1.losses = 6;
  g1.elo = 50;
  g1.elo_low = 10;
  g1.elo_high = 90;
  g1.llr = 1.5;
  g1.verdict = "promoted";
  g1.promoted = true;
  g1.seconds = 30;
  g1.rating = 50;
  g1.anchor = "classic:depth=1";
  g1.anchor_games = 10;
  g1.anchor_score = 0.6;
  trainer::GateRow g2 = g1;
  g2.generation = 2;
  g2.step = 20;
  g2.promoted = false;
  g2.verdict = "rejected";
  auto csv = [](const std::vector<util::CsvTable::Row>& rows) {
    std::string s;
    for (const auto& r : rows) s += util::CsvTable::format(r) + "\n";
    return s;
  };
  const std::string arena =
      csv({trainer::arena_header(), trainer::arena_row(g1), trainer::arena_row(g2)});
  trainer::TrainRow t;
  t.step = 5;
  t.generation = 0;
  t.policy_loss = 1.5;
  t.value_loss = 0.5;
  trainer::TrainRow t2 = t;
  t2.step = 15;
  t2.generation = 1;
  trainer::SelfplayRow sp;
  sp.generation = 1;
  const std::string metrics =
      csv({trainer::metrics_header(), trainer::metrics_row(t), trainer::metrics_row(g1, 100, 10),
           trainer::metrics_row(t2), trainer::metrics_row(sp), trainer::metrics_row(g2, 200, 20),
           trainer::metrics_row(trainer::NodeRow{}), trainer::metrics_row(trainer::StreamRow{})});
  put(out + "/run_folder/arena", '\2', arena);
  put(out + "/run_folder/metrics", '\3', metrics);
  put(out + "/run_folder/both", '\4', arena + std::string(1, '\0') + metrics);
  put(out + "/run_folder/recover", '\5', metrics);
  // CSV: the same tables and a few quoted lines.
  put(out + "/csv/arena", '\1', arena);
  put(out + "/csv/metrics", '\2', metrics);
  put(out + "/csv/own", '\2', "step,kind,\"a,b\",\"q\"\"uote\"\n1,2,3,4\n5,6,\"7\n8\",9\n10,11");
  put(out + "/csv/line", '\0', "a,\"b,c\",\"d\"\"e\",,f");
  // index.csv of the replay store: chunk number, games, positions, bytes.
  {
    const std::string h = "chunk,games,positions,bytes\n";
    const std::string size = std::to_string(fuzz::ttt_chunk().size());
    std::ofstream(out + "/replay_index/ok") << h << "2,3,27," << size << "\n";
    std::ofstream(out + "/replay_index/gone") << h << "1,0,0,0\n2,3,27," << size << "\n";
    std::ofstream(out + "/replay_index/bad") << h << "2,4,27," << size << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seeds OUTDIR\n";
    return 2;
  }
  const std::string out = argv[1];
  for (const char* h : {"arena_record", "checkpoint", "config", "csv", "engine", "game_file",
                        "move", "position", "replay_index", "results", "run_folder"})
    fs::create_directories(fs::path(out) / h);
  games_seeds(out);
  file_seeds(out);
  const fs::path source = OPPIDUM_SOURCE_DIR;
  copy_files(source / "configs", ".yaml", fs::path(out) / "config");
  copy_files(source / "tests" / "data", ".yaml", fs::path(out) / "config");
  copy_files(source / "docs" / "baselines", "-results.txt", fs::path(out) / "results");
  return 0;
}
