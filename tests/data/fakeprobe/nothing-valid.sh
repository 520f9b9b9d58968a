#!/usr/bin/env bash
# A fake probe that says hello, prints thousands of lines that are not the protocol and closes
# with "done": no valid result, so the run must fail, with a bounded list of warnings.
echo '{"type":"hello","protocol":2,"probe_version":"fake","host":"fake-host"}'
for i in $(seq 1 5000); do echo "NCCL INFO channel $i: not a protocol line"; done
echo '{"type":"result","kind":"collective","op":"all_reduce","bytes":1048576,"ranks":8,"time_us":"nan"}'
echo '{"type":"done"}'
exit 0
