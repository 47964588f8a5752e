#include "web/server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <regex>
#include <set>
#include <stdexcept>
#include <vector>

#include "games/game.h"
#include "games/quote.h"
#include "model/inference_server.h"
#include "trainer/run_folder.h"
#include "util/host.h"
#include "web/arena_reader.h"
#include "web/assets.h"
#include "web/board_json.h"
#include "web/errors.h"
#include "web/guarded_server.h"
#include "web/run_reader.h"

namespace oppidum::web {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

constexpr const char* kCookie = "oppidum_token";

std::string generate_token() {
  std::random_device device;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (std::size_t i = 0; i < kGeneratedTokenLength; ++i) token += kHex[device() % 16];
  return token;
}

// Compares in time independent of where the strings differ.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// A run's name in the API: its folder name, made unique and URL-safe.
std::string run_name(const fs::path& dir, const std::vector<std::string>& taken) {
  std::string base = trainer::RunPaths{dir}.name();
  static const std::regex kSafe("[A-Za-z0-9._-]{1,64}");
  if (!std::regex_match(base, kSafe) || base == "." || base == "..") base = "run";
  std::string name = base;
  for (int n = 2; std::find(taken.begin(), taken.end(), name) != taken.end(); ++n)
    name = base + "-" + std::to_string(n);
  return name;
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // Strings from files or requests may hold invalid UTF-8; it is replaced, never a failed dump.
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  res.set_header("Cache-Control", "no-store");
  // An answer echoes text from files and requests: no browser may take it for a page.
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  res.set_header("Referrer-Policy", "no-referrer");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, json{{"error", message}});
}

// A query parameter's value ("" when it is not given); given twice, a BadRequest (which one
// counts would be a guess: the first was taken, without a word).
std::string text_param(const httplib::Request& req, const char* key) {
  if (req.get_param_value_count(key) > 1)
    throw BadRequest(std::string(key) + " is given " + std::to_string(req.get_param_value_count(key)) +
                     " times; give it once");
  return req.get_param_value(key);
}

int int_param(const httplib::Request& req, const char* key, int fallback, int min, int max) {
  if (!req.has_param(key)) return fallback;
  const std::string text = text_param(req, key);
  // strtol would skip spaces and a '+', and stop at a NUL: digits (and a '-') only.
  if (text.find_first_not_of("-0123456789") != std::string::npos)
    throw BadRequest(std::string(key) + " must be a whole number in " + std::to_string(min) +
                     ".." + std::to_string(max) + ", got \"" + quote_input(text) + "\"");
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end == nullptr || *end != '\0' || errno != 0 || v < min || v > max)
    throw BadRequest(std::string(key) + " must be a whole number in " + std::to_string(min) +
                     ".." + std::to_string(max) + ", got \"" + quote_input(text) + "\"");
  return static_cast<int>(v);
}

