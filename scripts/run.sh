#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs mgk. With arguments: `mgk ARGS...` (e.g. generate, eval,
# tune, bench). With none, the main job, chosen by what this machine has, said in one line:
#   - an API key (ANTHROPIC_API_KEY or OPENAI_API_KEY; MGK_MODEL picks the model): a
#     `generate` session on collectives/all_reduce (one GPU: the ranks share it, checked, not
#     timed; no GPU: compile-only);
#   - no key, two GPUs or more: the by-hand job: doctor, calibrate, every expert collective
#     against NCCL at three sizes, then a short tune of the all-reduce expert;
#   - no key, one GPU: every expert with its ranks sharing GPU 0 (checked, not timed);
#   - no key, no GPU: every expert compiled (compile-only).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${MGK_BUILD_DIR:-$here/build}"
MGK_BUILD_JOBS="${MGK_BUILD_JOBS:-}" "$here/scripts/setup.sh" "$build" >&2
mgk="$build/mgk"
if (($#)); then exec "$mgk" "$@"; fi

# GPUs as mgk sees them (CUDA_VISIBLE_DEVICES respected); 0 where the driver is missing.
gpus=$("$build/mgk-harness" probe 2>/dev/null | grep -o '"index"' | wc -l || true)
gpus=${gpus:-0}
model="${MGK_MODEL:-}"
if [ -z "$model" ]; then
  if [ -n "${ANTHROPIC_API_KEY:-}" ]; then model="anthropic:claude-sonnet-4-5"
  elif [ -n "${OPENAI_API_KEY:-}" ]; then model="openai:gpt-5"
  fi
fi
experts() {
  for expert in "$here"/problems/*/*/expert.cu; do
    dir="$(dirname "$expert")"
    echo "$(basename "$(dirname "$dir")")/$(basename "$dir")"
  done
}

if [ -n "$model" ]; then
  case "$gpus" in
    0) echo "run.sh: path: generate with $model on collectives/all_reduce, compile-only (no GPU here)"
       exec "$mgk" generate --problem collectives/all_reduce --model "$model" --compile-only ;;
    1) echo "run.sh: path: generate with $model on collectives/all_reduce, both ranks on the one GPU (checked, not timed)"
       exec "$mgk" generate --problem collectives/all_reduce --model "$model" ;;
    *) echo "run.sh: path: generate with $model on collectives/all_reduce on 2 of the $gpus GPUs"
       exec "$mgk" generate --problem collectives/all_reduce --model "$model" ;;
  esac
fi

case "$gpus" in
  0)
    echo "run.sh: path: no API key, no GPU: compiling every expert (--compile-only); set ANTHROPIC_API_KEY or OPENAI_API_KEY for a generate session"
    "$mgk" doctor || true
    for p in $(experts); do "$mgk" eval "$p" --expert --compile-only; done ;;
  1)
    echo "run.sh: path: no API key, one GPU: every expert with both ranks sharing GPU 0 (checked, not timed; tuning needs two GPUs)"
    "$mgk" doctor || true
    for p in $(experts); do "$mgk" eval "$p" --expert --gpus 0,0; done ;;
  *)
    echo "run.sh: path: no API key, $gpus GPUs: by hand: doctor, calibrate, every expert against NCCL, a short tune"
    "$mgk" doctor
    "$mgk" calibrate
    for p in $(experts); do "$mgk" eval "$p" --expert --size small,medium,large; done
    "$mgk" tune collectives/all_reduce "$here/problems/collectives/all_reduce/expert.cu" --max-evals 8 \
      --out "${MGK_HOME:-$here/.mgk}/all_reduce.tuned.cu" ;;
esac
