#!/usr/bin/env bash
# Installs what RKC needs on Debian 12 (as root, when something is missing),
# then configures and builds it into build/ (or $RKC_BUILD_DIR).
# Extra CMake arguments: RKC_CMAKE_ARGS="-DRKC_STATIC=ON".
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ python3 llvm-22-dev libmlir-22-dev mlir-22-tools
          llvm-22-tools libgtest-dev libgmock-dev libzstd-dev python3-torch)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build=${RKC_BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -G Ninja -S . -B "$build" \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit ${RKC_CMAKE_ARGS:-}
cmake --build "$build"
