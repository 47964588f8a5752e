#!/usr/bin/env bash
# The GPU check (docs/GPU.md): builds oppidum against the LibTorch of a CUDA PyTorch installation,
# runs the `gpu` tests, then the GPU benchmarks, and writes one results file, DIR/gpu-check.md,
# with every command, its exit status, its time and its output (logs beside it).
#
#   scripts/gpu-check.sh [--out DIR] [--phases LIST] [--budget S] [--train-seconds N]
#                        [--train-set KEY=VALUE]... [--peak-tflops T] [--dry-run]
#
# Phases, in order (--phases takes a comma-separated subset; default all):
#   env      the machine: GPU, driver, CPU cores, PyTorch, compilers, and what in PyTorch's
#            LibTorch the build works around (its fmt headers, its protobuf stand-in)
#   build    configure and build `oppidum` and `gpu_test` in build-gpu/ against
#            $(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)'); where Debian's
#            C++ packages are missing and .gpu-deps/debs/ exists, installs them first
#            (scripts/gpu-deps.sh); then a smoke test: `oppidum --version` and a short forward
#            pass on the device, and when that fails the phases that run oppidum on the GPU are
#            skipped (the gpu tests still run)
#   test     the gpu tests (those of ctest -L gpu; each fails, not skips, when no GPU is seen:
#            GPU_CHECK_REQUIRE_GPU), with the differences they measure; at most 240 s
#   model    bench model: positions/s by batch 64..4096 of the 4x32 and 10x128 networks of both
#            games, fp32, fp16, bf16 and bf16 channels-last, with the share of the chip's peak
#   server   bench model: the inference server with 1, 2 and 4 workers on one GPU, 8 and 32 callers
#   trainer  bench train: the trainer alone at configs/mg.yaml and configs/dvonn.yaml, fp32 and bf16
#   selfplay bench selfplay: configs/mg.yaml and configs/dvonn.yaml with 4 and 8 self-play
#            threads, without the trainer: against a free network (what the CPU side can ask of
#            any GPU) and the config's network on the GPU, fp32 and bf16 (the share of the
#            forward-pass bound)
#   train    oppidum train with configs/mg.yaml and configs/dvonn.yaml for --train-seconds each
#            (default 90; training starts at 20,000 positions, a generation every 300 steps, no
#            gate), with nvidia-smi sampled every second; each --train-set KEY=VALUE goes to
#            both runs as --set (e.g. selfplay.concurrent_games=64, so that games finish and the
#            trainer starts within a short run); the log ends with the session's self-play against
#            its bound and the trainer's pace
#   cputests build and run trainer_test, model_test and onnx_export_test (on the cpu) against this
#            LibTorch (the Redis tests only where redis-server is): last, since they need no GPU
#            and take minutes
# --budget S: the whole check ends within S seconds (for a machine lent for a fixed time): each
# step's time limit is cut to what is left, a step is skipped (and said so) when under 20 s are left,
# and each train run takes at most its share of what is left (what is left over the runs still to
# come, less 45 s to start and stop), skipped under 30 s (so the mg run needs some 150 s).
# A report already in DIR is kept: each run appends its own.
# --dry-run checks the script itself on a machine without a GPU: LibTorch from CMake's default
# search (Debian's), the device cpu, tiny sizes and durations.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

out="gpu-check-results"
phases="env,build,test,model,server,trainer,selfplay,train,cputests"
train_seconds=90
budget=0
peak=""
dry_run=0
train_sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --phases) phases="$2"; shift 2 ;;
    --train-seconds) train_seconds="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --train-set) train_sets+=(--set "$2"); shift 2 ;;
    --peak-tflops) peak="$2"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"
