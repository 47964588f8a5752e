#!/usr/bin/env bash
# The README's tour, run as written: the commands between `<!-- tour:begin -->` and
# `<!-- tour:end -->` in README.md, top to bottom, each in a fresh folder laid out like a built
# clone (configs/, scripts/, build/bin/), failing at the first command that fails. So the test
# cannot drift from the README: a command added there is run here.
#
#   tests/readme_tour.sh SOURCE_DIR OPPIDUM_BINARY WORKER_BINARY
#
# What it changes, and only that (the agreed small budgets):
#   - `train` and `learning-bench.sh`: tiny networks and one generation (TINY below, as --set
#     overrides after the README's own); the learning bench plays 2 games against cheap yardsticks;
#   - `arena` and `gauntlet`: 2 games, 8 simulations for uct and net players, clocks of 1 s;
#   - `bench`: the smallest sizes and durations; the scratch Redis on a free port;
#   - `serve`: --port 0 (a free port), and stopped once it printed its URL;
#   - `play`: answered with `quit`.
# The commands that need other machines or a long-lived cluster are named in SKIPPED with why; a
# line that matches nothing here runs unchanged.
set -uo pipefail

source_dir=$(cd "$1" && pwd)
oppidum=$2
worker=$3

work=$(mktemp -d "${TMPDIR:-/tmp}/readme-tour.XXXXXX")
cleanup() {
  if [ -n "${redis_port:-}" ]; then redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A built clone: the configs and scripts copied, the binaries linked where build.sh puts them.
mkdir -p "$work/build/bin"
cp -r "$source_dir/configs" "$source_dir/scripts" "$work/"
ln -s "$oppidum" "$work/build/bin/oppidum"
ln -s "$worker" "$work/build/bin/oppidum-worker"
# The learning bench's yardsticks, cheaper (the comment line it reads them from).
sed -i 's/^# learning-bench yardsticks: .*/# learning-bench yardsticks: alphabeta:depth=1 random/' \
  "$work"/configs/*-small.yaml

TINY="--set run.max_generations=1 --set run.stop_after_minutes=10 --set net.blocks=1 \
--set net.filters=8 --set net.policy_channels=2 --set net.value_channels=1 \
--set net.value_hidden=16 --set selfplay.threads=1 --set selfplay.concurrent_games=16 \
--set selfplay.simulations=8 --set selfplay.fast_simulations=2 --set selfplay.max_plies=80 \
--set selfplay.games_per_chunk=8 --set training.batch_size=32 --set training.warmup_steps=5 \
--set training.window_min=1000 --set training.window_max=5000 --set training.min_positions=300 \
--set training.steps_per_generation=10 --set arena.simulations=8 --set arena.anchor_games=2"
# A run that continues: only keys that may change on resume.
TINY_RESUME="--set run.max_generations=2 --set run.stop_after_minutes=10"

# A loopback port nothing listens on, for the scratch Redis: below the kernel's range of
# ephemeral ports, which any connection of the machine's (or `serve --port 0`) may hold by the
# time Redis binds (a port picked at random in 20000-60000 was taken once in CI).
ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
[[ "$ephemeral_low" =~ ^[0-9]+$ ]] && [ "$ephemeral_low" -gt 12000 ] || ephemeral_low=32768
redis_port=""
for _ in $(seq 1 100); do
  port=$((10000 + RANDOM % (ephemeral_low - 10000)))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then redis_port=$port; break; fi
done
[ -n "$redis_port" ] || { echo "readme_tour: no free loopback port found" >&2; exit 1; }

SKIPPED=(
  'cluster.sh|a redis-server, a trainer and workers running for as long as you let them'
  '10.0.0.1|another machine'
  'OPPIDUM_REDIS_PASSWORD|the password of a store on another machine'
  '--host 0.0.0.0|the tests listen on loopback only'
)

# The tour's lines, continuation lines (ending in \ or |) joined.
commands=()
current=""
while IFS= read -r line; do
  case "$line" in '```'*) continue ;; esac
  current+="$line"
  if [[ "$current" =~ \\[[:space:]]*$ ]]; then  # a continued line: one command line
    current="${current%\\*} "
    continue
  fi
  if [[ "$current" =~ \|[[:space:]]*$ ]]; then  # a pipe into the next line
    current+=$'\n'
    continue
  fi
  commands+=("$current")
  current=""
done < <(sed -n '/<!-- tour:begin -->/,/<!-- tour:end -->/p' "$source_dir/README.md" | sed '1d;$d')
if [ ${#commands[@]} -lt 10 ]; then
  echo "readme_tour: found ${#commands[@]} commands between the tour markers of README.md" >&2
  exit 1
fi

# Runs `serve` in the background until it printed its URL, then stops it with Ctrl-C.
serve_until_url() {
  "$@" >serve.log 2>&1 &
  local pid=$! waited=0
  until grep -q "open http://" serve.log; do
    if ! kill -0 "$pid" 2>/dev/null || [ $waited -ge 600 ]; then
      cat serve.log
      kill "$pid" 2>/dev/null
      wait "$pid"
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  cat serve.log
  kill -INT "$pid"
  wait "$pid"
}
export -f serve_until_url

cd "$work"
ran=0
for command in "${commands[@]}"; do
  # Comments and blank lines; a comment after a command goes too.
  line=$(printf '%s' "$command" | sed -E 's/(^|[[:space:]])#.*$//' | sed -E 's/[[:space:]]+$//')
  [ -z "$(printf '%s' "$line" | tr -d '[:space:]')" ] && continue
  skip=""
  for entry in "${SKIPPED[@]}"; do
    if [[ "$line" == *"${entry%%|*}"* ]]; then skip=${entry#*|}; fi
  done
  if [ -n "$skip" ]; then
    echo "=== skipped ($skip): $line"
    continue
  fi
  run="$line"
  case "$line" in
    *'$B train --config'*) run="$line $TINY" ;;
    *'$B train --run'*) run="$line $TINY_RESUME" ;;
    *learning-bench.sh*) run="$line --games 2 $TINY" ;;
    *'$B arena'*|*'$B gauntlet'*)
      run=$(printf '%s' "$line" | sed -E 's/--games [0-9]+/--games 2/; s/sims=[0-9]+/sims=8/g
        s/clock=[0-9]+/clock=1/g; s/--clock [0-9]+/--clock 1/') ;;
    *'$B play'*) run="$line <<< quit" ;;
    *'$B serve'*) run="serve_until_url $line --port 0" ;;
    *'bench model'*) run="$line --sizes 1x8 --batches 1 --seconds 0.01 --rounds 1" ;;
    *'bench search'*) run="$line --tree-games 1 --moves 4 --games 4" ;;
    *'bench selfplay'*) run=$(printf '%s' "$line" | sed -E 's/--seconds [0-9.]+/--seconds 0.2/')
      run="$run --warmup 0.1 --set net.blocks=1 --set net.filters=8" ;;
    *'bench rules'*) run="$line --max-depth 2 --games 10" ;;
    *'bench web'*) run=$(printf '%s' "$line" | sed -E 's/--games [0-9]+/--games 200/')
      run="$run --dir $work/bench-web" ;;  # (not the shared temp folder's fixed name)
    *'bench store'*) run="$line --seconds 0.5 --pushers 1" ;;
    # A daemonized Redis returns before it listens: the next line waits until it answers, and
    # a server that never does fails here with its log (a daemon's log goes nowhere otherwise).
    *'redis-server'*'--daemonize yes'*)
      run="$line --logfile $work/redis-scratch.log && for i in \$(seq 300); do"
      run="$run redis-cli -p 6390 ping >/dev/null 2>&1 && break; sleep 0.1; done;"
      run="$run redis-cli -p 6390 ping >/dev/null 2>&1 || { echo 'redis-server does not answer"
      run="$run on 6390; its log:'; cat $work/redis-scratch.log; exit 1; }" ;;
  esac
  run=${run//6390/$redis_port}
  echo "=== $line"
  [ "$run" != "$line" ] && echo "    as: $run"
  if [[ "$line" == B=* ]]; then
    eval "export $line"
    continue
  fi
  output=$(bash -c "$run" 2>&1 </dev/null)
  status=$?
  printf '%s\n' "$output" | tail -n 15 | sed 's/^/    /'
  if [ $status -ne 0 ]; then
    echo "readme_tour: FAILED (exit status $status): $line" >&2
    exit 1
  fi
  # No number the tour shows is infinite or undefined, and nothing warns (a file that yields
  # nothing, a repair).
  if printf '%s\n' "$output" | grep -Eq '(^|[^[:alnum:]_])[+-]?(inf|nan)([^[:alnum:]_]|$)'; then
    echo "readme_tour: FAILED: the output shows inf or nan: $line" >&2
    exit 1
  fi
  if printf '%s\n' "$output" | grep -q 'warning'; then
    echo "readme_tour: FAILED: the output has a warning: $line" >&2
    exit 1
  fi
  ran=$((ran + 1))
done
echo "readme_tour: all ${ran} commands ran"
