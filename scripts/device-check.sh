#!/usr/bin/env bash
# On a GPU machine: runs the GPU tests and the collective benchmarks in one go, writing logs
# to OUT. The binaries come from BIN (a build directory, or a folder holding mgk,
# mgk-harness, gpu_tests and mgk-microbench built elsewhere).
# Usage: scripts/device-check.sh OUT [BIN] [STEPS]
#   MGK_TEST_WORLD=4 (or 8) runs the GPU tests and the benchmarks at that world size.
#   STEPS: comma-separated subset of: env,doctor,calibrate,tests,agent,bench,shared,problems,suite,tune,repeat,overhead,
#          showcase,microbench (shared and suite: ranks sharing GPU 0, so one GPU is enough; not in the
#          default set. suite: `mgk bench` over the whole suite, 2 samples, a scripted model; it needs
#          bench_run_tests in BIN and leaves bench-gpu-report.{md,json,html} in OUT)
#          badcands: every bad candidate with ranks sharing GPU 0, one verdict line each.
#          sandbox: the candidate sandbox's CPU test, run here too (no bubblewrap here: namespaces).
#          primitives: the primitives' device unit tests (tests/primitives), ranks sharing GPU 0.
#          problems: every compute problem with ranks sharing GPU 0 (scripts/suite-on-one-gpu.sh:
#          PROBLEMS, STAGES, SKIP_LARGE, JOBS pass through; REFERENCE_W1 defaults to 1).
# Ends with one line per step (passed, failed, skipped) and exits non-zero when any step failed.
# MGK_HARNESS overrides the harness (e.g. a broken one, to see the GPU tests fail, not skip).
set -uo pipefail
out="${1:?usage: device-check.sh OUT [BIN] [STEPS]}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${2:-$root/build}" && pwd)"
steps=",${3:-env,doctor,calibrate,tests,agent,bench,tune,repeat,overhead,microbench},"
mkdir -p "$out"
export MGK_ROOT="$root" MGK_HOME="${MGK_HOME:-/tmp/mgk-home}" MGK_DB="${MGK_DB:-/tmp/mgk-device.db}"
export MGK_TEST_BUILD_DIR="$bin" MGK_TEST_SOURCE_DIR="$root/tests" MGK_HARNESS="${MGK_HARNESS:-$bin/mgk-harness}"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PATH="/usr/local/cuda/bin:$PATH" LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
mgk="$bin/mgk"
# A test binary: beside mgk in a flat folder, or under tests/ in a build tree.
tbin() { if [ -x "$bin/$1" ]; then echo "$bin/$1"; else echo "$bin/tests/$1"; fi; }
want() { [[ "$steps" == *",$1,"* ]]; }
section() { echo; echo "===== $* ($(date -u +%H:%M:%S))"; }
summary=()
any_failed=0
# record STEP PASSED FAILED SKIPPED
record() {
  summary+=("$(printf '%-10s %3d passed, %3d failed, %3d skipped' "$1" "$2" "$3" "$4")")
  [ "$3" -gt 0 ] && any_failed=1
  return 0
}
# gtest STEP LOG BINARY [ARGS...]: runs a googletest binary, keeps its log, records its counts
# (a binary that dies without a failure line counts as one failure).
gtest() {
  local step="$1" log="$2"
  shift 2
  "$@" --gtest_color=no > "$log" 2>&1
  local rc=$?
  local p f s
  p=$(grep -cE '^\[       OK \] .* \([0-9]+ ms\)$' "$log")
  f=$(grep -cE '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$log")
  s=$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$log")
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  grep -E "^\[ *(RUN|OK|FAILED|SKIPPED|PASSED) *\]|Failure|Expected|Which is|rejected:|skipped:|error" "$log" | head -400
  record "$step" "$p" "$f" "$s"
}

if want env; then
  section environment
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
  nvidia-smi topo -m
  ldd "$bin/mgk-harness" | grep -E "not found|cuda|nccl|cublas" || true
fi
if want doctor; then section mgk doctor; "$mgk" doctor; fi
if want calibrate; then section mgk calibrate; "$mgk" calibrate; fi
if want tests; then
  section GPU tests
  # The suite's own checks (SuiteOnOneGpu.*, 45 problems one evaluation at a time) are the
  # `problems` step's, eight at a time; GPU_TESTS_FILTER='*' runs them here too.
  gtest tests "$out/gpu_tests.log" "$(tbin gpu_tests)" --gtest_filter="${GPU_TESTS_FILTER:--SuiteOnOneGpu.*}"
fi
if want agent; then
  section "agent on the GPUs: scripted model over loopback HTTP, real evaluator; tuner end to end"
  gtest agent "$out/agent_tests.log" "$(tbin agent_tests)" --gtest_filter='GenerateCli.*'
  [ -x "$(tbin tune_tests)" ] && gtest tune-cli "$out/tune_tests.log" "$(tbin tune_tests)" --gtest_filter='TuneCli.*'
fi
if want bench; then
  section "collective benchmarks: expert vs NCCL (mgk eval, every preset)"
  for p in all_reduce all_gather reduce_scatter all_to_all broadcast reduce scatter gather; do
    "$mgk" eval "collectives/$p" --expert --size tiny,small,medium,large --world "${MGK_TEST_WORLD:-2}" --json > "$out/bench-$p.json" 2>>"$out/bench.err"
    python3 - "$out/bench-$p.json" "$p" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]:15s} no JSON ({e})"); sys.exit()
