#!/usr/bin/env bash
# A fake probe that dies in the middle of a GEMM: the complete compute records before it stay.
here="$(cd "$(dirname "$0")" && pwd)"
head -n 20 "$here/../measurements/probe-compute-2xh100.jsonl"
printf '{"type":"gemm","device":0,"dtype":"fp16","shape":"gr'
echo "cuBLASLt: CUBLAS_STATUS_EXECUTION_FAILED" >&2
kill -SEGV $$
