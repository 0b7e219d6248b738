# Shared by the example service's scripts: start the service on a free loopback port, stop it.
# Sourced; expects $bin (the built executable) and $work (a temporary folder).

# start_service ARGS...: starts the service on 127.0.0.1 with any free port, waits until it
# listens, and sets $pid and $base (http://127.0.0.1:PORT).
start_service() {
    "$bin" --host 127.0.0.1 --port 0 "$@" >"$work/service.log" 2>&1 &
    pid=$!
    local port=""
    for _ in $(seq 1 600); do
        port=$(grep -oE '127\.0\.0\.1:[0-9]+' "$work/service.log" | grep -oE '[0-9]+$' | head -1 || true)
        [ -n "$port" ] && break
        kill -0 "$pid" 2>/dev/null || { cat "$work/service.log" >&2; echo "the service exited before listening" >&2; return 1; }
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$work/service.log" >&2; echo "the service did not listen within 60 s" >&2; return 1; }
    base="http://127.0.0.1:$port"
}

# stop_service: SIGTERM (graceful shutdown), waits for the exit and fails unless it exited 0.
stop_service() {
    kill -TERM "$pid"
    local status=0
    wait "$pid" || status=$?
    [ "$status" -eq 0 ] || { cat "$work/service.log" >&2; echo "the service exited with status $status" >&2; return 1; }
}

# rss_mib: the service's resident memory in MiB (VmRSS).
rss_mib() {
    awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status"
}