print(f"{sys.argv[2]:15s} {r['verdict']}: {r['message'][:200]}")
for s in r.get('sizes', []):
    ref, c = s.get('reference') or {}, s.get('candidate') or {}
    rf, fl = s.get('roofline_fraction'), (s.get('floor') or {}).get('median_us', 0)
    print(f"   {s['size']:7s} NCCL {ref.get('median_us',0):9.2f} us  expert {c.get('median_us',0):9.2f} us"
          f"  speedup {s.get('speedup',0):5.2f}x  roofline {'-' if rf is None else f'{rf*100:.1f}%'} ({s.get('roofline_bound','')})"
          f"  floor {fl:.2f} us")
PY
  done
  python3 - "$out" <<'PY'
import json, glob, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], 'bench-*.json'))):
    try: rows[os.path.basename(f)[6:-5]] = json.load(open(f))
    except Exception: pass
json.dump(rows, open(os.path.join(sys.argv[1], 'bench.json'), 'w'), indent=1)
PY
  rm -f "$out"/bench-*.json
fi
if want shared; then
  section "ranks sharing GPU 0 (correctness only, not timed): every expert at world ${SHARED_WORLDS:-2 4 8}"
  shared_ok=0
  shared_bad=0
  for w in ${SHARED_WORLDS:-2 4 8}; do
    gpus="0$(printf ',0%.0s' $(seq 2 "$w"))"
    for p in all_reduce all_gather reduce_scatter all_to_all broadcast reduce scatter gather; do
      start=$(date +%s%N)
      "$mgk" eval "collectives/$p" --expert --gpus "$gpus" --size "${SHARED_SIZES:-tiny,small,medium,odd}" --no-store --json \
        > "$out/shared-$p-$w.json" 2>>"$out/shared.err"
      verdict=$(python3 -c "
import json,sys; r=json.load(open(sys.argv[1]))
print('  W=%s %-15s %-10s %s' % ('$w', '$p', r['verdict'], r['message'][:160]))" "$out/shared-$p-$w.json" 2>/dev/null ||
        echo "  W=$w $p: no JSON (see shared.err)")
      echo "$verdict"
      if [[ "$verdict" == *" correct "* ]]; then shared_ok=$((shared_ok + 1)); else shared_bad=$((shared_bad + 1)); fi
      echo "      ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
    done
  done
  record shared "$shared_ok" "$shared_bad" 0
fi
if want primitives; then
  section "the primitives' device unit tests, every rank on GPU 0 (tests/primitives, W=2 and 4)"
  gtest primitives "$out/primitives.log" "$(tbin primitives_tests)"
fi
if want problems; then
  section "every compute problem on GPU 0: plain candidates, degenerates, references at one rank (scripts/suite-on-one-gpu.sh)"
  KEEP_LOGS="${KEEP_LOGS:-bad}" REFERENCE_W1="${REFERENCE_W1:-1}" JOBS="${JOBS:-8}" "$root/scripts/suite-on-one-gpu.sh" "$out/problems" "$bin" \
    > "$out/problems.log" 2>&1
  grep -E "^BAD|suite-on-one-gpu:" "$out/problems.log" | head -60
  record problems "$(grep -c '^ok ' "$out/problems/verdicts.txt")" "$(grep -c '^BAD ' "$out/problems/verdicts.txt")" 0
fi
if want suite; then
  section "mgk bench: the whole suite, 2 samples, scripted model over loopback HTTP, every rank on GPU 0 (checked, not timed)"
  MGK_TEST_ARTIFACTS="$out" gtest suite "$out/bench_suite.log" "$(tbin bench_run_tests)" \
    --gtest_filter='BenchCli.WholeSuiteOnOneGpuRanksSharingIt'
  tail -60 "$out/bench_suite.log"
