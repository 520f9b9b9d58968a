#!/usr/bin/env bash
# A classic systems-interview question: how long does an all-reduce of a 70B model's gradients take
# on eight GPUs? Usage: interview-70b-allreduce.sh PATH/TO/paraplan-cli
set -euo pipefail
cli=${1:-paraplan-cli}
echo "== By the ring formula, 2 x (7/8) x 141 GB / 900 GB/s = 0.27 s on one 900 GB/s link"
"$cli" walkthrough --op all_reduce --bytes 141GB --ranks 8 --bw-GBps 900
echo
echo "== On a DGX H100 node as Paraplan models it (NVLS in-switch reduction, measured efficiencies)"
"$cli" collective --op all_reduce --bytes 141GB --ranks 8 --cluster dgx-h100
echo
echo "== The same with a plain ring (NCCL_ALGO=Ring)"
"$cli" collective --op all_reduce --bytes 141GB --ranks 8 --cluster dgx-h100 --algo ring