report="$out/gpu-check.md"
build="$root/build-gpu"
bin="$build/bin/oppidum"
jobs="$(nproc)"
device=cuda
[ "$dry_run" = 1 ] && device=cpu
failures=0
skipped=0
if ! [[ "$budget" =~ ^(0|[1-9][0-9]*)$ && "$train_seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "gpu-check: --budget and --train-seconds take whole seconds" >&2
  exit 2
fi
started=$(date +%s)

# Seconds left of --budget (a large number without one).
left() {
  if [ "$budget" = 0 ]; then echo 1000000; else echo $((budget - ($(date +%s) - started))); fi
}

has_phase() { [[ ",$phases," == *",$1,"* ]]; }
now() { date +%s.%N; }
note() { printf '%s\n' "$@" >>"$report"; }

# step TITLE LOG LIMIT_SECONDS COMMAND...: runs the command with a time limit, its output into LOG
# (appended) and the report (the last 120 lines), with the exit status and the time taken.
step() {
  local title="$1" log="$2" limit="$3"
  shift 3
  local start end status remaining
  remaining=$(left)
  if [ "$remaining" -lt 20 ]; then
    note "" "### $title" "" "skipped: ${remaining} s of the --budget left"
    echo "gpu-check: $title: skipped (budget)" >&2
    skipped=$((skipped + 1))
    return 1
  fi
  [ "$limit" -gt $((remaining - 10)) ] && limit=$((remaining - 10))
  note "" "### $title" "" '```' "\$ $*"
  echo "gpu-check: $title" >&2
  start="$(now)"
  timeout --kill-after=10 "$limit" "$@" >"$log.part" 2>&1
  status=$?
  end="$(now)"
  cat "$log.part" >>"$log"
  tail -n 120 "$log.part" >>"$report"
  rm -f "$log.part"
  note '```' "exit status $status, $(awk "BEGIN {printf \"%.1f\", $end - $start}") s$(
    [ "$status" = 124 ] && echo " (stopped at the ${limit} s limit)")"
  [ "$status" = 0 ] || failures=$((failures + 1))
  return "$status"
}

{
  [ -s "$report" ] && printf '\n---\n\n'
  echo "# oppidum GPU check"
  echo
  # (The device tool's copy of the tree is no git checkout: GPU_CHECK_COMMIT names the commit.)
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit ${GPU_CHECK_COMMIT:-$(
    git rev-parse --short HEAD 2>/dev/null || echo '?')}$(
    git rev-parse --git-dir >/dev/null 2>&1 && ! git diff --quiet 2>/dev/null &&
      echo ' with uncommitted changes'), phases $phases$(
    [ "$dry_run" = 1 ] && echo ', DRY RUN on the cpu')"
} >>"$report"

if has_phase env; then
  note "" "## The machine" "" '```'
  {
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit \
      --format=csv 2>&1 || echo "nvidia-smi: not available"
    echo "system: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
    echo "cpu cores: $(nproc); memory: $(free -g 2>/dev/null | awk '/Mem:/{print $2 " GiB"}')"
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
      "cudnn", torch.backends.cudnn.version(), "gpus", torch.cuda.device_count())' 2>&1
    g++ --version 2>&1 | head -n 1
    cmake --version 2>&1 | head -n 1
    echo "ninja $(ninja --version 2>&1)"
    (command -v nvcc >/dev/null && nvcc --version | tail -n 1) ||
      ls -d /usr/local/cuda*/bin/nvcc 2>/dev/null || echo "nvcc: not on PATH"
    # What trainer/CMakeLists.txt and model/CMakeLists.txt work around in a pip wheel's LibTorch.
    t="$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null)"
    if [ -n "$t" ]; then
      echo "torch at $t"
      [ -d "$t/include/fmt" ] && echo "its include/ holds fmt headers (kept out of spdlog's users)"
      grep -q 'add_library(dummy' "$t/share/cmake/Caffe2/Caffe2Config.cmake" 2>/dev/null &&
        echo "its Caffe2Config.cmake stands in an empty protobuf (Debian's is linked by path)"
      echo "google::protobuf symbols libtorch_cpu.so exports: $(nm -D --defined-only \
        "$t/lib/libtorch_cpu.so" 2>/dev/null | grep -c _ZN6google8protobuf)"
    fi
  } >>"$report" 2>&1
  note '```'
fi

# The GPU's dense fp16/bf16 peak (TFLOP/s) by name, for the model phase's shares.
if [ -z "$peak" ]; then
  gpu_name="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
  case "$gpu_name" in
    *H100*|*H200*) peak=989 ;;  # SXM, dense (NVIDIA's data sheets)
    *A100*) peak=312 ;;
    *) peak=0 ;;
  esac
