#!/usr/bin/env bash
# The suite's GPU checks on one GPU, several evaluations at once: what
# `gpu_tests --gtest_filter='SuiteOnOneGpu.*'` checks one evaluation after another, for a
# device visit that has minutes, not hours. Ranks share GPU 0 (checked, not timed), so
# evaluations may run side by side; the large presets run one at a time (memory).
#   plain candidate: every preset at W = 2, tiny,small,pkb,odd at W = 4, tiny,pkb,odd at
#                    W = 8 (WORLDS narrows), expected correct;
#   degenerates:     zeros, constant, copy_input and the plain candidate without its
#                    communication (-D MGK_LOCAL_ONLY=1), each preset once per problem, the
#                    degenerates and worlds taking turns, expected incorrect;
#   REFERENCE_W1=1:  the reference against its own oracle at W = 1 (NCCL starts on one GPU
#                    with one rank), from a copy of problems/ whose specs allow one rank.
# Usage: scripts/suite-on-one-gpu.sh OUT [BIN]   (BIN: a build dir or a folder with mgk)
#   PROBLEMS  comma-separated globs (default: every problem but the collectives)
#   JOBS      evaluations at once (default 4); WORLDS (default "2 4 8")
# Prints one line per evaluation and a summary; exits 1 when any verdict is not the expected one.
set -uo pipefail
out="${1:?usage: suite-on-one-gpu.sh OUT [BIN]}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${2:-$root/build}" && pwd)"
mkdir -p "$out/logs"
export MGK_ROOT="${MGK_ROOT:-$root}" MGK_HOME="${MGK_HOME:-/tmp/mgk-home}" NCCL_NVLS_ENABLE=0
export PATH="/usr/local/cuda/bin:$PATH" MGK_HARNESS="${MGK_HARNESS:-$bin/mgk-harness}"
mgk="$bin/mgk"
cands="$root/tests/gpu/candidates"

# The jobs, one per line: EXPECT NAME WORLD PRESETS KERNEL [DEFINE] (large presets apart).
"$mgk" problems --json > "$out/problems.json" || { echo "suite-on-one-gpu: mgk problems failed" >&2; exit 1; }
python3 - "$out" "$cands" "${PROBLEMS:-}" "${WORLDS:-2 4 8}" <<'PY' || exit 1
import fnmatch, json, os, sys
out, cands, globs, worlds = sys.argv[1], sys.argv[2], [g for g in sys.argv[3].split(",") if g], [int(w) for w in sys.argv[4].split()]
few = {3: {"tiny", "small", "pkb", "odd"}, 4: {"tiny", "small", "pkb", "odd"}}
jobs, large, selected = [], [], []
for p in json.load(open(os.path.join(out, "problems.json"))):
    name = p["name"]
    if not (any(fnmatch.fnmatchcase(name, g) for g in globs) if globs else not name.startswith("collectives/")):
        continue
    plain = os.path.join(cands, name + ".cu")
    if not os.path.exists(plain):
        print(f"suite-on-one-gpu: no plain candidate for {name} ({plain})", file=sys.stderr)
        sys.exit(1)
    selected.append(name)
    ws = [w for w in worlds if p["min_world"] <= w <= p["max_world"]]
    for w in ws:  # one evaluation per world for the plain candidate (it fails at its first bad preset)
        sizes = [s for s in p["sizes"] if w == 2 or s in few.get(w, {"tiny", "pkb", "odd"})]
        small = ",".join(s for s in sizes if s != "large")
        if small:
            jobs.append(f"correct {name} {w} {small} {plain}")
        if "large" in sizes:
            large.append(f"correct {name} {w} large {plain}")
    degs = [os.path.join(cands, "degenerate", d + ".cu") for d in ("zeros", "constant", "copy_input")]
    degs.append(plain + " MGK_LOCAL_ONLY=1")
    turn = len(selected) - 1
    for i, s in enumerate(p["sizes"]):
        (large if s == "large" else jobs).append(
            f"incorrect {name} {ws[(i + turn) % len(ws)]} {s} {degs[(i + turn) % len(degs)]}")
for f, lines in (("jobs.txt", jobs), ("jobs-large.txt", large), ("selected.txt", selected)):
    open(os.path.join(out, f), "w").write("".join(l + "\n" for l in lines))