GameFilter filter_of(const httplib::Request& req) {
  GameFilter f;
  f.page = int_param(req, "page", 0, 0, 1 << 30);
  f.per_page = int_param(req, "per_page", kGamesPerPage, 1, kMaxGamesPerPage);
  if (req.has_param("generation") && !req.get_param_value("generation").empty())
    f.generation = int_param(req, "generation", 0, -1, 1 << 30);
  if (const std::string r = text_param(req, "result"); !r.empty()) {
    if (r == "1-0") f.result = 1;
    else if (r == "0-1") f.result = -1;
    else if (r == "draw" || r == "1/2-1/2") f.result = 0;
    else throw BadRequest("result must be 1-0, 0-1 or draw (1/2-1/2), got \"" + quote_input(r) + "\"");
  }
  f.min_plies = int_param(req, "min_plies", 0, 0, 1 << 20);
  f.max_plies = int_param(req, "max_plies", 1 << 20, 0, 1 << 20);
  return f;
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// What is wrong with a request's head as the client sent it (its request line and header lines,
// Connection::head), or "": a header line without a colon, with a name that is no token (a blank
// before the colon makes another header of "Host : evil"), folded onto the line before, or holding
// a control character; a percent sign in Host, Content-Length or Transfer-Encoding (httplib
// decodes header values: "Content-Length: %31%33" read as 13, "Host: localhost%00.evil" as
// localhost); an HTTP/1.1 request without a Host (RFC 9112, 3.2), an empty Host, Content-Length or
// Transfer-Encoding. A proxy in
// front of the server could frame or route such a request otherwise than the server reads it.
std::string head_problem(const std::string& head) {
  // httplib passes over a line ended by a bare LF: a proxy would end the line (or the head) there.
  for (std::size_t k = head.find('\n'); k != std::string::npos; k = head.find('\n', k + 1))
    if (k == 0 || head[k - 1] != '\r') return "a line ended by a bare LF (lines end with CRLF)";
  std::size_t at = head.find('\n');
  std::string request_line = head.substr(0, at);
  if (!request_line.empty() && request_line.back() == '\r') request_line.pop_back();
  bool host = false;
  while (at != std::string::npos && at + 1 < head.size()) {
    const std::size_t from = at + 1;
    at = head.find('\n', from);
    std::string line = head.substr(from, at == std::string::npos ? std::string::npos : at - from);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == ' ' || line[0] == '\t') return "a header line folded onto the one before";
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) return "a header line without a name and a colon";
    const std::string name = line.substr(0, colon);
    for (const char c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) &&
          std::string("!#$%&'*+-.^_`|~").find(c) == std::string::npos)
        return "the header name \"" + quote_input(name, 60) +
               "\" holds a character no header name has (a blank before the colon?)";
    for (std::size_t k = colon + 1; k < line.size(); ++k) {
      const auto u = static_cast<unsigned char>(line[k]);
      if ((u < 0x20 && u != '\t') || u == 0x7f)
        return "the header " + quote_input(name, 60) + " holds a control character";
    }
    const std::string lower = lowercase(name);
    if ((lower == "host" || lower == "content-length" || lower == "transfer-encoding") &&
        line.find('%', colon) != std::string::npos)
      return "the header " + name + " holds a percent sign (no encoding is decoded here)";
    // httplib drops a header with no value: a Host that names nothing would pass as none, and so
    // would an empty Transfer-Encoding or Content-Length beside the other (a proxy may frame the
    // request by either).
    if ((lower == "host" || lower == "content-length" || lower == "transfer-encoding") &&
        line.find_first_not_of(" \t", colon + 1) == std::string::npos)
      return "the " + std::string(lower == "host" ? "Host" : name) + " header is empty";
    host = host || lower == "host";
  }
  if (!host && request_line.size() >= 8 &&
      request_line.compare(request_line.size() - 8, 8, "HTTP/1.1") == 0)
    return "an HTTP/1.1 request needs a Host header";
  return "";
}

// The elements of a list header (RFC 9110, 5.6.1: comma-separated, over any number of header
// lines), lowercased, without the blanks around them; an element keeps its parameters
// ("gzip;q=0.5").
std::vector<std::string> list_elements(const httplib::Request& req, const char* name) {
  std::vector<std::string> out;
  const std::size_t count = req.get_header_value_count(name);
  for (std::size_t k = 0; k < count; ++k) {
    const std::string value = lowercase(req.get_header_value(name, k));
    std::size_t from = 0;
    while (from <= value.size()) {
      std::size_t comma = value.find(',', from);
      if (comma == std::string::npos) comma = value.size();
      const std::size_t first = value.find_first_not_of(" \t", from);
      if (first < comma)
        out.push_back(value.substr(first, value.find_last_not_of(" \t", comma - 1) + 1 - first));
      from = comma + 1;
    }
  }
  return out;
}

// Whether a request's Connection headers name the option "close" among others (RFC 9110, 7.6.1;
// httplib closes only on a whole value "close").
bool asks_to_close(const httplib::Request& req) {
  const std::vector<std::string> options = list_elements(req, "Connection");
  return std::find(options.begin(), options.end(), "close") != options.end();
}

// Whether a request's Accept-Encoding takes gzip (RFC 9110, 12.5.3: "gzip" or "x-gzip", not with
// q=0).
bool accepts_gzip(const httplib::Request& req) {
  for (const std::string& element : list_elements(req, "Accept-Encoding")) {
    const std::size_t semicolon = element.find(';');
    std::string coding = element.substr(0, semicolon);
    coding.erase(coding.find_last_not_of(" \t") + 1);
    if (coding != "gzip" && coding != "x-gzip") continue;
    const std::size_t q = element.find("q=", semicolon == std::string::npos ? 0 : semicolon);
    if (q == std::string::npos || std::strtod(element.c_str() + q + 2, nullptr) > 0) return true;
  }
  return false;
}

