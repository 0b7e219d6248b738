#!/usr/bin/env bash
# A bounded load test of the example service on loopback: builds it in release, seeds 1,000 books,
# warms up, then runs wrk (installed from the system's packages when missing) for 30 s against a
# mix of look-ups by ISBN (90%) and list pages (10%), and reports requests per second, p99 latency
# and the service's resident memory at the start and the end of the timed run (and every 5 s
# in between, to show its course). It fails when
# memory grew by more than 10% + 8 MiB (a PersistentContainer with cleanUpAfterExecution keeps no
# object between requests, so memory must stay flat).
#
#     bash Examples/LibraryService/scripts/load-test.sh [--duration 30s] [--connections 32]
set -euo pipefail
package="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
duration=30s
connections=32
while [ $# -gt 0 ]; do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "load-test: unknown argument $1" >&2; exit 2 ;;
    esac
done
if ! command -v wrk >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "load-test: installing wrk" >&2
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq wrk >/dev/null
fi
echo "load-test: building the service (release)" >&2
# A fixed hash seed for SwiftPM keeps the traits' -D flags in one order, so that an unchanged
# package is not rebuilt (swiftlang/swift-package-manager#10525, Swift 6.3); the service runs without it.
SWIFT_DETERMINISTIC_HASHING=1 swift build -c release --package-path "$package" 2>&1 | grep -v '^\[' >&2
bin="$(SWIFT_DETERMINISTIC_HASHING=1 swift build -c release --package-path "$package" --show-bin-path)/LibraryService"
work="$(mktemp -d)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
source "$package/scripts/common.sh"

cat > "$work/mix.lua" <<'LUA'
-- 90% look-ups of a random book, 10% a random page of the list.
math.randomseed(42)
request = function()
    if math.random(10) == 1 then
        return wrk.format("GET", "/books?limit=20&offset=" .. (math.random(50) - 1) * 20)
    end
    return wrk.format("GET", "/books/isbn-" .. math.random(1000))
end
LUA

start_service --store "$work/library.sqlite" --seed 1000 --log-level notice
echo "load-test: warming up (5 s)" >&2
wrk -t1 -c"$connections" -d5s -s "$work/mix.lua" "$base" >/dev/null
rss_start=$(rss_mib)
echo "load-test: measuring ($duration, $connections connections, 2 threads)" >&2
# RSS every 5 s while wrk runs (the sampler stops when wrk's output is complete).
( while [ ! -e "$work/wrk.done" ]; do rss_mib >>"$work/rss.txt"; echo >>"$work/rss.txt"; sleep 5; done ) &
sampler=$!
wrk -t2 -c"$connections" -d"$duration" --latency -s "$work/mix.lua" "$base" | tee "$work/wrk.txt" >&2
touch "$work/wrk.done"
wait "$sampler"
rss_end=$(rss_mib)
stop_service
pid=""

rps=$(awk '/^Requests\/sec:/ { print $2 }' "$work/wrk.txt")
p99=$(awk '$1 == "99%" { print $2 }' "$work/wrk.txt")
requests=$(awk '/requests in/ { print $1 }' "$work/wrk.txt")
errors=$(awk '/Non-2xx or 3xx responses:/ { print $5 } /Socket errors:/ { print "socket errors: " $0 }' "$work/wrk.txt")
echo
echo "| requests | requests/s | p99 latency | RSS at start | RSS at end |"
echo "|---|---|---|---|---|"
echo "| $requests | $rps | $p99 | $rss_start MiB | $rss_end MiB |"
echo
echo "RSS every 5 s during the run (MiB): $(paste -sd' ' "$work/rss.txt")"
[ -z "$errors" ] || { echo "load-test: errors: $errors" >&2; exit 1; }
awk -v start="$rss_start" -v end="$rss_end" 'BEGIN { exit !(end <= start * 1.10 + 8) }' \
    || { echo "load-test: resident memory grew from $rss_start MiB to $rss_end MiB" >&2; exit 1; }
echo "load-test: memory stayed flat ($rss_start MiB -> $rss_end MiB)"
