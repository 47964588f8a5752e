// util/: durable atomic writes, framed files, bounded reads of regular files only, the folder lock,
// CSV tables that repair what a kill leaves behind, and curves in bounded memory.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/process_util.h"
#include "util/csv_table.h"
#include "util/curve.h"
#include "util/file_io.h"
#include "util/folder_lock.h"
#include "util/host.h"
#include "util/progress.h"
#include "util/text.h"

namespace oppidum::util {
namespace {
namespace fs = std::filesystem;
using test_util::read_file;
using test_util::run_shell;

fs::path fresh(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / ("util_" + name);
  fs::remove_all(p);
  return p;
}

TEST(FileIo, AtomicWriteReplacesWholeAndLeavesNoTemporary) {
  const fs::path file = fresh("atomic.bin");
  write_file_atomically(file.string(), "first");
  write_file_atomically(file.string(), "second");
  EXPECT_EQ(read_file(file), "second");
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  // A write that cannot happen leaves the old content and says where.
  try {
    write_file_atomically((fresh("missing_dir") / "x").string(), "data");
    FAIL() << "no error";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("util_missing_dir/x.tmp"), std::string::npos) << e.what();
  }
}

// A signal that ends the process while a file is being written removes its temporary (Ctrl-C in
// `export` left a half model as x.onnx.tmp, and every later export to x.onnx was refused while it
// was there), and still ends the process by that signal; the file itself is left as it was. A
// program's own handler is left alone.
TEST(FileIo, ASignalThatEndsTheProcessLeavesNoTemporary) {
  const fs::path file = fresh("signalled.bin");
  write_file_atomically(file.string(), "old");
  for (const int signo : {SIGINT, SIGTERM, SIGHUP}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      AtomicFile pieces(file.string());
      pieces.write(std::string(3u << 20, 'x'));
      ::raise(signo);
      ::_exit(3);  // not reached: the signal ends the process
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signo) << signo << ": " << status;
    EXPECT_FALSE(fs::exists(file.string() + ".tmp")) << "signal " << signo;
    EXPECT_EQ(read_file(file), "old");
  }
  // A program that handles SIGINT itself (a stop that finishes its work) keeps its handler.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    static volatile sig_atomic_t seen = 0;
    ::signal(SIGINT, [](int) { seen = 1; });
    {
      AtomicFile pieces(file.string());
      pieces.write("new");
      ::raise(SIGINT);
      if (seen) pieces.commit();
    }
    ::_exit(seen ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(read_file(file), "new");
}

// A program's own handler that ends the process at once (a second Ctrl-C in `train`) removes the
// temporaries through remove_temporary_files(); it left them, and the next write was refused.
TEST(FileIo, AHandlerOfItsOwnRemovesTheTemporariesBeforeItEnds) {
  const fs::path file = fresh("own_handler.bin");
  write_file_atomically(file.string(), "old");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGINT, [](int) {
      remove_temporary_files();
      ::_exit(130);
    });
    AtomicFile first(file.string());
    AtomicFile second(file.string() + ".2");
    first.write(std::string(3u << 20, 'x'));
    ::raise(SIGINT);
    ::_exit(5);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  EXPECT_FALSE(fs::exists(file.string() + ".2.tmp"));
  EXPECT_FALSE(fs::exists(file.string() + ".2"));
  EXPECT_EQ(read_file(file), "old");
  write_file_atomically(file.string(), "next");  // nothing left in its way
  EXPECT_EQ(read_file(file), "next");
}

// A file written in pieces appears whole at commit() and not before; one abandoned leaves the old
// file and no temporary behind.
TEST(FileIo, AtomicFileAppearsWholeAtCommit) {
  const fs::path file = fresh("pieces.txt");
  write_file_atomically(file.string(), "old");
  const std::string big(3u << 20, 'b');  // past the write buffer
  {
    AtomicFile out(file.string());
    out.write("a");
    out.write(big);
    out.write("c");
    EXPECT_EQ(read_file(file), "old");
  }
  EXPECT_EQ(read_file(file), "old") << "abandoned";
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  AtomicFile out(file.string());
  out.write("a");
  out.write(big);
  out.write("c");
  out.commit();
  EXPECT_EQ(read_file(file), "a" + big + "c");
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
}

TEST(FileIo, FramedFilesDetectEveryKindOfDamage) {
  constexpr char kMagic[8] = {'T', 'E', 'S', 'T', 'F', 'I', 'L', 'E'};
  const std::string framed = frame(kMagic, 3, "payload bytes");
  EXPECT_EQ(unframe(framed, kMagic, 3, "f"), "payload bytes");
  const auto error_of = [&](std::string bytes, std::uint32_t version) -> std::string {
    try {
      unframe(bytes, kMagic, version, "f");
    } catch (const FileError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(framed, 4).find("format version 3"), std::string::npos);
  EXPECT_NE(error_of("OTHERMAGxxxxxxxxxxxxxxxxxxxxxx", 3).find("not a file of this kind"), std::string::npos);
  EXPECT_NE(error_of(framed.substr(0, framed.size() - 3), 3).find("truncated"), std::string::npos);
  for (std::size_t at = 8; at < framed.size(); ++at) {
    std::string flipped = framed;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x04);
    EXPECT_FALSE(error_of(flipped, 3).empty()) << "a flipped bit at byte " << at << " went unseen";
  }
}

