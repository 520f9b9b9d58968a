#!/usr/bin/env bash
# A fake paraplan-probe for tests: replays a recorded-style run a few lines at a time.
here="$(cd "$(dirname "$0")" && pwd)"
while IFS= read -r line; do
    printf '%s\n' "$line"
    case "$line" in *'"progress"'*) sleep 0.002 ;; esac
done < "$here/../measurements/probe-8xh200.jsonl"
echo "probe log: done" >&2
exit 0
