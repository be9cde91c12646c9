#!/usr/bin/env bash
# The suite's GPU checks on one GPU, several evaluations at once: what
# `gpu_tests --gtest_filter='SuiteOnOneGpu.*'` checks one evaluation after another, for a
# device visit that has minutes, not hours. Ranks share GPU 0 (checked, not timed), so
# evaluations may run side by side. In this order (what matters most first, so a visit cut
# short still says the most):
#   1. the plain candidate at every preset but large at W = 2, expected correct;
#   2. the degenerates: zeros, constant, copy_input and the plain candidate without its
#      communication (-D MGK_LOCAL_ONLY=1), each preset but large once per problem, the
#      degenerates and worlds taking turns, expected incorrect (DEGENERATES=all: each
#      degenerate at every preset, one evaluation of all of them with --keep-going, expected
#      incorrect at each; the worlds taking turns);
#   3. with REFERENCE_W1=1, the reference against its own oracle at W = 1, tiny,pkb,odd, without
#      its structure check (NCCL will not start with more ranks than GPUs)
#      (W1_PRESETS: others, e.g. "tiny,small,pkb,medium,odd" for every preset's err/bound; NCCL
#      will not start with ranks sharing a GPU, with one rank it does), from a copy of
#      problems/ whose specs allow one rank;
#   4. the plain candidate at tiny,small,pkb,odd at W = 3 or 4, at tiny,pkb,odd above
#      (ALL_PRESETS=1: at every preset but large, as at W = 2);
#   5. the large presets (plain at W = 2, with ALL_PRESETS=1 at every world, and the
#      degenerate whose turn it is, or with DEGENERATES=all each of them, unless
#      LARGE_DEGENERATES=0), LARGE_JOBS at once (default 2:
#      memory), the plain one with one trial of three calls; SKIP_LARGE=1 leaves them out.
#      LARGE_FREE_GIB=N starts a large evaluation only once GPU 0 has N GiB free, one start at
#      a time, LARGE_SETTLE seconds apart (default 15: what its buffers take to be allocated)
#      unless the one before ends sooner, so more may run at once without running out of
#      memory; the starts' spacing also bounds the pace (N large evaluations >= N x LARGE_SETTLE).
#      A line's time is its evaluation's own; a start the gate held back says for how long.
#   6. the mutants (tests/gpu/mutants/NAME/*.cu: the plain candidate with one plausible bug),
#      each judged as a user would judge it: `mgk eval NAME MUTANT.cu` at the problem's default
#      presets, default trials, at its smallest world of WORLDS, expected caught (incorrect or
#      runtime_error); a mutant judged correct is a hole in the problem's checks. SKIP_LARGE=1
#      leaves large out of the defaults (caught without it is caught with it; the converse is
#      not so: a line "correct" then still needs large to be sure); MUTANTS=0 leaves them out.
# Usage: scripts/suite-on-one-gpu.sh OUT [BIN]   (BIN: a build dir or a folder with mgk)
#   PROBLEMS  comma-separated globs (default: every problem but the collectives)
#   KEEP_LOGS=bad  deletes the logs of evaluations that went as expected (a device visit
#             brings back what it needs)
#   PRESETS   comma-separated presets to keep (default: all), e.g. "small,medium" to finish a
#             world's presets a short visit left out
#   PLAIN=0   leaves the plain candidate out (e.g. with DEGENERATES=all: the degenerates alone)
#   JOBS      evaluations at once (default 4: JOBS x WORLD ranks share GPU 0's memory; one that
#             finds it full before its candidate loads is run again, OOM_RETRIES times);
#   WORLDS    (default "2 4 8"); ALL_PRESETS; STAGES (default "1 2 3 4 5 6": which of the
#             above run, e.g. "2 3" to finish a visit cut short)
# Prints one line per evaluation and a summary; exits 1 when any verdict is not the expected one
# (OUT/bad-logs.txt lists their logs).
set -uo pipefail
out="${1:?usage: suite-on-one-gpu.sh OUT [BIN]}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${2:-$root/build}" && pwd)"
mkdir -p "$out/logs"
export MGK_ROOT="${MGK_ROOT:-$root}" MGK_HOME="${MGK_HOME:-/tmp/mgk-home}" NCCL_NVLS_ENABLE=0
export PATH="/usr/local/cuda/bin:$PATH" MGK_HARNESS="${MGK_HARNESS:-$bin/mgk-harness}"
export out mgk="$bin/mgk" w1="$out/w1-root"
cands="$root/tests/gpu/candidates"

