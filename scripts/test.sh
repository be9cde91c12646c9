#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite. Tests labelled `gpu` report
# "skipped: no GPU" on machines without one; run them on a GPU machine with
# scripts/device-check.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
"$here/scripts/setup.sh" "$build"
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 600
