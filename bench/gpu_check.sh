#!/usr/bin/env bash
# Builds (with nvcc alone: no CMake configure, so it also works where the project's other
# dependencies are missing) and runs the GPU checks of primitives/ and the expert
# collectives, writing everything to OUTDIR:
#   mgk-expert-check   every expert (all knob variants) checked against a host oracle, timed
#   mgk-microbench     bandwidth/latency per transfer mechanism, size and SM count (+ PNG)
# usage: bench/gpu_check.sh OUTDIR [--large] [--quick]   (run from anywhere; needs >= 2 GPUs;
#        JOBS=n limits parallel compiles, MGK_GPU_CHECK_BUILD_ONLY=1 only builds)
#   --large: also 256 MB cases in the expert check; --quick: the microbench's quick mode.
set -euo pipefail
out=${1:?usage: bench/gpu_check.sh OUTDIR [--large] [--quick]}
shift
large="" quick=""
for a in "$@"; do
  case "$a" in
    --large) large=--large ;;
    --quick) quick=--quick ;;
    *) echo "gpu_check.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
jobs=${JOBS:-$(nproc)}
mkdir -p "$out/bin/experts"
inc=(-I"$root/primitives" -I"$root/sandbox/include")

echo "building into $out/bin with $jobs jobs"
"$nvcc" -std=c++17 -O2 -arch=sm_90 "${inc[@]}" -o "$out/bin/mgk-microbench" "$root"/bench/microbench/*.cu \
  > "$out/build-microbench.log" 2>&1 &
microbench_pid=$!
"$nvcc" -std=c++20 -O2 -cudart shared -I"$root/sandbox/include" -Xlinker -rpath=/usr/local/cuda/lib64 \
  -o "$out/bin/mgk-expert-check" "$root"/bench/expert_check/*.cc -ldl -lpthread > "$out/build-expert-check.log" 2>&1 &
expert_check_pid=$!
# <collective> <variant> <knob defines...>: the same variants as bench/CMakeLists.txt
variants='all_reduce default
all_reduce two_shot -DONE_SHOT_MAX_KB=0 -DBLOCKS=5 -DUNROLL=2
reduce_scatter default
reduce_scatter pull -DONE_SHOT_MAX_KB=0 -DBLOCKS=5 -DUNROLL=2
all_gather default
all_gather tma -DONE_SHOT_MAX_KB=0 -DBLOCKS=5 -DUNROLL=2 -DMECH=1 -DCE_MIN_MB=1048576
all_gather ce -DCE_MIN_MB=1
all_to_all default
all_to_all tma -DONE_SHOT_MAX_KB=0 -DBLOCKS=5 -DUNROLL=2 -DMECH=1 -DCE_MIN_MB=1048576
all_to_all ce -DCE_MIN_MB=1
broadcast default
broadcast tma -DMECH=1 -DCE_MIN_MB=1048576
broadcast ce -DCE_MIN_MB=1
scatter default
scatter ce -DCE_MIN_MB=1
gather default
gather tma -DMECH=1 -DCE_MIN_MB=1048576
reduce default'
echo "$variants" | while read -r coll variant defs; do
  name=$coll; [ "$variant" = default ] || name=$coll.$variant
  echo "$nvcc -std=c++17 -O2 -arch=sm_90 -shared -Xcompiler -fPIC -cudart shared ${inc[*]} $defs" \
       "-o $out/bin/experts/$name.so $root/problems/collectives/$coll/expert.cu > $out/bin/experts/$name.log 2>&1" \
       "|| { echo 'build of $name failed:'; cat $out/bin/experts/$name.log; exit 1; }"
done | xargs -d '\n' -P "$jobs" -I{} bash -c {}
wait "$microbench_pid" || { cat "$out/build-microbench.log"; exit 2; }
wait "$expert_check_pid" || { cat "$out/build-expert-check.log"; exit 2; }
[ -n "${MGK_GPU_CHECK_BUILD_ONLY:-}" ] && { echo "built (MGK_GPU_CHECK_BUILD_ONLY set: not running)"; exit 0; }

status=0
echo "== mgk-expert-check $large"
"$out/bin/mgk-expert-check" --experts "$out/bin/experts" $large 2>&1 | tee "$out/expert-check.txt" || status=1
echo "== mgk-microbench $quick"
"$out/bin/mgk-microbench" $quick --csv "$out/microbench.csv" 2>&1 | tee "$out/microbench.txt" || status=1
if python3 -c 'import matplotlib' 2>/dev/null; then
  python3 "$root/bench/plot_microbench.py" "$out/microbench.csv" -o "$out/microbench.png" || status=1
fi
exit $status
