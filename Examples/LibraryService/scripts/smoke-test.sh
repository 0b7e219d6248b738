#!/usr/bin/env bash
# Smoke test of the example service (CI runs it): builds it, starts it on a free loopback port,
# makes a few requests and checks the answers, stops it gracefully (SIGTERM), checks that the view
# counts it held in memory were saved on shutdown, and that it exited 0.
# With --postgres CONNINFO the service keeps its catalogue on that PostgreSQL database (whose
# tables must not hold an earlier run's books) instead of a SQLite file.
set -euo pipefail
package="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# A fixed hash seed for SwiftPM keeps the traits' -D flags in one order, so that an unchanged
# package is not rebuilt (swiftlang/swift-package-manager#10525, Swift 6.3); the service runs without it.
SWIFT_DETERMINISTIC_HASHING=1 swift build --package-path "$package" 2>&1 | grep -v '^\[' >&2
bin="$(SWIFT_DETERMINISTIC_HASHING=1 swift build --package-path "$package" --show-bin-path)/LibraryService"
work="$(mktemp -d)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
source "$package/scripts/common.sh"
store_options=(--store "$work/library.sqlite")
if [ "${1:-}" = "--postgres" ]; then store_options=(--postgres "$2"); fi

# expect STATUS METHOD PATH [BODY]: makes a request, fails unless the status is STATUS; the
# response body is left in $work/body.
expect() {
    local status method=$2 path=$3 body=${4:-}
    if [ -n "$body" ]; then
        status=$(curl -s -o "$work/body" -w '%{http_code}' -X "$method" -H 'content-type: application/json' -d "$body" "$base$path")
    else
        status=$(curl -s -o "$work/body" -w '%{http_code}' -X "$method" "$base$path")
    fi
    if [ "$status" != "$1" ]; then
        echo "smoke: $method $path answered $status, expected $1: $(cat "$work/body")" >&2; return 1
    fi
    echo "smoke: $method $path -> $status"
}

start_service "${store_options[@]}" --seed 10
expect 200 GET /health
expect 201 POST /books '{"isbn":"978-0441172719","title":"Dune","author":"Frank Herbert","year":1965}'
expect 409 POST /books '{"isbn":"978-0441172719","title":"Dune again","author":"Someone"}'
expect 400 POST /books '{"title":"no isbn"}'
expect 200 PUT /books/978-0441172719 '{"copies":4}'
grep -q '"copies":4' "$work/body"
for _ in 1 2 3; do expect 200 GET /books/978-0441172719; done
expect 200 GET '/books?author=Frank%20Herbert'
grep -q '"total":1' "$work/body"
expect 204 DELETE /books/isbn-1
expect 404 GET /books/isbn-1
stop_service
grep -q "saved in-flight changes on shutdown" "$work/service.log"

# The three views were held in memory (saved every 200): they reached the store on shutdown.
start_service "${store_options[@]}"
expect 200 GET /books/978-0441172719
grep -q '"views":3' "$work/body" || { echo "smoke: the views were not saved on shutdown: $(cat "$work/body")" >&2; exit 1; }
expect 200 GET /stats
stop_service
pid=""
echo "smoke: passed"
