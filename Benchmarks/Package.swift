// swift-tools-version: 6.1
// The comparative benchmarks: a nested package so that the library itself depends on nothing.
//
//     swift run -c release skerry-bench                  # ratio table: medians, each implementation / raw SQLite
//     swift run -c release skerry-bench --quick          # tiny sizes, for CI smoke
//     swift package --disable-sandbox benchmark          # ordo-one suite: wall clock, throughput, mallocs, memory
//
// Both run the same scenarios, defined once in `BenchSupport`.
import PackageDescription

let package = Package(
    name: "SkerryBenchmarks",
    products: [
        .executable(name: "skerry-bench", targets: ["SkerryBench"])
    ],
    dependencies: [
        .package(name: "Skerry", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // The raw C API, for the baseline (a second module name: the root's CSQLite is not a product).
        .systemLibrary(name: "CSQLiteRaw", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Every scenario for every implementation (raw SQLite, GRDB, Skerry engine, Skerry typed
        // layer) and shape; used by both runners below.
        .target(
            name: "BenchSupport",
            dependencies: [
                "CSQLiteRaw",
                .product(name: "SkerryCore", package: "Skerry"),
                .product(name: "Skerry", package: "Skerry"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Plain runner: medians of N runs and the ratio table (scripts/benchmark-ratios.sh).
        .executableTarget(
            name: "SkerryBench",
            dependencies: ["BenchSupport"]
        ),
        // ordo-one/benchmark suite: detailed metrics (mallocs, peak resident memory).
        .executableTarget(
            name: "SkerryComparison",
            dependencies: [
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/SkerryComparison",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
