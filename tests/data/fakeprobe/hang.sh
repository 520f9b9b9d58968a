#!/usr/bin/env bash
# A fake probe that greets, prints one result and then says nothing for a long time.
echo '{"type":"hello","protocol":1,"probe_version":"fake","host":"fake-host"}'
echo '{"type":"result","kind":"collective","op":"all_reduce","bytes":1048576,"ranks":8,"hosts":1,"time_us":40.0}'
exec sleep 60
