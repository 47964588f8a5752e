#!/usr/bin/env bash
# Installs what oppidum needs to build and test on Debian 12, from Debian's packages, plus two
# packages from the npm registry: onnxruntime-node (scripts/onnx/, used only by the ONNX export
# test) and playwright-core (tests/web/, drives Debian's Chromium in the web page's browser test;
# it downloads no browser).
# Safe to run again: apt-get and npm skip what is installed. Runs apt-get through sudo when not root.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0-openmp   # LibTorch 1.13; OpenBLAS with OpenMP for fast CPU inference
  libeigen3-dev libspdlog-dev libyaml-cpp-dev libcli11-dev
  libonnx-dev libprotobuf-dev        # ONNX export (schema classes, checker)
  libgtest-dev libgmock-dev zlib1g-dev
  libhiredis-dev redis-server        # self-play on many machines (docs/DISTRIBUTED.md); the tests
                                     # start their own redis-server on a loopback port
  libcpp-httplib-dev nlohmann-json3-dev  # the web page (`oppidum serve`, web/)
  chromium fonts-dejavu-core         # headless, for the web page's browser test and screenshots
)
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
    SUDO=sudo
  fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# onnxruntime-node: its install script would download from a host this kind of network cannot
# reach; the CPU binaries are inside the package, so the script is skipped.
if [ ! -f "$root/scripts/onnx/node_modules/onnxruntime-node/package.json" ]; then
  echo "setup: installing onnxruntime-node into scripts/onnx (for the ONNX export test)"
  (cd "$root/scripts/onnx" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
    echo "setup: warning: npm could not install onnxruntime-node; the ONNX runtime test will be" \
         "skipped" >&2
fi

# playwright-core: the browser test drives /usr/bin/chromium with it; its install script is skipped
# (it would offer to download browsers, which the test never uses).
if [ ! -f "$root/tests/web/node_modules/playwright-core/package.json" ]; then
  echo "setup: installing playwright-core into tests/web (for the web page's browser test)"
  (cd "$root/tests/web" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
    echo "setup: warning: npm could not install playwright-core; the browser test will be" \
         "skipped" >&2
fi
