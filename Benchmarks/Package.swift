// swift-tools-version: 6.1
// The comparative benchmarks: a nested package so that the library itself depends on nothing.
//
//     swift run -c release skerry-bench                  # ratio table: medians, each implementation / raw SQLite
//     swift run -c release skerry-bench --quick          # tiny sizes, for CI smoke
//     swift package --disable-sandbox benchmark          # ordo-one suite: wall clock, throughput, mallocs, memory
//     swift run -c release --traits Fluent skerry-bench --postgres CONNINFO   # PostgreSQL: store, raw libpq, Fluent
//
// Both run the same scenarios, defined once in `BenchSupport`.
import PackageDescription

let package = Package(
    name: "SkerryBenchmarks",
    products: [
        .executable(name: "skerry-bench", targets: ["SkerryBench"])
    ],
    // Fluent (with its PostgreSQL driver) is the comparison for the PostgreSQL store. It sits behind
    // a trait, off by default, because its first build takes minutes (SwiftNIO, BoringSSL, ...):
    // CI builds this package without it; scripts/postgres-benchmark.sh turns it on.
    traits: [
        .trait(name: "Fluent", description: "Fluent + FluentPostgresDriver in the PostgreSQL benchmark."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(name: "Skerry", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/fluent-kit", exact: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver", exact: "2.14.0"),
    ],
    targets: [
        // The raw C API, for the baseline (a second module name: the root's CSQLite is not a product).
        .systemLibrary(name: "CSQLiteRaw", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // libpq directly, for the PostgreSQL baseline (the root's CLibPQ is not a product either).
        .systemLibrary(name: "CLibPQRaw", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // Every scenario for every implementation (raw SQLite, GRDB, Skerry engine, Skerry typed
        // layer; on PostgreSQL raw libpq, the Skerry store and Fluent) and shape; used by both runners below.
        .target(
            name: "BenchSupport",
            dependencies: [
                "CSQLiteRaw",
                "CLibPQRaw",
                .product(name: "SkerryCore", package: "Skerry"),
                .product(name: "Skerry", package: "Skerry"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SkerryPostgres", package: "Skerry"),
                .product(name: "FluentKit", package: "fluent-kit", condition: .when(traits: ["Fluent"])),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver", condition: .when(traits: ["Fluent"])),
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
