#!/usr/bin/env bash
# A fake probe that keeps measuring until it is cancelled (SIGTERM ends it like the real one).
trap 'echo "{\"type\":\"error\",\"code\":6,\"what\":\"signal\",\"detail\":\"interrupted\"}"; exit 6' TERM
echo '{"type":"hello","protocol":1,"probe_version":"fake","host":"fake-host"}'
bytes=1048576
for i in $(seq 1 600); do
    echo "{\"type\":\"result\",\"kind\":\"collective\",\"op\":\"all_reduce\",\"bytes\":$bytes,\"ranks\":8,\"hosts\":1,\"time_us\":$((30 + i))}"
    echo "{\"type\":\"progress\",\"done\":$i,\"total\":600,\"what\":\"all_reduce over 8 ranks\"}"
    sleep 0.05
done
echo '{"type":"done","devices":8,"results":600}'