PY
jobs="$out/jobs.txt" large="$out/jobs-large.txt"

# run_one EXPECT NAME WORLD PRESETS KERNEL [DEFINE]: one evaluation, one line.
run_one() {
  local expect="$1" name="$2" world="$3" sizes="$4" kernel="$5" define="${6:-}"
  local gpus="0$(printf ',0%.0s' $(seq 2 "$world"))" label
  label="$(basename "$kernel" .cu)${define:+ -D$define}"
  local log="$out/logs/${name//\//_}.W$world.$sizes.$(basename "$kernel" .cu)${define:+.local}.json"
  local args=(eval "$name" "$kernel" --gpus "$gpus" --size "$sizes" --json --no-store --timeout 300)
  if [ "$expect" = correct ]; then args+=(--trials 2 --back-to-back 4); else args+=(--trials 1 --back-to-back 0); fi
  [ -n "$define" ] && args+=(-D "$define")
  local start=$SECONDS
  "$mgk" "${args[@]}" > "$log" 2> "${log%.json}.err"
  python3 - "$log" "$expect" "$name W=$world $sizes $label" "$((SECONDS - start))" <<'PY'
import json, sys
log, expect, what, secs = sys.argv[1:]
try:
    r = json.load(open(log))
    verdict, failure = r.get("verdict", "?"), ""
    for s in r.get("sizes", []):
        failure = failure or s.get("failure", "")
except ValueError:
    err = open(log[: -len(".json")] + ".err").read().strip().splitlines()
    verdict, failure = "no result", err[-1] if err else "mgk printed nothing"
ok = verdict == expect
print(f"{'ok  ' if ok else 'BAD '} {what}: {verdict}{' (' + failure[:110] + ')' if failure else ''} in {secs} s", flush=True)
PY
}
export -f run_one
export out mgk

xargs -a "$jobs" -L 1 -P "${JOBS:-4}" bash -c 'run_one "$@"' _ | tee "$out/verdicts.txt"
xargs -a "$large" -L 1 -P 1 bash -c 'run_one "$@"' _ | tee -a "$out/verdicts.txt"

if [ "${REFERENCE_W1:-0}" = 1 ]; then
  # The references against their oracles need NCCL, which will not start with ranks sharing
  # a GPU; with one rank it does. A spec copy that allows W = 1, the rest of the tree linked.
  w1="$out/w1-root"
  rm -rf "$w1" && mkdir -p "$w1"
  for f in "$root"/*; do [ "$(basename "$f")" != problems ] && ln -s "$f" "$w1/"; done
  cp -r "$root/problems" "$w1/problems"
  while read -r name; do
    sed -i -E 's/("world_size": *\{ *"min": *)[0-9]+/\11/' "$w1/problems/$name/problem.json"
    echo "reference W=1 $name"
  done < "$out/selected.txt" > "$out/jobs-w1.txt"
  ref_one() {
    local name="$3" log="$out/logs/${3//\//_}.reference.W1.json" start=$SECONDS
    MGK_ROOT="$out/w1-root" "$mgk" eval "$name" --reference --world 1 --size tiny,pkb,odd --no-time --no-store \
      --trials 1 --back-to-back 2 --json > "$log" 2> "${log%.json}.err"
    python3 - "$log" "$name" "$((SECONDS - start))" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1])); v = r.get("verdict", "?"); m = r.get("message", "")
except ValueError:
    err = open(sys.argv[1][: -len(".json")] + ".err").read().strip().splitlines()
    v, m = "no result", err[-1] if err else "mgk printed nothing"
print(f"{'ok  ' if v == 'correct' else 'BAD '} {sys.argv[2]} reference W=1 tiny,pkb,odd: {v} ({m[:120]}) in {sys.argv[3]} s", flush=True)
PY
  }
  export -f ref_one
  xargs -a "$out/jobs-w1.txt" -L 1 -P "${JOBS:-4}" bash -c 'ref_one "$@"' _ | tee -a "$out/verdicts.txt"
fi

good=$(grep -c '^ok ' "$out/verdicts.txt")
bad=$(grep -c '^BAD ' "$out/verdicts.txt")
echo "suite-on-one-gpu: $good as expected, $bad not (logs in $out/logs)"
[ "$bad" -eq 0 ]
