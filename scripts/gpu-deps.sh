#!/usr/bin/env bash
# The Debian 12 C++ packages oppidum builds with, as .deb files, for a GPU machine that has a CUDA
# PyTorch but no Debian packages and no network (docs/GPU.md, "A machine without Debian's
# packages").
#   scripts/gpu-deps.sh download   on a Debian 12 machine: fetches them into .gpu-deps/debs/
#                                  (about 13 MB; the folder is ignored by git)
#   scripts/gpu-deps.sh install    on the GPU machine, as root: unpacks them into / without
#                                  replacing any file that is already there, then runs ldconfig
# scripts/gpu-check.sh runs `install` itself when it finds .gpu-deps/debs/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
debs="$root/.gpu-deps/debs"

# Headers and libraries of the build (web, Redis and ONNX parts included), their runtime
# libraries, and pkg-config with the .pc files that cpp-httplib's names.
packages=(
  libeigen3-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7
  libhiredis-dev libhiredis0.14 libcpp-httplib-dev libcpp-httplib0.11
  libonnx-dev libonnx1 libonnxifi libprotobuf-dev libprotobuf32 libprotobuf-lite32
  zlib1g-dev libssl-dev libssl3 libbrotli-dev libbrotli1
  pkgconf pkgconf-bin libpkgconf3
)

case "${1:-}" in
  download)
    mkdir -p "$debs"
    (cd "$debs" && apt-get download "${packages[@]}")
    du -sh "$debs"
    ;;
  install)
    [ -d "$debs" ] || { echo "gpu-deps: no $debs (run '$0 download' on Debian 12 first)" >&2; exit 1; }
    stage="$(mktemp -d)"
    for deb in "$debs"/*.deb; do
      if command -v dpkg-deb >/dev/null; then
        dpkg-deb -x "$deb" "$stage"
      else  # ar and tar: a .deb is an ar archive holding data.tar.xz
        (cd "$stage" && ar p "$deb" data.tar.xz | tar -xJ)
      fi
    done
    # A file the machine already has stays as it is (tar --skip-old-files, not cp -n, which
    # coreutils 9.2 and later fail on when they skip a file), and a folder that is a link there
    # (Ubuntu's /lib) stays a link.
    tar -C "$stage" -cf - . | tar -C / -xf - --skip-old-files \
      --keep-directory-symlink
    rm -rf "$stage"
    command -v pkg-config >/dev/null || ln -s /usr/bin/pkgconf /usr/bin/pkg-config
    ldconfig
    echo "gpu-deps: installed $(ls "$debs"/*.deb | wc -l) packages' files into / (existing files kept)"
    ;;
  *)
    echo "usage: $0 download|install" >&2
    exit 2
    ;;
esac
