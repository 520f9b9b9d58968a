#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
#   ./test.sh              Release build in build/, every suite and the benchmarks' smoke runs
#   ./test.sh --package    Release build in build/, then the install test alone (CTest label
#                          'package': cpack, dpkg -x into a scratch root, the installed tree used)
#   ./test.sh --sanitize   Debug build (-O1) in build-sanitize/ with AddressSanitizer,
#                          LeakSanitizer and UBSan (and Qt's asserts), every suite; the first
#                          error stops it
#   ./test.sh --sanitize core
#                          the same for the core, the CLI and their suites only (no GUI), in
#                          build-sanitize-core/: what CI runs, to stay within its time
set -euo pipefail
cd "$(dirname "$0")"
jobs=$(nproc 2>/dev/null || echo 2)

if [ "${1:-}" = "--sanitize" ]; then
    dir=build-sanitize
    scope=()
    if [ "${2:-}" = "core" ]; then
        dir=build-sanitize-core
        scope=(-DPARAPLAN_BUILD_GUI=OFF)
    elif [ $# -gt 1 ]; then
        echo "error: unknown sanitizer scope '$2' (./test.sh --sanitize [core])" >&2
        exit 2
    fi
    scripts/setup.sh --packages-only --test-locales
    if [ ! -f "$dir/CMakeCache.txt" ]; then
        launcher=()
        if command -v ccache >/dev/null 2>&1; then
            launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
        fi
        echo "==> Configuring (Debug, ASan + UBSan) into $dir/"
        cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug "${launcher[@]}" \
            -DPARAPLAN_SANITIZE=ON -DPARAPLAN_BUILD_PROBE=OFF "${scope[@]}"
    fi
    echo "==> Building (sanitizers)"
    cmake --build "$dir" --parallel "$jobs"
    # Any report ends the test with a failure, leaks included (Qt and fontconfig leave none
    # that LeakSanitizer reports, so nothing is suppressed).
    export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
    export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
    echo "==> Running the test suite (sanitizers)"
    ctest --test-dir "$dir" --output-on-failure --timeout 1500 -j "$jobs"
    exit 0
elif [ "${1:-}" = "--package" ]; then
    scripts/setup.sh
    echo "==> Running the install test"
    ctest --test-dir build --output-on-failure --timeout 600 -L package
    exit 0
elif [ $# -gt 0 ]; then
    echo "error: unknown option '$1' (./test.sh [--package|--sanitize])" >&2
    exit 2
fi

scripts/setup.sh --test-locales
echo "==> Running the test suite"
ctest --test-dir build --output-on-failure --timeout 600 -j "$jobs"
