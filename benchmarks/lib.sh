# Process plumbing shared by run-generate-benchmark.sh and run-session-benchmark.sh. Sourced, not run:
#   source "$ROOT/benchmarks/lib.sh"
#
# The scripts keep their state in globals, so that the EXIT trap can stop whatever has been started so far:
#   RUN_DIR                                   the run's directory (logs, top samples)
#   SIM_PID DECODE_SIM_PID REDIS_PID GATEWAY_PID DRIVER_PID SAMPLER_PID
#                                             set by the script or by the functions below; a pid
#                                             left empty (never started, or already waited for) is skipped
#   GATEWAY_JAR BENCH_JAR                     the jars build_or_require_jars checks
# and the functions set REDIS_PORT, SAMPLER_PID and DRIVER_RC.

SIM_PID="${SIM_PID:-}"
DECODE_SIM_PID="${DECODE_SIM_PID:-}"
REDIS_PID="${REDIS_PID:-}"
GATEWAY_PID="${GATEWAY_PID:-}"
DRIVER_PID="${DRIVER_PID:-}"
SAMPLER_PID="${SAMPLER_PID:-}"

# package, never install: install would replace the SNAPSHOT jars other checkouts resolve from ~/.m2.
BUILD_COMMAND=(./mvnw -q -B package -pl gateway,benchmarks -am -DskipTests)

build_or_require_jars() { # build(0|1)
  if [[ "$1" == 1 ]]; then
    echo "building: ${BUILD_COMMAND[*]}"
    "${BUILD_COMMAND[@]}"
  fi
  local f
  for f in "$GATEWAY_JAR" "$BENCH_JAR"; do
    if [[ ! -f "$f" ]]; then
      echo "missing $f: run ${BUILD_COMMAND[*]} first, or pass --build" >&2
      exit 2
    fi
  done
}

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

# The EXIT trap: stops the processes in the reverse order of their start (the driver before the gateway it
# loads, the gateway before the store and engines it holds connections to) and keeps the logs of a failed run.
cleanup() {
  local rc=$?
  stop_pid "$SAMPLER_PID" "top sampler" 2
  stop_pid "$DRIVER_PID" "driver" 5
  stop_pid "$GATEWAY_PID" "gateway" 15
  stop_pid "$REDIS_PID" "redis-server" 10
  stop_pid "$DECODE_SIM_PID" "decode simulator" 10
  stop_pid "$SIM_PID" "simulators" 10
  if [[ $rc -ne 0 || "${KEEP_LOGS:-0}" == 1 ]]; then
    echo "logs kept in $RUN_DIR"
  else
    rm -rf "$RUN_DIR"
  fi
  exit $rc
}

trap_cleanup() {
  trap cleanup EXIT
  trap 'exit 130' INT TERM
}

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

require_redis_server() {
  command -v redis-server >/dev/null || { echo "redis-server not found" >&2; exit 2; }
}

# A private redis-server on a free loopback port, without persistence; returns once it answers PING.
start_redis() {
  REDIS_PORT="$(free_port)"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    >"$RUN_DIR/redis.log" 2>&1 &
  REDIS_PID=$!
  local i
  for i in $(seq 1 100); do
    if redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then break; fi
    kill -0 "$REDIS_PID" 2>/dev/null || { cat "$RUN_DIR/redis.log" >&2; echo "redis-server exited" >&2; exit 1; }
    [[ $i == 100 ]] && { echo "redis-server not answering on $REDIS_PORT after 10s" >&2; exit 1; }
    sleep 0.1
  done
  echo "redis-server $(redis-server --version | sed -E 's/.*v=([^ ]+).*/\1/') pid $REDIS_PID on 127.0.0.1:$REDIS_PORT"
}

# A gateway with one vllm route, "bench", context-first on the prefill and decode simulators at $PREFILL_URL and
# $DECODE_URL, serving $MODEL from the store $STORE_ENV names; no demo fleet, logs at WARN. Extra JVM options come
# after the log (and $GATEWAY_JAVA_OPTS before them). Its pid is left in STARTED_PID.
start_bench_gateway() { # jar http-port grpc-port log [java options...]
  local jar="$1" http_port="$2" grpc_port="$3" log="$4"
  shift 4
  # shellcheck disable=SC2086
  env "${STORE_ENV[@]}" java ${GATEWAY_JAVA_OPTS:-} "$@" -Dquarkus.http.port="$http_port" \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.grpc.server.port="$grpc_port" -Dquarkus.grpc.server.host=127.0.0.1 \
    -Dquarkus.log.level=WARN -Dhandoff.demo.enabled=false \
    -Dhandoff.routes.bench.model="$MODEL" -Dhandoff.routes.bench.family=vllm \
    -Dhandoff.routes.bench.prefill="prefill-0=$PREFILL_URL" -Dhandoff.routes.bench.decode="decode-0=$DECODE_URL" \
    -Dhandoff.routes.bench.default-style=context-first -Dhandoff.routes.bench.options.hold-mode=fixed \
    -jar "$jar" >"$log" 2>&1 &
  STARTED_PID=$!
}

wait_for_gateway() { # port [pid log]: the gateway's process and log, $GATEWAY_PID and gateway.log unless given
  local port="$1" pid="${2:-$GATEWAY_PID}" log="${3:-$RUN_DIR/gateway.log}" i
  for i in $(seq 1 120); do
    if [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/q/health/ready")" == 200 ]]; then
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "gateway exited" >&2; exit 1; }
    [[ $i == 120 ]] && { echo "gateway not ready on $port after 60s" >&2; exit 1; }
    sleep 0.5
  done
}

# Samples of top while the driver runs: the processes named NAME=PID (the driver's JVM is added once it has
# started), then the gateway's busiest threads (2nd iteration of each pair, so %CPU is over that one second).
# The sampler ends by itself within ~3 s of the driver.
start_top_sampler() { # NAME=PID...
  local watched=("$@")
  (
    sleep 3
    java_pid="$(pgrep -P "$DRIVER_PID" java || true)"
    pids="" label=""
    for w in "${watched[@]}"; do
      pids+="${pids:+,}${w#*=}"
      label+="$w "
    done
    pids+="${java_pid:+,$java_pid}"
    while kill -0 "$DRIVER_PID" 2>/dev/null; do
      { echo "--- $(date +%T) ${label}driver=${java_pid:-?}"
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
}

# Waits for the driver (its exit status in DRIVER_RC, a failure does not end the script) and then the sampler.
wait_for_driver() {
  set +e
  wait "$DRIVER_PID"
  DRIVER_RC=$?
  set -e
  DRIVER_PID=""
  wait "$SAMPLER_PID" 2>/dev/null || true
  SAMPLER_PID=""
}

print_top_samples() {
  if [[ -s "$RUN_DIR/top.log" ]]; then
    echo
    echo "top samples during the run (one second each, about every 10 s; %CPU 100 = one core):"
    cat "$RUN_DIR/top.log"
  fi
}

report_log_errors() { # log names, as in $RUN_DIR/<name>.log
  local log
  for log in "$@"; do
    if grep -qiE 'ERROR|Exception' "$RUN_DIR/$log.log"; then
      echo
      echo "$log log has errors (first 20 lines):"
      grep -iE 'ERROR|Exception' "$RUN_DIR/$log.log" | head -20
    fi
  done
}

exit_with_driver_status() {
  if [[ $DRIVER_RC -ne 0 ]]; then
    echo "driver exited with $DRIVER_RC" >&2
  fi
  exit "$DRIVER_RC"
}