// The host name of a Host header: "name", "name:port", "[v6]" or "[v6]:port"; the name lowercased,
// a bracketed address without its brackets. Empty when the header is malformed.
std::string host_of(const std::string& header) {
  if (!header.empty() && header.front() == '[') {
    const std::size_t close = header.find(']');
    if (close == std::string::npos) return "";
    const std::string rest = header.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return "";
    return lowercase(header.substr(1, close - 1));
  }
  const std::size_t colon = header.find(':');
  if (colon != std::string::npos && header.find(':', colon + 1) != std::string::npos) return "";
  return lowercase(header.substr(0, colon));
}

bool token_characters_only(const std::string& token) {
  return std::all_of(token.begin(), token.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '~' ||
           c == '-';
  });
}

// Whether any token cookie of the request, in any of its Cookie lines, is `token`: a cookie of
// the same name planted by another site (with a longer path, it comes first) locks nobody out.
bool cookie_holds(const httplib::Request& req, const std::string& token) {
  const std::string key = std::string(kCookie) + "=";
  bool found = false;
  for (std::size_t line = 0; line < req.get_header_value_count("Cookie"); ++line) {
    const std::string cookies = req.get_header_value("Cookie", line);
    for (std::size_t at = 0; at < cookies.size();) {
      std::size_t end = cookies.find(';', at);
      if (end == std::string::npos) end = cookies.size();
      std::string part = cookies.substr(at, end - at);
      part.erase(0, part.find_first_not_of(' '));
      if (part.compare(0, key.size(), key) == 0 && same_secret(part.substr(key.size()), token))
        found = true;
      at = end + 1;
    }
  }
  return found;
}

}  // namespace

struct WebServer::Impl {
  explicit Impl(ServerOptions o) : options(std::move(o)), http(options.connections) {}

  ServerOptions options;
  std::vector<std::unique_ptr<RunReader>> runs;
  std::vector<std::unique_ptr<ArenaReader>> arena;
  RatingLadders ratings;  // the last ladders fitted, kept while their results are unchanged
  std::unique_ptr<GameService> games;
  GuardedServer http;
  std::thread thread;
  std::atomic<bool> serving{false};  // serve() is running
  int port = -1;

  RunReader& run(const std::string& name) {
    std::string names;
    for (const auto& r : runs) {
      if (r->name() == name) return *r;
      names += (names.empty() ? "" : ", ") + r->name();
    }
    throw NotFound("no run named \"" + quote_input(name) + "\"; the runs served are: " +
                   (names.empty() ? "none (start with --run DIR)" : names));
  }

  ArenaReader& arena_file(const std::string& name) {
    for (const auto& a : arena)
      if (a->name() == name) return *a;
    throw NotFound("no arena record file named \"" + quote_input(name) + "\"");
  }

  // "RUN/NAME" -> the checkpoint file.
  fs::path checkpoint(const std::string& name) {
    const std::size_t slash = name.find('/');
    if (slash == std::string::npos || name.find('/', slash + 1) != std::string::npos)
      throw BadRequest("checkpoint \"" + quote_input(name) +
                       "\": give RUN/NAME, e.g. mg-small/best or mg-small/gen-0003");
    return run(name.substr(0, slash)).checkpoint_path(name.substr(slash + 1));
  }

  // Runs a handler, turning its exceptions into JSON errors.
  template <typename F>
  void guarded(httplib::Response& res, F&& f) {
    try {
      send_json(res, 200, f());
    } catch (const BadRequest& e) {
      send_error(res, 400, e.what());
    } catch (const json::exception& e) {
      send_error(res, 400, "bad JSON: " + quote_input(e.what(), 300));
    } catch (const NotFound& e) {
      send_error(res, 404, e.what());
    } catch (const TooLarge& e) {
      send_error(res, 413, e.what());
    } catch (const TimedOut& e) {
      send_error(res, 408, e.what());
    } catch (const Busy& e) {
      send_error(res, 503, e.what());
    } catch (const Cancelled& e) {
      send_error(res, 503, e.what());
    } catch (const model::NonFiniteOutputs& e) {
      send_error(res, 422, e.what());  // the network the request named computes nothing there
    } catch (const std::exception& e) {
      send_error(res, 500, e.what());
    }
  }

  // Answers a request that breaks the framing rules and closes its connection: its body (if any)
  // is left unread, so what follows on the connection is not a request.
  static httplib::Server::HandlerResponse refuse(httplib::Response& res, int status,
                                                const std::string& message) {
    send_error(res, status, message);
    if (Connection* connection = GuardedServer::current_connection())
      connection->close_after_answer();
    return httplib::Server::HandlerResponse::Handled;
  }

