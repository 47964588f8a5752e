#!/usr/bin/env bash
# Builds with warnings as errors and runs the default test suite (everything but the `slow` label),
# then builds the rules, search and record tests with AddressSanitizer and UBSan and runs them, and
# the threaded tests (self-play, search runner, matches, the inference server, the Redis store, the
# web server, the trainer's batch prefetcher) with ThreadSanitizer. `scripts/test.sh --all` also
# runs the slow tests.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
label_args=(-LE slow)
[ "${1:-}" = "--all" ] && label_args=()

cmake -S . -B build -G Ninja -DOPPIDUM_WERROR=ON >/dev/null
cmake --build build --parallel "$jobs"
(cd build && ctest --output-on-failure --timeout 600 -j "$jobs" "${label_args[@]}")

cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPPIDUM_WERROR=ON \
  -DOPPIDUM_SANITIZE=ON >/dev/null
cmake --build build-sanitize --parallel "$jobs" --target games_test mcts_test selfplay_test
(cd build-sanitize && ctest --output-on-failure --timeout 600 -j "$jobs" -L "games|mcts|selfplay")

cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPPIDUM_WERROR=ON \
  -DOPPIDUM_TSAN=ON >/dev/null
cmake --build build-tsan --parallel "$jobs" --target mcts_test selfplay_test arena_test model_test \
  store_test web_api_test replay_window_test
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure --timeout 600 -j "$jobs" -L "mcts|selfplay|arena" &&
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure --timeout 600 -j "$jobs" -R "^(RunChannel|RedisUrl)" &&
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure --timeout 600 -j "$jobs" -R "^InferenceServer\." &&
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure --timeout 600 -j "$jobs" -R "ReplayWindowTest\.Prefetch" &&
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/../tests/tsan-web.supp" \
  ctest --output-on-failure --timeout 600 -j "$jobs" -R "^(WebApiTest|WebServerTest|RunReaderTest)\.")
