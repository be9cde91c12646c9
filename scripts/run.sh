#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs mgk. With no arguments: the main job on a GPU machine —
# check the machine, measure its ceilings, and evaluate every expert collective against
# NCCL at every size preset. With arguments: `mgk ARGS...` (e.g. generate, eval, tune).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${MGK_BUILD_DIR:-$here/build}"
MGK_BUILD_JOBS="${MGK_BUILD_JOBS:-}" "$here/scripts/setup.sh" "$build" >&2
mgk="$build/mgk"
if (($#)); then exec "$mgk" "$@"; fi
"$mgk" doctor
"$mgk" calibrate
for expert in "$here"/problems/*/*/expert.cu; do
  dir="$(dirname "$expert")"
  "$mgk" eval "$(basename "$(dirname "$dir")")/$(basename "$dir")" --expert --size small,medium,large
done
