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
# (lib.sh holds the process plumbing both benchmark scripts share.)
#
# Usage: benchmarks/run-generate-benchmark.sh [--build] [--hops] [--store memory|redis] [driver options...]
#   Driver options are passed after these defaults (a later value wins):
#     --mode both --concurrency 64 --max-tokens 64 --warmup-seconds 120 --seconds 10 --rounds 3 --latency-seconds 10
#   --token-interval-ms N and --prefill-latency-ms N also configure the simulators (default 0: as fast as they can).
#   --hops: during the one-in-flight phase, record the machine's scheduler wake-ups (perf sched, from Debian's
#   linux-perf; root or kernel.perf_event_paranoid=-1) and print each target's time to first token hop by hop
#   (io.handoff.benchmarks.SchedulerHops), e.g.
#     benchmarks/run-generate-benchmark.sh --hops --token-interval-ms 5 --max-tokens 32 --latency-seconds 60
#   e.g. benchmarks/run-generate-benchmark.sh --store redis --concurrency 32
#
# Environment:
#   GATEWAY_JAR        gateway jar to run (default gateway/target/quarkus-app/quarkus-run.jar)
#   GATEWAY_JAVA_OPTS  extra JVM options for the gateway (default: none)
#   DRIVER_JAVA_OPTS   extra JVM options for the driver (default: none)
#   SIM_JAVA_OPTS      extra JVM options for the simulators (default: none)
#   SIM_ARGS           extra simulator options, e.g. "--abort-request-timeout-ms 20000" (default: none)
#   SIM_SPLIT=1        the prefill and the decode simulator each in a process of its own (default: one process for
#                      both). At thousands of open streams one process holds a descriptor for every stream of both
#                      legs and reaches the hard open-file limit; split, each holds its own leg's.
#   BENCH_TIMEOUT      hard limit in seconds for the driver (default 900)
#   KEEP_LOGS=1        keep the run directory (simulator/gateway/redis logs, top samples) even when the run passed
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=benchmarks/lib.sh
source "$ROOT/benchmarks/lib.sh"

BUILD=0
HOPS=0
STORE=memory
TOKEN_INTERVAL=0
PREFILL_LATENCY=0
ARGS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD=1 ;;
    --hops) HOPS=1 ;;
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

build_or_require_jars "$BUILD"
if [[ "$STORE" == redis ]]; then
  require_redis_server
fi

RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/handoff-generate-bench.XXXXXX")"
trap_cleanup
if [[ "$HOPS" == 1 ]]; then
  command -v perf >/dev/null || { echo "--hops needs perf (apt-get install linux-perf)" >&2; exit 2; }
  ARGS+=(--hops "$RUN_DIR/sched.data")
fi

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

# --- Simulators: vLLM prefill + decode, in one process or (SIM_SPLIT=1) one each; port 0 lets each listener take a
# free port, and each prints "vllm prefill http://127.0.0.1:N ..." / "vllm decode ..." once it is up ---
start_simulator() { # log, then the SimulatorMain arguments that choose the engines
  local log="$1"
  shift
  # shellcheck disable=SC2086
  java ${SIM_JAVA_OPTS:-} -cp "$BENCH_JAR" io.handoff.simulator.SimulatorMain "$@" --model "$MODEL" \
    --token-interval-ms "$TOKEN_INTERVAL" --prefill-latency-ms "$PREFILL_LATENCY" ${SIM_ARGS:-} >"$log" 2>&1 &
}
engine_url() { # log role pid: waits for the engine of that role to print its URL
  local url=""
  for i in $(seq 1 300); do
    url="$(awk -v role="$2" '{ for (f = 1; f < NF; f++) if ($f == "vllm" && $(f + 1) == role) { print $(f + 2); exit } }' "$1")"
    [[ -n "$url" ]] && { echo "$url"; return 0; }
    kill -0 "$3" 2>/dev/null || { cat "$1" >&2; echo "simulator exited" >&2; return 1; }
    [[ $i == 300 ]] && { cat "$1" >&2; echo "simulator not up after 30s" >&2; return 1; }
    sleep 0.1
  done
}
if [[ "${SIM_SPLIT:-0}" == 1 ]]; then
  start_simulator "$RUN_DIR/simulators.log" --family vllm --role prefill --port 0
  SIM_PID=$!
  start_simulator "$RUN_DIR/decode-simulator.log" --family vllm --role decode --port 0
  DECODE_SIM_PID=$!
  PREFILL_URL="$(engine_url "$RUN_DIR/simulators.log" prefill "$SIM_PID")"
  DECODE_URL="$(engine_url "$RUN_DIR/decode-simulator.log" decode "$DECODE_SIM_PID")"
  echo "simulators: vllm prefill $PREFILL_URL (pid $SIM_PID), vllm decode $DECODE_URL (pid $DECODE_SIM_PID)" \
    "(token interval ${TOKEN_INTERVAL} ms, prefill latency ${PREFILL_LATENCY} ms)"