# The jobs, one per line: EXPECT NAME WORLD PRESETS KERNEL [DEFINE], KERNEL "reference" for 3.
"$mgk" problems --json > "$out/problems.json" || { echo "suite-on-one-gpu: mgk problems failed" >&2; exit 1; }
python3 - "$out" "$cands" "${PROBLEMS:-}" "${WORLDS:-2 4 8}" "${REFERENCE_W1:-0}" "${SKIP_LARGE:-0}" "${ALL_PRESETS:-0}" "${PRESETS:-}" "${LARGE_DEGENERATES:-1}" "${DEGENERATES:-turns}" "${PLAIN:-1}" "$root/tests/gpu/mutants" "${MUTANTS:-1}" "${W1_PRESETS:-tiny,pkb,odd}" <<'PY' || exit 1
import fnmatch, json, os, sys
out, cands = sys.argv[1], sys.argv[2]
globs = [g for g in sys.argv[3].split(",") if g]
worlds = [int(w) for w in sys.argv[4].split()]
with_reference, skip_large, all_presets = sys.argv[5] == "1", sys.argv[6] == "1", sys.argv[7] == "1"
keep = set(p for p in sys.argv[8].split(",") if p)
large_degenerates = sys.argv[9] != "0"
if sys.argv[10] not in ("turns", "all"):
    sys.exit(f"suite-on-one-gpu: DEGENERATES={sys.argv[10]}: say 'all' (each degenerate at every preset) or leave it unset (they take turns)")
every_degenerate = sys.argv[10] == "all"
with_plain = sys.argv[11] != "0"
mutants_dir, with_mutants = sys.argv[12], sys.argv[13] != "0"
w1_presets = [p for p in sys.argv[14].split(",") if p]
stages = {n: [] for n in range(1, 7)}
selected = []
for p in json.load(open(os.path.join(out, "problems.json"))):
    name = p["name"]
    if not (any(fnmatch.fnmatchcase(name, g) for g in globs) if globs else not name.startswith("collectives/")):
        continue
    plain = os.path.join(cands, name + ".cu")
    if not os.path.exists(plain):  # the collectives' plain candidates sit at the top
        plain = os.path.join(cands, name.split("/")[-1] + ".cu")
    if not os.path.exists(plain):
        sys.exit(f"suite-on-one-gpu: no plain candidate for {name} ({plain})")
    selected.append(name)
    ws = [w for w in worlds if p["min_world"] <= w <= p["max_world"]]
    presets = [s for s in p["sizes"] if not keep or s in keep]
    sizes = [s for s in presets if s != "large"]
    has_large = "large" in presets and not skip_large
    # A plain candidate is judged once per world over its presets (it fails at the first bad one).
    for w in ws if with_plain else []:
        few = sizes if w == 2 or all_presets else [s for s in sizes if s in ({"tiny", "small", "pkb", "odd"} if w <= 4 else {"tiny", "pkb", "odd"})]
        if few:
            stages[1 if w == 2 else 4].append(f"correct {name} {w} {','.join(few)} {plain}")
        if has_large and (w == 2 or all_presets):
            stages[5].append(f"correct {name} {w} large {plain}")
    degs = [os.path.join(cands, "degenerate", d + ".cu") for d in ("zeros", "constant", "copy_input")]
    degs.append(plain + " MGK_LOCAL_ONLY=1")
    turn = len(selected) - 1
    if not ws:  # WORLDS names none this problem allows (moe_ep_narrow starts at 4)
        print(f"suite-on-one-gpu: {name}: no world of WORLDS in {p['min_world']}..{p['max_world']}: only its W = 1 reference (REFERENCE_W1) is planned", file=sys.stderr)
    if every_degenerate and ws:
        for d, deg in enumerate(degs):  # large at the next world: more pairs at no cost
            if sizes:
                stages[2].append(f"incorrect {name} {ws[(d + turn) % len(ws)]} {','.join(sizes)} {deg}")
            if has_large and large_degenerates:
                stages[5].append(f"incorrect {name} {ws[(d + turn + 1) % len(ws)]} large {deg}")
    for i, s in enumerate(presets if ws and not every_degenerate else []):
        if s == "large" and not (has_large and large_degenerates):
            continue
        stages[5 if s == "large" else 2].append(f"incorrect {name} {ws[(i + turn) % len(ws)]} {s} {degs[(i + turn) % len(degs)]}")
    mutant_dir = os.path.join(mutants_dir, name)
    if with_mutants and ws and os.path.isdir(mutant_dir):
        defaults = [s for s in p["default_sizes"] if s != "large" or not skip_large]
        for m in sorted(f for f in os.listdir(mutant_dir) if f.endswith(".cu")):
            stages[6].append(f"caught {name} {ws[0]} {','.join(defaults)} {os.path.join(mutant_dir, m)}")
    if with_reference:
        w1_sizes = [s for s in w1_presets if s in presets]
        if w1_sizes:
            stages[3].append(f"correct {name} 1 {','.join(w1_sizes)} reference")
for n, lines in stages.items():
    open(os.path.join(out, f"jobs{n}.txt"), "w").write("".join(l + "\n" for l in lines))
