#!/usr/bin/env bash
# The generated completion as a shell uses it: bash with the script loaded, COMP_WORDS and
# COMP_CWORD set as readline would, the completion function called, COMPREPLY checked; the
# zsh script through `zsh -n`. Usage: completion-test.sh BASH_SCRIPT ZSH_SCRIPT
set -uo pipefail
bash_script=$1
zsh_script=$2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# COMPREPLY, one word a line, for the words given (the last one is being completed).
complete_words() {
    bash --norc --noprofile -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _paraplan_cli
        printf "%s\n" "${COMPREPLY[@]}"' completion-test "$bash_script" "$@"
}

expect() { # expect "WORDS..." -- WANTED...
    local words=() wanted
    while [ "$1" != "--" ]; do words+=("$1"); shift; done
    shift
    local got
    got=$(complete_words "${words[@]}")
    for wanted in "$@"; do
        grep -qxF -- "$wanted" <<<"$got" || fail "'${words[*]}' does not offer '$wanted' (got: $(echo $got))"
    done
}
refuse() { # refuse "WORDS..." -- UNWANTED...
    local words=() unwanted
    while [ "$1" != "--" ]; do words+=("$1"); shift; done
    shift
    local got
    got=$(complete_words "${words[@]}")
    for unwanted in "$@"; do
        grep -qxF -- "$unwanted" <<<"$got" && fail "'${words[*]}' offers '$unwanted'"
    done
}

expect paraplan-cli "" -- evaluate search report examples help --version
expect paraplan-cli ev -- evaluate
refuse paraplan-cli ev -- search
expect paraplan-cli evaluate - -- --json --help
expect paraplan-cli search --o -- --objective
expect paraplan-cli search --objective "" -- step-time cost
expect paraplan-cli collective --op "" -- all_reduce all_gather send_recv
expect paraplan-cli collective --cluster dgx- -- dgx-h100
expect paraplan-cli help "" -- evaluate collective
expect paraplan-cli dp-traffic --zero "" -- 0 3
# Every closed list of values: the launch targets (import-launch reads back only two of the
# four export writes), the report's tables and paper, calibrate's figures.
expect paraplan-cli export --to "" -- megatron torchtitan deepspeed nemo
expect paraplan-cli import-launch --from "" -- megatron torchtitan
refuse paraplan-cli import-launch --from "" -- deepspeed nemo
expect paraplan-cli import-launch --from t -- torchtitan
expect paraplan-cli report --table "" -- collectives memory
expect paraplan-cli report --paper "" -- a4 letter
expect paraplan-cli calibrate --fit "" -- gemm_scale attention_scale overlap
expect paraplan-cli model --preset "" -- gpt3-175b
expect paraplan-cli import-topology --gpu "" -- h100-sxm5-80gb
# A PLAN argument completes file names.
dir=$(mktemp -d)
touch "$dir/a.paraplan.json" "$dir/b.json"
expect paraplan-cli evaluate "$dir/" -- "$dir/a.paraplan.json" "$dir/b.json"
# A name with spaces is one candidate, not three; a star in a name is not expanded.
touch "$dir/my plan v2.json" "$dir/star*.json"
expect paraplan-cli evaluate "$dir/my" -- "$dir/my plan v2.json"
refuse paraplan-cli evaluate "$dir/my" -- "$dir/my" "plan" "v2.json"
expect paraplan-cli report "$dir/" -o "$dir/st" -- "$dir/star*.json"
expect paraplan-cli collective --cluster "$dir/my" -- "$dir/my plan v2.json"
# The window: its options, and plan files.
complete_gui() {
    bash --norc --noprofile -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _paraplan
        printf "%s\n" "${COMPREPLY[@]}"' completion-test "$bash_script" "$@"
}
grep -qxF -- "--screenshot" <<<"$(complete_gui paraplan --s)" || fail "paraplan --s offers no --screenshot"
grep -qxF -- "$dir/my plan v2.json" <<<"$(complete_gui paraplan "$dir/my")" ||
    fail "paraplan does not complete plan files"
rm -r "$dir"

if command -v zsh >/dev/null 2>&1; then
    zsh -n "$zsh_script" || fail "zsh -n $zsh_script"
    grep -q '^#compdef paraplan-cli paraplan$' "$zsh_script" || fail "no #compdef line for both"
    grep -qF -- "'--screenshot=:file:_files'" "$zsh_script" || fail "zsh: nothing for paraplan"
    # The same closed lists in the zsh specs (one _arguments block per command).
    zsh_spec() { # zsh_spec COMMAND: that command's _arguments block
        awk -v c="    $1)" '$0 == c {on=1; next} on && /;;$/ {print; exit} on {print}' "$zsh_script"
    }
    zsh_expect() { # zsh_expect COMMAND TEXT
        grep -qF -- "$2" <<<"$(zsh_spec "$1")" || fail "zsh: '$1' has no '$2'"
    }
    zsh_expect import-launch "'--from=:TARGET:(megatron torchtitan)'"
    zsh_expect export "'--to=:TARGET:(megatron torchtitan deepspeed nemo)'"
    zsh_expect report "'--table=:NAME:(collectives memory)'"
    zsh_expect report "'--paper=:SIZE:(a4 letter)'"
    zsh_expect calibrate "'--fit=:LIST:(gemm_scale attention_scale overlap)'"
else
    fail "zsh is not installed (scripts/setup.sh installs it)"
fi

if [ "$failures" -gt 0 ]; then
    echo "$failures completion checks failed"
    exit 1
fi
echo "completion: all checks passed"
