#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz, clang with ASan and UBSan) into build-fuzz/ and runs
# each one, or those named, for a while, one at a time: the corpus grows in build-fuzz/corpus/NAME
# (seeded from tests/fuzz/seeds/NAME and the seeds fuzz_seeds generates into build-fuzz/seeds/NAME),
# and a crash, leak, timeout or out-of-memory input goes to build-fuzz/crashes/NAME/. Exits non-zero
# if any harness found something. `--check` instead runs every input of the seeds once (-runs=0), a
# regression check. Not run by CI.
# Usage: scripts/fuzz.sh [--seconds N] [--check] [--build-dir DIR] [NAME ...]
#   NAME: a harness without its fuzz_ prefix (position, config, ...); default: all of them.
#   JOBS=N sets the build's parallelism (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/fuzz.sh [--seconds N] [--check] [--build-dir DIR] [NAME ...]"
seconds=60
check=0
build=build-fuzz
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; seconds=$2; shift 2 ;;
    --check) check=1; shift ;;
    --build-dir) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; build=$2; shift 2 ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
    *) names+=("${1#fuzz_}"); shift ;;
  esac
done
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: --seconds takes a whole number of seconds, got '$seconds'" >&2
  exit 2
fi

all=()
for f in tests/fuzz/fuzz_*.cpp; do
  n=$(basename "$f" .cpp)
  [ "$n" = fuzz_seeds ] || all+=("${n#fuzz_}")
done
if [ ${#names[@]} -eq 0 ]; then
  names=("${all[@]}")
else
  for n in "${names[@]}"; do
    if [ ! -f "tests/fuzz/fuzz_$n.cpp" ]; then
      echo "fuzz.sh: no harness '$n' (harnesses: ${all[*]})" >&2
      exit 2
    fi
  done
fi

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: needs clang++ (libFuzzer); install clang" >&2
  exit 1
fi
# The top CMakeLists finds LibTorch even though no fuzz target uses it; the GoogleTest suites are
# left out.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DOPPIDUM_FUZZ=ON -DOPPIDUM_BUILD_TESTS=OFF >/dev/null
targets=(fuzz_seeds)
for n in "${names[@]}"; do targets+=("fuzz_$n"); done
cmake --build "$build" --parallel "${JOBS:-$(nproc)}" --target "${targets[@]}"

rm -rf "$build/seeds"
"$build/bin/fuzz_seeds" "$build/seeds"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

found=()
for n in "${names[@]}"; do
  seeds=()
  for d in "tests/fuzz/seeds/$n" "$build/seeds/$n"; do
    [ -d "$d" ] && seeds+=("$d")
  done
  mkdir -p "$build/crashes/$n" "$build/logs"
  log=$build/logs/$n.log
  if [ $check = 1 ]; then
    if [ ${#seeds[@]} -eq 0 ]; then
      echo "fuzz_$n: no seeds"
      continue
    fi
    args=(-runs=0 "${seeds[@]}")
  else
    mkdir -p "$build/corpus/$n"
    args=(-max_total_time="$seconds" "$build/corpus/$n" "${seeds[@]}")
  fi
  stamp=$(mktemp)
  rc=0
  "$build/bin/fuzz_$n" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$build/crashes/$n/" "${args[@]}" >"$log" 2>&1 || rc=$?
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  if [ $rc = 0 ]; then
    echo "fuzz_$n: ok, ${runs:-?} runs (log: $log)"
  else
    found+=("$n")
    echo "fuzz_$n: FAILED (exit $rc) after ${runs:-?} runs; log: $log" >&2
    grep -E "^(==[0-9]+==ERROR|FUZZ INVARIANT|SUMMARY)|runtime error" "$log" | head -5 |
      sed 's/^/  /' >&2
    new=$(find "$build/crashes/$n" -type f -newer "$stamp")
    if [ -n "$new" ]; then
      echo "$new" | sed 's/^/  input: /' >&2
      echo "  replay: $build/bin/fuzz_$n $(echo "$new" | head -1)" >&2
    fi
  fi
  rm -f "$stamp"
done

if [ ${#found[@]} -gt 0 ]; then
  echo "fuzz.sh: ${#found[@]} harness(es) found something: ${found[*]}" \
    "(inputs in $build/crashes/)" >&2
  exit 1
fi
echo "fuzz.sh: ${#names[@]} harness(es), nothing found"
