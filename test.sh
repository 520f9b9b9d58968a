#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
echo "==> Running the test suite"
ctest --test-dir build --output-on-failure --timeout 600 -j "$(nproc 2>/dev/null || echo 2)"
