#include "util/host.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cctype>
#include <string>

namespace oppidum::util {

bool is_loopback_host(std::string_view host) {
  if (host.find('\0') != std::string_view::npos) return false;  // (inet_pton would stop there)
  std::string name;
  for (char ch : host) name += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (name == "localhost") return true;
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']')
    name = name.substr(1, name.size() - 2);
  in_addr v4{};
  if (::inet_pton(AF_INET, name.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, name.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace oppidum::util
