#!/usr/bin/env bash
# A fake probe whose stdout is polluted: valid results must survive, the rest is reported.
echo '{"type":"hello","protocol":1,"probe_version":"fake","host":"fake-host"}'
echo 'NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>'
echo '{"type":"result","kind":"collective","op":"all_reduce","bytes":1048576,"ranks":8,"hosts":1,"time_us":40.0}'
echo '{"type":"result","kind":"collective","op":"all_reduce","bytes":2097152'
echo '<<binary junk>>'
echo '{"type":"result","kind":"collective","op":"all_reduce","bytes":4194304,"ranks":8,"hosts":1,"time_us":52.0}'
exit 0
