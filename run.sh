#!/usr/bin/env bash
# Installs what is missing, builds, and opens Paraplan on the bundled example.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh

example=resources/examples/gpt3-175b-dgx-a100.paraplan.json
if [ -x build/app/paraplan ]; then
    if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ] || [ -n "${QT_QPA_PLATFORM:-}" ]; then
        if [ $# -gt 0 ]; then
            exec build/app/paraplan "$@"
        fi
        exec build/app/paraplan "$example"
    fi
    echo "No display found (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open."
    echo "Run it under a virtual display with 'xvfb-run ./run.sh', or use the headless CLI:"
    echo
fi
echo "The headless CLI on the bundled example plan (build/app/paraplan-cli, see 'paraplan-cli help'):"
echo
build/app/paraplan-cli evaluate "$example"
echo
echo "Explain it step by step:   build/app/paraplan-cli walkthrough $example"
echo "Check the model's accuracy: build/app/paraplan-cli validate"