else
  start_simulator "$RUN_DIR/simulators.log" --fleet --families vllm --port 0
  SIM_PID=$!
  PREFILL_URL="$(engine_url "$RUN_DIR/simulators.log" prefill "$SIM_PID")"
  DECODE_URL="$(engine_url "$RUN_DIR/simulators.log" decode "$SIM_PID")"
  echo "simulators pid $SIM_PID: vllm prefill $PREFILL_URL, vllm decode $DECODE_URL" \
    "(token interval ${TOKEN_INTERVAL} ms, prefill latency ${PREFILL_LATENCY} ms)"
fi

# --- Redis (only for --store redis; private, loopback, no persistence) ---
STORE_ENV=(HANDOFF_STORE_KIND=memory)
if [[ "$STORE" == redis ]]; then
  start_redis
  STORE_ENV=(HANDOFF_STORE_KIND=redis HANDOFF_REDIS_URL="redis://127.0.0.1:$REDIS_PORT")
fi

# --- Gateway: one vllm route to the two simulators, no demo fleet; the per-request log stays at WARN (default) ---
GATEWAY_PORT="$(free_port)"
GATEWAY_GRPC_PORT="$(free_port)"
start_bench_gateway "$GATEWAY_JAR" "$GATEWAY_PORT" "$GATEWAY_GRPC_PORT" "$RUN_DIR/gateway.log"
GATEWAY_PID=$STARTED_PID
wait_for_gateway "$GATEWAY_PORT"
echo "gateway pid $GATEWAY_PID ready on 127.0.0.1:$GATEWAY_PORT, gRPC $GATEWAY_GRPC_PORT ($STORE store, route bench -> the two simulators)"

# --- Driver ---
WATCH=(--watch "gateway=$GATEWAY_PID" --watch "simulators=$SIM_PID")
SIM_PIDS=("simulators=$SIM_PID")
if [[ -n "$DECODE_SIM_PID" ]]; then
  WATCH=(--watch "gateway=$GATEWAY_PID" --watch "prefill-sim=$SIM_PID" --watch "decode-sim=$DECODE_SIM_PID")
  SIM_PIDS=("prefill-sim=$SIM_PID" "decode-sim=$DECODE_SIM_PID")
fi
if [[ -n "$REDIS_PID" ]]; then WATCH+=(--watch "redis=$REDIS_PID"); fi
DRIVER_ARGS=(--gateway "127.0.0.1:$GATEWAY_PORT" --gateway-grpc "127.0.0.1:$GATEWAY_GRPC_PORT" --prefill "$PREFILL_URL" --decode "$DECODE_URL" --model "$MODEL"
  --store "$STORE" "${WATCH[@]}"
  --mode both --concurrency 64 --max-tokens 64 --warmup-seconds 120 --seconds 10 --rounds 3 --latency-seconds 10
  ${ARGS[@]+"${ARGS[@]}"})
echo "command: benchmarks/run-generate-benchmark.sh --store $STORE${ARGS[*]+ ${ARGS[*]}}"
# shellcheck disable=SC2086
timeout --signal=TERM --kill-after=10 "${BENCH_TIMEOUT:-900}" \
  java ${DRIVER_JAVA_OPTS:-} -cp "$BENCH_JAR" io.handoff.benchmarks.GenerateBenchmark "${DRIVER_ARGS[@]}" &
DRIVER_PID=$!

start_top_sampler "gateway=$GATEWAY_PID" "${SIM_PIDS[@]}" ${REDIS_PID:+"redis=$REDIS_PID"}
wait_for_driver

echo
# Sessions the gateway still holds (live and tombstones), from its own gauges (refreshed every 10 s).
echo "gateway sessions held at the end (handoff_sessions gauges):" \
  "$(curl -s "http://127.0.0.1:$GATEWAY_PORT/q/metrics" | awk '/^handoff_sessions\{/ && $NF > 0 {
      match($0, /state="[A-Z_]+"/); printf "%s %d  ", substr($0, RSTART + 7, RLENGTH - 8), $NF }')"
thread_cpu "$GATEWAY_PID" gateway || true
for named in "${SIM_PIDS[@]}"; do thread_cpu "${named#*=}" "${named%%=*}" || true; done

print_top_samples
report_log_errors gateway simulators ${DECODE_SIM_PID:+decode-simulator}
exit_with_driver_status
