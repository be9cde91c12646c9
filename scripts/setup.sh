#!/usr/bin/env bash
# Installs every Debian package mgk needs to build (idempotent) and builds it.
# Usage: scripts/setup.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"

packages=(cmake ninja-build g++ pkg-config libcurl4-openssl-dev nlohmann-json3-dev libcli11-dev
          libboost-dev libboost-filesystem-dev libsqlite3-dev sqlite3 libgtest-dev bubblewrap
          libseccomp-dev  # the candidate process's system-call filter (linked statically)
          binutils  # objdump: the built kernels' code is checked for system-call instructions
          chromium  # the HTML report test renders the report headless
          python3  # the device-visit scripts (scripts/suite-on-one-gpu.sh) and their test
          slurm-wlm munge)  # the Slurm executor's test starts a one-node Slurm of its own
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The CUDA toolkit (nvcc, cudart, cuBLAS) and NCCL come with the machine image.
export PATH="/usr/local/cuda/bin:$PATH"
if ! command -v nvcc >/dev/null; then
  echo "setup: nvcc not found: install the CUDA toolkit 12.8+ (it provides nvcc, cuBLAS) and NCCL" >&2
  exit 1
fi

cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${MGK_BUILD_TYPE:-Release}" >/dev/null
jobs="${MGK_BUILD_JOBS:-$(nproc)}"
cmake --build "$build" -j "$jobs"
echo "setup: built $build/mgk and $build/mgk-harness"
