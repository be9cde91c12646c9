#!/usr/bin/env bash
# Compiles every expert (problems/*/*/expert.cu) and every expert variant the GPU tests run
# (tests/gpu/collectives.h's -D lists), or with MGK_SASS_WHAT=references every reference
# (problems/*/*/reference.cu: restructurings of the references), twice, from a base revision and from the working
# tree, with the evaluator's nvcc flags (src/eval/compile.cc), and compares the device code
# function by function (scripts/sass_compare.py): the cubins' machine code always, and the
# `cuobjdump -sass` listings where cuobjdump is installed. For restructurings that must not
# change what the GPU runs.
# Usage: scripts/sass-compare.sh [BASE_REV | --base-tree DIR] [OUT] (default: HEAD, /tmp/mgk-sass)
#        scripts/sass-compare.sh --listings OUT   (where cuobjdump is: the listings of a
#        finished OUT's cubins, then the comparison again; for a build machine without it)
#   MGK_SASS_JOBS: parallel compiles (default 2); MGK_SASS_WHAT: experts (default) or
#   references; MGK_SASS_PROBLEMS: a regex the problem's folder (e.g. "^tp/") must match.
#   Exits 0 when every build is identical.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cuobjdump="$(command -v cuobjdump || { [ -x /usr/local/cuda/bin/cuobjdump ] && echo /usr/local/cuda/bin/cuobjdump; } || true)"
if [ "${1:-}" = "--listings" ]; then
  out="$2"
  [ -n "$cuobjdump" ] || { echo "sass-compare: no cuobjdump on this machine" >&2; exit 2; }
  for c in "$out"/base/*.cubin "$out"/head/*.cubin; do "$cuobjdump" -sass "$c" > "${c%.cubin}.sass"; done
  echo "sass-compare: listings by $("$cuobjdump" --version | tail -1)"
  exec python3 "$root/scripts/sass_compare.py" "$out/base" "$out/head"
fi
base_rev=HEAD base_tree=""
if [ "${1:-}" = "--base-tree" ]; then base_tree="$(cd "$2" && pwd)"; shift 2; elif [ $# -gt 0 ]; then base_rev="$1"; shift; fi
out="${1:-/tmp/mgk-sass}"
jobs="${MGK_SASS_JOBS:-2}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
rm -rf "$out" && mkdir -p "$out/base" "$out/head" "$out/tmp"
if [ -z "$base_tree" ]; then
  base_tree="$out/base-tree"
  mkdir -p "$base_tree"
  git -C "$root" archive "$base_rev" problems primitives sandbox src | tar -x -C "$base_tree"
fi

# One line per build: NAME PROBLEM_DIR SOURCE DEFINES... (the variants as the GPU tests run them).
python3 - "$root" "${MGK_SASS_WHAT:-experts}" "${MGK_SASS_PROBLEMS:-}" > "$out/builds.txt" <<'PY'
import glob, os, re, sys
root, what, only = sys.argv[1], sys.argv[2], re.compile(sys.argv[3])
if what not in ("experts", "references"):
    sys.exit(f"sass-compare: MGK_SASS_WHAT is experts or references, not {what!r}")
source = "expert.cu" if what == "experts" else "reference.cu"
for e in sorted(glob.glob(os.path.join(root, "problems/*/*", source))):
    rel = os.path.relpath(os.path.dirname(e), os.path.join(root, "problems"))
    if only.search(rel):
        print(rel.replace("/", "_"), rel, source)
if what == "references":
    sys.exit(0)
text = open(os.path.join(root, "tests/gpu/collectives.h")).read()
block = text[text.index("kExpertVariants"):]
block = block[:block.index("};")]
for i, (problem, args) in enumerate(re.findall(r'\{"(\w+)",\s*\{([^}]*)\}\}', block)):
    defines = [d for d in re.findall(r'"([^"]+)"', args) if d != "-D"]
    if only.search(f"collectives/{problem}"):
        print(f"{problem}_variant{i:02d}", f"collectives/{problem}", "expert.cu", *["-D" + d for d in defines])
PY

# mgk's headers: src/abi and sandbox/reference since 2026-12-07, sandbox/include before (a base
# revision may be either; a folder a tree lacks is no harm to nvcc).
build() {  # SIDE TREE NAME DIR SOURCE DEFINES...
  local side="$1" tree="$2" name="$3" dir="$4" source="$5"; shift 5
  local work="$out/tmp/$side-$name"
  mkdir -p "$work"
  (cd "$work" && "$nvcc" --keep --keep-dir "$work" -std=c++20 -O3 -shared -Xcompiler -fPIC -lineinfo \
     --expt-relaxed-constexpr --extended-lambda -cudart shared -gencode=arch=compute_90a,code=sm_90a \
     -I "$tree/src/abi" -I "$tree/sandbox/reference" -I "$tree/sandbox/include" -I "$tree/primitives" \
     -I "$tree/problems/$dir" "$@" \
     -o "$work/$name.so" "$tree/problems/$dir/$source" -lcublas -lcublasLt -lcufft) > "$work/log" 2>&1 ||
    { echo "sass-compare: $side $name failed to build:"; cat "$work/log"; return 1; }
  cp "$work/${source%.cu}.cubin" "$out/$side/$name.cubin"
  if [ -n "$cuobjdump" ]; then "$cuobjdump" -sass "$work/${source%.cu}.cubin" > "$out/$side/$name.sass"; fi
  rm -rf "$work"
}
export -f build
export out nvcc cuobjdump
while read -r name dir source defines; do
  echo "base $base_tree $name $dir $source $defines"
  echo "head $root $name $dir $source $defines"
done < "$out/builds.txt" | xargs -d '\n' -n 1 -P "$jobs" bash -c 'build $1' _
echo "sass-compare: $(wc -l < "$out/builds.txt") builds per side; cuobjdump: ${cuobjdump:-not installed (machine code compared only; --listings OUT where it is)}"
python3 "$root/scripts/sass_compare.py" "$out/base" "$out/head"
