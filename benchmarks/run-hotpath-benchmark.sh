#!/usr/bin/env bash
# Hot-path benchmark (issue 12): what one streamed completion costs through the gateway, against the floors that run
# beside it in the same run, driven by wrk (Debian's package), one target at a time:
#   decode      the vLLM decode simulator alone: one leg, it prefills locally, no proxy
#   nginx       nginx (Debian's package) as a plain one-hop proxy in front of that decode simulator
#   gateway     Handoff's OpenAI front, context-first on the vLLM prefill and decode simulators
# For each target it prints requests/s, wrk's latency percentiles, and the CPU milliseconds per completed request of
# every process (read from /proc over the measured window): wrk, the simulators, nginx, the gateway (and Redis with
# --store redis). The gateway is also measured at --long-tokens, so that the CPU of one relayed token is the
# difference of the two per-request figures divided by the difference in tokens. It also prints the read and write
# system calls per request of the simulators and the gateway (/proc/<pid>/io): how many socket reads and writes a
# request takes, which changes with how many chunks one read brings. With --store redis it also prints the commands
# Redis ran per request in each measured window (INFO commandstats: the scripts, and the commands the scripts ran)
# and the time Redis counted for each; that time is wall-clock inside Redis, so on a busy machine it includes Redis
# waiting for a core: read it as a share, not as CPU. It also prints the socket reads and writes Redis made per request
# (INFO stats): one of each per call, unless calls that overlap on one connection share them.
#
# Builds nothing unless --build is given; otherwise build first: ./mvnw -q -B package -pl gateway,benchmarks -am
# -DskipTests
#
# The warm-up of each target lasts at least --warmup-seconds and goes on, in 15 s rounds, until a round's rate is
# within 5% of the one before (at most four times --warmup-seconds): the gateway's JIT keeps compiling for about two
# minutes under this load, and a window measured before that ends measures the compiler. A warm-up round that had
# non-2xx answers or socket errors is printed; only errors in a measured window stop the run.
#
# With --profile FILE the gateway runs with a flight recording of Java CPU samples (benchmarks/cpu-samples.jfc, on
# from its start: a recording started later makes the JVM recompile what it had compiled, which is then what the
# profile shows) and dumped to FILE after the measured 16-token window; the script prints the summary of that window's
# samples (io.handoff.benchmarks.ProfileSummary, given the window's start and end: the file holds every chunk that
# overlaps it, the warm-up included; top self frames, self and inclusive share by layer).
#
# With --against JAR it compares two builds of the gateway instead (GATEWAY_JAR, "this build", and JAR): both run
# side by side on the same simulators, both are warmed up, then --rounds windows of --seconds each measure one and
# then the other, in the order AB, BA, AB...; it prints each window and the median of this build's figure over the
# other's. On a shared machine the speed of the whole machine drifts by more than a small change costs (two runs
# of one build have differed by 23 %); windows a few seconds apart see the same machine, so their ratio is the
# figure to trust. With --store redis both gateways share one Redis, and the median ratio of Redis's CPU per
# request is printed too. The 64-token window and the profile are left out in this mode.
#
# Usage: benchmarks/run-hotpath-benchmark.sh [--build] [--store memory|redis] [--connections 32] [--tokens 16]
#          [--long-tokens 64] [--warmup-seconds 60] [--seconds 20] [--profile FILE.jfr]
#          [--against OTHER.jar [--rounds 5]]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=benchmarks/lib.sh
source "$ROOT/benchmarks/lib.sh"

BUILD=0
STORE=memory
CONNECTIONS=32
TOKENS=16
LONG_TOKENS=64
WARMUP=60
SECONDS_MEASURED=20
PROFILE=""
PROFILE_WINDOW=""
AGAINST=""
ROUNDS=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD=1 ;;
    --store) STORE="${2:?}"; shift ;;
    --connections) CONNECTIONS="${2:?}"; shift ;;
    --tokens) TOKENS="${2:?}"; shift ;;
    --long-tokens) LONG_TOKENS="${2:?}"; shift ;;
    --warmup-seconds) WARMUP="${2:?}"; shift ;;
    --seconds) SECONDS_MEASURED="${2:?}"; shift ;;
    --profile) PROFILE="$(realpath -m "${2:?}")"; shift ;;
    --against) AGAINST="$(realpath -m "${2:?}")"; shift ;;
    --rounds) ROUNDS="${2:?}"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
