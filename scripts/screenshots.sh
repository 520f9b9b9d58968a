#!/usr/bin/env bash
# Renders the README's screenshots from the app's own --screenshot: every tab of the planner
# window at 1280x800 on the offscreen platform (no display needed), the Search tab after a
# search, and pages 1 and 3 of the PDF report. Rerun it whenever the UI changes:
#
#   scripts/screenshots.sh [BUILD_DIR]     (default: build)
#
# Writes docs/screenshots/tab-<index>-<name>.png (e.g. tab-0-step-time.png) and
# report-page-1.png, report-page-3.png, after deleting every older PNG there, so that no
# stale picture survives a renamed or removed tab. The tabs are the ones the built window
# has, read from its own answer to a tab that does not exist.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[[ $build = /* ]] || build=$root/$build
app=$build/app/paraplan
cli=$build/app/paraplan-cli
plan=$root/resources/examples/llama3-70b-two-racks.paraplan.json
out=$root/docs/screenshots
size=1280x800

for binary in "$app" "$cli"; do
    if [[ ! -x $binary ]]; then
        echo "error: $binary is not built (ninja -C $build paraplan paraplan-cli)" >&2
        exit 2
    fi
done

export QT_QPA_PLATFORM=offscreen
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Settings and recovery copies go to a scratch home, not the user's.
export HOME=$scratch XDG_CONFIG_HOME=$scratch/config XDG_RUNTIME_DIR=$scratch
chmod 700 "$scratch"

# "error: --tab '999' is not a tab (0 to 7, or a name: 0 Step time, 1 Memory, ...)"
listing=$("$app" --tab 999 --screenshot "$scratch/none.png" 2>&1 || true)
names=${listing#*a name: }
names=${names%)}
if [[ $names == "$listing" ]]; then
    echo "error: could not read the tab names from: $listing" >&2
    exit 2
fi

mkdir -p "$out"
rm -f "$out"/*.png
IFS=',' read -ra tabs <<<"$names"
for entry in "${tabs[@]}"; do
    entry=${entry# }
    index=${entry%% *}
    name=${entry#* }
    slug=$(tr '[:upper:] ' '[:lower:]-' <<<"$name" | tr -cd 'a-z0-9-')
    file=$out/tab-$index-$slug.png
    extra=()
    # The Search tab is shown searched, the current plan and the best pinned.
    [[ $name == Search ]] && extra=(--search)
    "$app" "$plan" --screenshot "$file" --size "$size" --tab "$index" "${extra[@]}"
    echo "$file"
done

# The report, as File > Export report writes it (A4), pages 1 and 3 at 72 dpi.
if command -v pdftoppm >/dev/null; then
    "$cli" report "$plan" -o "$scratch/report.pdf" >/dev/null
    for page in 1 3; do
        pdftoppm -r 72 -png -f "$page" -l "$page" -singlefile "$scratch/report.pdf" \
            "$out/report-page-$page"
        echo "$out/report-page-$page.png"
    done
else
    echo "note: pdftoppm (poppler-utils) is missing: the report pages were not rendered" >&2
fi
