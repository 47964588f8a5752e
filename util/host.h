// Whether a host name or address is this machine: the one test of the servers' and clients'
// loopback rules (the web server's token and Host checks, a Redis URL's need of a password).
#pragma once

#include <string_view>

namespace oppidum::util {

// True for an IP address in 127.0.0.0/8 (dotted, as inet_pton reads it), ::1 (also in brackets,
// and ::ffff:127.x.y.z) and localhost, in any case; false for every other name, such as
// 127.evil.example.com (a name that merely starts like an address can point anywhere).
bool is_loopback_host(std::string_view host);

}  // namespace oppidum::util
