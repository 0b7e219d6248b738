#!/usr/bin/env bash
# Runs the comparative benchmarks once in release and prints, per scenario and shape, each
# implementation's median time divided by raw SQLite's median from the same run (a Markdown
# table), followed by the median times.
#
#     scripts/benchmark-ratios.sh                 # full sizes, median of 5 runs per cell
#     scripts/benchmark-ratios.sh --quick         # tiny sizes, one run per cell (CI smoke)
#     scripts/benchmark-ratios.sh --repeat 7 --scenarios insert,fetch --shapes int10
#
# Every argument goes to `skerry-bench` (see `skerry-bench --help`). Progress goes to stderr,
# the tables to stdout. For mallocs and peak memory, use the ordo-one suite instead:
#     cd Benchmarks && swift package --disable-sandbox benchmark
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package="$root/Benchmarks"

echo "Building skerry-bench (release)..." >&2
swift build -c release --package-path "$package" --product skerry-bench >&2
bin="$(swift build -c release --package-path "$package" --show-bin-path)"

echo "Running on $(uname -srm), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); $(date -u '+%Y-%m-%d %H:%M UTC')" >&2
"$bin/skerry-bench" "$@"