  // How a request may carry a body (server.h, "Security"), checked before any of it is read: POST
  // bodies with a Content-Length of at most kMaxBodyBytes, never chunked (httplib's chunk reader
  // takes sizes and ends a strict reader would refuse: a proxy in front could frame the body
  // otherwise, RFC 9112, 11.2) nor compressed; other requests carry none.
  static httplib::Server::HandlerResponse check_framing(const httplib::Request& req,
                                                        httplib::Response& res) {
    const bool post = req.method == "POST";
    const std::size_t lengths = req.get_header_value_count("Content-Length");
    const bool chunked = req.has_header("Transfer-Encoding");
    if (lengths > 1) return refuse(res, 400, "the request has more than one Content-Length");
    // Only the first would be read; the others would be ignored codings.
    if (req.get_header_value_count("Transfer-Encoding") > 1)
      return refuse(res, 400, "the request has more than one Transfer-Encoding");
    // RFC 9112, 3.2: more than one Host is a bad request (which one the Host check would read is
    // anybody's guess).
    if (req.get_header_value_count("Host") > 1)
      return refuse(res, 400, "the request has more than one Host");
    if (chunked && lengths > 0)
      return refuse(res, 400, "the request has both Content-Length and Transfer-Encoding");
    if (chunked) {
      if (!post) return refuse(res, 400, quote_input(req.method) + " requests carry no body");
      return refuse(res, 411, "a POST body needs a Content-Length; a Transfer-Encoding (\"" +
                                  quote_input(req.get_header_value("Transfer-Encoding")) +
                                  "\") is not read here");
    }
    if (lengths == 1) {
      const std::string text = req.get_header_value("Content-Length");
      static const std::regex kDigits("[0-9]{1,18}");
      if (!std::regex_match(text, kDigits))
        return refuse(res, 400, "Content-Length must be a whole number of bytes, got \"" +
                                    quote_input(text) + "\"");
      const unsigned long long length = std::strtoull(text.c_str(), nullptr, 10);
      if (length > kMaxBodyBytes)
        return refuse(res, 413, "the request body is " + text + " bytes; at most " +
                                    std::to_string(kMaxBodyBytes) + " (" +
                                    std::to_string(kMaxBodyBytes >> 10) + " KiB)");
      if (!post && length > 0)
        return refuse(res, 400, quote_input(req.method) + " requests carry no body");
    } else if (post) {  // (chunked was refused above)
      return refuse(res, 411, "a POST body needs a Content-Length");
    }
    const std::string encoding = req.get_header_value("Content-Encoding");
    if (!encoding.empty() && lowercase(encoding) != "identity")
      return refuse(res, 415, "compressed bodies (Content-Encoding: " + quote_input(encoding) +
                                  ") are not accepted");
    return httplib::Server::HandlerResponse::Unhandled;
  }

