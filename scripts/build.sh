#!/usr/bin/env bash
# Configures and builds oppidum into build/ (Release-with-debug-info). Extra arguments go to CMake,
# e.g. -DCMAKE_PREFIX_PATH=/path/to/libtorch for a CUDA build of LibTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja "$@" >/dev/null
cmake --build build --parallel "$(nproc)"
echo "build: build/bin/oppidum"