case "$STORE" in memory|redis) ;; *) echo "--store is memory or redis" >&2; exit 2 ;; esac
if [[ -n "$AGAINST" ]]; then
  [[ -f "$AGAINST" ]] || { echo "--against: no such jar: $AGAINST" >&2; exit 2; }
  [[ -z "$PROFILE" ]] || { echo "--profile and --against are not used together" >&2; exit 2; }
  [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "--rounds is a positive number" >&2; exit 2; }
fi
command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)" >&2; exit 2; }
command -v nginx >/dev/null || { echo "nginx not found (apt-get install nginx-light)" >&2; exit 2; }

GATEWAY_JAR="${GATEWAY_JAR:-$ROOT/gateway/target/quarkus-app/quarkus-run.jar}"
BENCH_JAR="$ROOT/benchmarks/target/handoff-benchmarks.jar"
MODEL=sim-model
build_or_require_jars "$BUILD"
[[ "$STORE" == redis ]] && require_redis_server

RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/handoff-hotpath-bench.XXXXXX")"
NGINX_PID=""
AGAINST_PID=""
stop_nginx() {
  if [[ -n "$NGINX_PID" ]]; then
    kill -QUIT "$NGINX_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$NGINX_PID" 2>/dev/null || true
  fi
}
# set +e first: under set -e the (exit $rc) that hands cleanup the status would end the trap before cleanup ran
trap 'rc=$?; stop_nginx; stop_pid "$AGAINST_PID" "gateway (--against)" 15; set +e; (exit $rc); cleanup' EXIT
trap 'exit 130' INT TERM

# --- simulators: vLLM prefill and decode, tokens as fast as they can ---
java -cp "$BENCH_JAR" io.handoff.simulator.SimulatorMain --fleet --families vllm --port 0 --model "$MODEL" \
  --token-interval-ms 0 --prefill-latency-ms 0 >"$RUN_DIR/simulators.log" 2>&1 &
SIM_PID=$!
PREFILL_URL=""; DECODE_URL=""
for i in $(seq 1 300); do
  PREFILL_URL="$(awk '$1 == "vllm" && $2 == "prefill" { print $3 }' "$RUN_DIR/simulators.log")"
  DECODE_URL="$(awk '$1 == "vllm" && $2 == "decode" { print $3 }' "$RUN_DIR/simulators.log")"
  [[ -n "$PREFILL_URL" && -n "$DECODE_URL" ]] && break
  kill -0 "$SIM_PID" 2>/dev/null || { cat "$RUN_DIR/simulators.log" >&2; exit 1; }
  [[ $i == 300 ]] && { echo "simulators not up after 30s" >&2; exit 1; }
  sleep 0.1
done

