#!/usr/bin/env bash
# What an idle gateway costs its Redis: one gateway on the Redis store with no traffic, its reaper sweeping and its
# fleet sampler and gauges reading the store on their timers, as in production between bursts. Every replica of a
# fleet adds this much to the one Redis they share. After --warmup-seconds it measures --seconds and prints, per
# second of that window: the commands Redis processed and the connections' reads it served (INFO stats), Redis's CPU
# and the gateway's (from /proc), and the commands by name (INFO commandstats).
#
# Builds nothing; build first: ./mvnw -q -B package -pl gateway,benchmarks -am -DskipTests
#
# Usage: GATEWAY_JAR=... benchmarks/run-idle-store-benchmark.sh [--warmup-seconds 20] [--seconds 60]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=benchmarks/lib.sh
source "$ROOT/benchmarks/lib.sh"

WARMUP=20
SECONDS_MEASURED=60
while [[ $# -gt 0 ]]; do
  case "$1" in
    --warmup-seconds) WARMUP="$2"; shift ;;
    --seconds) SECONDS_MEASURED="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

GATEWAY_JAR="${GATEWAY_JAR:-$ROOT/gateway/target/quarkus-app/quarkus-run.jar}"
[[ -f "$GATEWAY_JAR" ]] || { echo "missing $GATEWAY_JAR: build first (see the header)" >&2; exit 2; }
require_redis_server
RUN_DIR="$(mktemp -d /tmp/handoff-idle-bench.XXXXXX)"
trap_cleanup

start_redis
# the route points at ports nothing listens on: an idle gateway sends the engines nothing, and its probes' failures
# are not what this measures (sampling stays on: it reads the store like the reaper)
MODEL=sim-model
PREFILL_URL="http://127.0.0.1:$(free_port)"
DECODE_URL="http://127.0.0.1:$(free_port)"
STORE_ENV=(HANDOFF_STORE_KIND=redis HANDOFF_REDIS_URL="redis://127.0.0.1:$REDIS_PORT")
GATEWAY_PORT="$(free_port)"
start_bench_gateway "$GATEWAY_JAR" "$GATEWAY_PORT" 0 "$RUN_DIR/gateway.log"
GATEWAY_PID=$STARTED_PID
wait_for_gateway "$GATEWAY_PORT"
echo "gateway pid $GATEWAY_PID ($GATEWAY_JAR), idle; warm-up ${WARMUP} s, measured ${SECONDS_MEASURED} s"
sleep "$WARMUP"

HZ="$(getconf CLK_TCK)"
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
stat_of() { redis-cli -p "$REDIS_PORT" info stats | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'; }
commandstats() { redis-cli -p "$REDIS_PORT" info commandstats | tr -d '\r' | sed -nE 's/^cmdstat_([^:]+):calls=([0-9]+).*/\1 \2/p'; }

commandstats | sort >"$RUN_DIR/before.txt"
commands_before=$(stat_of total_commands_processed)
reads_before=$(stat_of total_reads_processed)
redis_before=$(ticks "$REDIS_PID")
gateway_before=$(ticks "$GATEWAY_PID")
sleep "$SECONDS_MEASURED"
redis_after=$(ticks "$REDIS_PID")
gateway_after=$(ticks "$GATEWAY_PID")
commands_after=$(stat_of total_commands_processed)
reads_after=$(stat_of total_reads_processed)
commandstats | sort >"$RUN_DIR/after.txt"

per_second() { echo "scale=1; ($2 - $1) / $SECONDS_MEASURED" | bc; }
cpu_ms_per_second() { echo "scale=2; ($2 - $1) * 1000 / $HZ / $SECONDS_MEASURED" | bc; }
echo "Redis: $(per_second "$commands_before" "$commands_after") commands/s, $(per_second "$reads_before" "$reads_after") reads/s, CPU $(cpu_ms_per_second "$redis_before" "$redis_after") ms/s"
echo "gateway: CPU $(cpu_ms_per_second "$gateway_before" "$gateway_after") ms/s"
echo "commands/s by name:"
join -a 2 -e 0 -o 2.1,1.2,2.2 "$RUN_DIR/before.txt" "$RUN_DIR/after.txt" \
  | awk -v s="$SECONDS_MEASURED" '{ n = ($3 - $2) / s; if (n > 0) printf "  %-16s %8.1f\n", $1, n }'
