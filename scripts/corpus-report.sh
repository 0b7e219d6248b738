#!/bin/bash
# Runs the corpus harness (Tests/SkerryCoreTests/CorpusHarnessTests.swift) over a folder of real
# Xcode model bundles kept outside the repository, one bundle per process so that a crash is
# reported and does not stop the run, and prints a summary by stage and category.
#
#   scripts/corpus-report.sh /work/corpus/repos [report.tsv]
#
# Build the tests first (swift build --build-tests). The report has one line per check:
# bundle, stage, outcome (ok, FAIL, LOST, CRASH), category, detail.
#
# Pairs of versions with the app's mapping models between them migrate with those (stage
# "mapped OLD -> NEW", category carried / typed refusal / custom policy / other);
# SKERRY_CORPUS_MAPPINGS=off migrates them without, as lightweight migrations;
# SKERRY_CORPUS_MAPPINGS=check migrates them without and checks what the mapping models declare
# (stage "unmapped OLD -> NEW", category carried / lightweight loses / typed refusal / other).
#
# The same checks on the PostgreSQL store (a schema of a throwaway server per version's store):
#
#   SKERRY_CORPUS_STORE=postgres bash scripts/postgres-server.sh run scripts/corpus-report.sh /work/corpus/repos OUT.tsv
set -u
corpus=$(cd "${1:?usage: $0 CORPUS_FOLDER [REPORT]}" && pwd)
report=${2:-/tmp/skerry-corpus-report.tsv}
: > "$report"
report=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
log="${report%.tsv}.log"
cd "$(dirname "$0")/.."
find "$corpus" \( -name '*.xcdatamodeld' -prune -print \) -o \( -name '*.xcdatamodel' -prune -print \) -o \( -name '*.xcmappingmodel' -prune -print \) | sort |
while IFS= read -r bundle; do
  relative=${bundle#"$corpus"/}
  before=$(wc -l < "$report")
  SKERRY_CORPUS="$corpus" SKERRY_CORPUS_FILTER="$bundle" SKERRY_CORPUS_REPORT="$report" \
    timeout 1200 swift test --skip-build --filter CorpusHarnessTests > "$log" 2>&1
  status=$?
  after=$(wc -l < "$report")
  if [ "$after" -eq "$before" ]; then
    printf '%s\tprocess\tCRASH\texit %s\t%s\n' "$relative" "$status" "$(grep -m1 -iE 'fatal|error|crash' "$log" | tr '\t' ' ')" >> "$report"
  fi
done
echo "== outcomes by stage"
awk -F'\t' '{split($2, s, " "); print s[1] "\t" $3}' "$report" | sort | uniq -c
echo "== failure categories"
awk -F'\t' '$3 != "ok" {split($2, s, " "); print s[1] "\t" $3 "\t" $4}' "$report" | sort | uniq -c | sort -rn
echo "== migration pairs: all, and those with mapping models by verdict"
awk -F'\t' '$2 ~ /^(migrate|mapped|unmapped) / {n++; if ($3 == "ok") ok++} END {printf "%d pairs, %d carried\n", n, ok}' "$report"
awk -F'\t' '$2 ~ /^(mapped|unmapped) / {split($2, s, " "); split($4, c, ":"); print s[1] "\t" c[1]}' "$report" | sort | uniq -c
