// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Skerry",
    products: [
        .library(name: "SkerryCore", targets: ["SkerryCore"]),
        .library(name: "Skerry", targets: ["Skerry"]),
        .executable(name: "skerry-example", targets: ["SkerryExample"]),
        .executable(name: "skerry-memory-io", targets: ["SkerryMemoryIO"]),
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
        .executableTarget(
            name: "SkerryMemoryIO",
            dependencies: ["Skerry", "SkerryCore"]
        ),
        .executableTarget(
            name: "SkerryExample",
            dependencies: ["SkerryCore"]
        ),
        .testTarget(
            name: "SkerryCoreTests",
            dependencies: ["SkerryCore"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "SkerryTests",
            dependencies: ["Skerry"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
