import CSQLiteRaw
import Foundation

/// What is measured. Every scenario starts from a fresh in-memory database.
public enum Scenario: String, CaseIterable, Sendable {
    /// Insert `sizes.insert` objects (values made beforehand) and save, in one transaction.
    case insert
    /// Fetch `sizes.fetch` objects, reading every attribute into a Swift struct.
    case fetch
    /// Fetch `sizes.update` objects, change one `Int64` attribute of each, save.
    case update
    /// Fetch `sizes.fetchByID` objects one at a time by ID, in random order, from a table of
    /// `sizes.fetchByIDTable` rows, reading every attribute into a Swift struct.
    case fetchByID = "fetch-by-id"
    /// Delete all `sizes.delete` rows in one statement (Skerry `BatchDeleteRequest`, GRDB
    /// `deleteAll`, raw `DELETE FROM`).
    case deleteBatch = "delete-batch"
    /// Fetch `sizes.delete` objects, delete each, save.
    case deleteEach = "delete-each"

    /// A short description with the size.
    public func title(_ sizes: Sizes) -> String {
        switch self {
        case .insert: return "insert \(sizes.insert.grouped) and save"
        case .fetch: return "fetch \(sizes.fetch.grouped)"
        case .update: return "update \(sizes.update.grouped) and save"
        case .fetchByID: return "fetch \(sizes.fetchByID.grouped) by ID"
        case .deleteBatch: return "batch delete \(sizes.delete.grouped)"
        case .deleteEach: return "delete \(sizes.delete.grouped) one by one"
        }
    }
}

/// Who does the work.
public enum Implementation: String, CaseIterable, Sendable {
    /// The SQLite C API, one prepared statement, one transaction: the limit.
    case raw = "raw"
    /// GRDB records decoded and encoded through `Codable`.
    case grdbCodable = "grdb-codable"
    /// GRDB records with hand-written `init(row:)` and `encode(to:)`.
    case grdbRow = "grdb-row"
    /// Skerry's engine: `ObjectContext` and `EntityObject` by attribute index.
    case engine = "engine"
    /// Skerry's typed layer: `PersistentContainer` and a `ManagedObjectConvertible` model.
    case typed = "typed"

    public var title: String {
        switch self {
        case .raw: return "raw SQLite"
        case .grdbCodable: return "GRDB Codable"
        case .grdbRow: return "GRDB row"
        case .engine: return "Skerry engine"
        case .typed: return "Skerry typed"
        }
    }
}

/// The two row shapes.
public enum Shape: String, CaseIterable, Sendable {
    /// Ten `Int64` columns, as in GRDB's performance suite.
    case int10 = "int10"
    /// Two `Int64`, two `Double`, two short `String`, a `Date`, a `Bool`.
    case mixed = "mixed"

    public var title: String {
        switch self {
        case .int10: return IntItem.shapeName
        case .mixed: return MixedItem.shapeName
        }
    }
}

/// How many objects each scenario works on.
public struct Sizes: Sendable, Equatable {
    public var insert = 50_000
    public var fetch = 200_000
    public var update = 50_000
    public var fetchByID = 10_000
    public var fetchByIDTable = 50_000
    public var delete = 50_000

    public init() {}

    /// The sizes of the benchmarks issue.
    public static let full = Sizes()

    /// Tiny sizes, for a CI smoke run.
    public static var quick: Sizes {
        var sizes = Sizes()
        sizes.insert = 500
        sizes.fetch = 2_000
        sizes.update = 500
        sizes.fetchByID = 100
        sizes.fetchByIDTable = 500
        sizes.delete = 500
        return sizes
    }

    /// Sets a size by its option name (`insert`, `fetch`, `update`, `by-id`, `by-id-table`, `delete`).
    public mutating func set(_ name: String, _ value: Int) -> Bool {
        switch name {
        case "insert": insert = value
        case "fetch": fetch = value
        case "update": update = value
        case "by-id": fetchByID = value
        case "by-id-table": fetchByIDTable = value
        case "delete": delete = value
        default: return false
        }
        return true
    }

    public static let optionNames = ["insert", "fetch", "update", "by-id", "by-id-table", "delete"]

