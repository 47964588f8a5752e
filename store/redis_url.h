// Where a distributed run lives: `redis://[user:password@]host[:port]/RUN`.
//
// RUN names the run inside the server (several runs can share one server); its keys all start
// with `oppidum:RUN:`. The password may instead come from the environment variable
// OPPIDUM_REDIS_PASSWORD (so it stays out of `ps` and shell history); a user without a password
// is an ACL user whose password comes from there too. The password is never logged: to_string()
// masks it.
//
// Security: Debian 12's hiredis has no TLS. A server that is not on a loopback address must be
// protected by a password (requirepass or an ACL user) and reached over a private network, an SSH
// tunnel or a VPN; check_security() refuses a non-loopback URL without a password unless the user
// says --insecure.
#pragma once

#include <stdexcept>
#include <string>

namespace oppidum::store {

struct RedisUrl {
  std::string host;
  int port = 6379;
  std::string user;      // empty: the default user
  std::string password;  // empty: no AUTH
  std::string run;       // [A-Za-z0-9._-]+

  std::string to_string() const;  // the URL with the password masked as ***
  std::string without_password() const;  // the URL with no password at all (for configs)
  bool is_loopback() const;       // util::is_loopback_host of the host
  std::string key(const std::string& name) const { return "oppidum:" + run + ":" + name; }
};

// Parses the URL; `env_password` (normally getenv("OPPIDUM_REDIS_PASSWORD")) fills a missing
// password. Throws std::invalid_argument saying what is wrong, never quoting the password.
RedisUrl parse_redis_url(const std::string& url, const char* env_password);

// Throws std::invalid_argument when `url` is not on loopback and has no password, unless
// `insecure`.
void check_security(const RedisUrl& url, bool insecure);

// A node's set-up of its run's store (the trainer's and the workers' alike): `url` parsed, its
// password the URL's own, else `password`, else OPPIDUM_REDIS_PASSWORD, and then check_security.
// Throws std::invalid_argument as they do.
RedisUrl node_url(const std::string& url, const std::string& password, bool insecure);

}  // namespace oppidum::store
