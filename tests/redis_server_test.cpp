// tests/redis_server.h: a private redis-server on a free loopback port that answers PING, listens
// on 127.0.0.1 only, keeps AOF data across kill9() and restart() on the same port, enforces its
// password, says why when it cannot start, and is gone (process, port, folder) once destroyed.
#include "tests/redis_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/process_util.h"

namespace oppidum::test_util {
namespace {

namespace fs = std::filesystem;

sockaddr_in ipv4(in_addr_t host_order_addr, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(host_order_addr);
  return addr;
}

// 0 when a server could listen on 127.0.0.1:port (as redis-server does, with SO_REUSEADDR), the
// errno otherwise.
int listen_error(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in addr = ipv4(INADDR_LOOPBACK, port);
  int error = 0;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 1) != 0)
    error = errno;
  ::close(fd);
  return error;
}

// 0 when a TCP connection to addr:port is accepted, the errno otherwise.
int connect_error(const sockaddr_in& addr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  timeval tv{};
  tv.tv_sec = 2;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const int error =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

// The local addresses ("0100007F" style hex, as /proc/net/tcp{,6} write them) of the TCP sockets
// listening on `port` in this network namespace.
std::vector<std::string> listening_addresses(int port) {
  char port_hex[8];
  std::snprintf(port_hex, sizeof port_hex, "%04X", port);
  std::vector<std::string> found;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::istringstream in(read_file(table));
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      const auto colon = local.rfind(':');
      if (state == "0A" && colon != std::string::npos && local.substr(colon + 1) == port_hex)
        found.push_back(local.substr(0, colon));
    }
  }
  return found;
}

// An IPv4 address of this machine outside 127.0.0.0/8, if it has one (host order).
std::optional<in_addr_t> non_loopback_ipv4() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return std::nullopt;
  std::optional<in_addr_t> found;
  for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    const in_addr_t a = ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
    if ((a >> 24) != 127) found = a;
  }
  ::freeifaddrs(list);
  return found;
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

std::string bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

TEST(RedisServer, StartsOnAFreeLoopbackPortAndAnswersPing) {
  RedisServer server;
  EXPECT_TRUE(server.ping());
  EXPECT_GT(server.port(), 0);
  EXPECT_GT(server.pid(), 0);
  EXPECT_EQ(server.url("r1"), "redis://127.0.0.1:" + std::to_string(server.port()) + "/r1");
  EXPECT_TRUE(fs::is_directory(server.dir()));
  EXPECT_NE(server.log().find("Ready to accept connections"), std::string::npos) << server.log();
  EXPECT_EQ(server.command({"SET", "k", "v"}), "+OK\r\n");
  EXPECT_EQ(server.command({"GET", "k"}), bulk("v"));
  EXPECT_EQ(server.command({"GET", "missing"}), "$-1\r\n");
  EXPECT_EQ(server.command({"CONFIG", "GET", "appendonly"}),
            "*2\r\n" + bulk("appendonly") + bulk("yes"));
  EXPECT_EQ(server.command({"CONFIG", "GET", "save"}), "*2\r\n" + bulk("save") + bulk(""));
}

TEST(RedisServer, TwoServersGetTheirOwnPortsAndFolders) {
  RedisServer a, b;
  EXPECT_NE(a.port(), b.port());
  EXPECT_NE(a.dir(), b.dir());
  EXPECT_EQ(a.command({"SET", "k", "a"}), "+OK\r\n");
  EXPECT_EQ(b.command({"GET", "k"}), "$-1\r\n");
}

TEST(RedisServer, HoldsItsPortOnLoopbackOnly) {
  RedisServer server;
  EXPECT_EQ(listen_error(server.port()), EADDRINUSE);
  EXPECT_EQ(server.command({"CONFIG", "GET", "bind"}), "*2\r\n" + bulk("bind") + bulk("127.0.0.1"));
  EXPECT_EQ(server.command({"CONFIG", "GET", "protected-mode"}),
            "*2\r\n" + bulk("protected-mode") + bulk("yes"));
  // One listening socket, on 127.0.0.1 (nothing on IPv6, nothing on a wildcard address).
  EXPECT_EQ(listening_addresses(server.port()), std::vector<std::string>{"0100007F"});
  if (const auto other = non_loopback_ipv4()) {
    EXPECT_EQ(connect_error(ipv4(*other, server.port())), ECONNREFUSED);
  }
}