    /// Sizes from the environment, for runners that take no arguments (the ordo-one suite):
    /// `SKERRY_BENCH_QUICK=1` for the quick sizes, then `SKERRY_BENCH_INSERT`, `SKERRY_BENCH_FETCH`,
    /// `SKERRY_BENCH_UPDATE`, `SKERRY_BENCH_BY_ID`, `SKERRY_BENCH_BY_ID_TABLE`, `SKERRY_BENCH_DELETE`.
    public static func fromEnvironment() -> Sizes {
        let environment = ProcessInfo.processInfo.environment
        var sizes = environment["SKERRY_BENCH_QUICK"].map { $0 != "0" && !$0.isEmpty } == true ? Sizes.quick : Sizes.full
        for name in optionNames {
            let variable = "SKERRY_BENCH_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
            if let text = environment[variable], let value = Int(text), value > 0 { _ = sizes.set(name, value) }
        }
        return sizes
    }

    /// How many rows the database holds before the timed work starts.
    func prefill(_ scenario: Scenario) -> Int {
        switch scenario {
        case .insert: return 0
        case .fetch: return fetch
        case .update: return update
        case .fetchByID: return fetchByIDTable
        case .deleteBatch, .deleteEach: return delete
        }
    }

    func validated(for scenario: Scenario) -> Sizes {
        if scenario == .fetchByID {
            precondition(fetchByID <= fetchByIDTable, "--by-id must not exceed --by-id-table")
        }
        return self
    }
}

/// One run, ready: `work` is the part to time; `verify` (untimed) checks the database after it.
/// Everything they captured (the database) is released after them, untimed.
public struct Work {
    public let run: () throws -> Void
    public let verify: () throws -> Void

    init(_ run: @escaping () throws -> Void, verify: @escaping () throws -> Void = {}) {
        self.run = run
        self.verify = verify
    }
}

/// Builds a fresh database for one run of `scenario` and fills it (untimed); returns the work to time.
public func prepare(_ scenario: Scenario, _ implementation: Implementation, _ shape: Shape, _ sizes: Sizes) throws -> Work {
    switch shape {
    case .int10: return try prepare(scenario, implementation, IntItem.self, sizes.validated(for: scenario))
    case .mixed: return try prepare(scenario, implementation, MixedItem.self, sizes.validated(for: scenario))
    }
}

func prepare<Item: BenchShape>(_ scenario: Scenario, _ implementation: Implementation, _: Item.Type, _ sizes: Sizes) throws -> Work {
    switch implementation {
    case .raw: return try RawBench<Item>.prepare(scenario, sizes)
    case .grdbCodable: return try GRDBBench<Item.CodableRecord>.prepare(scenario, sizes)
    case .grdbRow: return try GRDBBench<Item.RowRecord>.prepare(scenario, sizes)
    case .engine: return try EngineBench<Item>.prepare(scenario, sizes)
    case .typed: return try TypedBench<Item>.prepare(scenario, sizes)
    }
}

/// `count` rows of values, made before the timed work.
func makeItems<Item: BenchShape>(_ count: Int) -> [Item] {
    (0..<count).map(Item.make)
}

/// `count` of `ids` in a random order, the same for every implementation and run.
func randomSelection<ID>(_ ids: [ID], count: Int) -> [ID] {
    var generator = SplitMix64(seed: 0x5EED)
    return Array(ids.shuffled(using: &generator).prefix(count))
}

/// A small seeded generator, so that every implementation fetches the same IDs in the same order.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Stops the run when a result is wrong: checks also keep the work from being optimized away.
func expect(_ condition: @autoclosure () throws -> Bool, _ message: @autoclosure () -> String) rethrows {
    let holds = try condition()
    precondition(holds, message())
}

extension Int {
    /// 50000 as "50,000".
    var grouped: String {
        let digits = String(self)
        var result = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return result
    }
}

/// The sum of the updated column over `count` rows made by `Item.make`, after the update added 1 to each.
func expectedSum<Item: BenchShape>(_: Item.Type, _ count: Int) -> Int64 {
    var sum: Int64 = 0
    for index in 0..<count { sum += Item.make(index)[keyPath: Item.updatedKeyPath] + 1 }
    return sum
}

/// Gives the memory a scenario's setup freed back to the system, so that a peak resident size
/// measured afterwards is the scenario's own (glibc keeps freed pages resident otherwise; a
/// no-op elsewhere).
public func releaseFreeMemory() {
    skerry_release_free_memory()
}