# --- nginx: one worker, a keep-alive upstream to the decode simulator, no buffering of the event stream ---
NGINX_PORT="$(free_port)"
mkdir -p "$RUN_DIR/nginx"
cat >"$RUN_DIR/nginx/nginx.conf" <<EOF
user root;
worker_processes 1;
daemon off;
pid $RUN_DIR/nginx/nginx.pid;
error_log $RUN_DIR/nginx/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $RUN_DIR/nginx/body;
  proxy_temp_path $RUN_DIR/nginx/proxy;
  fastcgi_temp_path $RUN_DIR/nginx/fastcgi;
  uwsgi_temp_path $RUN_DIR/nginx/uwsgi;
  scgi_temp_path $RUN_DIR/nginx/scgi;
  upstream decode { server ${DECODE_URL#http://}; keepalive 128; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / {
      proxy_pass http://decode;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
EOF
nginx -p "$RUN_DIR/nginx" -c "$RUN_DIR/nginx/nginx.conf" >"$RUN_DIR/nginx/stdout.log" 2>&1 &
NGINX_PID=$!

# --- Redis (--store redis) and the gateway, one vllm route to the two simulators ---
STORE_ENV=(HANDOFF_STORE_KIND=memory)
if [[ "$STORE" == redis ]]; then
  start_redis
  STORE_ENV=(HANDOFF_STORE_KIND=redis HANDOFF_REDIS_URL="redis://127.0.0.1:$REDIS_PORT")
fi
PROFILE_OPTS=()
# DebugNonSafepoints: without it a sample is charged to the nearest safepoint's inlined method, often another one
# (a cache miss in HashMap.getNode showed up as HashMap$TreeNode.getTreeNode, in a map with no tree bins).
[[ -n "$PROFILE" ]] && PROFILE_OPTS=(-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints
  "-XX:StartFlightRecording=name=hotpath,settings=$ROOT/benchmarks/cpu-samples.jfc,maxage=30m")
GATEWAY_PORT="$(free_port)"
start_bench_gateway "$GATEWAY_JAR" "$GATEWAY_PORT" 0 "$RUN_DIR/gateway.log" "${PROFILE_OPTS[@]}"
GATEWAY_PID=$STARTED_PID
wait_for_gateway "$GATEWAY_PORT"
if [[ -n "$AGAINST" ]]; then
  AGAINST_PORT="$(free_port)"
  start_bench_gateway "$AGAINST" "$AGAINST_PORT" 0 "$RUN_DIR/against.log"
  AGAINST_PID=$STARTED_PID
  wait_for_gateway "$AGAINST_PORT" "$AGAINST_PID" "$RUN_DIR/against.log"
fi
kill -0 "$NGINX_PID" 2>/dev/null || { cat "$RUN_DIR/nginx/error.log" >&2; echo "nginx exited" >&2; exit 1; }

# --- the measurement ---
HZ="$(getconf CLK_TCK)"
cpu_ticks() { # pid...: user+system ticks of the processes (and nginx's workers, the children of its master)
  local total=0 p
  for p in "$@"; do
    [[ -n "$p" && -r /proc/$p/stat ]] || continue
    total=$(( total + $(awk '{ print $14 + $15 }' "/proc/$p/stat") ))
  done
  echo "$total"
}
nginx_pids() { echo "$NGINX_PID $(pgrep -P "$NGINX_PID" | tr '\n' ' ')"; }
io_calls() { # pid: the read and write system calls the process made, as /proc/<pid>/io counts them (syscr syscw)
  awk '/^syscr/ { r = $2 } /^syscw/ { w = $2 } END { print r + 0, w + 0 }' "/proc/$1/io" 2>/dev/null || echo "0 0"
}
per_request() { # before after requests: "reads writes" per request, one decimal
  local b=($1) a=($2)
  echo "$(echo "scale=1; (${a[0]} - ${b[0]}) / $3" | bc) $(echo "scale=1; (${a[1]} - ${b[1]}) / $3" | bc)"
}
body() { # tokens
  printf '{"model":"%s","prompt":"Disaggregated serving splits a request into a prefill and a decode leg","max_tokens":%s,"stream":true}' "$MODEL" "$1"
}
lua_for() { # tokens file
  cat >"$2" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$(body "$1")'
EOF
}
warm_up() { # name url lua: rounds of 15 s until the rate settles (see the header)
  local name="$1" url="$2" lua="$3" elapsed=0 previous=0 rate round="$RUN_DIR/warm-up.txt"
  while :; do
    wrk -t2 -c"$CONNECTIONS" -d15s -s "$lua" "$url" >"$round"
    rate="$(awk '/^Requests\/sec/ { print int($2) }' "$round")"
    elapsed=$(( elapsed + 15 ))
    # a failing warm-up does not stop the run (only the measured window must be clean), but it is said
    if grep -q "Non-2xx\|Socket errors" "$round"; then
      echo "warm-up of $name, the round ending at ${elapsed}s had errors: $(grep "Non-2xx\|Socket errors" "$round" |
        sed 's/^ *//' | paste -sd ';')" >&2
    fi
    if (( elapsed >= WARMUP )) && (( previous > 0 )) && (( rate * 100 >= previous * 95 && rate * 100 <= previous * 105 )); then
      break
    fi
    (( elapsed >= 4 * WARMUP )) && { echo "warm-up of $name did not settle in ${elapsed}s (last rounds $previous, $rate req/s)" >&2; break; }
    previous="$rate"
  done
  echo "warm-up of $name: ${elapsed}s, last round $rate req/s" >&2
}
declare -A RPS P50 P99 CPU_GW CPU_SIM CPU_NGINX CPU_WRK CPU_REDIS IO_GW IO_SIM
measure() { # name url tokens: warms the target up, then measures one window
  lua_for "$3" "$RUN_DIR/$1.lua"
  warm_up "$1" "$2" "$RUN_DIR/$1.lua"
  measure_window "$1" "$2" "$RUN_DIR/$1.lua" "$GATEWAY_PID"
}
measure_window() { # name url lua gateway-pid: one measured window, its figures kept under NAME
  local name="$1" url="$2" lua="$3" gateway_pid="$4" out="$RUN_DIR/$1.txt"
  local g0 s0 n0 r0 g1 s1 n1 r1
  g0=$(cpu_ticks "$gateway_pid"); s0=$(cpu_ticks "$SIM_PID"); n0=$(cpu_ticks $(nginx_pids)); r0=$(cpu_ticks "$REDIS_PID")
  local io_g0 io_s0 io_g1 io_s1
  io_g0="$(io_calls "$gateway_pid")"; io_s0="$(io_calls "$SIM_PID")"
  local started_ms ended_ms
  [[ -n "$REDIS_PID" ]] && redis-cli -p "$REDIS_PORT" CONFIG RESETSTAT >/dev/null
  started_ms="$(date +%s%3N)"
  /usr/bin/time -f "%U %S" -o "$RUN_DIR/$name.time" \
    wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_MEASURED}s" --latency -s "$lua" "$url" >"$out"
  ended_ms="$(date +%s%3N)"
  g1=$(cpu_ticks "$gateway_pid"); s1=$(cpu_ticks "$SIM_PID"); n1=$(cpu_ticks $(nginx_pids)); r1=$(cpu_ticks "$REDIS_PID")
  io_g1="$(io_calls "$gateway_pid")"; io_s1="$(io_calls "$SIM_PID")"
  if [[ -n "$PROFILE" && "$name" == gateway ]]; then
    jcmd "$GATEWAY_PID" JFR.dump name=hotpath begin="-${SECONDS_MEASURED}s" filename="$PROFILE" >/dev/null
    PROFILE_WINDOW="$started_ms $ended_ms"
  fi
  local reqs
  reqs="$(awk '/requests in/ { print $1 }' "$out")"
  if grep -q "Non-2xx\|Socket errors" "$out"; then
    echo "errors against $name:" >&2; cat "$out" >&2; exit 1
  fi
  RPS[$name]="$(awk '/^Requests\/sec/ { print $2 }' "$out")"
  P50[$name]="$(awk '$1 == "50%" { print $2 }' "$out")"
  P99[$name]="$(awk '$1 == "99%" { print $2 }' "$out")"
  CPU_GW[$name]="$(echo "scale=4; ($g1 - $g0) * 1000 / $HZ / $reqs" | bc)"
  CPU_SIM[$name]="$(echo "scale=4; ($s1 - $s0) * 1000 / $HZ / $reqs" | bc)"
  CPU_NGINX[$name]="$(echo "scale=4; ($n1 - $n0) * 1000 / $HZ / $reqs" | bc)"
  CPU_REDIS[$name]="$(echo "scale=4; ($r1 - $r0) * 1000 / $HZ / $reqs" | bc)"
  CPU_WRK[$name]="$(awk -v r="$reqs" '{ printf "%.4f", ($1 + $2) * 1000 / r }' "$RUN_DIR/$name.time")"
  IO_GW[$name]="$(per_request "$io_g0" "$io_g1" "$reqs")"
  IO_SIM[$name]="$(per_request "$io_s0" "$io_s1" "$reqs")"
  [[ -n "$REDIS_PID" ]] && redis_commands "$name" "$reqs"
  return 0
}
REDIS_COMMANDS=""
redis_commands() { # name requests: the commands Redis ran in the window, per request, with their cost (commands run
  # inside a script count under their own name too, and their time is also part of the script's)
  local lines
  lines="$(redis-cli -p "$REDIS_PORT" INFO commandstats | tr -d '\r' | awk -F'[:=,]' -v n="$1" -v r="$2" '
    /^cmdstat_/ { sub("cmdstat_", "", $1); if ($3 / r >= 0.05) printf "%-13s %-10s %6.2f calls %8.1f us each %8.1f us\n", n, $1, $3 / r, $7, $5 / r }' |
    sort -k8 -g -r)"
  [[ -z "$lines" ]] || REDIS_COMMANDS+="$lines"$'\n'
  # how many socket reads and writes Redis made for them: one of each per call unless calls share them
  lines="$(redis-cli -p "$REDIS_PORT" INFO stats | tr -d '\r' | awk -F: -v n="$1" -v r="$2" '
    ($1 == "total_reads_processed" || $1 == "total_writes_processed") && $2 / r >= 0.05 {
      sub("total_", "", $1); sub("_processed", "", $1); printf "%-13s %-10s %6.2f per request\n", n, $1, $2 / r }')"
  [[ -z "$lines" ]] || REDIS_COMMANDS+="$lines"$'\n'
}

