#!/usr/bin/env bash
# The install test (CTest label 'package'; ./test.sh --package): builds the .debs with cpack
# from BUILD_DIR, unpacks them with dpkg -x into a scratch root, and uses Paraplan from there
# as an installed copy: the CLI, an installed example, the window's screenshot, the man
# pages, the metainfo, desktop entry and MIME type, lintian, and the probe's --help with its
# CUDA libraries found through its RUNPATH. A missing tool is a failure (scripts/setup.sh
# installs them), never a skip. Usage: install-test.sh BUILD_DIR probe|no-probe (whether the
# build has the probe: CUDA and NCCL found at configure time).
set -euo pipefail
build=$(cd "$1" && pwd)
with_probe=${2:-probe}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/paraplan-install-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
step() { echo "==> $*"; }

for tool in cpack dpkg-deb lintian appstreamcli desktop-file-validate man groff \
    update-mime-database ldd; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "error: $tool is not installed (scripts/setup.sh installs it)" >&2
        exit 1
    }
done

step "cpack"
cpack --config "$build/CPackConfig.cmake" -B "$scratch/debs" >"$scratch/cpack.log" 2>&1 ||
    { cat "$scratch/cpack.log"; exit 1; }
debs=("$scratch"/debs/*.deb)
ls -l "${debs[@]}"
root=$scratch/root
for deb in "${debs[@]}"; do dpkg-deb -x "$deb" "$root"; done
bin=$root/usr/bin
share=$root/usr/share

step "paraplan-cli --version"
version=$("$bin/paraplan-cli" --version) || fail "paraplan-cli --version"
[[ $version =~ ^paraplan-cli\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "version line '$version'"

step "paraplan-cli examples"
listing=$("$bin/paraplan-cli" examples) || fail "paraplan-cli examples"
mapfile -t examples < <(find "$share/paraplan/examples" -maxdepth 1 -type f -name '*.json' | sort)
[ ${#examples[@]} -ge 1 ] || fail "no examples installed in $share/paraplan/examples"
for example in "${examples[@]}"; do
    grep -qF "$example" <<<"$listing" || fail "'examples' does not list $example"
done
"$bin/paraplan-cli" examples --json | grep -q '"schema": "paraplan-examples/1"' ||
    fail "examples --json carries no schema"
[ -f "$share/paraplan/schema/paraplan-examples-1.schema.json" ] || fail "schema not installed"

step "paraplan-cli evaluate ${examples[0]}"
"$bin/paraplan-cli" evaluate "${examples[0]}" >"$scratch/evaluate.txt" ||
    [ $? -eq 1 ] || fail "evaluate ${examples[0]}"
grep -q "step time" "$scratch/evaluate.txt" || fail "evaluate printed no step time"

step "paraplan --screenshot"
QT_QPA_PLATFORM=offscreen "$bin/paraplan" "${examples[0]}" --screenshot "$scratch/x.png" \
    --size 1280x800 || fail "paraplan --screenshot"
[ "$(head -c 8 "$scratch/x.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    fail "the screenshot is not a PNG"

step "man pages"
for page in "$share"/man/man1/*.1.gz; do
    warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$warnings" ] || fail "man -l $(basename "$page"): $warnings"
    warnings=$(zcat "$page" | groff -ww -z -man 2>&1)
    [ -z "$warnings" ] || fail "groff $(basename "$page"): $warnings"
done
names=(paraplan paraplan-cli)
[ "$with_probe" = probe ] && names+=(paraplan-probe)
for name in "${names[@]}"; do
    page=$share/man/man1/$name.1.gz
    [ -f "$page" ] || { fail "no man page for $name"; continue; }
    # man-pages(7)'s sections: EXIT STATUS (from the program's --help) with an item for each
    # status, SEE ALSO naming the other pages and never the page itself.
    roff=$(zcat "$page")
    grep -qx '\.SH EXIT STATUS' <<<"$roff" || fail "$name(1) has no EXIT STATUS section"
    status=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' <<<"$roff")
    for code in 0 2; do
        grep -qxF "\\fB$code\\fR" <<<"$status" || fail "$name(1): EXIT STATUS has no status $code"
    done
    see_also=$(sed -n '/^\.SH SEE ALSO/,/^\.SH /p' <<<"$roff")
    [ -n "$see_also" ] || fail "$name(1) has no SEE ALSO section"
    grep -qF "$name(1)" <<<"$see_also" && fail "$name(1) lists itself under SEE ALSO"
    for other in "${names[@]}"; do
        [ "$other" = "$name" ] || grep -qF "$other(1)" <<<"$see_also" ||
            fail "$name(1): SEE ALSO does not name $other(1)"
    done
done
grep -qxF '\fB3\fR' <<<"$(zcat "$share/man/man1/paraplan.1.gz" | sed -n '/^\.SH EXIT STATUS/,/^\.SH /p')" ||
    fail "paraplan(1): EXIT STATUS has no status 3 (an I/O error, as paraplan-cli's)"
cli_page=$(MANWIDTH=200 man -l "$share/man/man1/paraplan-cli.1.gz" 2>/dev/null)
for command in $("$bin/paraplan-cli" help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1}'); do
    grep -q "^   $command\$" <<<"$cli_page" || fail "paraplan-cli(1) has no section for '$command'"
done

step "AppStream, desktop entry, MIME type"
appstreamcli validate --no-net "$share"/metainfo/*.metainfo.xml || fail "appstreamcli validate"
desktop-file-validate "$share"/applications/*.desktop || fail "desktop-file-validate"
grep -qx 'MimeType=application/vnd.paraplan.plan+json;' "$share"/applications/*.desktop ||
    fail "the desktop entry claims another MIME type"
cp -r "$share/mime" "$scratch/mime"
update-mime-database "$scratch/mime" >/dev/null || fail "update-mime-database"
grep -q '^application/vnd.paraplan.plan+json:\*\.paraplan\.json$' "$scratch/mime/globs" ||
    fail "no *.paraplan.json glob"

step "documents, completion"
packages=(paraplan)
[ "$with_probe" = probe ] && packages+=(paraplan-probe)
for package in "${packages[@]}"; do
    for file in copyright changelog.gz; do
        [ -f "$share/doc/$package/$file" ] || fail "no /usr/share/doc/$package/$file"
    done
done
[ -f "$share/bash-completion/completions/paraplan-cli" ] || fail "no bash completion"
[ -f "$share/zsh/vendor-completions/_paraplan-cli" ] || fail "no zsh completion"

step "lintian"
lintian --fail-on error,warning "${debs[@]}" || fail "lintian"
# Debian's hardening flags are in every binary: no hardening tag, not even at info level.
hardening=$(lintian -I "${debs[@]}" 2>&1 | grep -E 'hardening-' || true)
[ -z "$hardening" ] || fail "lintian hardening tags: $hardening"

step "no build-tree path in the installed binaries"
source_tree=$(cd "$(dirname "$0")/../.." && pwd)
for file in "$bin"/*; do
    # 8-bit and 16-bit (QStringLiteral) strings alike.
    if strings -a "$file" | grep -qF -e "$source_tree" -e "$build" ||
        strings -a -el "$file" | grep -qF -e "$source_tree" -e "$build"; then
        fail "$(basename "$file") holds a path of the build or source tree"
    fi
done

if [ "$with_probe" != probe ]; then
    [ ! -e "$bin/paraplan-probe" ] || fail "a probe was packaged by a build without one"
    echo "(this build has no probe: CUDA or NCCL was not found at configure time)"
else
step "paraplan-probe"
"$bin/paraplan-probe" --help >"$scratch/probe-help.txt" || fail "paraplan-probe --help"
grep -q '^Usage: paraplan-probe' "$scratch/probe-help.txt" || fail "probe --help printed no usage"
runpath=$(readelf -d "$bin/paraplan-probe" | sed -n 's/.*RUNPATH.*\[\(.*\)\]/\1/p')
[ -n "$runpath" ] || fail "paraplan-probe has no RUNPATH"
[[ ":$runpath:" != *"::"* && $runpath != :* && $runpath != *: ]] ||
    fail "RUNPATH '$runpath' has an empty entry (the current directory)"
libs=$(env -u LD_LIBRARY_PATH ldd "$bin/paraplan-probe")
for lib in libcudart.so libcublasLt.so libnccl.so; do
    line=$(grep "$lib" <<<"$libs") || { fail "probe does not need $lib"; continue; }
    [[ $line != *"not found"* ]] || fail "ldd: $line"
    dir=$(dirname "$(awk '{print $3}' <<<"$line")")
    found=0
    IFS=: read -ra entries <<<"$runpath"
    for entry in "${entries[@]}" /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu; do
        [ "$(readlink -f "$entry")" = "$(readlink -f "$dir")" ] && found=1
    done
    [ $found -eq 1 ] || fail "$lib found in $dir, not through the RUNPATH ($runpath)"
done
depends=$(dpkg-deb -f "$scratch"/debs/paraplan-probe_*.deb Depends)
for package in cuda-cudart- libcublas- libnccl2 libopenmpi; do
    grep -q "$package" <<<"$depends" || fail "paraplan-probe does not depend on $package*"
done
# The RUNPATH names the toolkit version the package depends on (cuda-cudart-X-Y:
# /usr/local/cuda-X.Y/...), never /usr/local/cuda, an alternatives link that may point at
# another version.
cuda_version=$(sed -n 's/.*cuda-cudart-\([0-9]*\)-\([0-9]*\).*/\1.\2/p' <<<"$depends")
IFS=: read -ra entries <<<"$runpath"
for entry in "${entries[@]}"; do
    [[ $entry != /usr/local/cuda/* && $entry != /usr/local/cuda ]] ||
        fail "RUNPATH entry $entry goes through the /usr/local/cuda link"
done
[[ ":$runpath:" == *":/usr/local/cuda-$cuda_version/"* ]] ||
    fail "RUNPATH '$runpath' names no /usr/local/cuda-$cuda_version folder (Depends: cuda-cudart-${cuda_version/./-})"
fi

if [ "$failures" -gt 0 ]; then
    echo "$failures install checks failed"
    exit 1
fi
echo "install test: all checks passed"
