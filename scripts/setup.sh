#!/usr/bin/env bash
# Installs what oppidum needs to build and test on Debian 12, from Debian's packages, plus two
# packages from the npm registry that the default test suite needs: onnxruntime-node (scripts/onnx/,
# for the ONNX export test) and playwright-core (tests/web/, drives Debian's Chromium in the web
# page's browser test; it downloads no browser). Both run on Debian 12's own Node (nodejs 18.20,
# installed with Debian's npm when there is no `node` or `npm`); a newer Node works too.
# Safe to run again: apt-get and npm skip what is installed. Runs apt-get through sudo when not root.
# Fails (exit status 1, saying what and why) when it cannot install something the default suite
# needs, or when this machine's `node` cannot load what was installed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

fail() {
  echo "setup: error: $*" >&2
  exit 1
}

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
    command -v sudo >/dev/null || fail "run as root or install sudo"
    SUDO=sudo
  fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v node >/dev/null || fail "no node on PATH after installing Debian's nodejs"
command -v npm >/dev/null || fail "no npm on PATH after installing Debian's npm"
node_version="node $(node --version) ($(command -v node))"

# npm_install FOLDER PACKAGE WHAT: installs FOLDER's locked npm packages (package-lock.json, with
# npm ci; install scripts skipped) unless PACKAGE is already there at the version package.json
# pins, then checks that this node loads PACKAGE.
npm_install() {
  local folder="$1" package="$2" what="$3" want have output
  want="$(cd "$root/$folder" && node -p "require('./package.json').dependencies['$package']")" ||
    fail "cannot read the version of $package from $folder/package.json"
  have="$(cd "$root/$folder" &&
          node -p "require('./node_modules/$package/package.json').version" 2>/dev/null)" || have=""
  if [ "$have" != "$want" ]; then
    echo "setup: installing $package $want into $folder (for $what)"
    (cd "$root/$folder" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
      fail "npm could not install $package $want into $folder (for $what; $node_version," \
           "npm $(npm --version 2>/dev/null))"
  fi
  output="$(cd "$root/$folder" && node -e "require('$package')" 2>&1)" ||
    fail "$node_version cannot load $package $want from $folder (for $what):" \
         "$(echo "$output" | head -5)"
}

# onnxruntime-node: its install script would download from a host this kind of network cannot
# reach; the CPU binaries are inside the package, so the script is skipped.
npm_install scripts/onnx onnxruntime-node "the ONNX export test"
# playwright-core: the browser test drives /usr/bin/chromium with it; its install script is skipped
# (it would offer to download browsers, which the test never uses).
npm_install tests/web playwright-core "the web page's browser test"
echo "setup: onnxruntime-node and playwright-core load under $node_version"