TEST(FileIo, ReadsOnlyRegularFilesWithinTheLimit) {
  const fs::path file = fresh("regular.txt");
  std::ofstream(file) << "0123456789";
  EXPECT_EQ(read_regular_file(file.string()), "0123456789");
  EXPECT_THROW(read_regular_file(file.string(), 5), FileError);
  EXPECT_THROW(read_regular_file("/dev/zero"), FileError);  // would never end
  const fs::path dir = fresh("a_directory");
  fs::create_directory(dir);
  try {
    read_regular_file(dir.string());
    FAIL() << "a directory was read";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("a directory"), std::string::npos) << e.what();
  }
}

// The message of the FileError `f` throws, or "" when it throws none.
template <class F>
std::string file_error_of(F&& f) {
  try {
    f();
  } catch (const FileError& e) {
    return e.what();
  }
  return "";
}

// Every kind of file that is not a regular one is refused by name, without opening a device or
// blocking on a FIFO; a file over the limit is refused before anything is allocated for it.
TEST(FileIo, RefusesDevicesFifosDirectoriesAndOversizeFilesByName) {
  const fs::path zero = fresh("zero.yaml");
  fs::create_symlink("/dev/zero", zero);
  std::string error = file_error_of([&] { read_regular_file(zero.string(), 1 << 20); });
  EXPECT_NE(error.find(zero.string() + ": not a regular file (a character device)"),
            std::string::npos) << error;
  const fs::path fifo = fresh("fifo.yaml");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  error = file_error_of([&] { RegularFileReader reader(fifo.string(), 1 << 20); });
  EXPECT_NE(error.find(fifo.string() + ": not a regular file (a FIFO)"), std::string::npos)
      << error;
  const fs::path big = fresh("big.bin");
  { std::ofstream(big) << std::string(4096, 'x'); }
  fs::resize_file(big, std::uintmax_t{1} << 40);  // sparse: 1 TiB that takes no room
  error = file_error_of([&] { read_regular_file(big.string(), 1 << 20); });
  EXPECT_NE(error.find(big.string() + ": 1099511627776 bytes, more than the limit of 1048576"),
            std::string::npos) << error;
  EXPECT_NE(file_error_of([&] { read_regular_file(fresh("absent").string(), 10); })
                .find("cannot open"), std::string::npos);
}

TEST(FileIo, RegularFileReaderReadsInPieces) {
  const fs::path file = fresh("pieces.bin");
  std::ofstream(file) << "header+the rest";
  RegularFileReader reader(file.string(), 100);
  EXPECT_EQ(reader.size(), 15u);
  char head[6];
  ASSERT_EQ(reader.read(head, sizeof head), 6u);
  EXPECT_EQ(std::string(head, 6), "header");
  char rest[100];
  EXPECT_EQ(std::string(rest, reader.read(rest, sizeof rest)), "+the rest");
  EXPECT_EQ(reader.read(rest, sizeof rest), 0u);
}

// An atomic write replaces a symbolic link at the path (never its target), refuses a link at the
// temporary name, and never replaces a directory, a device or a FIFO.
TEST(FileIo, AtomicWriteNeverWritesThroughLinksOrOverNonRegularFiles) {
  const fs::path target = fresh("precious.txt");
  std::ofstream(target) << "precious";
  const fs::path link = fresh("link.txt");
  fs::create_symlink(target, link);
  write_file_atomically(link.string(), "new");
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(read_file(link), "new");
  EXPECT_EQ(read_file(target), "precious");

  const fs::path out = fresh("out.txt");
  fs::remove(out.string() + ".tmp");
  fs::create_symlink(target, out.string() + ".tmp");
  std::string error = file_error_of([&] { write_file_atomically(out.string(), "evil"); });
  EXPECT_NE(error.find(out.string() + ".tmp: it is a symbolic link"), std::string::npos) << error;
  EXPECT_EQ(read_file(target), "precious");
  EXPECT_FALSE(fs::exists(out));

  const fs::path fifo = fresh("fifo.out");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  error = file_error_of([&] { write_file_atomically(fifo.string(), "data"); });
  EXPECT_NE(error.find(fifo.string() + ": it is a FIFO, not a regular file; refusing to replace"),
            std::string::npos) << error;
  EXPECT_TRUE(fs::is_fifo(fifo));
  const fs::path dir = fresh("dir.out");
  fs::create_directory(dir);
  error = file_error_of([&] { write_file_atomically(dir.string(), "data"); });
  EXPECT_NE(error.find("it is a directory"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir.string() + ".tmp"));
}

// The lock file holds the owner's pid: a symbolic link there would have its target overwritten.
// Lines appended to a file whose last line has no newline start a line of their own (arena's
// results and record files once merged a new line into a hand-written last one).
TEST(FileIo, AppendedLinesNeverRunIntoALastLineWithoutNewline) {
  const fs::path dir = fresh("append_lines");
  fs::create_directories(dir);
  const std::string path = (dir / "lines.txt").string();
  append_lines_to_file(path, "one\n");
  EXPECT_EQ(read_file(path), "one\n") << "a new file gets no newline first";
  append_lines_to_file(path, "two\n");
  EXPECT_EQ(read_file(path), "one\ntwo\n");
  std::ofstream(path, std::ios::app) << "cut";
  append_lines_to_file(path, "");
  EXPECT_EQ(read_file(path), "one\ntwo\ncut") << "no lines, no bytes";
  append_lines_to_file(path, "three\n");
  EXPECT_EQ(read_file(path), "one\ntwo\ncut\nthree\n");
  fs::remove_all(dir);
}

