// swift-tools-version: 6.0
// The comparative benchmarks: a nested package so that the library itself depends on nothing.
// Run from this folder: swift run -c release skerry-bench
import PackageDescription

let package = Package(
    name: "SkerryBenchmarks",
    products: [
        .executable(name: "skerry-bench", targets: ["SkerryBench"]),
    ],
    dependencies: [
        .package(name: "Skerry", path: ".."),
    ],
    targets: [
        // The raw C API, for the baseline (a second module name: the root's CSQLite is not a product).
        .systemLibrary(name: "CSQLiteRaw", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "SkerryBench",
            dependencies: [.product(name: "SkerryCore", package: "Skerry"), "CSQLiteRaw"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
