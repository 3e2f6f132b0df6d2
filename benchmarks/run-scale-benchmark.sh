#!/usr/bin/env bash
# The scale curve (issue 12): many paced streams open at once through one gateway, against the same two vLLM legs
# sent straight to the simulators, at each of --streams (default 64, 1000, 10000). For each level it runs
# run-generate-benchmark.sh once, for one front (--front: gRPC Generate, the default; http, the OpenAI front's
# streamed /v1/completions, a connection a stream; http2, the same over HTTP/2, multiplexed as the gRPC channels are:
# on a machine whose hard open-file limit is 20,000, 10,000 client connections and the gateway's 12,500 to the engines
# do not fit in one process), with:
#   - tokens paced slowly enough that the machine idles between them (--token-interval-ms, default 500, and
#     --max-tokens, default 32: each stream lasts about 16 s, so 10,000 of them are about 625 requests a second);
#   - the starts of each phase spread over one stream's life (--ramp-seconds), so arrivals stay even instead of
#     coming in waves of N;
#   - the gateway's limits raised to the level (the route's bulkhead, each endpoint's outstanding requests and engine
#     connections, the tenant's live sessions), the simulators' running requests and KV pool too, and the open-file
#     limit of every process raised (a stream holds a connection on each hop);
#   - the prefill legs' connections (prefill-max-connections) sized apart, for twice the prefills in flight on
#     average (--prefill-connections-per-average): a prefill is one token of a stream's --max-tokens, so about 1 in --max-tokens streams is in its prefill;
#     sized like the decode's, the pool kept a connection for nearly every stream after bunched starts, and the
#     gateway reached the hard open-file limit at 10,000 streams;
#   - the prefill and the decode simulator each in a process of its own (SIM_SPLIT=1): at 10,000 streams one process
#     for both would hold a descriptor for every stream of both phases and reach the hard open-file limit;
#   - memory measured with every stream open: each process's RSS, and the gateway's heap after a full collection
#     (jcmd), again once the phase drained: the difference per stream is what an open stream keeps alive.
# Then it prints one line per level: gateway CPU per request, heap and RSS per open stream, added TTFT p50/p99.
#
# Builds nothing unless --build is given (then: ./mvnw -q -B package -pl gateway,benchmarks -am -DskipTests).
#
# Usage: benchmarks/run-scale-benchmark.sh [--build] [--store memory|redis] [--front grpc|http|http2] [--streams 64,1000,10000]
#          [--token-interval-ms 500] [--max-tokens 32] [--warmup-seconds 40] [--seconds 30]
#          [--prefill-connections-per-average 2]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD=()
STORE=memory
FRONT=grpc
STREAMS=64,1000,10000
INTERVAL=500
TOKENS=32
WARMUP=40
MEASURED=30
PREFILL_FACTOR=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD=(--build) ;;
    --store) STORE="${2:?}"; shift ;;
    --front) FRONT="${2:?}"; shift ;;
    --streams) STREAMS="${2:?}"; shift ;;
    --token-interval-ms) INTERVAL="${2:?}"; shift ;;
    --max-tokens) TOKENS="${2:?}"; shift ;;
    --warmup-seconds) WARMUP="${2:?}"; shift ;;
    --seconds) MEASURED="${2:?}"; shift ;;
    --prefill-connections-per-average) PREFILL_FACTOR="${2:?}"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

FRONT_ARGS=()
case "$FRONT" in
  grpc) PHASE="gateway gRPC Generate"; FRONT_ARGS=(--mode grpc) ;;
  http) PHASE="gateway HTTP /v1/completions"; FRONT_ARGS=(--mode http) ;;
  http2) PHASE="gateway HTTP/2 /v1/completions"; FRONT_ARGS=(--mode http --http-version 2) ;;
  *) echo "--front is grpc, http or http2" >&2; exit 2 ;;
esac

# every stream holds a socket on each hop it crosses: client-gateway, gateway-engine, and the direct client's own
ulimit -n "$(ulimit -Hn)"
echo "open-file limit: $(ulimit -n)"

LIFE_SECONDS=$(( (INTERVAL * TOKENS + 999) / 1000 ))
RAMP=$(( LIFE_SECONDS > 1 ? LIFE_SECONDS : 1 ))
SETTLE=$(( RAMP + 2 ))
SUMMARY="$(mktemp "${TMPDIR:-/tmp}/handoff-scale.XXXXXX")"
trap 'rm -f "$SUMMARY"' EXIT