// Two processes reading a shared file and appending what depends on it take turns: two matches
// ending at once on a new results file each wrote its game line (here two opens of the file, as
// two processes' would be: flock is per open).
TEST(FileIo, LockedSectionsOfOneFileTakeTurns) {
  const fs::path dir = fresh("locked");
  fs::create_directories(dir);
  const std::string path = (dir / "results.txt").string();
  std::atomic<bool> first_inside{false}, second_ran{false}, second_saw_first{false};
  std::thread second;
  with_file_locked(path, [&] {
    EXPECT_TRUE(fs::is_regular_file(path)) << "made for the lock";
    first_inside = true;
    second = std::thread([&] {
      with_file_locked(path, [&] {
        second_saw_first = first_inside.load();
        second_ran = true;
      });
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(second_ran) << "ran while the first held the file";
    first_inside = false;
  });
  second.join();
  EXPECT_TRUE(second_ran);
  EXPECT_FALSE(second_saw_first);
  const std::string error = file_error_of([&] { with_file_locked(dir.string(), [] {}); });
  EXPECT_NE(error.find("it is a directory"), std::string::npos) << error;
  fs::remove_all(dir);
}

// The temporary name is made new: a file there (somebody's `x.tmp` beside an output `x`, e.g. the
// checkpoint `export --out x` reads) was truncated and then removed (before).
TEST(FileIo, AnAtomicWriteNeverTakesAFileAtItsTemporaryName) {
  const fs::path dir = fresh("atomic_tmp");
  fs::create_directories(dir);
  const std::string path = (dir / "net").string();
  std::ofstream(path + ".tmp") << "a checkpoint";
  try {
    write_file_atomically(path, "model");
    ADD_FAILURE() << "wrote over " << path << ".tmp";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ".tmp is there already"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_file(path + ".tmp"), "a checkpoint");
  EXPECT_FALSE(fs::exists(path));
  fs::remove(path + ".tmp");
  write_file_atomically(path, "model");
  EXPECT_EQ(read_file(path), "model");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  fs::remove_all(dir);
}

// An append cut short (a full disk; here the file size limit) is taken back: a results or record
// file ended in half a line that every later reader and writer refused (before).
TEST(FileIo, AnAppendCutShortIsTakenBack) {
  const fs::path dir = fresh("append_cut");
  fs::create_directories(dir);
  const std::string path = (dir / "results.txt").string();
  append_lines_to_file(path, "a b 1 0 0\n");
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit: EFBIG
  rlimit limited = before;
  limited.rlim_cur = 16;  // room for 6 of the next line's 10 bytes
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  bool threw = false;
  try {
    append_lines_to_file(path, "c d 0 1 0\n");
  } catch (const FileError& e) {
    threw = std::string(e.what()).find("cannot append to " + path) != std::string::npos;
  }
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(read_file(path), "a b 1 0 0\n");
  append_lines_to_file(path, "c d 0 1 0\n");
  EXPECT_EQ(read_file(path), "a b 1 0 0\nc d 0 1 0\n");
  fs::remove_all(dir);
}

// A value of any size is written whole (1e300 was cut to its first 63 characters: a table held a
// number 237 orders of magnitude off).
TEST(Text, FixedWritesLargeValuesWhole) {
  EXPECT_EQ(oppidum::util::fixed(2.5, 2), "2.50");
  const std::string large = oppidum::util::fixed(1e300, 2);
  EXPECT_EQ(large.size(), 301u + 3u) << large;
  EXPECT_DOUBLE_EQ(std::strtod(large.c_str(), nullptr), 1e300);
  EXPECT_EQ(oppidum::util::fixed(-1e100, 0).size(), 102u);
}

TEST(Text, ReadLineIsGetlineWithABound) {
  std::istringstream in("one\r\n\ntwo\nthree");
  std::string line;
  std::vector<std::string> lines;
  while (read_line(in, line, 16)) lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<std::string>{"one\r", "", "two", "three"}));
  EXPECT_FALSE(read_line(in, line, 16)) << "the end stays the end";

  std::istringstream exact(std::string(16, 'a') + "\n" + std::string(17, 'b') + "\nc\n");
  ASSERT_TRUE(read_line(exact, line, 16));
  EXPECT_EQ(line, std::string(16, 'a'));
  EXPECT_THROW(read_line(exact, line, 16), LineTooLong);
  EXPECT_EQ(exact.tellg(), 17 + 17) << "it stops after one byte beyond the bound";

  std::istringstream empty("");
  EXPECT_FALSE(read_line(empty, line));
  EXPECT_TRUE(empty.fail());
}

// One test of "this machine" for the web server and the Redis URL (each had its own, and they
// disagreed on LocalHost, ::ffff:127.0.0.1 and 0:0:0:0:0:0:0:1).
TEST(Host, LoopbackIsAnAddressOfThisMachineOrLocalhost) {
  for (const char* host : {"127.0.0.1", "127.255.0.9", "localhost", "LocalHost", "::1", "[::1]",
                           "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"})
    EXPECT_TRUE(util::is_loopback_host(host)) << host;
  for (const char* host : {"0.0.0.0", "192.168.1.2", "127.evil.example.com", "127.0.0.1.evil.com",
                           "127.1", "1270.0.0.1", "128.0.0.1", "localhost.", "::",
                           "::ffff:10.0.0.1", "", "[::1", "127.0.0.1\n"})
    EXPECT_FALSE(util::is_loopback_host(host)) << host;
  EXPECT_FALSE(util::is_loopback_host(std::string_view("127.0.0.1\0evil", 14)))
      << "a name with a NUL is none of this machine's";
}

