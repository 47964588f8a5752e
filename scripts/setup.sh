#!/usr/bin/env bash
# Installs what oppidum needs to build and test on Debian 12, from Debian's packages only.
# Safe to run again: apt-get skips what is installed. Runs apt-get through sudo when not root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0-openmp   # LibTorch 1.13; OpenBLAS with OpenMP for fast CPU inference
  libeigen3-dev libspdlog-dev libyaml-cpp-dev libcli11-dev
  libgtest-dev libgmock-dev zlib1g-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
  SUDO=sudo
fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
