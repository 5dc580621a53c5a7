#!/usr/bin/env bash
# Installs what is missing (Debian 12, as root), configures and builds strads into build/.
# Safe to run again: it only installs missing packages and rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make mpich libmpich-dev libflatbuffers-dev flatbuffers-compiler liblz4-dev zlib1g-dev
          libcli11-dev doctest-dev gdb python3 clang-format chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${STRADS_CMAKE_ARGS:-} > /dev/null
cmake --build build -j"$(nproc)"
