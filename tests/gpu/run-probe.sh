#!/usr/bin/env bash
# Builds paraplan-probe and runs it on a GPU machine with a time limit, writing its JSON Lines
# to a file: the recorded run that tests/data/measurements keeps. The run includes the compute
# measurements (GEMMs, attention, HBM, SM clock; protocol 2) with the shapes of the bundled
# Llama 3 70B plan, then the copies and collectives.
#   tests/gpu/run-probe.sh [OUTPUT.jsonl] [TIME_LIMIT_S]
# OUTPUT defaults to tests/data/measurements/probe-compute-<gpu>.jsonl, <gpu> from the first
# GPU's name ("NVIDIA H200" -> h200).
set -uo pipefail
cd "$(dirname "$0")/../.."
plan=resources/examples/llama3-70b-dgx-h100.paraplan.json
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 |
    tr '[:upper:]' '[:lower:]' | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/^-//;s/-$//')
out=${1:-tests/data/measurements/probe-compute-${gpu:-unknown}.jsonl}
limit=${2:-600}
if [ ! -f build-probe/CMakeCache.txt ]; then
    cmake -S . -B build-probe -DCMAKE_BUILD_TYPE=Release -DPARAPLAN_BUILD_TESTS=OFF \
        ${CMAKE_GENERATOR:+-G "$CMAKE_GENERATOR"} >&2 || exit 1
fi
# Always brought up to date: a probe left from before would speak an older protocol.
cmake --build build-probe --target paraplan-probe --parallel "$(nproc)" >&2 || exit 1
nvidia-smi topo -m > "${out%.jsonl}.topo.txt" 2>/dev/null || true
# The probe's own watchdog ends a hung collective a little before the outer limit.
timeout --signal=TERM --kill-after=20 "$limit" \
    build-probe/app/paraplan-probe --timeout-s $((limit - 30)) --plan "$plan" \
    --min-bytes 1K --max-bytes 4G --iters 20 --warmup 5 > "$out"
code=$?
echo "paraplan-probe exited with $code; $(wc -l < "$out") lines in $out" >&2
exit $code