  // The framing, Host and token checks of every request (server.h, "Security").
  httplib::Server::HandlerResponse check_request(const httplib::Request& req,
                                                 httplib::Response& res) {
    // Answers are whole: httplib would answer a Range header with a copy of the answer per range
    // (thousands of them, built in memory). RFC 9110 lets a server ignore Range, and httplib reads
    // the ranges off the request it owns (not const) before routing, so they are dropped here.
    const_cast<httplib::Request&>(req).ranges.clear();
    // Answers go as gzip or as they are, never Brotli: httplib compresses at Brotli's best (and
    // slowest) quality: 40 to 100 ms of CPU for an answer of 27 to 46 KB that a browser asks for
    // every 2 s (gzip: about 1 ms), on a machine that trains meanwhile. httplib reads the header
    // off the request it owns, after this.
    {
      const bool gzip = accepts_gzip(req);
      auto& headers = const_cast<httplib::Request&>(req).headers;
      headers.erase("Accept-Encoding");
      if (gzip) headers.emplace("Accept-Encoding", "gzip");
    }
    if (Connection* connection = GuardedServer::current_connection()) {
      if (asks_to_close(req)) connection->close_after_answer();
      if (const std::string why = head_problem(connection->head()); !why.empty())
        return refuse(res, 400, why);
    }
    if (req.method != "GET" && req.method != "HEAD" && req.method != "POST") {
      res.set_header("Allow", "GET, HEAD, POST");
      return refuse(res, 405, quote_input(req.method) + " is not served here (GET, HEAD, POST)");
    }
    if (check_framing(req, res) == httplib::Server::HandlerResponse::Handled)
      return httplib::Server::HandlerResponse::Handled;
    for (const char c : req.get_header_value("Host"))
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        return refuse(res, 400, "the Host holds a control character");
    if (options.token.empty()) {
      const std::string header = req.get_header_value("Host");
      const std::string host = host_of(header);
      if (!header.empty() && !util::is_loopback_host(host) && host != lowercase(options.host)) {
        send_error(res, 403, "this server answers requests for 127.0.0.1 or localhost only, not "
                             "for Host \"" + quote_input(header) + "\"");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    }
    const std::string auth = req.get_header_value("Authorization");
    // The scheme's name is case-insensitive (RFC 9110, 11.1).
    const std::string bearer = lowercase(auth.substr(0, 7)) == "bearer " ? auth.substr(7) : "";
    if (same_secret(bearer, options.token) || cookie_holds(req, options.token))
      return httplib::Server::HandlerResponse::Unhandled;
    if (req.has_param("token") && same_secret(req.get_param_value("token"), options.token)) {
      res.set_header("Set-Cookie", std::string(kCookie) + "=" + options.token +
                                       "; Path=/; HttpOnly; SameSite=Strict");
      return httplib::Server::HandlerResponse::Unhandled;
    }
    send_error(res, 401, "this server needs its token: open the URL it printed (with ?token=...) "
                         "or send Authorization: Bearer TOKEN");
    return httplib::Server::HandlerResponse::Handled;
  }

  // The body of a POST (of a Content-Length checked above), refused should it exceed
  // kMaxBodyBytes all the same, so that no more than that is ever held.
  static std::string read_body(const httplib::ContentReader& read) {
    std::string body;
    bool too_large = false;
    const bool complete = read([&](const char* data, std::size_t size) {
      if (body.size() + size > kMaxBodyBytes) {
        too_large = true;
        return false;
      }
      body.append(data, size);
      return true;
    });
    if (complete) return body;
    Connection* connection = GuardedServer::current_connection();
    if (connection != nullptr) connection->close_after_answer();
    if (too_large)
      throw TooLarge("the request body is over " + std::to_string(kMaxBodyBytes) + " bytes (" +
                     std::to_string(kMaxBodyBytes >> 10) + " KiB)");
    if (connection != nullptr) {
      // What the connection ran into (its deadline, its size), as the request line's own failures
      // are answered.
      if (connection->failure() == Connection::Failure::kTimeout)
        throw TimedOut(connection->failure_message());
      if (connection->failure() == Connection::Failure::kTooLarge)
        throw TooLarge(connection->failure_message());
    }
    throw BadRequest("the request body could not be read: it was cut off");
  }

  // A search stops once the server stops or the client of this request has gone.
  StopCheck stop_check() {
    Connection* connection = GuardedServer::current_connection();
    return [this, connection] {
      return http.stopping() || (connection != nullptr && connection->client_gone());
    };
  }

  // A body's JSON with each object's keys named once: which of two values a reader takes is the
  // reader's choice (this one took the last, silently), so a key named twice is refused.
  static json parse_body(const std::string& body) {
    std::vector<std::set<std::string>> keys;  // of each object open
    return json::parse(body, [&keys](int, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::object_start) {
        keys.emplace_back();
      } else if (event == json::parse_event_t::object_end) {
        keys.pop_back();
      } else if (event == json::parse_event_t::key && !keys.empty() &&
                 !keys.back().insert(parsed.get<std::string>()).second) {
        throw BadRequest("the body names the key \"" + quote_input(parsed.get<std::string>(), 40) +
                         "\" twice in one object");
      }
      return true;
    });
  }

  using Call = std::function<json(const json& request, const StopCheck& stop)>;
  // A method a route does not serve: 405 with the ones it does (RFC 9110, 15.5.6), not 404.
  static void wrong_method(const httplib::Request& req, httplib::Response& res,
                           const char* allow) {
    res.set_header("Allow", allow);
    send_error(res, 405, quote_input(req.method) + " " + quote_input(req.path) +
                             " is not served; this path answers " + allow);
  }

