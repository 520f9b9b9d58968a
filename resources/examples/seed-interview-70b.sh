#!/usr/bin/env bash
# The seed's interview question: how long does an all-reduce of a 70B model's gradients take
# on eight GPUs? Usage: seed-interview-70b.sh PATH/TO/paraplan-cli
set -euo pipefail
cli=${1:-paraplan-cli}
echo "== By the formula, on one 900 GB/s link (the seed's 0.27 s)"
"$cli" walkthrough --op all_reduce --bytes 141GB --ranks 8 --bw-GBps 900
echo
echo "== On a DGX H100 node as Paraplan models it (NVLS in-switch reduction, measured efficiencies)"
"$cli" collective --op all_reduce --bytes 141GB --ranks 8 --cluster dgx-h100
echo
echo "== The same with a plain ring (NCCL_ALGO=Ring)"
"$cli" collective --op all_reduce --bytes 141GB --ranks 8 --cluster dgx-h100 --algo ring