TEST(FolderLock, RefusesASymlinkedOrNonRegularLockFile) {
  const fs::path dir = fresh("lock_link");
  fs::create_directory(dir);
  const fs::path target = fresh("lock_target.txt");
  std::ofstream(target) << "precious";
  fs::create_symlink(target, dir / "lock");
  std::string error = file_error_of([&] { FolderLock lock(dir.string(), "test owner"); });
  EXPECT_NE(error.find("lock file " + (dir / "lock").string() + " is a symbolic link"),
            std::string::npos) << error;
  EXPECT_EQ(read_file(target), "precious");
  fs::remove(dir / "lock");
  ASSERT_EQ(::mkfifo((dir / "lock").c_str(), 0600), 0);
  error = file_error_of([&] { FolderLock lock(dir.string(), "test owner"); });
  EXPECT_NE(error.find("is a FIFO, not a regular file"), std::string::npos) << error;
}

TEST(FolderLock, OneOwnerAtATimeAndTheOwnerIsNamed) {
  const fs::path dir = fresh("lock");
  fs::create_directory(dir);
  {
    FolderLock first(dir.string(), "test owner");
    try {
      FolderLock second(dir.string(), "intruder");
      FAIL() << "two owners";
    } catch (const FolderLockedError& e) {
      EXPECT_NE(std::string(e.what()).find("process " + std::to_string(getpid()) + " (test owner"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW(FolderLock(dir.string(), "next owner")) << "the lock went with its owner";
}

TEST(CsvTable, AppendsQuotesAndReadsBack) {
  const fs::path file = fresh("table.csv");
  {
    CsvTable t(file.string(), {"a", "b"}, true);
    t.append({"1", "two, with a comma"});
    t.append({"3", "say \"hi\""});
    EXPECT_THROW(t.append({"only one field"}), std::logic_error);
  }
  EXPECT_EQ(read_file(file), "a,b\n1,\"two, with a comma\"\n3,\"say \"\"hi\"\"\"\n");
  CsvTable again(file.string(), {"a", "b"}, false);
  ASSERT_EQ(again.rows().size(), 2u);
  EXPECT_EQ(again.rows()[1][1], "say \"hi\"");
  EXPECT_EQ(again.dropped_on_open(), 0);
}

// A row cut short (a full disk; here the file size limit) is taken back: metrics.csv, arena.csv
// and games/index.csv ended in half a row, set aside at the next start.
TEST(CsvTable, ARowCutShortIsTakenBack) {
  const fs::path file = fresh("cut_row.csv");
  CsvTable t(file.string(), {"a", "b"}, true);
  t.append({"1", "2"});
  const std::string whole = read_file(file);
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit: EFBIG
  rlimit limited = before;
  limited.rlim_cur = whole.size() + 3;  // room for 3 of the next row's bytes
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  bool threw = false;
  try {
    t.append({"333333", "444444"});
  } catch (const FileError& e) {
    threw = std::string(e.what()).find("cannot append to " + file.string()) != std::string::npos;
  }
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(read_file(file), whole);
  t.append({"5", "6"});
  EXPECT_EQ(read_file(file), whole + "5,6\n");
}

// The owner holds no row: what it reads comes from the file, so a line written behind its back
// is an error naming the line, never a row taken for the table's; retain asks of each row once,
// in order, and writes the file again only when a row goes.
TEST(CsvTable, TheOwnerReadsItsRowsFromTheFile) {
  const fs::path file = fresh("owner.csv");
  fs::remove(file.string() + ".damaged");
  CsvTable t(file.string(), {"a", "b"}, false);
  t.append({"1", "2"});
  t.append({"3", "4"});
  EXPECT_EQ(t.rows(), (std::vector<CsvTable::Row>{{"1", "2"}, {"3", "4"}}));
  std::vector<std::string> asked;
  const auto inode = [&] {
    struct stat st {};
    return ::stat(file.c_str(), &st) == 0 ? st.st_ino : 0;
  };
  const auto inode_before = inode();
  EXPECT_EQ(t.retain([&](const CsvTable::Row& r) {
              asked.push_back(r[0]);
              return true;
            }),
            0);
  EXPECT_EQ(asked, (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ(inode(), inode_before) << "nothing went: the file is not written again";
  EXPECT_EQ(t.set_aside([](const CsvTable::Row& r) { return r[0] == "1"; }), 1);
  t.append({"5", "6"});
  EXPECT_EQ(read_file(file), "a,b\n3,4\n5,6\n");
  EXPECT_EQ(read_file(t.set_aside_path()), "1,2\n");
  { std::ofstream(file, std::ios::app) << "7,8,9\n"; }  // behind the owner's back
  const std::string error = file_error_of([&] { t.rows(); });
  EXPECT_NE(error.find(file.string() + ": line 4 is not a row of its columns"),
            std::string::npos) << error;
}

// A header of this layout written otherwise ("a" quoted) is written again as this program writes
// it, so that the owner's reads, which compare it, find it (it once stopped a resume as a file
// "changed while this program held it").
TEST(CsvTable, AHeaderWrittenOtherwiseIsWrittenAgain) {
  const fs::path file = fresh("quoted_header.csv");
  std::ofstream(file) << "\"a\",b\n1,2\n";
  CsvTable t(file.string(), {"a", "b"}, false);
  EXPECT_EQ(t.rows(), (std::vector<CsvTable::Row>{{"1", "2"}}));
  EXPECT_EQ(read_file(file), "a,b\n1,2\n");
}

// A line too long to be a row is set aside whole, byte for byte, as a short damaged one is.
TEST(CsvTable, AnOverlongLineIsSetAsideWhole) {
  const fs::path file = fresh("overlong.csv");
  fs::remove(file.string() + ".damaged");
  const std::string overlong(CsvTable::kMaxLineBytes + 10, 'x');
  std::ofstream(file) << "a,b\n1,2\n" << overlong << "\n3,4\n" << overlong;
  CsvTable t(file.string(), {"a", "b"}, false);
  EXPECT_EQ(t.dropped_on_open(), 2);
  EXPECT_EQ(t.rows(), (std::vector<CsvTable::Row>{{"1", "2"}, {"3", "4"}}));
  EXPECT_EQ(read_file(file), "a,b\n1,2\n3,4\n");
  EXPECT_EQ(read_file(t.set_aside_path()), overlong + "\n" + overlong + "\n");
}

// A reader that follows a table reads only what was appended since it last looked; a row being
// written waits until it is whole; a table rewritten (the owner's repairs, a new file in its
// place, whatever its inode) is read again from its start, and says so.
TEST(CsvTable, ReadNewFollowsAGrowingTable) {
  const fs::path file = fresh("follow.csv");
  CsvTable::Position at;
  bool restarted = false;
  int skipped = 0;
  const auto rows = [&] {
    std::vector<std::string> firsts;
    CsvTable::read_new(file.string(), at, &restarted, &skipped,
                       [&](const CsvTable::Row& r) { firsts.push_back(r[0]); });
    return firsts;
  };
  EXPECT_TRUE(rows().empty());
  EXPECT_FALSE(restarted);
  {
    CsvTable t(file.string(), {"a", "b"}, false);
    t.append({"1", "x"});
    t.append({"2", "y"});
  }
  EXPECT_EQ(rows(), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(at.header, (CsvTable::Row{"a", "b"}));
  EXPECT_TRUE(rows().empty()) << "nothing new";
  { std::ofstream(file, std::ios::app) << "3,z\n4,"; }  // the 4th row half written
  EXPECT_EQ(rows(), std::vector<std::string>{"3"});
  { std::ofstream(file, std::ios::app) << "w\n5\n"; }  // 5 has one field: skipped
  EXPECT_EQ(rows(), std::vector<std::string>{"4"});
  EXPECT_EQ(skipped, 1);
  EXPECT_FALSE(restarted);
  {
    CsvTable t(file.string(), {"a", "b"}, false);  // drops the row of one field: a rewrite
    t.retain([](const CsvTable::Row& r) { return r[0] != "2"; });
  }
  EXPECT_EQ(rows(), (std::vector<std::string>{"1", "3", "4"}));
  EXPECT_TRUE(restarted);
  // Rewritten in place to the same size with other rows: its bytes before where the reader
  // stopped are not the ones it read there.
  std::string text = read_file(file);
  text.replace(text.find("4,w"), 3, "8,v");
  std::ofstream(file, std::ios::trunc) << text;
  { std::ofstream(file, std::ios::app) << "9,u\n"; }
  EXPECT_EQ(rows(), (std::vector<std::string>{"1", "3", "8", "9"}));
  EXPECT_TRUE(restarted);
  fs::remove(file);
  EXPECT_TRUE(rows().empty());
  EXPECT_TRUE(restarted);
}

// A repair whose rewrite fails (here the file size limit, as a full disk would) leaves the table
// as it was and takes back what it set aside: a run restarted again and again on a full disk once
// added the same lines to .damaged at every try. Once the rewrite succeeds they are there once.
TEST(CsvTable, ARepairThatFailsSetsNothingAsideTwice) {
  const fs::path file = fresh("repair_fails.csv");
  const std::string damaged = file.string() + ".damaged";
  std::string table = "a,b\n3,4,5\n";  // a damaged row, then 80 KB of rows
  for (int i = 0; i < 20000; ++i) table += "1,2\n";
  std::ofstream(file) << table;
  std::ofstream(damaged) << "set aside before\n";
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit: EFBIG
  rlimit limited = before;
  limited.rlim_cur = 32 << 10;  // the rewritten table's 80 KB do not fit, the damaged row does
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  int failed = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    try {
      CsvTable t(file.string(), {"a", "b"}, false);
    } catch (const FileError&) {
      ++failed;
    }
  }
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(failed, 3);
  EXPECT_EQ(read_file(file), table);
  EXPECT_EQ(read_file(damaged), "set aside before\n");
  {
    CsvTable t(file.string(), {"a", "b"}, false);
    EXPECT_EQ(t.dropped_on_open(), 1);
  }
  EXPECT_EQ(read_file(damaged), "set aside before\n3,4,5\n");
  // Rows moved aside by set_aside alike: a failed rewrite takes them back.
  {
    CsvTable t(file.string(), {"a", "b"}, false);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
    std::signal(SIGXFSZ, SIG_IGN);
    bool threw = false;
    int seen = 0;
    try {
      t.set_aside([&](const CsvTable::Row&) { return ++seen == 1; });
    } catch (const FileError&) {
      threw = true;
    }
    ::setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_TRUE(threw);
    EXPECT_EQ(read_file(damaged), "set aside before\n3,4,5\n");
    seen = 0;
    EXPECT_EQ(t.set_aside([&](const CsvTable::Row&) { return ++seen == 1; }), 1);
  }
  EXPECT_EQ(read_file(damaged), "set aside before\n3,4,5\n1,2\n");
  fs::remove(damaged);
}

TEST(CsvTable, RepairsCutOffAndMergedRowsAndRefusesOtherLayouts) {
  const fs::path file = fresh("repair.csv");
  fs::remove(file.string() + ".damaged");
  std::ofstream(file) << "a,b\n1,2\n3,4,5\n6,";  // a malformed row and a cut-off last line
  {
    CsvTable t(file.string(), {"a", "b"}, false);
    EXPECT_EQ(t.dropped_on_open(), 2);
    ASSERT_EQ(t.rows().size(), 1u);
    t.append({"7", "8"});
  }
  EXPECT_EQ(read_file(file), "a,b\n1,2\n7,8\n");
  // What was dropped is kept beside the table, never lost.
  EXPECT_EQ(read_file(file.string() + ".damaged"), "3,4,5\n6,\n");
  std::ofstream(file, std::ios::trunc).flush();  // empty: the header comes back
  { CsvTable t(file.string(), {"a", "b"}, false); }
  EXPECT_EQ(read_file(file), "a,b\n");
  std::ofstream(file, std::ios::trunc) << "x,y\n1,2\n";
  EXPECT_THROW(CsvTable(file.string(), {"a", "b"}, false), FileError);
  EXPECT_EQ(read_file(file), "x,y\n1,2\n") << "a refused table is left as it was";
  const fs::path dir = fresh("dir.csv");
  fs::create_directory(dir);
  EXPECT_THROW(CsvTable(dir.string(), {"a"}, false), FileError);
}

// Read-only users can hold a table to the owner's header rule; nobody appends through a link.
TEST(CsvTable, ReadChecksTheLayoutAndAppendsNeverFollowLinks) {
  const fs::path file = fresh("layout.csv");
  std::ofstream(file) << "x,y\n1,2\n";
  const CsvTable::Row expected = {"a", "b", "c"};
  int skipped = 0;
  EXPECT_EQ(CsvTable::read(file.string(), nullptr, &skipped).size(), 1u);
  const std::string error =
      file_error_of([&] { CsvTable::read(file.string(), nullptr, &skipped, &expected); });
  EXPECT_NE(error.find(file.string() + ": line 1 is not the header this program writes"),
            std::string::npos) << error;
  std::ofstream(file, std::ios::trunc) << "a,b\n1,2\n";  // an older layout is fine
  EXPECT_EQ(CsvTable::read(file.string(), nullptr, &skipped, &expected).size(), 1u);

  const fs::path target = fresh("table_target.csv");
  std::ofstream(target) << "a,b\n1,2\n";
  const fs::path link = fresh("table_link.csv");
  fs::create_symlink(target, link);
  EXPECT_NE(file_error_of([&] { CsvTable t(link.string(), {"a", "b"}, false); })
                .find("is a symbolic link"), std::string::npos);
  EXPECT_EQ(read_file(target), "a,b\n1,2\n");
}

// A header cut to a prefix of the current one looks like an older layout, but rows of the
// current layout under it say the header is what was damaged: they are kept (before: every row
// was dropped as malformed, all of a run's training rows at once).
TEST(CsvTable, RowsOfTheCurrentLayoutSurviveACutHeader) {
  const fs::path file = fresh("cut_header.csv");
  std::ofstream(file) << "a,b\n1,2,3\n4,5\n";
  CsvTable t(file.string(), {"a", "b", "c"}, false);
  EXPECT_EQ(t.dropped_on_open(), 0);
  ASSERT_EQ(t.rows().size(), 2u);
  EXPECT_EQ(t.rows()[0], (CsvTable::Row{"1", "2", "3"}));
  EXPECT_EQ(t.rows()[1], (CsvTable::Row{"4", "5", ""}));
  EXPECT_EQ(read_file(file), "a,b,c\n1,2,3\n4,5,\n");
}

TEST(CsvTable, OlderLayoutsGetTheNewColumnsAndRetainRewrites) {
  const fs::path file = fresh("older.csv");
  std::ofstream(file) << "a,b\n1,2\n3,4\n";
  CsvTable t(file.string(), {"a", "b", "c"}, false);
  ASSERT_EQ(t.rows().size(), 2u);
  EXPECT_EQ(t.rows()[0], (CsvTable::Row{"1", "2", ""}));
  EXPECT_EQ(t.retain([](const CsvTable::Row& r) { return r[0] != "1"; }), 1);
  t.append({"5", "6", "7"});
  EXPECT_EQ(read_file(file), "a,b,c\n3,4,\n5,6,7\n");
}

// What a ProgressLine wrote to a file standing in for standard error.
class ProgressText {
 public:
  ProgressText() : file_(std::tmpfile()) {}
  ~ProgressText() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    for (int c; (c = std::fgetc(file_)) != EOF;) out += static_cast<char>(c);
    return out;
  }

 private:
  std::FILE* file_;
};

TEST(ProgressLine, OnATerminalTheLineIsRewrittenInPlaceAndCleared) {
  ProgressText out;
  {
    ProgressLine line(out.file(), true, std::chrono::milliseconds(0));
    line.update("pair 1 of 10");
    line.update("pair 2");
    line.done();
  }
  // The shorter line covers the rest of the longer one; done() leaves a clean line.
  EXPECT_EQ(out.text(), "\rpair 1 of 10\rpair 2      \rpair 2\r      \r");
}

TEST(ProgressLine, OnATerminalUpdatesAreThrottledButNewPhasesShowAtOnce) {
  ProgressText out;
  ProgressLine line(out.file(), true, std::chrono::hours(1));
  line.update("first");
  line.update("second");          // too soon: not shown
  line.update("phase 2", true);   // a new phase: shown at once
  line.clear();                   // a line of output goes here
  line.update("phase 3", true);
  line.done("finished");
  EXPECT_EQ(out.text(), "\rfirst\rphase 2\r       \r\rphase 3\r       \rfinished\n");
}

TEST(ProgressLine, OffATerminalOnlyTheLastTextIsPrinted) {
  ProgressText out;
  {
    ProgressLine line(out.file(), false, std::chrono::milliseconds(0));
    line.update("pair 1 of 10");
    line.done("10 pairs");
    line.update("ignored");
  }
  EXPECT_EQ(out.text(), "10 pairs\n");
  ProgressText quiet;
  { ProgressLine line(quiet.file(), false); line.update("x"); }
  EXPECT_EQ(quiet.text(), "");
}

// Files are read a line at a time (record files, log.txt): each line with where it starts and
// ends, a '\r' before its newline dropped, a line past the limit handed over as too long without
// its text, a last line without a newline as not ended; read_line_at reads one line from where it
// starts.
TEST(FileLines, OneAtATimeWithWhereTheyStart) {
  const std::string path = ::testing::TempDir() + "record_lines.txt";
  constexpr std::size_t kLine = 1000;
  const std::string long_line(kLine + 1, 'x');
  std::ofstream(path, std::ios::binary) << "ttt a b 1-0 a1\r\n\n" << long_line << "\nlast";
  std::vector<FileLine> lines;
  std::vector<std::string> texts;
  for_each_line(path, 1u << 30, kLine, 0, [&](const FileLine& l) {
    lines.push_back(l);
    texts.emplace_back(l.text);
  });
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(texts, (std::vector<std::string>{"ttt a b 1-0 a1", "", "", "last"}));
  EXPECT_EQ(lines[0].offset, 0u);
  EXPECT_EQ(lines[0].next, 16u);
  EXPECT_EQ(lines[1].offset, 16u);
  EXPECT_EQ(lines[2].offset, 17u);
  EXPECT_TRUE(lines[2].too_long);
  EXPECT_FALSE(lines[1].too_long);
  EXPECT_EQ(lines[3].offset, 17u + long_line.size() + 1);
  EXPECT_EQ(lines[3].number, 4u);
  EXPECT_FALSE(lines[3].ended);
  EXPECT_TRUE(lines[0].ended);
  EXPECT_EQ(read_line_at(path, 1u << 30, kLine, 0), std::optional<std::string>("ttt a b 1-0 a1"));
  EXPECT_EQ(read_line_at(path, 1u << 30, kLine, lines[3].offset),
            std::optional<std::string>("last"));
  EXPECT_EQ(read_line_at(path, 1u << 30, kLine, 17), std::nullopt) << "a line too long";
  EXPECT_EQ(read_line_at(path, 1u << 30, kLine, 1u << 29), std::nullopt) << "past the end";
  // Read on from a line's start, as a reader of a growing file does.
  std::vector<std::string> rest;
  for_each_line(path, 1u << 30, kLine, lines[3].offset,
                [&](const FileLine& l) { rest.emplace_back(l.text); });
  EXPECT_EQ(rest, std::vector<std::string>{"last"});
  EXPECT_THROW(for_each_line(path, 100, kLine, 0, [](const FileLine&) {}), FileError)
      << "a file over the limit";
  std::filesystem::remove(path);
}

// A follower's mark tells a file that only grew from one rewritten: in place to the same size,
// behind its first 4 KiB (the last line read is not the same), within them, or shortened.
TEST(FileLines, AFollowersMarkTellsGrowthFromARewrite) {
  const std::string path = ::testing::TempDir() + "followed.txt";
  std::string text(5000, 'h');
  text += "\nlast line\n";
  const std::uint64_t last_line = 5001;
  const auto mark_of = [&](const std::string& content) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
    RegularFileReader file(path, 1u << 20);
    return follow_mark(file, content.size(), last_line);
  };
  const auto follows = [&](const FollowMark& mark, const std::string& now) {
    { std::ofstream(path, std::ios::binary | std::ios::in | std::ios::out) << now; }
    fs::resize_file(path, now.size());
    RegularFileReader file(path, 1u << 20);
    return still_follows(file, mark);
  };
  const FollowMark mark = mark_of(text);
  EXPECT_TRUE(follows(mark, text));
  EXPECT_TRUE(follows(mark, text + "more\n")) << "grew";
  std::string behind = text;
  behind[5003] = 'X';  // the last line read, past the first 4 KiB
  EXPECT_FALSE(follows(mark, behind));
  std::string within = text;
  within[10] = 'X';
  EXPECT_FALSE(follows(mark, within));
  EXPECT_FALSE(follows(mark, text.substr(0, 5005))) << "shorter";
  EXPECT_FALSE(follows(FollowMark{}, text)) << "a mark of nothing read";
  std::filesystem::remove(path);
}

// What a run checks before a session: whether it could write each of its places as it will. The
// flags need root and a file system that keeps them; without them only the plain cases run.
TEST(CannotWrite, SaysWhyAPlaceCannotBeWrittenAsItWillBe) {
  const fs::path dir = fresh("cannot_write");
  fs::create_directories(dir);
  const fs::path file = dir / "table.csv";
  std::ofstream(file) << "a,b\n";
  EXPECT_EQ(cannot_write((dir / "missing").string(), WriteUse::kReplace), "");
  EXPECT_EQ(cannot_write(dir.string(), WriteUse::kFolder), "");
  EXPECT_EQ(cannot_write(file.string(), WriteUse::kAppend), "");
  EXPECT_EQ(cannot_write(file.string(), WriteUse::kReplace), "");
  // A folder that is not one says what is there (it said "Permission denied" to root).
  EXPECT_EQ(cannot_write(file.string(), WriteUse::kFolder), "it is a regular file, not a folder");
  if (::geteuid() != 0) {
    fs::permissions(dir, fs::perms::owner_write, fs::perm_options::remove);
    EXPECT_EQ(cannot_write(dir.string(), WriteUse::kFolder), "Permission denied");
    fs::permissions(dir, fs::perms::owner_write, fs::perm_options::add);
  }
  if (run_shell("chattr +a " + file.string() + " 2>&1").status == 0) {
    EXPECT_EQ(cannot_write(file.string(), WriteUse::kAppend), "") << "appending is what +a allows";
    EXPECT_EQ(cannot_write(file.string(), WriteUse::kReplace), "it is append-only (chattr +a)");
    run_shell("chattr -a " + file.string());
  }
  if (run_shell("chattr +i " + dir.string() + " 2>&1").status == 0) {
    EXPECT_EQ(cannot_write(dir.string(), WriteUse::kFolder), "it is immutable (chattr +i)");
    EXPECT_EQ(cannot_write(file.string(), WriteUse::kAppend), "") << "only the folder is";
    run_shell("chattr -i " + dir.string());
  }
  fs::remove_all(dir);
}

// A curve of more points than a chart shows is averaged over groups of consecutive points, each
// weighted by what it stands for: rows of 1 step at loss 10 and of 99 steps at loss 1 mean 1.09 a
// step (the page once drew 5.5, the mean of the rows); x is weighted the same way.
TEST(BoundedCurve, PointsAreMeansWeightedByWhatEachStandsFor) {
  BoundedCurve<1> weighted, plain;
  for (int i = 0; i < 600; ++i) {
    const double x = 100 * (i / 2) + (i % 2 ? 100 : 1);
    weighted.add(x, {i % 2 ? 1.0 : 10.0}, i % 2 ? 99 : 1);
    plain.add(x, {i % 2 ? 1.0 : 10.0});
  }
  const auto points = weighted.points(300);
  ASSERT_EQ(points.size(), 300u);
  for (const auto& p : points) EXPECT_NEAR(p.y[0], 1.09, 1e-9);
  EXPECT_NEAR(points[0].x, (1 * 1 + 99 * 100) / 100.0, 1e-9);
  EXPECT_DOUBLE_EQ(points[0].weight, 100);
  EXPECT_NEAR(plain.points(300)[0].y[0], 5.5, 1e-9) << "without weights";
  const auto all = weighted.points(600);
  ASSERT_EQ(all.size(), 600u) << "few enough points are drawn as they are";
  EXPECT_DOUBLE_EQ(all[1].x, 100);
  EXPECT_DOUBLE_EQ(all[1].y[0], 1.0);
  EXPECT_EQ(weighted.size(), 600u);
  EXPECT_DOUBLE_EQ(weighted.weight(), 300 * 100);
}

// Past its capacity a curve merges neighbours pairwise: it holds at most `capacity` bins however
// many points come, every drawn point is the mean of a run of consecutive whole points, and the
// totals stay exact.
TEST(BoundedCurve, ManyPointsInBoundedMemoryStayExactMeans) {
  BoundedCurve<2> curve(64);
  const int n = 100'000;  // x = 0..n-1, y = (x, 2x): a point's y is its x, whatever it averages
  for (int i = 0; i < n; ++i) curve.add(i, {1.0 * i, 2.0 * i});
  EXPECT_EQ(curve.size(), static_cast<std::size_t>(n));
  EXPECT_DOUBLE_EQ(curve.weight(), n);
  const auto all = curve.points(1000);
  EXPECT_LE(all.size(), 64u) << "the bins, at most capacity";
  EXPECT_GT(all.size(), 32u) << "merged only when full";
  double weight = 0, next_first = 0;
  for (const auto& p : all) {
    // A run of points first..first+w-1 has its mean at first + (w-1)/2.
    EXPECT_DOUBLE_EQ(p.x, next_first + (p.weight - 1) / 2);
    EXPECT_DOUBLE_EQ(p.y[0], p.x);
    EXPECT_DOUBLE_EQ(p.y[1], 2 * p.x);
    next_first += p.weight;
    weight += p.weight;
  }
  EXPECT_DOUBLE_EQ(weight, n);
  const auto few = curve.points(10);
  EXPECT_LE(few.size(), 10u);
  EXPECT_DOUBLE_EQ(few.front().x, (few.front().weight - 1) / 2);
}

// A point with a number that is not finite, or a weight not above 0, is none; an empty curve
// draws nothing.
TEST(BoundedCurve, PointsThatAreNotNumbersAreLeftOut) {
  BoundedCurve<1> curve;
  EXPECT_TRUE(curve.points(10).empty());
  curve.add(NAN, {1.0});
  curve.add(1, {INFINITY});
  curve.add(2, {1.0}, 0);
  curve.add(3, {1.0}, -1);
  curve.add(4, {1.0}, NAN);
  curve.add(5, {1.0}, INFINITY);
  EXPECT_EQ(curve.size(), 0u);
  curve.add(6, {7.0}, 2);
  const auto points = curve.points(10);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_DOUBLE_EQ(points[0].x, 6);
  EXPECT_DOUBLE_EQ(points[0].y[0], 7);
  EXPECT_DOUBLE_EQ(points[0].weight, 2);
}

}  // namespace
}  // namespace oppidum::util
