#!/usr/bin/env bash
# KV session lifecycle benchmark, end to end on loopback:
#   a private redis-server on a free port -> the gateway jar on a free port with the Redis store
#   -> benchmarks/target/handoff-benchmarks.jar against both -> everything stopped again (trap on exit).
#
# Builds nothing unless --build is given. Without it, build first from the repository root:
#   ./mvnw -q -B install -DskipTests            (or: ./mvnw -q -B install -pl gateway,benchmarks -am -DskipTests)
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

if [[ "$BUILD" == 1 ]]; then
  echo "building: ./mvnw -q -B install -pl gateway,benchmarks -am -DskipTests"
  ./mvnw -q -B install -pl gateway,benchmarks -am -DskipTests
fi
for f in "$GATEWAY_JAR" "$BENCH_JAR"; do
  if [[ ! -f "$f" ]]; then
    echo "missing $f: run ./mvnw -q -B install -DskipTests first, or pass --build" >&2
    exit 2
  fi
done
command -v redis-server >/dev/null || { echo "redis-server not found" >&2; exit 2; }

RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/handoff-bench.XXXXXX")"
REDIS_PID=""
GATEWAY_PID=""
DRIVER_PID=""
SAMPLER_PID=""

stop_pid() { # pid name seconds
  local pid="$1" name="$2" wait="$3"
  [[ -n "$pid" ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((wait * 10))); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    sleep 0.1
  done
  echo "$name ($pid) did not stop in ${wait}s; killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  stop_pid "$SAMPLER_PID" "top sampler" 2
  stop_pid "$DRIVER_PID" "driver" 5
  stop_pid "$GATEWAY_PID" "gateway" 15
  stop_pid "$REDIS_PID" "redis-server" 10
  if [[ $rc -ne 0 || "${KEEP_LOGS:-0}" == 1 ]]; then
    echo "logs kept in $RUN_DIR"
  else
    rm -rf "$RUN_DIR"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 40000 ))
    if ! port_in_use "$p"; then
      echo "$p"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

# --- Redis (private, loopback, no persistence) ---
REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  >"$RUN_DIR/redis.log" 2>&1 &
REDIS_PID=$!
for i in $(seq 1 100); do
  if redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then break; fi
  kill -0 "$REDIS_PID" 2>/dev/null || { cat "$RUN_DIR/redis.log" >&2; echo "redis-server exited" >&2; exit 1; }
  [[ $i == 100 ]] && { echo "redis-server not answering on $REDIS_PORT after 10s" >&2; exit 1; }
  sleep 0.1
done
echo "redis-server $(redis-server --version | sed -E 's/.*v=([^ ]+).*/\1/') pid $REDIS_PID on 127.0.0.1:$REDIS_PORT"

# --- Gateway (Redis store, one port for gRPC and HTTP) ---
GATEWAY_PORT="$(free_port)"
# shellcheck disable=SC2086
HANDOFF_STORE_KIND=redis HANDOFF_REDIS_URL="redis://127.0.0.1:$REDIS_PORT" \
  java ${GATEWAY_JAVA_OPTS:-} -Dquarkus.http.port="$GATEWAY_PORT" -Dquarkus.http.host=127.0.0.1 \
  -Dquarkus.log.level=WARN -jar "$GATEWAY_JAR" >"$RUN_DIR/gateway.log" 2>&1 &
GATEWAY_PID=$!
for i in $(seq 1 120); do
  if [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$GATEWAY_PORT/q/health/ready")" == 200 ]]; then
    break
  fi
  kill -0 "$GATEWAY_PID" 2>/dev/null || { cat "$RUN_DIR/gateway.log" >&2; echo "gateway exited" >&2; exit 1; }
  [[ $i == 120 ]] && { echo "gateway not ready on $GATEWAY_PORT after 60s" >&2; exit 1; }
  sleep 0.5
done
echo "gateway pid $GATEWAY_PID ready on 127.0.0.1:$GATEWAY_PORT (Redis store)"

# --- Driver ---
DRIVER_ARGS=(--target "127.0.0.1:$GATEWAY_PORT" --redis "redis://127.0.0.1:$REDIS_PORT"
  --seconds 20 --warmup-seconds 45 --latency-seconds 5 --concurrency 64 --channels 2
  --script "$SCRIPT" --watch "gateway=$GATEWAY_PID" --watch "redis=$REDIS_PID" ${ARGS[@]+"${ARGS[@]}"})
echo "command: benchmarks/run-session-benchmark.sh${ARGS[*]+ ${ARGS[*]}}"
# shellcheck disable=SC2086
timeout --signal=TERM --kill-after=10 "${BENCH_TIMEOUT:-600}" \
  java ${DRIVER_JAVA_OPTS:-} -jar "$BENCH_JAR" "${DRIVER_ARGS[@]}" &
DRIVER_PID=$!

# Samples of top during the run: the three processes, then the gateway's busiest threads (2nd iteration of each
# pair, so %CPU is over that one second). The sampler ends by itself within ~3 s of the driver.
(
  sleep 3
  java_pid="$(pgrep -P "$DRIVER_PID" java || true)"
  pids="$GATEWAY_PID,$REDIS_PID${java_pid:+,$java_pid}"
  while kill -0 "$DRIVER_PID" 2>/dev/null; do
    { echo "--- $(date +%T) gateway=$GATEWAY_PID redis=$REDIS_PID driver=${java_pid:-?}"
      top -b -d 1 -n 2 -p "$pids" | awk '/^top -/{n++} n==2' | sed -n '3p;7,$p'
      echo "    gateway threads:"
      top -H -b -d 1 -n 2 -p "$GATEWAY_PID" | awk '/^top -/{n++} n==2' | sed -n '8,12p'
    } >>"$RUN_DIR/top.log" 2>&1 || true
    for _ in 1 2 3 4 5 6 7 8; do
      kill -0 "$DRIVER_PID" 2>/dev/null || break
      sleep 1
    done
  done
) &
SAMPLER_PID=$!

set +e
wait "$DRIVER_PID"
DRIVER_RC=$?
set -e
DRIVER_PID=""
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""

if [[ -s "$RUN_DIR/top.log" ]]; then
  echo
  echo "top samples during the run (one second each, about every 10 s; %CPU 100 = one core):"
  cat "$RUN_DIR/top.log"
fi
if grep -qiE 'ERROR|Exception' "$RUN_DIR/gateway.log"; then
  echo
  echo "gateway log has errors (first 20 lines):"
  grep -iE 'ERROR|Exception' "$RUN_DIR/gateway.log" | head -20
fi
if [[ $DRIVER_RC -ne 0 ]]; then
  echo "driver exited with $DRIVER_RC" >&2
fi
exit "$DRIVER_RC"