fi

if has_phase build; then
  note "" "## Build"
  # (Whenever they are there: the install keeps every file the machine has, and a machine with
  # some of the packages, yaml-cpp say, may lack others.)
  if [ -d .gpu-deps/debs ]; then
    step "Debian's C++ packages from .gpu-deps (scripts/gpu-deps.sh install)" "$out/build.log" 120 \
      scripts/gpu-deps.sh install
  fi
  prefix_args=()
  if [ "$dry_run" = 0 ]; then
    prefix="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')"
    prefix_args=(-DCMAKE_PREFIX_PATH="$prefix")
    if ! command -v nvcc >/dev/null; then
      for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
        [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break
      done
    fi
    if command -v nvcc >/dev/null; then
      # LibTorch's CMake config finds the toolkit twice (FindCUDA, then CUDAToolkit), and both
      # must agree: from nvcc's folder, wherever it is (a pip-installed toolkit included).
      CUDACXX="$(readlink -f "$(command -v nvcc)")"
      export CUDACXX CUDA_HOME="${CUDA_HOME:-$(dirname "$(dirname "$CUDACXX")")}"
      export CUDAToolkit_ROOT="${CUDAToolkit_ROOT:-$CUDA_HOME}"
    fi
  fi
  step "configure" "$out/build.log" 300 \
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
    "${prefix_args[@]}"
  # -k 0: gpu_test failing to compile stops no benchmark (and no test binary of an earlier
  # build is left to run instead: each is linked again).
  rm -f "$build/bin/gpu_test"
  step "build oppidum and gpu_test ($jobs jobs)" "$out/build.log" 900 \
    cmake --build "$build" --parallel "$jobs" --target oppidum gpu_test -- -k 0
  # Before minutes of GPU phases: does the program start (it links LibTorch beside Debian's
  # protobuf and ONNX), and does a forward pass run on the device?
  skipped_before=$skipped
  if [ -x "$bin" ] &&
     ! { step "smoke test: oppidum --version" "$out/build.log" 60 "$bin" --version &&
         step "smoke test: one forward pass on $device" "$out/build.log" 120 \
           "$bin" bench model --device "$device" --sizes 4x32 --batches 64 --backends torch \
           --server-backends '' --seconds 0.05; } &&
     [ "$skipped" = "$skipped_before" ]; then  # (a step skipped for the budget is no failure)
    note "" "The smoke test failed: the phases that run the program on the device are skipped" \
      "(the gpu tests, a program of their own without ONNX or protobuf, still run)."
    kept=""
    for p in ${phases//,/ }; do
      case "$p" in model|server|selfplay|trainer|train) ;; *) kept="${kept:+$kept,}$p" ;; esac
    done
    phases="$kept"
  fi
fi

if [ ! -x "$bin" ]; then
  note "" "No $bin: the phases after the build are skipped."
  phases="env"
fi

if has_phase test; then
  note "" "## The gpu tests"
  # The test binary itself rather than ctest -L gpu (the same tests), so that the differences
  # each test measures are printed whether it passes or not.
  [ "$dry_run" = 1 ] || export GPU_CHECK_REQUIRE_GPU=1
  if [ -x "$build/bin/gpu_test" ]; then
    step "the gpu tests (build-gpu/bin/gpu_test, the tests of ctest -L gpu)$(
      [ "$dry_run" = 1 ] && echo ', dry run: they skip')" "$out/tests.log" 240 "$build/bin/gpu_test"
  else
    note "" "No $build/bin/gpu_test: it did not build (build.log)."
    failures=$((failures + 1))
  fi
