#!/usr/bin/env bash
# A whole distributed run on this machine: a redis-server on a loopback port, the trainer node and
# WORKERS self-play worker nodes (default 2), for configs/mg-small.yaml unless CONFIG says
# otherwise. Prints the status every 10 seconds; Ctrl-C stops everything (the same command
# continues the run). Arguments after `--` go to `oppidum train`, e.g.
#
#   scripts/cluster.sh 2 -- --set run.stop_after_minutes=20
#
# Environment: CONFIG (default configs/mg-small.yaml), RUN (default runs/<config name>-cluster),
# PORT (default: the first free port from 6400), WORKER_THREADS (default 1).
# On several machines, start the pieces by hand instead: docs/DISTRIBUTED.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

workers=2
if [ $# -gt 0 ] && [ "$1" != "--" ]; then workers=$1; shift; fi
[ "${1:-}" = "--" ] && shift
train_args=("$@")
config=${CONFIG:-configs/mg-small.yaml}
name=$(basename "$config" .yaml)
run=${RUN:-runs/$name-cluster}
threads=${WORKER_THREADS:-1}
bin=build/bin/oppidum
worker_bin=build/bin/oppidum-worker  # the worker without LibTorch
[ -x "$bin" ] && [ -x "$worker_bin" ] || ./scripts/build.sh
command -v redis-server >/dev/null || { echo "cluster: redis-server is missing: run scripts/setup.sh" >&2; exit 1; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=${PORT:-6400}
if [ -z "${PORT:-}" ]; then while ! port_free "$port"; do port=$((port + 1)); done; fi
store="redis://127.0.0.1:$port/$name"
data="$run-redis"
logs="$run-logs"
mkdir -p "$data" "$(dirname "$run")" "$logs"
data=$(cd "$data" && pwd)
logs=$(cd "$logs" && pwd)

# Each node in a process group of its own (job control): a terminal's Ctrl-C reaches this script
# alone, which stops the nodes with one SIGINT each (a second one makes the trainer exit at once,
# unsaved) and Redis after them.
set -m
pids=()
stop_all() {
  trap - INT TERM EXIT
  echo "cluster: stopping"
  for pid in "${pids[@]:1}"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]:1}"; do wait "$pid" 2>/dev/null || true; done
  redis-cli -p "$port" shutdown >/dev/null 2>&1 || kill "${pids[0]}" 2>/dev/null || true
  wait "${pids[0]}" 2>/dev/null || true
  echo "cluster: stopped; logs in $logs/, the run in $run/"
}
trap stop_all INT TERM EXIT

redis-server --port "$port" --bind 127.0.0.1 --protected-mode yes --dir "$data" \
  --appendonly yes --appendfsync everysec --save "" --daemonize no \
  --logfile "$logs/redis.log" &
pids+=($!)
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$port" ping >/dev/null || { echo "cluster: redis-server did not start ($logs/redis.log)" >&2; exit 1; }
echo "cluster: redis-server on 127.0.0.1:$port (data in $data/)"

"$bin" train --config "$config" --run "$run" --store "$store" --set selfplay.threads=0 \
  --no-status "${train_args[@]}" >>"$logs/trainer.log" 2>&1 &
pids+=($!)
trainer=$!
echo "cluster: trainer node: $run (log $logs/trainer.log)"
for i in $(seq "$workers"); do
  "$worker_bin" --store "$store" --node "worker-$i" --threads "$threads" \
    >>"$logs/worker-$i.log" 2>&1 &
  pids+=($!)
done
echo "cluster: $workers worker node(s), $threads thread(s) each (logs $logs/worker-N.log); Ctrl-C stops all"

while kill -0 "$trainer" 2>/dev/null; do
  sleep 10
  line=$(grep -a " | " "$logs/trainer.log" | tail -1 | cut -c23- || true)
  alive=0
  for pid in "${pids[@]:2}"; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
  echo "[$(date +%H:%M:%S)] workers $alive/$workers | stream $(redis-cli -p "$port" xlen "oppidum:$name:games" 2>/dev/null) | ${line:-starting}"
done
wait "$trainer" && status=0 || status=$?
echo "cluster: the trainer ended (status $status)"
exit "$status"
