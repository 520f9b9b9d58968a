#!/usr/bin/env bash
# A fake probe on a machine whose NVIDIA driver is older than the probe's CUDA runtime: it says
# hello, then the error line and exit code 3 the real probe gives (docs/probe-protocol.md).
echo '{"type":"hello","protocol":2,"probe_version":"fake","cuda_runtime":13000,"cuda_driver":12020,"nccl_version":22809,"host":"fake-host","processes":1}'
echo '{"type":"error","code":3,"what":"cudaGetDeviceCount","detail":"CUDA driver version is insufficient for CUDA runtime version"}'
echo "paraplan-probe: cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version" >&2
exit 3