open(os.path.join(out, "selected.txt"), "w").write("".join(n + "\n" for n in selected))
PY

if [ "${REFERENCE_W1:-0}" = 1 ]; then
  rm -rf "$w1" && mkdir -p "$w1"
  for f in "$root"/*; do [ "$(basename "$f")" != problems ] && ln -s "$f" "$w1/"; done
  cp -r "$root/problems" "$w1/problems"
  python3 - "$w1/problems" "$out/selected.txt" <<'PY'
import json, sys
for name in open(sys.argv[2]).read().split():
    path = f"{sys.argv[1]}/{name}/problem.json"
    spec = json.load(open(path))
    spec["world_size"]["min"] = 1
    # The reference needs NCCL, which will not start with ranks sharing a GPU: its structure
    # check (more ranks than GPUs) cannot run here, and is not what stage 3 measures.
    spec.pop("structure_check", None)
    json.dump(spec, open(path, "w"), indent=1)
PY
fi

for v in LARGE_FREE_GIB LARGE_SETTLE; do
  [[ "${!v:-0}" =~ ^[0-9]+$ ]] || { echo "suite-on-one-gpu: $v=${!v} is not a whole number (GiB for LARGE_FREE_GIB, seconds for LARGE_SETTLE)" >&2; exit 1; }
done
gpu_free_mib() { nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0; }
export -f gpu_free_mib
if [ "${LARGE_FREE_GIB:-0}" -gt 0 ] && [[ " ${STAGES:-1 2 3 4 5} " == *" 5 "* ]] && ! gpu_free_mib > /dev/null; then
  echo "suite-on-one-gpu: LARGE_FREE_GIB=$LARGE_FREE_GIB needs nvidia-smi to say GPU 0's free memory, and it failed; leave LARGE_FREE_GIB unset to run without the gate" >&2
  exit 1
fi

# run_one EXPECT NAME WORLD PRESETS KERNEL [DEFINE]: one evaluation, one line.
run_one() {
  local expect="$1" name="$2" world="$3" sizes="$4" kernel="$5" define="${6:-}"
  local gpus="0$(printf ',0%.0s' $(seq 2 "$world"))" label args root_for=()
  label="$(basename "$kernel" .cu)${define:+ -D$define}"
  local log="$out/logs/${name//\//_}.W$world.$sizes.$(basename "$kernel" .cu)${define:+.local}.json"
  if [ "$kernel" = reference ]; then
    args=(eval "$name" --reference --world 1 --no-time --trials 1 --back-to-back 2)
    root_for=(env MGK_ROOT="$w1")
  else
    args=(eval "$name" "$kernel" --gpus "$gpus")
    # large: one trial of three calls (its own and two back to back), where the others have two
    # trials of five: with ranks taking turns on one GPU the candidate's runs are most of a
    # large evaluation's minutes, and what large adds (sizes past 2^31 bytes, grid limits) one
    # trial shows.
    # A degenerate is checked at each of its sizes (--keep-going), not only up to the first.
    # A mutant is judged at the defaults (trials, calls, stop at the first failure): a user's run.
    if [ "$expect" = caught ]; then :
    elif [ "$expect" != correct ]; then args+=(--trials 1 --back-to-back 0 --keep-going)
    elif [ "$sizes" = large ]; then args+=(--trials 1 --back-to-back 2)
    else args+=(--trials 2 --back-to-back 4); fi
  fi
  args+=(--size "$sizes" --json --no-store --timeout 300)
  [ -n "$define" ] && args+=(-D "$define")
  local start=$SECONDS queued=0 retries=0
  if [ "$sizes" = large ] && [ "${LARGE_FREE_GIB:-0}" -gt 0 ]; then
    # One start at a time: wait for the memory, start, hold the gate while its buffers come.
    local gate free waited=0 pid
    exec {gate}> "$out/.large-gate"
    flock "$gate"
    while :; do
      free=$(gpu_free_mib) || { echo "suite-on-one-gpu: $name W=$world large: nvidia-smi failed; starting without the gate" >&2; break; }
      [ "$free" -ge $((LARGE_FREE_GIB * 1024)) ] && break
      if (( waited >= 600 )); then
        echo "suite-on-one-gpu: $name W=$world large: GPU 0 still has only $free MiB free after 600 s; starting anyway" >&2
        break
      fi
      sleep 2; waited=$((waited + 2))
    done
    # The line's time is the evaluation's own; the wait for the gate is said beside it.
    queued=$((SECONDS - start)); start=$SECONDS
    # Without the gate's descriptor: a child holding it would keep the lock until it ended.
    "${root_for[@]}" "$mgk" "${args[@]}" > "$log" 2> "${log%.json}.err" {gate}>&- &
    pid=$!
    for ((i = 0; i < 2 * ${LARGE_SETTLE:-15}; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.5; done
    exec {gate}>&-
    wait "$pid"
  else
    while :; do
      "${root_for[@]}" "$mgk" "${args[@]}" > "$log" 2> "${log%.json}.err"
      # GPU 0 out of memory before the candidate's code was loaded is the evaluations beside
      # this one (JOBS x WORLD ranks at once is more than one GPU holds), not this kernel: wait
      # for them and run it again, OOM_RETRIES times at most (default 2), OOM_WAIT seconds apart
      # (default 30); the line says so.
      (( retries < ${OOM_RETRIES:-2} )) && grep -q '"verdict": "infrastructure"' "$log" && grep -q 'out of memory' "$log" || break
      retries=$((retries + 1)); sleep "${OOM_WAIT:-30}"
    done
  fi
  python3 - "$log" "$expect" "$name W=$world $sizes $label" "$((SECONDS - start))" "$queued" "$sizes" "$retries" <<'PY'
import json, os, sys
log, expect, what, secs, queued, asked, retries = sys.argv[1:]
took, notes = f"{secs} s", []
try:
    r = json.load(open(log))
    verdict, failure = r.get("verdict", "?"), ""
    if r.get("compile_seconds"):  # where a visit's minutes go: nvcc or the ranks
        notes.append(f"nvcc {r['compile_seconds']:.0f} s")
    ratios = [s.get("worst_error_ratio", 0) for s in r.get("sizes", [])]
    for c in r.get("structure_checks", []):
        ratios += [s.get("worst_error_ratio", 0) for s in c.get("sizes", [])]
    if any(ratios):  # how much of its bound the worst element used (past 1: wrong)
        notes.append(f"err/bound {max(ratios):.3g}")
    for s in r.get("sizes", []):
        failure = failure or s.get("failure", "")
    if verdict != "correct" and not failure:
        failure = r.get("message", "")
    # A degenerate must fail at every size it was given: one that passes at some size is not
    # rejected there, whatever the others did (the verdict is "incorrect" all the same).
    if expect == "incorrect" and verdict == "incorrect":
        judged = {s.get("size"): s.get("correct") for s in r.get("sizes", [])}
        passed = [s for s in asked.split(",") if judged.get(s) is True]
        unjudged = [s for s in asked.split(",") if s not in judged]
        if passed:
            verdict, failure = "partly correct", "correct at " + ", ".join(passed)
        elif unjudged:
            verdict, failure = "partly checked", "no verdict at " + ", ".join(unjudged)
except ValueError:
    err = open(log[: -len(".json")] + ".err").read().strip().splitlines()
    verdict, failure = "no result", err[-1] if err else "mgk printed nothing"
if int(queued):
    notes.append(f"after {queued} s at the large-memory gate")
if int(retries):
    notes.append(f"run {int(retries) + 1} times: GPU 0 was out of memory before")
if notes:
    took += f" ({', '.join(notes)})"
# A mutant is caught by a wrong output or by a crash it causes (a non-finite or out-of-bounds result).
ok = verdict == expect or (expect == "caught" and verdict in ("incorrect", "runtime_error"))
# The spec's "requires" refuses a world the edited copy allows but the problem does not have
# (top-2 of E = W = 1 experts): no verdict either way.
outside = verdict == "no result" and "is outside the problem" in failure
tag = "skip" if outside else "ok  " if ok else "BAD "
# One write(2) of the whole line: evaluations run side by side and share the pipe, and a line
# split in two can hide a BAD from the count below (grep '^BAD').
os.write(1, f"{tag} {what}: {verdict}{' (' + failure[:150] + ')' if failure else ''} in {took}\n".encode())
if ok and os.environ.get("KEEP_LOGS") == "bad":  # a device visit brings back only what it needs
    for f in (log, log[: -len(".json")] + ".err"):
        os.remove(f)
if outside:
    sys.exit(0)
if not ok:
    with open(log.rsplit("/logs/", 1)[0] + "/bad-logs.txt", "a") as f:
        f.write(log + "\n")
PY
}
export -f run_one

: > "$out/verdicts.txt"; : > "$out/bad-logs.txt"
for n in ${STAGES:-1 2 3 4 5 6}; do
  [ "$n" = 5 ] && parallel="${LARGE_JOBS:-2}" || parallel="${JOBS:-4}"
  xargs -r -a "$out/jobs$n.txt" -L 1 -P "$parallel" bash -c 'run_one "$@"' _ | tee -a "$out/verdicts.txt"
done

good=$(grep -c '^ok ' "$out/verdicts.txt")
bad=$(grep -c '^BAD ' "$out/verdicts.txt")
skipped=$(grep -c '^skip ' "$out/verdicts.txt")
echo "suite-on-one-gpu: $good as expected, $bad not, $skipped outside their problem (logs in $out/logs)"
[ "$bad" -eq 0 ]
