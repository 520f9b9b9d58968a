#!/usr/bin/env python3
"""Lists functions longer than 120 lines and files longer than 700 lines in core/, ui/ and app/.

Functions are found the way .clang-format lays them out: a definition's opening brace alone
at column 0 and its closing brace alone at column 0. Exits 1 when anything is over."""
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MAX_FUNCTION, MAX_FILE = 120, 700


def scan(path):
    problems = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    count = len(lines) - (1 if lines and lines[-1] == "" else 0)  # the final newline ends a line
    if count > MAX_FILE:
        problems.append(f"{path}: {count} lines (file limit {MAX_FILE})")
    start = None
    for i, line in enumerate(lines):
        if line == "{" and i > 0:
            start = i - 1
            while start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith(("}", "//", "#")) and lines[start - 1][0] not in " \t" and lines[start - 1].endswith((",", "(")):
                start -= 1
        elif line.startswith("}") and start is not None and not line.startswith("} //"):
            length = i - start + 1
            if length > MAX_FUNCTION:
                problems.append(f"{path}:{start + 1}: {lines[start].strip()[:70]}... {length} lines")
            start = None
    return problems


def main():
    problems = []
    for top in ("core", "ui", "app"):
        for base, _, files in os.walk(os.path.join(ROOT, top)):
            for name in sorted(files):
                if name.endswith((".cpp", ".h", ".cu")):
                    problems += scan(os.path.relpath(os.path.join(base, name), ROOT))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