  // A GET route (HEAD included), and a 405 for a POST to its path.
  void get(const std::string& path, httplib::Server::Handler handler) {
    http.Get(path, std::move(handler));
    http.Post(path, [](const httplib::Request& req, httplib::Response& res) {
      wrong_method(req, res, "GET, HEAD");
    });
  }

  void post(const char* path, Call call) {
    http.Get(path, [](const httplib::Request& req, httplib::Response& res) {
      wrong_method(req, res, "POST");
    });
    http.Post(path, [this, call](const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& read) {
      guarded(res, [&] {
        const std::string body = read_body(read);
        // The media type, in any case, before its parameters (RFC 9110, 8.3.1).
        std::string type = lowercase(req.get_header_value("Content-Type"));
        type = type.substr(0, type.find(';'));
        type.erase(type.find_last_not_of(" \t") + 1);
        if (type != "application/json")
          throw BadRequest("POST bodies must be JSON (Content-Type: application/json)");
        // The JSON reader would stop at a NUL byte and take what follows for nothing.
        if (const std::size_t nul = body.find('\0'); nul != std::string::npos)
          throw BadRequest("the body holds a NUL byte at offset " + std::to_string(nul) +
                           "; JSON has none");
        return call(parse_body(body), stop_check());
      });
    });
  }

