#!/usr/bin/env bash
# KV session lifecycle benchmark, end to end on loopback:
#   a private redis-server on a free port -> the gateway jar on a free port with the Redis store
#   -> benchmarks/target/handoff-benchmarks.jar against both -> everything stopped again (trap on exit).
#
# Builds nothing unless --build is given. Without it, build first from the repository root:
#   ./mvnw -q -B package -pl gateway,benchmarks -am -DskipTests
# (lib.sh holds the process plumbing both benchmark scripts share.)
#
# Usage: benchmarks/run-session-benchmark.sh [--build] [benchmark options...]
#   Benchmark options are passed to the jar after these defaults (a later value wins):
#     --seconds 20 --warmup-seconds 45 --latency-seconds 5 --concurrency 64 --channels 2
#   e.g. benchmarks/run-session-benchmark.sh --seconds 20 --concurrency 128
#
# Environment:
#   GATEWAY_JAR        gateway jar to run (default gateway/target/quarkus-app/quarkus-run.jar)
#   GATEWAY_JAVA_OPTS  extra JVM options for the gateway (default: none)
#   DRIVER_JAVA_OPTS   extra JVM options for the driver (default: none)
#   BENCH_TIMEOUT      hard limit in seconds for the driver (default 600)
#   KEEP_LOGS=1        keep the run directory (gateway/redis logs, top samples) even when the run passed
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=benchmarks/lib.sh
source "$ROOT/benchmarks/lib.sh"

BUILD=0
ARGS=()
for a in "$@"; do
  case "$a" in
    --build) BUILD=1 ;;
    *) ARGS+=("$a") ;;
  esac
done

GATEWAY_JAR="${GATEWAY_JAR:-$ROOT/gateway/target/quarkus-app/quarkus-run.jar}"
BENCH_JAR="$ROOT/benchmarks/target/handoff-benchmarks.jar"
SCRIPT="$ROOT/gateway/src/main/resources/redis/transition.lua"

build_or_require_jars "$BUILD"
require_redis_server

RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/handoff-bench.XXXXXX")"
trap_cleanup

# --- Redis (private, loopback, no persistence) ---
start_redis

# --- Gateway (Redis store; health on the HTTP port, the sessions over gRPC) ---
GATEWAY_PORT="$(free_port)"
GATEWAY_GRPC_PORT="$(free_port)"
# shellcheck disable=SC2086
HANDOFF_STORE_KIND=redis HANDOFF_REDIS_URL="redis://127.0.0.1:$REDIS_PORT" \
  java ${GATEWAY_JAVA_OPTS:-} -Dquarkus.http.port="$GATEWAY_PORT" -Dquarkus.http.host=127.0.0.1 \
  -Dquarkus.grpc.server.port="$GATEWAY_GRPC_PORT" -Dquarkus.grpc.server.host=127.0.0.1 \
  -Dquarkus.log.level=WARN -jar "$GATEWAY_JAR" >"$RUN_DIR/gateway.log" 2>&1 &
GATEWAY_PID=$!
wait_for_gateway "$GATEWAY_PORT"
echo "gateway pid $GATEWAY_PID ready on 127.0.0.1:$GATEWAY_PORT, gRPC $GATEWAY_GRPC_PORT (Redis store)"

# --- Driver ---
DRIVER_ARGS=(--gateway "127.0.0.1:$GATEWAY_GRPC_PORT" --redis "redis://127.0.0.1:$REDIS_PORT"
  --seconds 20 --warmup-seconds 45 --latency-seconds 5 --concurrency 64 --channels 2
  --script "$SCRIPT" --watch "gateway=$GATEWAY_PID" --watch "redis=$REDIS_PID" ${ARGS[@]+"${ARGS[@]}"})
echo "command: benchmarks/run-session-benchmark.sh${ARGS[*]+ ${ARGS[*]}}"
# shellcheck disable=SC2086
timeout --signal=TERM --kill-after=10 "${BENCH_TIMEOUT:-600}" \
  java ${DRIVER_JAVA_OPTS:-} -jar "$BENCH_JAR" "${DRIVER_ARGS[@]}" &
DRIVER_PID=$!

start_top_sampler "gateway=$GATEWAY_PID" "redis=$REDIS_PID"
wait_for_driver

print_top_samples
report_log_errors gateway
exit_with_driver_status
