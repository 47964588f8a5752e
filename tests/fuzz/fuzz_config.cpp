// The run config (trainer/config.h): config::parse_config on YAML text and `--set
// section.key=value` overrides; parse_cuda_devices and model::NetConfig::parse_size on the same
// YAML text. Input: the YAML, then optionally NUL-separated overrides. Checks: a config that parses
// writes (to_yaml) a text that parses back and writes the same text again; parse_cuda_devices and
// training_device refuse only with ConfigError, parse_size only with std::invalid_argument or
// std::runtime_error.
#include <vector>

#include "common.h"
#include "model/net_config.h"
#include "trainer/config.h"

using namespace oppidum;
using namespace oppidum::config;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string yaml = input.substr(0, nul);
  std::vector<std::string> overrides;
  for (std::size_t at = nul; at != std::string::npos && at < input.size();) {
    const std::size_t next = input.find('\0', at + 1);
    overrides.push_back(
        input.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1));
    at = next;
  }
  try {
    (void)parse_cuda_devices(yaml);
  } catch (const ConfigError&) {
  }
  try {
    (void)model::NetConfig::parse_size(yaml);
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {
  }
  RunConfig c;
  try {
    c = parse_config(yaml, "fuzz.yaml", overrides);
  } catch (const ConfigError&) {
    return 0;
  }
  try {
    (void)training_device(c);
  } catch (const ConfigError&) {
  }
  const std::string out = to_yaml(c);
  RunConfig back;
  try {
    back = parse_config(out, "written.yaml");
  } catch (const ConfigError& e) {
    fuzz::fail(std::string("to_yaml output does not parse: ") + e.what() + "\n" + out);
  }
  const std::string out2 = to_yaml(back);
  FUZZ_CHECK(out2 == out, "to_yaml(parse(to_yaml(c))) != to_yaml(c):\n" + out + "\n---\n" + out2);
  return 0;
}