IFS=',' read -r -a LEVELS <<<"$STREAMS"
for N in "${LEVELS[@]}"; do
  LIMIT=$(( N + 64 ))
  PREFILL_LIMIT=$(( PREFILL_FACTOR * N / TOKENS + 64 ))
  # the listeners take 100 streams per HTTP/2 connection (quarkus.http.limits.max-concurrent-streams): 80 a channel
  CHANNELS=$(( N / 80 + 2 ))
  echo
  echo "=== $N streams: tokens every ${INTERVAL} ms, ${TOKENS} tokens (about ${LIFE_SECONDS} s a stream)," \
    "starts spread over ${RAMP} s, $PHASE, ${CHANNELS} HTTP/2 connections (gRPC, http2), $PREFILL_LIMIT prefill" \
    "connections ==="
  LOG="$(mktemp "${TMPDIR:-/tmp}/handoff-scale-$N.XXXXXX")"
  GATEWAY_JAVA_OPTS="${GATEWAY_JAVA_OPTS:-} -Dhandoff.routes.bench.max-in-flight=$LIMIT
    -Dhandoff.routes.bench.max-outstanding-per-endpoint=$LIMIT -Dhandoff.routes.bench.options.max-connections=$LIMIT
    -Dhandoff.routes.bench.options.prefill-max-connections=$PREFILL_LIMIT
    -Dhandoff.session.max-live-per-tenant=$(( 2 * N + 1000 ))" \
  SIM_SPLIT=1 SIM_ARGS="${SIM_ARGS:-} --max-running $(( 2 * LIMIT )) --kv-blocks $(( 16 * LIMIT + 8192 ))" \
  BENCH_TIMEOUT=$(( 1800 + 4 * LIFE_SECONDS * 10 )) \
    benchmarks/run-generate-benchmark.sh "${BUILD[@]}" --store "$STORE" "${FRONT_ARGS[@]}" --concurrency "$N" \
      --channels "$CHANNELS" --token-interval-ms "$INTERVAL" --max-tokens "$TOKENS" --warmup-seconds "$WARMUP" \
      --settle-seconds "$SETTLE" --ramp-seconds "$RAMP" --seconds "$MEASURED" --rounds 1 --latency-seconds 0 \
      --heap-of gateway 2>&1 | tee "$LOG" || echo "($N streams: the run failed; its figures below are partial)"
  BUILD=()
  # the memory line that follows the gateway's phase, its CPU row (the last column is that phase), the added TTFT
  awk -v n="$N" -v phase="$PHASE" '
    /round [0-9]+\/[0-9]+/ { gatewayPhase = index($0, phase) > 0; next }
    gatewayPhase && /memory, .* streams open/ {
      match($0, /gateway RSS [0-9.]+ MB \(\+[-0-9.]+ KB/); rss = substr($0, RSTART + 12, RLENGTH - 12)
      sub(/ MB \(\+/, " (+", rss); sub(/ KB/, ")", rss)
      match($0, /gateway heap after full GC [0-9.]+ MB/); heap = substr($0, RSTART + 27, RLENGTH - 30)
      match($0, /heap: [-0-9.]+ KB per stream/); perStream = substr($0, RSTART + 6, RLENGTH - 20)
      gatewayPhase = 0 }
    /^  gateway +[0-9.]+ / { cpu = $NF }
    /^  gateway \(JIT threads\)/ { jit = $NF }
    index($0, phase) && /throughput/ {
      match($0, /throughput [0-9.]+/); ratio = substr($0, RSTART + 11, RLENGTH - 11)
      match($0, /added TTFT p50 [-+0-9.]+ ms, p99 [-+0-9.]+/); ttft = substr($0, RSTART + 15, RLENGTH - 15) }
    /^errors \(warm-up/ { errors = $NF }
    END { printf "| %s | %s | %s | %s | %s | %s | %s ms | %s | %s |\n", n, cpu, jit, rss, heap, perStream, ttft,
          ratio, errors }' "$LOG" >>"$SUMMARY"
  rm -f "$LOG"
done

echo
echo "=== the scale curve, $PHASE (each level its own run; memory with every stream of the gateway's phase open) ==="
echo "| streams | gateway CPU ms/req | of it JIT | gateway RSS MB (+KB per stream) | gateway heap after full GC MB |" \
  "heap KB per open stream | added TTFT p50, p99 | throughput of direct | errors |"
echo "| ---: | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: |"
cat "$SUMMARY"