TEST(RedisServer, AppendOnlyDataSurvivesKill9AndRestartOnTheSamePort) {
  RedisServer server;
  const int port = server.port();
  const pid_t first = server.pid();
  ASSERT_EQ(server.command({"SET", "oppidum:r:key", "kept"}), "+OK\r\n");
  ASSERT_EQ(server.command({"RPUSH", "oppidum:r:list", "a", "b"}), ":2\r\n");
  // appendfsync everysec may postpone the write while a background fsync runs: wait until the AOF
  // has it (what survives a SIGKILL is what was written, fsynced or not).
  ASSERT_TRUE(server.wait_until_aof_written());

  server.kill9();
  EXPECT_TRUE(process_gone(first));
  EXPECT_EQ(server.pid(), -1);
  EXPECT_FALSE(server.ping());
  EXPECT_EQ(listen_error(port), 0);

  server.restart();
  EXPECT_EQ(server.port(), port);
  EXPECT_NE(server.pid(), first);
  EXPECT_TRUE(server.ping());
  EXPECT_EQ(server.command({"GET", "oppidum:r:key"}), bulk("kept"));
  EXPECT_EQ(server.command({"LRANGE", "oppidum:r:list", "0", "-1"}),
            "*2\r\n" + bulk("a") + bulk("b"));
  EXPECT_NE(server.log().find("DB loaded from append only file"), std::string::npos)
      << server.log();

  // A restart of a running server stops it gracefully first; the data stays too.
  ASSERT_EQ(server.command({"SET", "oppidum:r:second", "2"}), "+OK\r\n");
  server.restart();
  EXPECT_EQ(server.command({"GET", "oppidum:r:second"}), bulk("2"));
  EXPECT_EQ(server.command({"GET", "oppidum:r:key"}), bulk("kept"));
}

TEST(RedisServer, WithoutAppendOnlyARestartStartsEmpty) {
  RedisServerOptions options;
  options.append_only = false;
  RedisServer server(options);
  EXPECT_EQ(server.command({"CONFIG", "GET", "appendonly"}),
            "*2\r\n" + bulk("appendonly") + bulk("no"));
  ASSERT_EQ(server.command({"SET", "k", "v"}), "+OK\r\n");
  EXPECT_THROW(server.wait_until_aof_written(), std::logic_error);
  server.kill9();
  server.restart();
  EXPECT_EQ(server.command({"GET", "k"}), "$-1\r\n");
}

TEST(RedisServer, PasswordIsRequired) {
  RedisServerOptions options;
  options.password = "s3cret-pw";
  RedisServer server(options);
  EXPECT_EQ(server.url("r1"),
            "redis://:s3cret-pw@127.0.0.1:" + std::to_string(server.port()) + "/r1");
  const std::string refused = server.command({"SET", "k", "v"}, /*authenticate=*/false);
  EXPECT_EQ(refused.rfind("-NOAUTH", 0), 0u) << refused;
  EXPECT_EQ(server.command({"AUTH", "wrong"}, false).rfind("-WRONGPASS", 0), 0u);
  EXPECT_EQ(server.command({"SET", "k", "v"}), "+OK\r\n");
  EXPECT_EQ(server.command({"GET", "k"}), bulk("v"));
  EXPECT_TRUE(server.ping());
  // kill9 and restart keep the password.
  ASSERT_TRUE(server.wait_until_aof_written());
  server.kill9();
  server.restart();
  EXPECT_EQ(server.command({"GET", "k"}, false).rfind("-NOAUTH", 0), 0u);
  EXPECT_EQ(server.command({"GET", "k"}), bulk("v"));
}

TEST(RedisServer, RejectsAPasswordThatDoesNotFitAUrl) {
  RedisServerOptions options;
  options.password = "a/b@c";
  EXPECT_THROW(RedisServer{options}, std::logic_error);
}

TEST(RedisServer, AServerThatCannotStartSaysWhy) {
  RedisServerOptions options;
  options.extra_args = {"--no-such-directive", "1"};
  const auto start = std::chrono::steady_clock::now();
  try {
    RedisServer server(options);
    FAIL() << "it started";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("exited at start"), std::string::npos) << message;
    EXPECT_NE(message.find("no-such-directive"), std::string::npos) << message;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RedisServer, DestroyedServerLeavesNoProcessPortOrFolder) {
  pid_t pid = -1;
  int port = 0;
  std::string dir;
  try {
    RedisServer server;
    pid = server.pid();
    port = server.port();
    dir = server.dir();
    ASSERT_TRUE(server.ping());
    ASSERT_EQ(server.command({"SET", "k", "v"}), "+OK\r\n");
    throw std::runtime_error("a failing test");  // the destructor runs during unwinding
  } catch (const std::runtime_error&) {
  }
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(process_gone(pid));
  EXPECT_EQ(connect_error(ipv4(INADDR_LOOPBACK, port)), ECONNREFUSED);
  EXPECT_EQ(listen_error(port), 0);
  EXPECT_TRUE(listening_addresses(port).empty());
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace oppidum::test_util
