#!/usr/bin/env bash
# Builds paraplan-probe and runs it on a GPU machine with a time limit, writing its JSON Lines
# to a file: the recorded run that tests/data/measurements keeps.
#   tests/gpu/run-probe.sh [OUTPUT.jsonl] [TIME_LIMIT_S]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-probe-run.jsonl}
limit=${2:-420}
if [ ! -x build-probe/app/paraplan-probe ]; then
    cmake -S . -B build-probe -DCMAKE_BUILD_TYPE=Release -DPARAPLAN_BUILD_TESTS=OFF \
        ${CMAKE_GENERATOR:+-G "$CMAKE_GENERATOR"} >&2 || exit 1
    cmake --build build-probe --target paraplan-probe --parallel "$(nproc)" >&2 || exit 1
fi
nvidia-smi topo -m > "${out%.jsonl}.topo.txt" 2>/dev/null || true
# The probe's own watchdog ends a hung collective a little before the outer limit.
timeout --signal=TERM --kill-after=20 "$limit" \
    build-probe/app/paraplan-probe --timeout-s $((limit - 30)) --min-bytes 1K --max-bytes 4G \
    --iters 20 --warmup 5 > "$out"
code=$?
echo "paraplan-probe exited with $code; $(wc -l < "$out") lines in $out" >&2
exit $code