fi

if has_phase model; then
  note "" "## Forward pass by batch size (bench model), peak ${peak} TFLOP/s"
  if [ "$dry_run" = 1 ]; then
    args=(--sizes 4x32 --batches 64,256 --backends torch,torch-nhwc --seconds 0.05)
  else
    args=(--sizes 4x32,10x128 --batches 64,128,256,512,1024,2048,4096
          --backends torch,torch-fp16,torch-bf16,torch-nhwc-bf16 --seconds 0.3)
  fi
  for game in mg dvonn; do
    step "bench model, $game" "$out/bench.log" 300 \
      "$bin" bench model --game "$game" --device "$device" "${args[@]}" --server-backends '' \
      --peak-tflops "$peak"
  done
fi

if has_phase server; then
  note "" "## The inference server: workers on one GPU (bench model)"
  if [ "$dry_run" = 1 ]; then
    args=(--sizes 4x32 --batches 64 --backends torch --server-backends torch --callers 4
          --workers 1,2 --rounds 1 --seconds 0.1)
  else
    args=(--sizes 10x128 --batches 256,1024 --backends torch-bf16 --server-backends torch-bf16
          --callers 8,32 --workers 1,2,4 --rounds 2 --seconds 0.5)
  fi
  step "bench model, server workers, dvonn" "$out/bench.log" 300 \
    "$bin" bench model --game dvonn --device "$device" "${args[@]}"
fi

if has_phase trainer; then
  note "" "## The trainer alone (bench train)"
  for game in mg dvonn; do
    if [ "$dry_run" = 1 ]; then
      args=(--precisions fp32 --steps 3 --warmup 1 --batch-size 64 --set net.blocks=2
            --set net.filters=16)
    else
      args=(--precisions fp32,bf16 --steps 30 --warmup 5)
    fi
    step "bench train, configs/$game.yaml" "$out/bench.log" 300 \
      "$bin" bench train --config "configs/$game.yaml" --device "$device" \
      --set training.warmup_steps=0 "${args[@]}"
  done
fi

if has_phase selfplay; then
  note "" "## Self-play without the trainer (bench selfplay)"
  for game in mg dvonn; do
    if [ "$dry_run" = 1 ]; then
      args=(--threads 1 --seconds 0.5 --warmup 0.2 --set inference.device=cpu --set net.blocks=1
            --set net.filters=8 --set selfplay.concurrent_games=16 --set inference.max_batch=16)
    else
      # A thread's 256 games move about once a second: windows of several moves a thread.
      args=(--threads 4,8 --seconds 5 --warmup 2)
    fi
    step "bench selfplay, configs/$game.yaml" "$out/bench.log" 200 \
      "$bin" bench selfplay --config "configs/$game.yaml" "${args[@]}"
    [ "$dry_run" = 1 ] ||
      step "bench selfplay, configs/$game.yaml, the network in bf16" "$out/bench.log" 200 \
        "$bin" bench selfplay --config "configs/$game.yaml" "${args[@]}" --networks net \
        --set inference.precision=bf16
  done
fi

