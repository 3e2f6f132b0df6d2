#!/usr/bin/env bash
# Generate benchmark (issues 4 and 6), end to end on loopback:
#   one simulated vLLM prefill and one vLLM decode engine, in their own process on free ports (printed on start)
#   -> with --store redis, a private redis-server on a free port
#   -> the gateway jar on a free port, with one vllm route (context-first, hold-mode=fixed) to those two engines
#   -> benchmarks/target/handoff-benchmarks.jar (io.handoff.benchmarks.GenerateBenchmark) against the gateway and,
#      in the same run, the same two legs sent straight to the simulators
#   -> everything stopped again (trap on exit).
#
# The simulators run as a process of their own, not inside the driver: the driver's clock and its JIT/GC then share
# nothing with the engines, /proc shows their CPU apart from the driver's, and the gateway can be given their ports
# before it starts. All processes share the machine's cores either way.
#
# Builds nothing unless --build is given. Without it, build first from the repository root:
#   ./mvnw -q -B package -pl gateway,benchmarks -am -DskipTests
#
# Usage: benchmarks/run-generate-benchmark.sh [--build] [--store memory|redis] [driver options...]
#   Driver options are passed after these defaults (a later value wins):
#     --mode both --concurrency 64 --max-tokens 64 --warmup-seconds 120 --seconds 10 --rounds 3 --latency-seconds 10
#   --token-interval-ms N and --prefill-latency-ms N also configure the simulators (default 0: as fast as they can).
#   e.g. benchmarks/run-generate-benchmark.sh --store redis --concurrency 32
#
# Environment:
#   GATEWAY_JAR        gateway jar to run (default gateway/target/quarkus-app/quarkus-run.jar)
#   GATEWAY_JAVA_OPTS  extra JVM options for the gateway (default: none)
#   DRIVER_JAVA_OPTS   extra JVM options for the driver (default: none)
#   SIM_JAVA_OPTS      extra JVM options for the simulators (default: none)
#   SIM_ARGS           extra simulator options, e.g. "--abort-request-timeout-ms 20000" (default: none)
#   BENCH_TIMEOUT      hard limit in seconds for the driver (default 900)
#   KEEP_LOGS=1        keep the run directory (simulator/gateway/redis logs, top samples) even when the run passed
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD=0
STORE=memory
TOKEN_INTERVAL=0
PREFILL_LATENCY=0
ARGS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD=1 ;;
    --store) STORE="${2:?--store needs memory or redis}"; shift ;;
    --store=*) STORE="${1#--store=}" ;;
    --token-interval-ms) TOKEN_INTERVAL="${2:?}"; ARGS+=("$1" "$2"); shift ;;
    --token-interval-ms=*) TOKEN_INTERVAL="${1#*=}"; ARGS+=("$1") ;;
    --prefill-latency-ms) PREFILL_LATENCY="${2:?}"; ARGS+=("$1" "$2"); shift ;;
    --prefill-latency-ms=*) PREFILL_LATENCY="${1#*=}"; ARGS+=("$1") ;;
    *) ARGS+=("$1") ;;
  esac
  shift
done
case "$STORE" in
  memory|redis) ;;
  *) echo "--store is memory or redis, was $STORE" >&2; exit 2 ;;
esac

GATEWAY_JAR="${GATEWAY_JAR:-$ROOT/gateway/target/quarkus-app/quarkus-run.jar}"
BENCH_JAR="$ROOT/benchmarks/target/handoff-benchmarks.jar"
MODEL=sim-model

if [[ "$BUILD" == 1 ]]; then
  echo "building: ./mvnw -q -B package -pl gateway,benchmarks -am -DskipTests"
  ./mvnw -q -B package -pl gateway,benchmarks -am -DskipTests
fi
for f in "$GATEWAY_JAR" "$BENCH_JAR"; do
  if [[ ! -f "$f" ]]; then
    echo "missing $f: run ./mvnw -q -B package -pl gateway,benchmarks -am -DskipTests first, or pass --build" >&2
    exit 2
  fi
done
if [[ "$STORE" == redis ]]; then
  command -v redis-server >/dev/null || { echo "redis-server not found" >&2; exit 2; }
