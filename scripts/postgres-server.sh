#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests, the benchmarks and the main job: a new cluster in a
# temporary folder, listening on a Unix socket in that folder and on a free loopback port (with
# TLS, using a self-signed certificate made for it), stopped and removed at the end.
#
#     bash scripts/postgres-server.sh run swift test          # start, run the command, stop (also on failure)
#     bash scripts/postgres-server.sh start                   # start; prints `export ...` lines to eval
#     bash scripts/postgres-server.sh stop FOLDER             # stop a server started with `start`
#
# While the command runs, these are set:
#     SKERRY_TEST_POSTGRES   a libpq connection string for the server's Unix socket (superuser `skerry`)
#     SKERRY_TEST_POSTGRES_TCP   the same server over TCP on 127.0.0.1 (TLS available: sslmode=require)
#     SKERRY_POSTGRES_FOLDER the cluster's folder (data, socket, log)
#
# Installs the server from the system's packages when it is missing (Debian/Ubuntu: `postgresql`).
# PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` system user
# (created by the package). Options (before the subcommand): `--durable` keeps fsync on (the
# default turns it off: the data is thrown away anyway); `--max-connections N` (default 300).
set -euo pipefail

durable=false
max_connections=300
while (($# > 0)); do
    case "$1" in
        --durable) durable=true; shift ;;
        --max-connections) max_connections="$2"; shift 2 ;;
        *) break ;;
    esac
done
command="${1:-}"
shift || true

log() { echo "postgres-server: $*" >&2; }

# The folder of the server programs (initdb, pg_ctl, postgres): the newest installed version.
find_bindir() {
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
    done
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(command -v initdb)"; return 0
    fi
    return 1
}

install_server() {
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    log "PostgreSQL is not installed; installing it from the system's packages"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql openssl >/dev/null
}

# Runs a command as the cluster's owner: ourselves, or `postgres` when we are root.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

port_is_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start_server() {
    local bindir folder port
    bindir="$(find_bindir)" || { install_server; bindir="$(find_bindir)"; } || {
        log "no initdb/pg_ctl found after installing PostgreSQL"; exit 1; }
    if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
        log "running as root, and there is no 'postgres' user to own the cluster"; exit 1
    fi
    folder="$(mktemp -d "${TMPDIR:-/tmp}/skerry-postgres.XXXXXX")"
    chmod 755 "$folder"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$folder"; fi
    as_owner "$bindir/initdb" -D "$folder/data" -U skerry -A trust -E UTF8 --locale=C --no-sync >"$folder/initdb.log" 2>&1 || {
        cat "$folder/initdb.log" >&2; exit 1; }
    # A self-signed certificate, so that sslmode=require can be tested against a real TLS server.
    if command -v openssl >/dev/null 2>&1; then
        as_owner openssl req -new -x509 -days 2 -nodes -subj "/CN=localhost" \
            -keyout "$folder/data/server.key" -out "$folder/data/server.crt" >/dev/null 2>&1
        as_owner chmod 600 "$folder/data/server.key"
        echo "ssl = on" | as_owner tee -a "$folder/data/postgresql.conf" >/dev/null
    fi
    local fsync=off
    if $durable; then fsync=on; fi
    port=55432
    local tries=0
    while true; do
        while ! port_is_free "$port"; do port=$((port + 1)); done
        if as_owner "$bindir/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w -t 60 \
            -o "-k $folder -p $port -c listen_addresses=127.0.0.1 -c max_connections=$max_connections -c fsync=$fsync -c synchronous_commit=$fsync -c full_page_writes=$fsync" \
            start >/dev/null; then
            break
        fi
        tries=$((tries + 1))
        if ((tries >= 5)); then cat "$folder/server.log" >&2; exit 1; fi
        port=$((port + 1))
    done
    echo "export SKERRY_POSTGRES_FOLDER='$folder'"
    echo "export SKERRY_POSTGRES_BINDIR='$bindir'"
    echo "export SKERRY_TEST_POSTGRES='host=$folder port=$port user=skerry dbname=postgres'"
    echo "export SKERRY_TEST_POSTGRES_TCP='postgresql://skerry@127.0.0.1:$port/postgres'"
    log "started PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') in $folder (socket, and 127.0.0.1:$port)"
}

stop_server() {
    local folder="$1" bindir
    [ -d "$folder/data" ] || return 0
    bindir="${SKERRY_POSTGRES_BINDIR:-$(find_bindir)}"
    as_owner "$bindir/pg_ctl" -D "$folder/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$folder"
    log "stopped and removed $folder"
}

case "$command" in
    start)
        start_server
        ;;
    stop)
        stop_server "${1:?usage: postgres-server.sh stop FOLDER}"
        ;;
    run)
        (($# > 0)) || { echo "usage: postgres-server.sh run COMMAND [ARGUMENTS...]" >&2; exit 2; }
        exports="$(start_server)"
        eval "$exports"
        trap 'stop_server "$SKERRY_POSTGRES_FOLDER"' EXIT
        trap 'exit 130' INT TERM
        "$@"
        ;;
    *)
        echo "usage: postgres-server.sh [--durable] [--max-connections N] run COMMAND... | start | stop FOLDER" >&2
        exit 2
        ;;
esac
