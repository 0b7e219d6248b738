#!/usr/bin/env bash
# The PostgreSQL benchmark: builds skerry-bench, starts a throwaway PostgreSQL server
# (scripts/postgres-server.sh), runs raw libpq, the Skerry store (engine and typed layer) and
# Fluent with its PostgreSQL driver side by side in one run against it, and stops the server.
#
#     bash scripts/postgres-benchmark.sh                      # default sizes, median of 5, with Fluent
#     bash scripts/postgres-benchmark.sh --quick              # tiny sizes, one run each
#     bash scripts/postgres-benchmark.sh --no-fluent --quick  # without Fluent (no Fluent build): the CI smoke
#     bash scripts/postgres-benchmark.sh --tcp --repeat 7 --scenarios update,fetch-by-id
#
# Options of this script (first): --no-fluent (leave Fluent out: its first build takes minutes),
# --tcp (connect over TCP loopback, TLS off, instead of the Unix socket), --debug (a debug build:
# only for a smoke test; timings mean nothing). Everything else goes to skerry-bench
# (--repeat N, --scenarios, --shapes, --implementations, --insert N, --fetch N, ..., --markdown).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--inside-server" ]; then
    # Run by postgres-server.sh once the server is up: its connection strings are in the environment.
    shift
    binary="$1" transport="$2"
    shift 2
    if [ "$transport" = tcp ]; then
        connection="$SKERRY_TEST_POSTGRES_TCP?sslmode=disable"
    else
        connection="$SKERRY_TEST_POSTGRES"
    fi
    exec "$binary" --postgres "$connection" "$@"
fi

traits=(--traits Fluent)
transport=socket
configuration=release
while (($# > 0)); do
    case "$1" in
        --no-fluent) traits=(); shift ;;
        --tcp) transport=tcp; shift ;;
        --debug) configuration=debug; shift ;;
        *) break ;;
    esac
done

echo "postgres-benchmark: building skerry-bench ($configuration${traits:+, with Fluent})" >&2
swift build --package-path Benchmarks -c "$configuration" "${traits[@]}" --product skerry-bench >&2
binary="$(swift build --package-path Benchmarks -c "$configuration" "${traits[@]}" --show-bin-path)/skerry-bench"
bash scripts/postgres-server.sh run bash "$0" --inside-server "$binary" "$transport" "$@"