median() { # numbers, one per line: their median
  sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
compare_builds() { # --against: both gateways warmed up, then --rounds pairs of windows in alternating order
  local this="http://127.0.0.1:$GATEWAY_PORT/v1/completions" other="http://127.0.0.1:$AGAINST_PORT/v1/completions"
  local lua="$RUN_DIR/compare.lua" r a b cpu_ratios="" rps_ratios="" redis_ratios=""
  lua_for "$TOKENS" "$lua"
  warm_up "this build" "$this" "$lua"
  warm_up "the other build" "$other" "$lua"
  for r in $(seq 1 "$ROUNDS"); do
    a="this-$r"; b="other-$r"
    if (( r % 2 )); then
      measure_window "$a" "$this" "$lua" "$GATEWAY_PID"; measure_window "$b" "$other" "$lua" "$AGAINST_PID"
    else
      measure_window "$b" "$other" "$lua" "$AGAINST_PID"; measure_window "$a" "$this" "$lua" "$GATEWAY_PID"
    fi
    cpu_ratios+="$(echo "scale=4; ${CPU_GW[$a]} / ${CPU_GW[$b]}" | bc)"$'\n'
    rps_ratios+="$(echo "scale=4; ${RPS[$a]} / ${RPS[$b]}" | bc)"$'\n'
    [[ "$STORE" == redis ]] && redis_ratios+="$(echo "scale=4; ${CPU_REDIS[$a]} / ${CPU_REDIS[$b]}" | bc)"$'\n'
  done
  printf '\n%-14s %9s %10s %10s   %s\n' target "req/s" "p50" "p99" "CPU ms per request: wrk  simulators  nginx  gateway"
  for t in decode nginx; do
    printf '%-14s %9s %10s %10s   %8s %10s %7s %8s\n' "$t" "${RPS[$t]}" "${P50[$t]}" "${P99[$t]}" \
      "${CPU_WRK[$t]}" "${CPU_SIM[$t]}" "${CPU_NGINX[$t]}" "${CPU_GW[$t]}"
  done
  printf '\n%-6s %12s %14s %12s %14s %12s %12s\n' round "this req/s" "this CPU ms" "other req/s" "other CPU ms" \
    "CPU ratio" "req/s ratio"
  for r in $(seq 1 "$ROUNDS"); do
    a="this-$r"; b="other-$r"
    printf '%-6s %12s %14s %12s %14s %12s %12s\n' "$r$( (( r % 2 )) && echo " AB" || echo " BA")" "${RPS[$a]}" \
      "${CPU_GW[$a]}" "${RPS[$b]}" "${CPU_GW[$b]}" "$(echo "scale=3; ${CPU_GW[$a]} / ${CPU_GW[$b]}" | bc)" \
      "$(echo "scale=3; ${RPS[$a]} / ${RPS[$b]}" | bc)"
  done
  if [[ "$STORE" == redis ]]; then
    printf '\n%-6s %16s %16s %12s\n' round "this redis ms" "other redis ms" "ratio"
    for r in $(seq 1 "$ROUNDS"); do
      a="this-$r"; b="other-$r"
      printf '%-6s %16s %16s %12s\n' "$r" "${CPU_REDIS[$a]}" "${CPU_REDIS[$b]}" \
        "$(echo "scale=3; ${CPU_REDIS[$a]} / ${CPU_REDIS[$b]}" | bc)"
    done
    echo "median over $ROUNDS rounds, this build / the other: Redis CPU per request $(printf '%s' "$redis_ratios" | median)"
    [[ -z "$REDIS_COMMANDS" ]] || { echo; echo "redis scripts and reads per request, each window:"; printf "%s" "$REDIS_COMMANDS" | grep -E " (evalsha|hgetall|reads|writes) " || true; }
  fi
  echo
  echo "this build: $GATEWAY_JAR"
  echo "the other:  $AGAINST"
  echo "median over $ROUNDS rounds, this build / the other: gateway CPU per request $(printf '%s' "$cpu_ratios" | median)," \
    "req/s $(printf '%s' "$rps_ratios" | median) (below 1 for CPU, above 1 for req/s: this build is the cheaper)"
  echo "RESULT_COMPARE store=$STORE connections=$CONNECTIONS tokens=$TOKENS rounds=$ROUNDS" \
    "cpu_ratio_median=$(printf '%s' "$cpu_ratios" | median) rps_ratio_median=$(printf '%s' "$rps_ratios" | median)" \
    "$([[ "$STORE" == redis ]] && echo "redis_ratio_median=$(printf '%s' "$redis_ratios" | median)")"
}

echo "hot path: wrk -t2 -c$CONNECTIONS, ${TOKENS}-token streamed completions, token interval 0," \
  "warm-up ${WARMUP}s and ${SECONDS_MEASURED}s measured per target, gateway store: $STORE"
measure decode "$DECODE_URL/v1/completions" "$TOKENS"
measure nginx "http://127.0.0.1:$NGINX_PORT/v1/completions" "$TOKENS"
if [[ -n "$AGAINST" ]]; then
  compare_builds
  exit 0
fi
measure gateway "http://127.0.0.1:$GATEWAY_PORT/v1/completions" "$TOKENS"
measure gateway-long "http://127.0.0.1:$GATEWAY_PORT/v1/completions" "$LONG_TOKENS"

printf '\n%-14s %9s %10s %10s   %s\n' target "req/s" "p50" "p99" \
  "CPU ms per request: wrk  simulators  nginx  gateway  redis"
for t in decode nginx gateway gateway-long; do
  printf '%-14s %9s %10s %10s   %8s %10s %7s %8s %6s\n' "$t" "${RPS[$t]}" "${P50[$t]}" "${P99[$t]}" \
    "${CPU_WRK[$t]}" "${CPU_SIM[$t]}" "${CPU_NGINX[$t]}" "${CPU_GW[$t]}" "${CPU_REDIS[$t]}"
done
echo
echo "read and write system calls per request (/proc/<pid>/io: syscr syscw, the socket reads and writes among them)"
for t in decode nginx gateway gateway-long; do
  printf '%-14s   simulators %-14s gateway %s\n' "$t" "${IO_SIM[$t]}" "${IO_GW[$t]}"
done
echo
echo "gateway throughput / nginx one hop: $(echo "scale=3; ${RPS[gateway]} / ${RPS[nginx]}" | bc) (aim >= 0.5)"
echo "gateway CPU per request: ${CPU_GW[gateway]} ms (aim <= $([[ $STORE == redis ]] && echo 0.4 || echo 0.3) ms)"
[[ "$STORE" == redis ]] && echo "redis CPU per request: ${CPU_REDIS[gateway]} ms (aim <= 0.1 ms)"
echo "gateway CPU per relayed token: $(echo "scale=2; (${CPU_GW[gateway-long]} - ${CPU_GW[gateway]}) * 1000 / ($LONG_TOKENS - $TOKENS)" | bc) us (aim <= 3 us)"
if [[ -n "$REDIS_COMMANDS" ]]; then
  echo
  echo "redis commands per request (INFO commandstats over each measured window; name, calls, time per call, per request)"
  printf '%s' "$REDIS_COMMANDS"
fi
echo "RESULT store=$STORE connections=$CONNECTIONS tokens=$TOKENS decode_rps=${RPS[decode]} nginx_rps=${RPS[nginx]}" \
  "gateway_rps=${RPS[gateway]} gateway_cpu_ms=${CPU_GW[gateway]} gateway_long_cpu_ms=${CPU_GW[gateway-long]}" \
  "nginx_cpu_ms=${CPU_NGINX[nginx]} wrk_cpu_ms=${CPU_WRK[gateway]} redis_cpu_ms=${CPU_REDIS[gateway]}"
if [[ -n "$PROFILE" ]]; then
  echo
  echo "gateway profile over the measured $TOKENS-token window ($PROFILE):"
  # shellcheck disable=SC2086 # the window is two numbers
  java -cp "$BENCH_JAR" io.handoff.benchmarks.ProfileSummary "$PROFILE" 30 $PROFILE_WINDOW
fi
