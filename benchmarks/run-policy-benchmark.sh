#!/usr/bin/env bash
# Endpoint choice on a shared-prefix workload (issue 15), end to end on loopback:
#   ENGINES simulator processes (default 3), each one vLLM prefill and one vLLM decode engine on free ports, every
#   engine with a prefix cache of PREFIX_CACHE_BLOCKS blocks and a prefill that costs MS_PER_UNCACHED_TOKEN per
#   prompt token not in it
#   -> one gateway jar with one route per prefill policy (least-outstanding, power-of-two, prefix-affinity), each
#      route over the same prefill and decode pools and serving its own model name (engine-model sim-model)
#   -> benchmarks/target/handoff-benchmarks.jar (io.handoff.benchmarks.GenerateBenchmark --policy ...), which runs a
#      shared-prefix workload and then unique prompts of the same length against each route in turn
#   -> everything stopped again (trap on exit).
#
# One gateway serves every policy, so every policy runs on the same JVM, warmed alike, and the ratios compare
# policies only. Builds nothing unless --build is given (see run-generate-benchmark.sh).
#
# Usage: benchmarks/run-policy-benchmark.sh [--build] [driver options...]
#   Driver options are passed after these defaults (a later value wins):
#     --concurrency 16 --max-tokens 16 --warmup-seconds 40 --seconds 15 --rounds 2 --settle-seconds 2
#     --prefixes 32 --prefix-tokens 2000 --suffix-tokens 200
#
# Environment:
#   ENGINES                prefill (and decode) engines, one simulator process each (default 3)
#   PREFIX_CACHE_BLOCKS    each engine's prefix cache in blocks of 16 tokens (default 2000: 32,000 tokens, about half
#                          the 32 x 2,000 prefix tokens, as an engine that cannot keep every prompt prefix)
#   MS_PER_UNCACHED_TOKEN  prefill cost per uncached prompt token (default 0.1: 220 ms for 2,200 tokens, 20 ms for
#                          a 200-token suffix after a cached prefix)
#   GATEWAY_JAR, GATEWAY_JAVA_OPTS, DRIVER_JAVA_OPTS, SIM_JAVA_OPTS, BENCH_TIMEOUT, KEEP_LOGS as in
#   run-generate-benchmark.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=benchmarks/lib.sh
source "$ROOT/benchmarks/lib.sh"

BUILD=0
ARGS=()
for a in "$@"; do
  if [[ "$a" == --build ]]; then BUILD=1; else ARGS+=("$a"); fi
done
ENGINES="${ENGINES:-3}"
PREFIX_CACHE_BLOCKS="${PREFIX_CACHE_BLOCKS:-2000}"
MS_PER_UNCACHED_TOKEN="${MS_PER_UNCACHED_TOKEN:-0.1}"
POLICIES=(least-outstanding power-of-two prefix-affinity)
GATEWAY_JAR="${GATEWAY_JAR:-$ROOT/gateway/target/quarkus-app/quarkus-run.jar}"
BENCH_JAR="$ROOT/benchmarks/target/handoff-benchmarks.jar"
MODEL=sim-model

build_or_require_jars "$BUILD"
RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/handoff-policy-bench.XXXXXX")"
SIM_PIDS=()
# lib.sh's cleanup stops one simulator process; the others are stopped here first
stop_simulators() {
  local pid
  for pid in "${SIM_PIDS[@]+"${SIM_PIDS[@]}"}"; do stop_pid "$pid" simulators 10; done
}
trap 'rc=$?; stop_pid "$SAMPLER_PID" "top sampler" 2; stop_pid "$DRIVER_PID" driver 5;
  stop_pid "$GATEWAY_PID" gateway 15; stop_simulators; (exit $rc); cleanup' EXIT
trap 'exit 130' INT TERM

# --- Simulators: ENGINES fleets of one vLLM prefill + one decode, each in its own process on free ports ---
PREFILLS=()
DECODES=()
for n in $(seq 1 "$ENGINES"); do
  # shellcheck disable=SC2086
  java ${SIM_JAVA_OPTS:-} -cp "$BENCH_JAR" io.handoff.simulator.SimulatorMain --fleet --families vllm --port 0 \
    --model "$MODEL" --prefix-cache-blocks "$PREFIX_CACHE_BLOCKS" \
    --prefill-ms-per-uncached-token "$MS_PER_UNCACHED_TOKEN" >"$RUN_DIR/simulators-$n.log" 2>&1 &
  SIM_PIDS+=($!)
