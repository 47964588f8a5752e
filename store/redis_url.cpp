#include "store/redis_url.h"

#include <cctype>
#include <cstdlib>

#include "games/quote.h"
#include "util/host.h"
#include "util/text.h"

namespace oppidum::store {
namespace {

constexpr const char* kExample = "redis://[user:password@]host[:port]/RUN";

bool valid_run_name(const std::string& run) {
  if (run.empty() || run.size() > 100) return false;
  for (char c : run)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return false;
  return true;
}

}  // namespace

std::string RedisUrl::to_string() const {
  std::string auth;
  if (!user.empty() || !password.empty()) auth = user + (password.empty() ? "" : ":***") + "@";
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return "redis://" + auth + h + ":" + std::to_string(port) + "/" + run;
}

std::string RedisUrl::without_password() const {
  RedisUrl bare = *this;
  bare.password.clear();
  return bare.to_string();
}

bool RedisUrl::is_loopback() const { return util::is_loopback_host(host); }

RedisUrl parse_redis_url(const std::string& text, const char* env_password) {
  const std::string scheme = "redis://";
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("store URL: " + what + " (expected " + kExample + ")");
  };
  if (text.rfind(scheme, 0) != 0) fail("it does not start with redis://");
  std::string rest = text.substr(scheme.size());
  RedisUrl url;
  const auto slash = rest.find('/');
  if (slash == std::string::npos) fail("no /RUN after the server");
  url.run = rest.substr(slash + 1);
  rest.resize(slash);
  if (!valid_run_name(url.run))
    fail("the run name must be 1 to 100 letters, digits, '.', '_' or '-'");
  const auto at = rest.rfind('@');
  if (at != std::string::npos) {
    const std::string auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const auto colon = auth.find(':');
    url.user = auth.substr(0, colon);
    if (colon != std::string::npos) url.password = auth.substr(colon + 1);
  }
  if (url.password.empty() && env_password != nullptr) url.password = env_password;
  if (!url.user.empty() && url.password.empty())
    // (The user's name is not repeated: redis://PASSWORD@HOST, a password without its colon,
    // would print the password.)
    fail("the URL names a user but no password (give it in the URL or in "
         "OPPIDUM_REDIS_PASSWORD; a password alone is written redis://:PASSWORD@HOST)");
  std::string port;
  if (!rest.empty() && rest.front() == '[') {  // [IPv6]:port
    const auto close = rest.find(']');
    if (close == std::string::npos) fail("an unclosed [ in the host");
    url.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') fail("junk after the host");
      port = rest.substr(close + 2);
      if (port.empty()) fail("no port after the ':'");
    }
  } else {
    const auto colon = rest.rfind(':');
    url.host = rest.substr(0, colon);
    if (colon != std::string::npos) {
      port = rest.substr(colon + 1);
      if (port.empty()) fail("no port after the ':'");
    }
  }
  if (url.host.empty()) fail("no host");
  // A host name or an address: letters, digits, '.', '-', '_' (container names) and ':' in an
  // IPv6 address.
  const bool bracketed = !rest.empty() && rest.front() == '[';
  for (const char c : url.host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_' &&
        !(bracketed && c == ':'))
      fail("the host may hold only letters, digits, '.', '-' and '_' (an IPv6 address goes in "
           "[])");
  if (!port.empty()) {
    int p = 0;
    bool out_of_range = false;
    if (port.size() > 5 || !util::parse_decimal(port, p, out_of_range) || p < 1 || p > 65535)
      fail("the port must be 1 to 65535");
    url.port = p;
  }
  return url;
}

void check_security(const RedisUrl& url, bool insecure) {
  if (url.is_loopback() || !url.password.empty() || insecure) return;
  throw std::invalid_argument(
      quote_input(url.to_string(), 200) +
      " is not on this machine and has no password: give one in the URL or in "
      "OPPIDUM_REDIS_PASSWORD (and protect the server with requirepass or an ACL user), or pass "
      "--insecure on a network you trust (docs/DISTRIBUTED.md, \"Security\")");
}

RedisUrl node_url(const std::string& url, const std::string& password, bool insecure) {
  const RedisUrl parsed = parse_redis_url(
      url, password.empty() ? std::getenv("OPPIDUM_REDIS_PASSWORD") : password.c_str());
  check_security(parsed, insecure);
  return parsed;
}

}  // namespace oppidum::store
