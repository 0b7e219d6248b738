#!/usr/bin/env bash
# Builds the DocC documentation of SkerryCore and Skerry with the toolchain's own `docc` (no
# package dependency: the core products stay dependency-free), failing on any warning.
#
#     bash scripts/build-docs.sh [OUTPUT-FOLDER]     # default .build/docs
#
# Each catalog becomes OUTPUT-FOLDER/<Module>.doccarchive, ready for static hosting. The articles
# are generated from docs/*.md (scripts/docc-articles.py) into copies of the catalogs, so the
# documentation follows the guides even when the committed articles lag behind (it says so).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
output="${1:-$root/.build/docs}"
python3 scripts/docc-articles.py --check || echo "build-docs: building from articles generated now" >&2
graphs="$(mktemp -d)"
trap 'rm -rf "$graphs"' EXIT
mkdir -p "$graphs/catalogs"
cp -R Sources/SkerryCore/SkerryCore.docc Sources/Skerry/Skerry.docc "$graphs/catalogs/"
python3 scripts/docc-articles.py --into "$graphs/catalogs" >&2
echo "build-docs: symbol graphs" >&2
swift build --target Skerry -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs/all" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public >&2
mkdir -p "$output"
for module in SkerryCore Skerry; do
    mkdir -p "$graphs/$module"
    # The module's own symbols and its extensions of other modules' types.
    cp "$graphs/all/$module.symbols.json" "$graphs/$module/"
    find "$graphs/all" -name "$module@*.symbols.json" -exec cp {} "$graphs/$module/" \;
    echo "build-docs: $module" >&2
    docc convert "$graphs/catalogs/$module.docc" \
        --additional-symbol-graph-dir "$graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.skerry.$module" \
        --output-dir "$output/$module.doccarchive" \
        --transform-for-static-hosting --hosting-base-path "$module" \
        --warnings-as-errors
done
echo "build-docs: $output/SkerryCore.doccarchive, $output/Skerry.doccarchive" >&2
