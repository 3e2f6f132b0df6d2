#!/bin/sh
# The long chaos run: three packaged gateway replicas on one Redis (or a Redis Cluster), the simulated fleet of every
# family, a mixed load and every fault, then the invariants checked (docs/reliability.md, "The chaos harness").
# Exits 1 when one broke, 2 on a bad option.
#
#   chaos/run-chaos.sh [--build] [--sessions 10000] [--workers 6] [--max-load-seconds 1800] [--redis single|cluster]
#                      [--faults replica-kill,replica-pause,redis-kill,redis-kill-empty,redis-pause,engine-crash,
#                                replica-term,engine-slow,engine-cut,redis-wipe,redis-failover,redis-master-kill|none]
#                      [--kill-every-ms 2000] [--fault-every-ms 3000] [--out chaos/target/chaos-long]
#                      [--gateway-option key=value ...]
#
# --redis cluster starts six redis-server (three masters, three replicas) joined by redis-cli --cluster create, and
# gives the replicas QUARKUS_REDIS_CLIENT_TYPE=cluster; --faults defaults to every fault of the topology (redis-kill,
# redis-kill-empty and redis-pause are one Redis's, redis-failover and redis-master-kill a Cluster's). redis-kill
# restarts Redis from its append-only file (nothing lost); redis-kill-empty removes that file first (everything lost,
# as redis-wipe, with the process gone for a moment too).
# --gateway-option gives every replica one more configuration key, last (for example
# handoff.reaper.enabled=false, to see the leak checks fail).
# --build packages the gateway and this module first (./mvnw package -DskipTests -pl chaos -am). The figures, the
# history (history.jsonl) and every process's log land in --out. On a shared machine, run it under the machine
# lock (e.g. /tmp/machine.sh chaos/run-chaos.sh ...).
set -eu
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--build" ]; then
  shift
  ./mvnw -B -ntp -q package -DskipTests -pl chaos -am
fi
if [ ! -f gateway/target/quarkus-app/quarkus-run.jar ] || [ ! -f chaos/target/chaos.classpath ]; then
  echo "build first: chaos/run-chaos.sh --build ..." >&2
  exit 2
fi
command -v redis-server >/dev/null || { echo "redis-server is missing (apt-get install redis-server)" >&2; exit 2; }
command -v redis-cli >/dev/null || { echo "redis-cli is missing (apt-get install redis-tools)" >&2; exit 2; }

CP="chaos/target/classes:$(cat chaos/target/chaos.classpath)"
exec java -cp "$CP" io.handoff.chaos.ChaosMain --sessions 10000 --workers 6 --max-load-seconds 1800 \
  --out chaos/target/chaos-long "$@"
