#!/usr/bin/env bash
# Self-play positions per second that reach the trainer, in-process and through Redis with one and
# with two worker processes, using the same total number of self-play threads (THREADS, default
# 2). Training is switched off (training.min_positions far away) so that self-play has the machine
# in every setting; the rate is taken between the trainer's first and last status lines (every
# 30 s), so start-up does not count. Usage:
#
#   scripts/bench-distributed.sh [MINUTES] [CONFIG]        # default 3 minutes, configs/mg-small.yaml
#
# Prints one line per setting and the ratios to the in-process rate (docs/PERFORMANCE.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
minutes=${1:-3}
config=${2:-configs/mg-small.yaml}
threads=${THREADS:-2}
bin=build/bin/oppidum
worker_bin=build/bin/oppidum-worker
[ -x "$bin" ] && [ -x "$worker_bin" ] || ./scripts/build.sh
work=$(mktemp -d /tmp/oppidum-bench-distributed.XXXXXX)
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=6500
while ! port_free "$port"; do port=$((port + 1)); done
redis_pid=""
cleanup() {
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
common=(--config "$config" --no-status --set training.min_positions=1000000000
        --set "run.stop_after_minutes=$minutes")

# Positions per second between the first and the last status line of a trainer log.
rate() {
  grep -a " | games " "$1" | awk '
    { split($2, t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3];
      for (i = 1; i <= NF; ++i) if ($i == "pos") p = $(i + 1);
      if (n == 0) { s0 = s; p0 = p } n++; s1 = s; p1 = p }
    END { if (n < 2 || s1 == s0) print "nan"; else printf "%.1f", (p1 - p0) / (s1 - s0) }'
}

echo "bench-distributed: $config, $threads self-play thread(s) in all, $minutes min per setting"
"$bin" train "${common[@]}" --run "$work/inproc" --set "selfplay.threads=$threads" \
  >"$work/inproc.log" 2>&1
inproc=$(rate "$work/inproc.log")
echo "in-process ($threads threads):            $inproc positions/s"

redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save "" --appendonly yes \
  --appendfsync everysec --daemonize no --logfile "$work/redis.log" &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

for workers in 1 2; do
  per=$((threads / workers))
  store="redis://127.0.0.1:$port/bench$workers"
  "$bin" train "${common[@]}" --run "$work/w$workers" --store "$store" --set selfplay.threads=0 \
    >"$work/w$workers.log" 2>&1 &
  trainer=$!
  pids=()
  for i in $(seq "$workers"); do
    "$worker_bin" --store "$store" --node "w$i" --threads "$per" >"$work/w$workers-$i.log" 2>&1 &
    pids+=($!)
  done
  wait "$trainer"
  for pid in "${pids[@]}"; do kill -INT "$pid"; done
  for pid in "${pids[@]}"; do wait "$pid" || true; done
  r=$(rate "$work/w$workers.log")
  ratio=$(awk -v a="$r" -v b="$inproc" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "nan" }')
  echo "Redis, $workers worker process(es) x $per thread(s): $r positions/s, $ratio of in-process"
done
