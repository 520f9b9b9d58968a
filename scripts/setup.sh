#!/usr/bin/env bash
# Shared by run.sh and test.sh: installs the Debian packages Paraplan needs (only those that
# are missing), then configures and builds Release into build/. With --packages-only it stops
# after the packages (test.sh --sanitize builds its own tree). With --test-locales (test.sh) it
# also generates the locales the suites run under (de_DE, fr_FR, tr_TR: decimal commas and
# Turkish case mapping).
set -euo pipefail
cd "$(dirname "$0")/.."
packages_only=0
test_locales=0
for arg in "$@"; do
    case "$arg" in
    --packages-only) packages_only=1 ;;
    --test-locales) test_locales=1 ;;
    *)
        echo "error: unknown option '$arg' (scripts/setup.sh [--packages-only] [--test-locales])" >&2
        exit 2
        ;;
    esac
done

packages=(
    cmake ninja-build g++ pkg-config
    qt6-base-dev             # Qt 6 Core, Gui, Widgets, PrintSupport, Test
    qt6-svg-dev              # SVG export of plots
    libqcustomplot-dev       # the Qt 6 build of QCustomPlot (find_package(QCustomPlotQt6))
    libbenchmark-dev         # Google Benchmark for tests/bench
    fonts-dejavu-core        # without a font, labels render as boxes on slim machines
    poppler-utils            # pdftotext/pdftoppm for checking exported reports
    libopenmpi-dev           # paraplan-probe across nodes (mpirun/srun), where CUDA is found
    # The Debian packages and their install test (tests/package/install-test.sh):
    dpkg-dev binutils        # dpkg-shlibdeps (cpack's dependencies), readelf
    lintian                  # the .debs checked against Debian policy
    desktop-file-utils       # desktop-file-validate
    appstream                # appstreamcli validate (the metainfo)
    shared-mime-info         # update-mime-database (the plan MIME type)
    man-db groff-base        # man -l / groff -ww of the generated man pages
    zsh                      # zsh -n of the generated zsh completion
    locales                  # localedef and the locale sources (--test-locales)
)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "==> Installing missing Debian packages: ${missing[*]}"
    if [ -n "$sudo" ] && ! command -v sudo >/dev/null 2>&1; then
        echo "error: need root or sudo to install: ${missing[*]}" >&2
        exit 1
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}"
fi

if [ "$test_locales" -eq 1 ]; then
    for locale in de_DE fr_FR tr_TR; do
        if ! locale -a 2>/dev/null | grep -qix "${locale}.utf-\?8"; then
            echo "==> Generating the locale ${locale}.UTF-8 (the suites run under it too)"
            if [ -n "$sudo" ] && ! command -v sudo >/dev/null 2>&1; then
                echo "error: need root or sudo to generate the locale ${locale}.UTF-8" >&2
                exit 1
            fi
            $sudo localedef -i "$locale" -f UTF-8 "${locale}.UTF-8"
        fi
    done
fi

if [ "$packages_only" -eq 1 ]; then
    exit 0
fi

if [ ! -f build/CMakeCache.txt ]; then
    generator=()
    if command -v ninja >/dev/null 2>&1; then
        generator=(-G Ninja)
    fi
    launcher=()
    if command -v ccache >/dev/null 2>&1; then
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    echo "==> Configuring (Release) into build/"
    cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}"
fi
echo "==> Building"
cmake --build build --parallel "$(nproc 2>/dev/null || echo 2)"
