#!/usr/bin/env bash
# Fuzzes every reader: configures a clang build with libFuzzer, ASan and UBSan in build-fuzz/,
# builds the harnesses of tests/fuzz/, and runs each in turn for SECONDS (default 60) over its
# corpus (build-fuzz/tests/fuzz/corpus/NAME, seeded from tests/data). Prints each harness's
# executions; a crash leaves its input in build-fuzz/tests/fuzz/artifacts/ and the log in
# build-fuzz/fuzz/logs/, and the script exits 1.
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     e.g. scripts/fuzz.sh 600 fuzz_plan
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
    echo "error: SECONDS must be a positive whole number, not '$seconds'" >&2
    exit 2
fi

cxx=""
for candidate in clang++-14 clang++; do
    if command -v "$candidate" >/dev/null 2>&1; then
        cxx=$candidate
        break
    fi
done
if [ -z "$cxx" ]; then
    echo "error: fuzzing needs clang++ with libFuzzer (Debian: clang-14 libclang-rt-14-dev)" >&2
    exit 2
fi

if [ ! -f build-fuzz/CMakeCache.txt ]; then
    launcher=()
    if command -v ccache >/dev/null 2>&1; then
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    echo "==> Configuring the fuzz build ($cxx) into build-fuzz/"
    cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DPARAPLAN_FUZZ=ON \
        -DPARAPLAN_BUILD_PROBE=OFF
fi
echo "==> Building the harnesses"
cmake --build build-fuzz --target paraplan_fuzzers --parallel "${PARAPLAN_JOBS:-2}"

harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
    for binary in build-fuzz/fuzz/fuzz_*; do
        harnesses+=("$(basename "$binary")")
    done
fi

mkdir -p build-fuzz/fuzz/logs build-fuzz/tests/fuzz/artifacts
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=()
printf '%-22s %14s %10s  %s\n' harness executions seconds result
for name in "${harnesses[@]}"; do
    binary=build-fuzz/fuzz/$name
    if [ ! -x "$binary" ]; then
        echo "error: no harness '$name' in build-fuzz/fuzz/" >&2
        exit 2
    fi
    log=build-fuzz/fuzz/logs/$name.log
    result=ok
    if ! "$binary" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="build-fuzz/tests/fuzz/artifacts/$name-" \
        "build-fuzz/tests/fuzz/corpus/$name" >"$log" 2>&1; then
        result="CRASH (see $log)"
        failed+=("$name")
    fi
    # libFuzzer's last line: "Done 123456 runs in 60 second(s)".
    done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 || true)
    runs=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+).*/\1/' <<<"$done_line")
    took=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+).*/\2/' <<<"$done_line")
    if [ -z "$done_line" ]; then
        runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
        took="-"
    fi
    printf '%-22s %14s %10s  %s\n' "$name" "${runs:--}" "$took" "$result"
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "error: ${failed[*]} crashed; inputs in build-fuzz/tests/fuzz/artifacts/" >&2
    exit 1
fi