if has_phase train; then
  note "" "## oppidum train on the GPU-box configs, ${train_seconds} s each (at most)"
  runs="$(mktemp -d)"
  games_left=2
  for game in mg dvonn; do
    # Each run takes its seconds plus about 45 s to start and stop; with a --budget the runs left
    # share what is left.
    seconds=$train_seconds
    share=$(( $(left) / games_left - 45 ))
    [ "$share" -lt "$seconds" ] && seconds=$share
    games_left=$((games_left - 1))
    if [ "$seconds" -lt 30 ] && [ "$seconds" -lt "$train_seconds" ]; then
      note "" "### train configs/$game.yaml" "" "skipped: under 30 s of the --budget for it"
      skipped=$((skipped + 1))
      continue
    fi
    minutes="$(awk "BEGIN {printf \"%.3f\", $seconds / 60}")"
    sets=(--set run.stop_after_minutes="$minutes" --set training.min_positions=20000
          --set training.window_min=20000 --set training.steps_per_generation=300
          --set arena.max_games=0 --set arena.anchor_games=0)
    if [ "$dry_run" = 1 ]; then
      sets+=(--set inference.device=cpu --set selfplay.threads=1 --set selfplay.concurrent_games=16
             --set selfplay.simulations=16 --set selfplay.fast_simulations=4)
    fi
    sets+=("${train_sets[@]}")
    sampler=""
    if command -v nvidia-smi >/dev/null; then
      nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,memory.used,power.draw \
        --format=csv,noheader -l 1 >"$out/nvidia-smi-$game.csv" 2>&1 &
      sampler=$!
    fi
    step "train configs/$game.yaml for $seconds s" "$out/train-$game.log" $((seconds + 240)) \
      "$bin" train --config "configs/$game.yaml" --run "$runs/$game" --no-status "${sets[@]}"
    [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
    if [ -s "$out/nvidia-smi-$game.csv" ]; then
      note "" "GPU utilisation while it ran (nvidia-smi, once a second):" '```'
      awk -F', ' '{gsub(/ %/, "", $2); n++; s += $2; if ($2 > 0) busy++}
        END {if (n) printf "%d samples: mean %.1f%%, nonzero in %d\n", n, s / n, busy}' \
        "$out/nvidia-smi-$game.csv" >>"$report"
      note '```'
    fi
    note "" "The session's self-play against its bound, and the trainer's pace:" '```'
    grep -h -e 'session self-play: ' -e 'trainer this session: ' "$out/train-$game.log" \
      >>"$report" 2>/dev/null || note "(not in the log: see above)"
    note '```'
    if [ -f "$runs/$game/metrics.csv" ]; then
      note "" "metrics.csv selfplay rows:" '```'
      head -n 1 "$runs/$game/metrics.csv" >>"$report"
      grep '^selfplay,' "$runs/$game/metrics.csv" | tail -n 8 >>"$report"
      note '```'
    fi
  done
  rm -rf "$runs"
fi

if has_phase cputests; then
  note "" "## The LibTorch tests on the cpu"
  # The trainer's and the model's own tests against this LibTorch, whose version may differ from
  # the one the default test run uses (Debian's), and the ONNX export (`oppidum export` linked
  # with this LibTorch and Debian's protobuf; its comparison with onnxruntime-node skips where
  # there is no node).
  rm -f "$build/bin/trainer_test" "$build/bin/model_test" "$build/bin/onnx_export_test"
  step "build trainer_test, model_test and onnx_export_test" "$out/build.log" 600 \
    cmake --build "$build" --parallel "$jobs" --target trainer_test model_test onnx_export_test \
    -- -k 0
  # The trainer's tests of a Redis stream start a redis-server of their own: left out where there
  # is none (the GPU machine has no Debian packages).
  filter=()
  command -v redis-server >/dev/null || filter=(--gtest_filter=-IntakeStream.*)
  for t in trainer_test model_test onnx_export_test; do
    [ -x "$build/bin/$t" ] &&
      step "$t against this LibTorch" "$out/tests.log" 300 "$build/bin/$t" "${filter[@]}"
  done
fi

note "" "## Summary" "" "$failures step(s) failed, $skipped skipped for the --budget; $(( $(date +%s) - started )) s."
echo "gpu-check: $report ($failures step(s) failed, $skipped skipped)" >&2
[ "$failures" = 0 ]
