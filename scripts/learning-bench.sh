#!/usr/bin/env bash
# The learning benchmark: train a game from scratch with its laptop config for a fixed budget, then
# play the best network (200 simulations) against fixed yardsticks, paired openings, and print one
# line per yardstick. Every A/B of a training change is two runs of this (docs/RESULTS.md).
#
#   scripts/learning-bench.sh GAME BUDGET [--seed N] [--games N] [--threads N] [--set section.key=value ...]
#
# GAME: a game with a laptop config configs/GAME-small.yaml, whose comment line
# "# learning-bench yardsticks: SPEC SPEC" names the players it is measured against. BUDGET: minutes of wall time (e.g. 60), or a number
# of self-play positions with a `p` suffix (e.g. 450000p): wall time on a shared machine varies
# (the same hour made 9.7k games once and 23.5k another time), a position budget does not.
# --seed: the run seed (default 1); --games: games per yardstick (default 100, paired);
# --threads: arena games played at once after training (default 1; fixed depth and simulations, so
# the count changes only the wall time);
# --set: config overrides, passed to `oppidum train` and echoed in the result lines.
# Yardsticks: Murus Gallicus alphabeta:depth=5 and depth=7, DVONN alphabeta:depth=4 and depth=6.
# Output (also appended to runs/learning-bench.txt):
#   <game> <budget> seed=<s> <overrides or -> vs <yardstick>: <W-D-L> <score>% Elo <e> [<lo>, <hi>]
set -euo pipefail
# The body is one block, read whole before it runs: bash reads a script as it goes, so editing or
# pulling this file during an hour-long arm would otherwise run the new bytes at the old offset.
{
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
usage() { sed -n '6,18p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
game=$1
budget=$2
shift 2
seed=1
games=100
threads=1
overrides=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed=$2; shift 2 ;;
    --games) games=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --set) overrides+=(--set "$2"); shift 2 ;;
    *) usage ;;
  esac
done
config="configs/$game-small.yaml"
if [ ! -f "$config" ]; then
  echo "learning-bench: no $config; the laptop configs are:" $(ls configs/*-small.yaml) >&2
  exit 2
fi
# The game's yardsticks are named in its laptop config: "# learning-bench yardsticks: SPEC SPEC".
read -r -a yardsticks <<<"$(sed -n 's/^# learning-bench yardsticks: *//p' "$config")"
if [ ${#yardsticks[@]} -eq 0 ]; then
  echo "learning-bench: $config names no yardsticks ('# learning-bench yardsticks: SPEC ...')" >&2
  exit 2
fi
if [[ "$budget" == *p ]]; then
  stop=(--set "run.stop_after_positions=${budget%p}" --set run.stop_after_minutes=0)
else
  stop=(--set "run.stop_after_minutes=$budget")
fi
# OPPIDUM_BIN: a copy of the binary, so that rebuilding during a long A/B does not change its arms.
bin=${OPPIDUM_BIN:-build/bin/oppidum}
[ -x "$bin" ] || ./scripts/build.sh
label="-"
[ ${#overrides[@]} -gt 0 ] && label=$(printf '%s ' "${overrides[@]}" | sed 's/--set //g; s/ $//; s/ /,/g')
# The process id keeps apart two arms started in the same second (the second would find the run
# folder locked and stop).
run="runs/bench-$game-$budget-seed$seed-$(date +%Y%m%d-%H%M%S)-$$"
echo "learning-bench: training $game for $budget (seed $seed, overrides $label) in $run" >&2
mkdir -p runs  # the log goes beside the run, before train makes the folder
"$bin" train --config "$config" --run "$run" --no-status \
  --set "run.seed=$seed" "${stop[@]}" "${overrides[@]}" 2>"$run.log"
grep -a "stopped:" "$run.log" | tail -1 >&2
for y in "${yardsticks[@]}"; do
  out=$("$bin" arena --game "$game" --a "net:checkpoint=$run/checkpoints/best.ckpt,sims=200" \
        --b "$y" --games "$games" --threads "$threads" --seed "$seed" 2>/dev/null)
  wdl=$(echo "$out" | sed -n 's/^result (A.s view): +\([0-9]*\) =\([0-9]*\) -\([0-9]*\)  score \([0-9.]*\)%.*/\1-\2-\3 \4%/p')
  elo=$(echo "$out" | sed -n 's/^Elo (A - B): \([^ ]*\)  95% \(\[[^]]*\]\).*/Elo \1 \2/p')
  line="$game $budget seed=$seed $label vs $y: $wdl $elo"
  echo "$line"
  echo "$(date '+%Y-%m-%d %H:%M') $line ($run)" >> runs/learning-bench.txt
done
exit
}
