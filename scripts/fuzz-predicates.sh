#!/usr/bin/env bash
# Fuzzes the predicate format parser with libFuzzer (and AddressSanitizer) for SECONDS (default 120),
# starting from Fuzz/corpus. A crash leaves its input in the current folder as crash-*.
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
seconds=${1:-120}
swift build -c release -Xswiftc -sanitize=fuzzer,address
work=$(mktemp -d)
cp corpus/* "$work/"
./.build/release/FuzzPredicates "$work" -max_total_time="$seconds" -max_len=256
