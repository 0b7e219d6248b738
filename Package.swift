// swift-tools-version: 6.1
import PackageDescription

// The core products (CSQLite, SkerryCore, Skerry) depend on the toolchain and system libraries
// only. The integrations and the command-line tool need other packages; each sits behind a package
// trait, off by default, so that a package depending on Skerry without asking for a trait resolves,
// fetches and builds none of them (measured: docs/services.md). Turn them on with
// `.package(url: ..., from: ..., traits: ["Logging"])`, or `--traits` / `--enable-all-traits` here.
let package = Package(
    name: "Skerry",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SkerryCore", targets: ["SkerryCore"]),
        .library(name: "Skerry", targets: ["Skerry"]),
        .library(name: "SkerryLogging", targets: ["SkerryLogging"]),
        .library(name: "SkerryMetrics", targets: ["SkerryMetrics"]),
        .library(name: "SkerryServiceLifecycle", targets: ["SkerryServiceLifecycle"]),
        .executable(name: "skerry", targets: ["SkerryTool"]),
        // The PostgreSQL store: a product of its own, so that SQLite-only users build no libpq.
        .library(name: "SkerryPostgres", targets: ["SkerryPostgres"]),
        .executable(name: "skerry-example", targets: ["SkerryExample"]),
        .executable(name: "skerry-memory-io", targets: ["SkerryMemoryIO"]),
    ],
    traits: [
        .trait(name: "Logging", description: "SkerryLogging: stack events and container errors through swift-log."),
        .trait(name: "Metrics", description: "SkerryMetrics: counters and timers through swift-metrics."),
        .trait(
            name: "ServiceLifecycle",
            description: "SkerryServiceLifecycle: saving on graceful shutdown as a swift-service-lifecycle Service.",
            enabledTraits: ["Logging"]),
        .trait(name: "CommandLineTool", description: "The skerry command-line tool (swift-argument-parser)."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.7.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "SkerryCore",
            dependencies: ["CSQLite"]
        ),
        .target(
            name: "Skerry",
            dependencies: ["SkerryCore"]
        ),
        .target(
            name: "SkerryLogging",
            dependencies: [
                "SkerryCore", "Skerry",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
            ]
        ),
        .target(
            name: "SkerryMetrics",
            dependencies: [
                "SkerryCore",
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ]
        ),
        .target(
            name: "SkerryServiceLifecycle",
            dependencies: [
                "SkerryCore", "Skerry",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ]
        ),
        .target(
            name: "SkerryCommands",
            dependencies: [
                "SkerryCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CommandLineTool"])),
            ]
        ),
        .executableTarget(
            name: "SkerryTool",
            dependencies: ["SkerryCommands"]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(
            name: "SkerryPostgres",
            dependencies: ["SkerryCore", "CLibPQ"]
        ),
        // A second process for the PostgreSQL tests (not a product).
        .executableTarget(
            name: "SkerryPostgresPeer",
            dependencies: ["SkerryCore", "SkerryPostgres"]
        ),
        .executableTarget(
            name: "SkerryMemoryIO",
            dependencies: ["Skerry", "SkerryCore", "SkerryPostgres"]
        ),
        .executableTarget(
            name: "SkerryExample",
            dependencies: ["SkerryCore"]
        ),
        // What the test targets share: temporary folders, a lock-guarded value, expectError, the
        // PostgreSQL test server, models and scenarios both stores' tests run, and the hand-written
        // Xcode model fixtures as resources (FixtureFiles). Only test targets use it.
        .target(
            name: "SkerryTestSupport",
            dependencies: ["SkerryCore", "SkerryPostgres"],
            path: "Tests/SkerryTestSupport",
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "SkerryCoreTests",
            dependencies: ["SkerryCore", "SkerryPostgres", "SkerryTestSupport"]
        ),
        .testTarget(
            name: "SkerryTests",
            dependencies: ["Skerry", "SkerryTestSupport"]
        ),
        .testTarget(
            name: "SkerryIntegrationTests",
            dependencies: [
                "SkerryCore", "Skerry", "SkerryLogging", "SkerryMetrics", "SkerryServiceLifecycle", "SkerryCommands", "SkerryTestSupport",
                .product(name: "InMemoryLogging", package: "swift-log", condition: .when(traits: ["Logging"])),
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(
                    name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ]
        ),
        // A Sworm user's test suite, written in Sworm's API; compiled twice, in Swift 6 and in Swift 5
        // language mode: Tests/SwormStyleTestsSwift5 is a symbolic link to Tests/SwormStyleTests.
        .testTarget(
            name: "SwormStyleTests",
            dependencies: ["Skerry"],
            resources: [.copy("DataModels")]
        ),
        .testTarget(
            name: "SwormStyleTestsSwift5",
            dependencies: ["Skerry"],
            resources: [.copy("DataModels")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "SkerryPostgresTests",
            dependencies: ["SkerryPostgres", "SkerryCore", "SkerryTestSupport", "SkerryPostgresPeer"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