done
for n in $(seq 1 "$ENGINES"); do
  log="$RUN_DIR/simulators-$n.log"
  for i in $(seq 1 300); do
    p="$(awk '$1 == "vllm" && $2 == "prefill" { print $3 }' "$log")"
    d="$(awk '$1 == "vllm" && $2 == "decode" { print $3 }' "$log")"
    [[ -n "$p" && -n "$d" ]] && break
    kill -0 "${SIM_PIDS[$((n - 1))]}" 2>/dev/null || { cat "$log" >&2; echo "simulators exited" >&2; exit 1; }
    [[ $i == 300 ]] && { cat "$log" >&2; echo "simulators not up after 30s" >&2; exit 1; }
    sleep 0.1
  done
  PREFILLS+=("$p")
  DECODES+=("$d")
done
echo "simulators pids ${SIM_PIDS[*]}: prefill ${PREFILLS[*]}, decode ${DECODES[*]}" \
  "(prefix cache $PREFIX_CACHE_BLOCKS blocks, $MS_PER_UNCACHED_TOKEN ms per uncached token)"

# --- Gateway: one route per policy, the same pools, each route its own model name ---
join_pool() { # role urls...
  local role="$1" out="" i=0
  shift
  for u in "$@"; do out+="${out:+,}$role-$i=$u"; i=$((i + 1)); done
  echo "$out"
}
ROUTES=()
DRIVER_POLICIES=()
for policy in "${POLICIES[@]}"; do
  r="handoff.routes.$policy"
  ROUTES+=("-D$r.model=$MODEL-$policy" "-D$r.engine-model=$MODEL" "-D$r.family=vllm"
    "-D$r.prefill=$(join_pool prefill "${PREFILLS[@]}")" "-D$r.decode=$(join_pool decode "${DECODES[@]}")"
    "-D$r.default-style=context-first" "-D$r.options.hold-mode=fixed" "-D$r.prefill-policy=$policy")
  DRIVER_POLICIES+=(--policy "$policy=$MODEL-$policy")
done
GATEWAY_PORT="$(free_port)"
GATEWAY_GRPC_PORT="$(free_port)"
# shellcheck disable=SC2086
HANDOFF_STORE_KIND=memory java ${GATEWAY_JAVA_OPTS:-} -Dquarkus.http.port="$GATEWAY_PORT" \
  -Dquarkus.http.host=127.0.0.1 -Dquarkus.grpc.server.port="$GATEWAY_GRPC_PORT" \
  -Dquarkus.grpc.server.host=127.0.0.1 -Dquarkus.log.level=WARN -Dhandoff.demo.enabled=false \
  "${ROUTES[@]}" -jar "$GATEWAY_JAR" >"$RUN_DIR/gateway.log" 2>&1 &
GATEWAY_PID=$!
wait_for_gateway "$GATEWAY_PORT"
echo "gateway pid $GATEWAY_PID ready on 127.0.0.1:$GATEWAY_PORT (memory store, routes ${POLICIES[*]})"

# --- Driver ---
WATCH=(--watch "gateway=$GATEWAY_PID")
for n in "${!SIM_PIDS[@]}"; do WATCH+=(--watch "simulators-$((n + 1))=${SIM_PIDS[$n]}"); done
POOLS=()
for u in "${PREFILLS[@]}"; do POOLS+=(--prefill-pool "$u"); done
for u in "${DECODES[@]}"; do POOLS+=(--decode-pool "$u"); done
DRIVER_ARGS=(--gateway "127.0.0.1:$GATEWAY_PORT" --model "$MODEL" --store memory "${WATCH[@]}"
  "${DRIVER_POLICIES[@]}" "${POOLS[@]}"
  --concurrency 16 --max-tokens 16 --warmup-seconds 40 --seconds 15 --rounds 2 --settle-seconds 2
  --prefixes 32 --prefix-tokens 2000 --suffix-tokens 200
  ${ARGS[@]+"${ARGS[@]}"})
echo "command: ENGINES=$ENGINES PREFIX_CACHE_BLOCKS=$PREFIX_CACHE_BLOCKS MS_PER_UNCACHED_TOKEN=$MS_PER_UNCACHED_TOKEN" \
  "benchmarks/run-policy-benchmark.sh${ARGS[*]+ ${ARGS[*]}}"
# shellcheck disable=SC2086
timeout --signal=TERM --kill-after=10 "${BENCH_TIMEOUT:-900}" \
  java ${DRIVER_JAVA_OPTS:-} -cp "$BENCH_JAR" io.handoff.benchmarks.GenerateBenchmark "${DRIVER_ARGS[@]}" &
DRIVER_PID=$!
wait_for_driver
report_log_errors gateway $(for n in $(seq 1 "$ENGINES"); do echo "simulators-$n"; done)
exit_with_driver_status