  void routes() {
    http.set_payload_max_length(kMaxBodyBytes);
    // Server faults go to the terminal too (bad requests and refusals are the page's business).
    http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      if (res.status == 500)
        std::cerr << "oppidum serve: " << res.status << " for " << quote_input(req.method) << " "
                  << quote_input(req.path) << ": " << quote_input(res.body, 300) << std::endl;
    });
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      return check_request(req, res);
    });
    // A client that waits for "100 Continue" before sending its body hears the refusal instead
    // when the request would be refused anyway (a body too large, no token, ...).
    http.set_expect_100_continue_handler([this](const httplib::Request& req,
                                                httplib::Response& res) {
      if (check_request(req, res) == httplib::Server::HandlerResponse::Handled) {
        if (Connection* connection = GuardedServer::current_connection())
          connection->close_after_answer();
        return res.status;
      }
      return 100;
    });
    // An exception that escapes a handler (none should) is a JSON 500 with its message.
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
          std::string message = "unknown error";
          try {
            std::rethrow_exception(error);
          } catch (const std::exception& e) {
            message = e.what();
          } catch (...) {
          }
          send_error(res, 500, message);
        });
    for (const Asset& asset : page_assets()) {
      const std::string path = asset.path;
      auto handler = [asset](const httplib::Request&, httplib::Response& res) {
        res.set_content(asset.data, asset.size, asset.content_type);
        res.set_header("Cache-Control", "no-cache");
        // No other site may frame the page (clicks played through it), and no link ever takes
        // the address (which may hold ?token=) to another site.
        res.set_header("Content-Security-Policy",
                       "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                       "frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
        res.set_header("X-Frame-Options", "DENY");
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_header("Referrer-Policy", "no-referrer");
      };
      get(path, handler);
      if (path == "/index.html") get("/", handler);
    }
    get("/api/info", [this](const httplib::Request&, httplib::Response& res) {
      guarded(res, [&] {
        json runs_json = json::array();
        for (const auto& r : runs) runs_json.push_back({{"name", r->name()}, {"game", r->game()}});
        const Limits& l = games->limits();
        json arena_json = json::array();
        for (const auto& a : arena) {
          try {
            arena_json.push_back(a->info());
          } catch (const std::exception& e) {
            arena_json.push_back({{"name", a->name()}, {"error", e.what()}});
          }
        }
        return json{{"runs", runs_json},
                    {"arena", arena_json},
                    {"limits",
                     {{"max_searches", l.max_searches},
                      {"search_ms", l.search_ms},
                      {"max_simulations", l.max_simulations},
                      {"max_alphabeta_depth", l.max_alphabeta_depth}}}};
      });
    });
    get("/api/games", [this](const httplib::Request&, httplib::Response& res) {
      guarded(res, [&] {
        json list = json::array();
        for (const Game* game : all_games()) list.push_back(game_json(*game));
        return list;
      });
    });
    get("/api/ratings", [this](const httplib::Request&, httplib::Response& res) {
      guarded(res, [&] {
        std::vector<SourceResults> sources = baseline_results();
        for (const auto& r : runs) sources.push_back(r->results());
        // A record file that cannot be read now (moved away, grown past its limit) leaves the
        // others' ladders as they are; /api/info says what is wrong with it.
        for (const auto& a : arena) {
          try {
            for (SourceResults& s : a->results()) sources.push_back(std::move(s));
          } catch (const std::exception&) {
          }
        }
        return ratings(std::move(sources), stop_check());
      });
    });
    get(R"(/api/runs/([^/]+)/summary)", [this](const httplib::Request& req,
                                               httplib::Response& res) {
      guarded(res, [&] { return run(req.matches[1]).summary(); });
    });
    get(R"(/api/runs/([^/]+)/games)", [this](const httplib::Request& req,
                                             httplib::Response& res) {
      guarded(res, [&] {
        RunReader& r = run(req.matches[1]);
        return r.list_games(filter_of(req));
      });
    });
    get(R"(/api/runs/([^/]+)/games/([0-9]{1,19})/([0-9]{1,5}))",
        [this](const httplib::Request& req, httplib::Response& res) {
          guarded(res, [&] {
            RunReader& r = run(req.matches[1]);
            return r.game_record(std::strtoull(req.matches[2].str().c_str(), nullptr, 10),
                                 std::atoi(req.matches[3].str().c_str()));
          });
        });
    get(R"(/api/runs/([^/]+)/checkpoints)", [this](const httplib::Request& req,
                                                   httplib::Response& res) {
      guarded(res, [&] { return json(run(req.matches[1]).checkpoints()); });
    });
    get(R"(/api/arena/([^/]+)/games)", [this](const httplib::Request& req,
                                              httplib::Response& res) {
      guarded(res, [&] {
        ArenaReader& a = arena_file(req.matches[1]);
        return a.list_games(int_param(req, "page", 0, 0, 1 << 30),
                            int_param(req, "per_page", kGamesPerPage, 1, kMaxGamesPerPage),
                            text_param(req, "player"), text_param(req, "result"));
      });
    });
    get(R"(/api/arena/([^/]+)/games/([0-9]{1,9}))", [this](const httplib::Request& req,
                                                           httplib::Response& res) {
      guarded(res, [&] {
        return arena_file(req.matches[1]).game_record(std::atoi(req.matches[2].str().c_str()));
      });
    });
    post("/api/position", [this](const json& r, const StopCheck&) { return games->position(r); });
    post("/api/match",
         [this](const json& r, const StopCheck& stop) { return games->match(r, stop); });
    post("/api/move",
         [this](const json& r, const StopCheck& stop) { return games->move(r, stop); });
    post("/api/analyse",
         [this](const json& r, const StopCheck& stop) { return games->analyse(r, stop); });
    post("/api/evaluate", [this](const json& r, const StopCheck& stop) {
      return games->evaluate(r, stop);
    });
    // Anything else under /api is an unknown call; elsewhere the page is served from /.
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      // Any error of httplib's own but a 404 comes from a request it could not read whole: what
      // follows on the connection is not a request, so it closes after the answer.
      if (res.status != 404)
        if (Connection* connection = GuardedServer::current_connection())
          connection->close_after_answer();
      if (res.status == 404)
        send_error(res, 404, "no such page or API call: " + quote_input(req.method) + " " +
                                 quote_input(req.path));
      else if (res.status == 413)
        send_error(res, 413, "the request is too large (at most " +
                                 std::to_string(kMaxBodyBytes >> 10) + " KiB)");
      else if (res.status == 414)
        send_error(res, 414, "the request's URL is too long (at most " +
                                 std::to_string(CPPHTTPLIB_REQUEST_URI_MAX_LENGTH) + " bytes)");
      else if (res.status == 416)
        send_error(res, 416, "a malformed Range header; this server sends whole answers only, "
                             "so send none");
      else if (res.status == 400) {
        // httplib's own 400: a request it could not parse, or one whose read failed.
        const Connection* connection = GuardedServer::current_connection();
        if (connection != nullptr && connection->failure() != Connection::Failure::kNone)
          send_error(res, connection->failure_status(), connection->failure_message());
        else
          send_error(res, 400, "a malformed request (not HTTP/1.x, or a header line over " +
                                   std::to_string(CPPHTTPLIB_HEADER_MAX_LENGTH) + " bytes)");
      }
    });
  }
};

