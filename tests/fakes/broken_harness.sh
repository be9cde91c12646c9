#!/bin/sh
# A harness that cannot start, as mgk-harness linked against a missing library would fail:
# GPU tests must fail on it, not skip (scripts/device-check.sh, tests/eval/gpu_probe_test.cc).
echo "mgk-harness: error while loading shared libraries: libcuda.so.1: cannot open shared object file" >&2
exit 127
