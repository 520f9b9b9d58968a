#!/usr/bin/env python3
"""Writes Megatron-LM's full option list (every --flag of megatron/training/arguments.py, with
its arity) as resources/launch/megatron-lm-options.txt, from a Megatron-LM checkout at a pinned
commit. Paraplan's Megatron import refuses a flag that is not in it, naming the nearest one
(Megatron's own parser, built with allow_abbrev=False, refuses it too).

  scripts/megatron-options.py MEGATRON_LM_GIT_DIR COMMIT > resources/launch/megatron-lm-options.txt
"""
import ast
import subprocess
import sys


def main():
    repo, commit = sys.argv[1], sys.argv[2]
    source = subprocess.run(["git", "-C", repo, "show", commit + ":megatron/training/arguments.py"],
                            check=True, capture_output=True, text=True).stdout
    options = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        names = [a.value for a in node.args
                 if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")]
        if not names:
            continue
        arity = "value"
        for kw in node.keywords:
            if kw.arg == "action":
                text = ast.unparse(kw.value)
                if "store_true" in text or "store_false" in text or "BooleanOptional" in text:
                    arity = "switch"
                elif "store_const" in text:
                    arity = "switch"
            if kw.arg == "nargs":
                arity = "list"
        for name in names:
            options[name] = arity
    print("# Megatron-LM's pretrain options: every --flag of megatron/training/arguments.py with its")
    print("# arity (value: one value; switch: store_true / store_false / store_const; list: nargs),")
    print("# written by scripts/megatron-options.py from https://github.com/NVIDIA/Megatron-LM at")
    print("# commit " + commit + ".")
    for name in sorted(options):
        print(name, options[name])


if __name__ == "__main__":
    main()