fi

RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/handoff-generate-bench.XXXXXX")"
SIM_PID=""
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
  stop_pid "$SIM_PID" "simulators" 10
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

# CPU seconds of each thread of a process since it started, busiest first, summed by thread name with its
# number dropped (so the event loops, the JIT compilers and the GC threads each show as one line).
thread_cpu() { # pid name
  local pid="$1" name="$2" hz
  hz="$(getconf CLK_TCK)"
  echo "$name threads, CPU seconds since start (user+system, from /proc/$pid/task/*/stat):"
  for task in /proc/"$pid"/task/*; do
    # comm may hold spaces: take the fields after the last ')'; utime and stime are the 12th and 13th of those
    local stat rest
    stat="$(cat "$task/stat" 2>/dev/null)" || continue
    rest="${stat##*) }"
    printf '%s\t%s\n' "$(sed -E 's/[-#]?[0-9]+$//' "$task/comm")" "$(awk '{ print $12 + $13 }' <<<"$rest")"
  done | awk -F'\t' -v hz="$hz" '{ t[$1] += $2; all += $2 }
      END { for (n in t) if (t[n] > 0) printf "  %8.1f  %5.1f%%  %s\n", t[n] / hz, 100 * t[n] / all, n }' \
    | sort -rn | head -12
}

# --- Simulators: vLLM prefill + decode in one process; port 0 lets each listener take a free port, and the fleet
# prints "vllm prefill http://127.0.0.1:N ..." / "vllm decode ..." once it is up ---
# shellcheck disable=SC2086
java ${SIM_JAVA_OPTS:-} -cp "$BENCH_JAR" io.handoff.simulator.SimulatorMain --fleet --families vllm --port 0 \
  --model "$MODEL" --token-interval-ms "$TOKEN_INTERVAL" --prefill-latency-ms "$PREFILL_LATENCY" ${SIM_ARGS:-} \
  >"$RUN_DIR/simulators.log" 2>&1 &
SIM_PID=$!
PREFILL_URL=""
DECODE_URL=""
for i in $(seq 1 300); do
  PREFILL_URL="$(awk '$1 == "vllm" && $2 == "prefill" { print $3 }' "$RUN_DIR/simulators.log")"
  DECODE_URL="$(awk '$1 == "vllm" && $2 == "decode" { print $3 }' "$RUN_DIR/simulators.log")"
  [[ -n "$PREFILL_URL" && -n "$DECODE_URL" ]] && break
  kill -0 "$SIM_PID" 2>/dev/null || { cat "$RUN_DIR/simulators.log" >&2; echo "simulators exited" >&2; exit 1; }
  [[ $i == 300 ]] && { cat "$RUN_DIR/simulators.log" >&2; echo "simulators not up after 30s" >&2; exit 1; }
  sleep 0.1
done
echo "simulators pid $SIM_PID: vllm prefill $PREFILL_URL, vllm decode $DECODE_URL" \
  "(token interval ${TOKEN_INTERVAL} ms, prefill latency ${PREFILL_LATENCY} ms)"

# --- Redis (only for --store redis; private, loopback, no persistence) ---
STORE_ENV=(HANDOFF_STORE_KIND=memory)
if [[ "$STORE" == redis ]]; then
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
  STORE_ENV=(HANDOFF_STORE_KIND=redis HANDOFF_REDIS_URL="redis://127.0.0.1:$REDIS_PORT")
fi

# --- Gateway: one vllm route to the two simulators, no demo fleet; the per-request log stays at WARN (default) ---
GATEWAY_PORT="$(free_port)"
# shellcheck disable=SC2086
env "${STORE_ENV[@]}" \
  java ${GATEWAY_JAVA_OPTS:-} -Dquarkus.http.port="$GATEWAY_PORT" -Dquarkus.http.host=127.0.0.1 \
  -Dquarkus.log.level=WARN -Dhandoff.demo.enabled=false \
  -Dhandoff.routes.bench.model="$MODEL" -Dhandoff.routes.bench.family=vllm \
  -Dhandoff.routes.bench.prefill="prefill-0=$PREFILL_URL" -Dhandoff.routes.bench.decode="decode-0=$DECODE_URL" \
  -Dhandoff.routes.bench.default-style=context-first -Dhandoff.routes.bench.options.hold-mode=fixed \
  -jar "$GATEWAY_JAR" >"$RUN_DIR/gateway.log" 2>&1 &
GATEWAY_PID=$!
for i in $(seq 1 120); do
  if [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$GATEWAY_PORT/q/health/ready")" == 200 ]]; then
    break
  fi
  kill -0 "$GATEWAY_PID" 2>/dev/null || { cat "$RUN_DIR/gateway.log" >&2; echo "gateway exited" >&2; exit 1; }
  [[ $i == 120 ]] && { echo "gateway not ready on $GATEWAY_PORT after 60s" >&2; exit 1; }
  sleep 0.5
done
echo "gateway pid $GATEWAY_PID ready on 127.0.0.1:$GATEWAY_PORT ($STORE store, route bench -> the two simulators)"

# --- Driver ---
WATCH=(--watch "gateway=$GATEWAY_PID" --watch "simulators=$SIM_PID")
if [[ -n "$REDIS_PID" ]]; then WATCH+=(--watch "redis=$REDIS_PID"); fi
DRIVER_ARGS=(--gateway "127.0.0.1:$GATEWAY_PORT" --prefill "$PREFILL_URL" --decode "$DECODE_URL" --model "$MODEL"
  --store "$STORE" "${WATCH[@]}"
  --mode both --concurrency 64 --max-tokens 64 --warmup-seconds 120 --seconds 10 --rounds 3 --latency-seconds 10
  ${ARGS[@]+"${ARGS[@]}"})
echo "command: benchmarks/run-generate-benchmark.sh --store $STORE${ARGS[*]+ ${ARGS[*]}}"
# shellcheck disable=SC2086
timeout --signal=TERM --kill-after=10 "${BENCH_TIMEOUT:-900}" \
  java ${DRIVER_JAVA_OPTS:-} -cp "$BENCH_JAR" io.handoff.benchmarks.GenerateBenchmark "${DRIVER_ARGS[@]}" &
DRIVER_PID=$!

# Samples of top during the run: the processes, then the gateway's busiest threads (2nd iteration of each pair, so
# %CPU is over that one second). The sampler ends by itself within ~3 s of the driver.
(
  sleep 3
  java_pid="$(pgrep -P "$DRIVER_PID" java || true)"
  pids="$GATEWAY_PID,$SIM_PID${REDIS_PID:+,$REDIS_PID}${java_pid:+,$java_pid}"
  while kill -0 "$DRIVER_PID" 2>/dev/null; do
    { echo "--- $(date +%T) gateway=$GATEWAY_PID simulators=$SIM_PID${REDIS_PID:+ redis=$REDIS_PID} driver=${java_pid:-?}"
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

echo
# Sessions the gateway still holds (live and tombstones), from its own gauges (refreshed every 10 s).
echo "gateway sessions held at the end (handoff_sessions gauges):" \
  "$(curl -s "http://127.0.0.1:$GATEWAY_PORT/q/metrics" | awk '/^handoff_sessions\{/ && $NF > 0 {
      match($0, /state="[A-Z_]+"/); printf "%s %d  ", substr($0, RSTART + 7, RLENGTH - 8), $NF }')"
thread_cpu "$GATEWAY_PID" gateway || true
thread_cpu "$SIM_PID" simulators || true

if [[ -s "$RUN_DIR/top.log" ]]; then
  echo
  echo "top samples during the run (one second each, about every 10 s; %CPU 100 = one core):"
  cat "$RUN_DIR/top.log"
fi
for log in gateway simulators; do
  if grep -qiE 'ERROR|Exception' "$RUN_DIR/$log.log"; then
    echo
    echo "$log log has errors (first 20 lines):"
    grep -iE 'ERROR|Exception' "$RUN_DIR/$log.log" | head -20
  fi
done
if [[ $DRIVER_RC -ne 0 ]]; then
  echo "driver exited with $DRIVER_RC" >&2
fi
exit "$DRIVER_RC"