WebServer::WebServer(ServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  ServerOptions& o = impl_->options;
  if (o.port < 0 || o.port > 65535)
    throw std::runtime_error("--port must be 0..65535, got " + std::to_string(o.port));
  if (o.host.empty()) throw std::invalid_argument("--host is empty; give an address or a name");
  if (!o.token.empty() && (o.token.size() < kMinTokenLength || !token_characters_only(o.token)))
    throw std::invalid_argument(
        "--token must be at least " + std::to_string(kMinTokenLength) + " characters of " +
        kTokenCharacters + " (a short token is guessed); the one given has " +
        std::to_string(o.token.size()) + "; leave --token out to have one generated");
  if (!util::is_loopback_host(o.host) && o.token.empty()) o.token = generate_token();
  std::vector<std::string> names;
  for (const std::string& dir : o.runs) {
    names.push_back(run_name(dir, names));
    impl_->runs.push_back(std::make_unique<RunReader>(names.back(), dir));
  }
  std::vector<std::string> arena_names;
  for (const std::string& file : o.arena_files) {
    arena_names.push_back(run_name(file, arena_names));
    impl_->arena.push_back(std::make_unique<ArenaReader>(arena_names.back(), file));
  }
  impl_->games = std::make_unique<GameService>(
      [impl = impl_.get()](const std::string& name) { return impl->checkpoint(name); }, o.limits);
  impl_->routes();
}

WebServer::~WebServer() { stop(); }

int WebServer::bind() {
  Impl& i = *impl_;
  // httplib's default also sets SO_REUSEPORT, which lets a second server share a busy port (and
  // take half of its connections); SO_REUSEADDR alone still allows a quick restart.
  socket_t listening = INVALID_SOCKET;
  i.http.set_socket_options([&listening](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listening = sock;
  });
  if (i.options.port == 0) {
    i.port = i.http.bind_to_any_port(i.options.host);
  } else {
    i.port = i.http.bind_to_port(i.options.host, i.options.port) ? i.options.port : -1;
  }
  if (i.port < 0)
    throw std::runtime_error("cannot listen on " + i.options.host + ":" +
                             std::to_string(i.options.port) +
                             ": the port is in use (another `oppidum serve`?) or the address is "
                             "not one of this machine; choose another --port (0: any free port)");
  // Debian's httplib listens with a backlog of 5: a burst of connections (a browser opens six)
  // waited a second for the kernel to retry. Listening again raises it.
  if (listening != INVALID_SOCKET) ::listen(listening, SOMAXCONN);
  return i.port;
}

std::vector<std::string> WebServer::warnings() {
  std::vector<std::string> lines;
  for (std::size_t k = 0; k < impl_->arena.size(); ++k) {
    const nlohmann::json info = impl_->arena[k]->info();
    if (info.at("games").get<std::int64_t>() > 0) continue;
    lines.push_back("--arena-games " + impl_->options.arena_files[k] + ": no games read (" +
                    std::to_string(info.at("skipped").get<std::int64_t>()) +
                    " line(s) skipped); it takes a record file of `oppidum arena --record FILE` "
                    "(one game per line), not a --results file (`A B wins draws losses`)");
  }
  return lines;
}

void WebServer::serve() {
  impl_->serving.store(true);
  if (!impl_->http.stopping()) impl_->http.listen_after_bind();
  impl_->serving.store(false);
}

int WebServer::start() {
  const int port = bind();
  impl_->thread = std::thread([this] { serve(); });
  for (int waited = 0; !impl_->http.is_running(); ++waited) {
    if (waited > 10000) throw std::runtime_error("the web server did not start listening");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return port;
}

void WebServer::stop() {
  Impl& i = *impl_;
  i.http.begin_stop();  // searches stop, connections end
  // serve() may still be on its way into the accept loop: end the loop once it runs (httplib's
  // stop() acts only on a running server, and only once).
  bool listener_closed = false;
  while (i.serving.load()) {
    if (!listener_closed && i.http.is_running()) {
      i.http.stop();
      listener_closed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (i.thread.joinable()) i.thread.join();
}

const std::string& WebServer::token() const { return impl_->options.token; }

std::string WebServer::url() const {
  const std::string& host = impl_->options.host;
  const std::string shown = host == "0.0.0.0" || host == "::" ? "HOST" :
                            host.find(':') != std::string::npos ? "[" + host + "]" : host;
  std::string url = "http://" + shown + ":" + std::to_string(impl_->port) + "/";
  if (!impl_->options.token.empty()) url += "?token=" + impl_->options.token;
  return url;
}

}  // namespace oppidum::web
