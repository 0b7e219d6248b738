#!/usr/bin/env bash
# Checks that the dependency lines getting-started.md shows work whatever the checkout's folder is
# called: copies the checkout (without .build) to a folder of another name, writes a tiny consumer
# package with the guide's Package.swift, builds it and runs it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/some-other-name"
tar -C "$root" --exclude=./.build --exclude='./.build-*' --exclude='./.build_*' --exclude=./Benchmarks/.build \
    --exclude=./Examples/LibraryService/.build -cf - . | tar -C "$work/some-other-name" -xf -
mkdir -p "$work/MyApp/Sources/MyApp"
# The guide's manifest, pointed at the copy.
python3 - "$root/docs/getting-started.md" "$work/MyApp/Package.swift" <<'PY'
import re, sys
guide = open(sys.argv[1], encoding="utf-8").read()
manifest = re.search(r"```swift\n(// swift-tools-version.*?)```", guide, re.S).group(1)
manifest = manifest.replace('path: "../skerry"', 'path: "../some-other-name"')
assert 'path: "../some-other-name"' in manifest, "the guide's manifest has no path dependency on ../skerry"
open(sys.argv[2], "w").write(manifest)
PY
cat > "$work/MyApp/Sources/MyApp/main.swift" <<'SWIFT'
import SkerryCore

let model = try ObjectModel(entities: [EntityDescription(name: "Book", attributes: [AttributeDescription("title", .string)])])
let stack = PersistentStack(name: "Library", model: model)
stack.persistentStoreDescriptions = [.inMemory()]
try stack.loadPersistentStores()
let context = stack.newBackgroundContext()
let count = try context.performAndWait {
    let book = try context.insert(entityName: "Book")
    try book.setValue("Dune", forKey: "title")
    try context.save()
    return try context.count(for: FetchRequest(entityName: "Book"))
}
print("consumer: \(count) book saved through a checkout in a folder named some-other-name")
SWIFT
cd "$work/MyApp"
swift build 2>&1 | grep -v '^\[' >&2
"$(swift build --show-bin-path)/MyApp"