fi
if want badcands; then
  section "every bad candidate with ranks sharing GPU 0: the verdict and why"
  bad_ok=0
  bad_bad=0
  for f in "$root"/tests/bad_candidates/*.cu; do
    name=$(basename "$f" .cu)
    "$mgk" eval collectives/all_reduce "$f" --gpus 0,0 --trials 2 --timeout 10 --no-store --json > "$out/bad-$name.json" 2>>"$out/bad.err"
    line=$(python3 -c "
import json,sys; r=json.load(open(sys.argv[1])); s=(r.get('sizes') or [{}])[-1]
print('%-20s %-14s %s' % ('$name', r['verdict'], (s.get('failure') or r['message'])[:170]))" "$out/bad-$name.json" 2>/dev/null ||
      echo "$name: no JSON (see bad.err)")
    echo "  $line"
    # Every one is wrong; the ones only timing or ranks running at once can show are expected to pass here.
    case "$name" in
      no_start_sync|skips_unchecked|reads_api_key) ;;
      *) if [[ "$line" == *" correct "* || "$line" == *"no JSON"* ]]; then bad_bad=$((bad_bad + 1)); else bad_ok=$((bad_ok + 1)); fi ;;
    esac
  done
  record badcands "$bad_ok" "$bad_bad" 0
fi
if want sandbox; then
  section "the candidate's sandbox on this machine (isolation: $("$mgk" doctor 2>/dev/null | grep -i -m1 -E 'isolation|bubblewrap' || true))"
  gtest sandbox "$out/sandbox.log" "$(tbin eval_tests)" --gtest_filter='*CandidateSandbox*:ScriptedEval.*'
fi
if want tune; then
  section "tuning expert collectives at the small size (mgk tune), then default vs tuned (mgk eval)"
  for p in ${TUNE_PROBLEMS:-all_reduce all_gather}; do
    "$mgk" tune "collectives/$p" "$root/problems/collectives/$p/expert.cu" --size small --max-evals "${TUNE_EVALS:-12}" \
      --strategy random --seed 1 --out "/tmp/$p.tuned.cu" 2>&1 | tail -16
    for k in "$root/problems/collectives/$p/expert.cu" "/tmp/$p.tuned.cu"; do
      "$mgk" eval "collectives/$p" "$k" --size small,medium --no-store --json 2>/dev/null | python3 -c "
import json,sys; r=json.load(sys.stdin)
print('  %-8s %s' % ('default' if 'expert.cu' in '$k' else 'tuned', r['verdict']), ' '.join('%s %.2f us (NCCL %.2f, %.2fx)' % (s['size'], s['candidate']['median_us'], s['reference']['median_us'], s['speedup']) for s in r['sizes'] if s.get('candidate')))"
    done
  done
fi
if want repeat; then
  section "repeatability: the same kernel twice at the medium size"
  for i in 1 2; do
    "$mgk" eval collectives/all_reduce --expert --size medium --json --no-store 2>/dev/null |
      python3 -c "import json,sys; r=json.load(sys.stdin); s=r['sizes'][0]; print('run $i: reference %.2f us, expert %.2f us' % (s['reference']['median_us'], s['candidate']['median_us']))"
  done
fi
if want overhead; then
  section "overhead: compile a typical candidate (cold cache), then evaluate at three sizes (cached)"
  cold="$(mktemp -d)"
  start=$(date +%s%N)
  MGK_HOME="$cold" "$mgk" eval collectives/all_reduce --expert --compile-only --no-store
  echo "compile, cold cache (reference and expert): $(( ($(date +%s%N) - start) / 1000000 )) ms wall"
  start=$(date +%s%N)
  MGK_HOME="$cold" "$mgk" eval collectives/all_reduce --expert --size small,medium,large --no-store > /dev/null
  echo "evaluate at 3 sizes (compiled): $(( ($(date +%s%N) - start) / 1000000 )) ms wall"
fi
if want showcase; then
  section "what a user sees: a correct candidate and four bad ones"
  for k in gpu/candidates/all_reduce bad_candidates/side_stream bad_candidates/modifies_input bad_candidates/partial_write; do
    echo "\$ mgk eval collectives/all_reduce tests/$k.cu --size small,odd"
    "$mgk" eval collectives/all_reduce "$root/tests/$k.cu" --size small,odd --no-store; echo "(exit $?)"
  done
  echo "\$ mgk eval collectives/all_reduce tests/bad_candidates/hang.cu --timeout 10"
  start=$(date +%s%N)
  "$mgk" eval collectives/all_reduce "$root/tests/bad_candidates/hang.cu" --timeout 10 --no-store; echo "(exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms)"
fi
if want microbench; then
  section "mechanism micro-benchmark"
  if [ -x "$bin/mgk-microbench" ]; then
    "$bin/mgk-microbench" --csv "$out/microbench.csv" 2>&1 | tail -60
    python3 "$root/bench/plot_microbench.py" "$out/microbench.csv" -o "$out/microbench.png" || true
  else
    echo "mgk-microbench not built"
  fi
fi
section summary
for line in "${summary[@]}"; do echo "  $line"; done
[ "$any_failed" -eq 0 ] && echo "  all steps passed" || echo "  SOME STEPS FAILED"
exit "$any_failed"
