import Foundation
import SkerryCore
import SkerryPostgres

/// Who does the work in the PostgreSQL table.
public enum PostgresImplementation: String, CaseIterable, Sendable {
    /// libpq directly: the statements the store sends, prepared, binary, pipelined where the store
    /// pipelines. The limit for the store.
    case raw = "pg-raw"
    /// Skerry's engine on the PostgreSQL store (`ObjectContext`, `EntityObject`).
    case engine = "pg-engine"
    /// Skerry's typed layer on the PostgreSQL store (`PersistentContainer`).
    case typed = "pg-typed"
    /// Fluent (fluent-kit with FluentPostgresDriver, on postgres-nio): the ORM Swift services use.
    case fluent = "fluent"

    public var title: String {
        switch self {
        case .raw: return "raw libpq"
        case .engine: return "Skerry engine"
        case .typed: return "Skerry typed"
        case .fluent: return "Fluent"
        }
    }

    /// The implementations this build has: Fluent only with the package's `Fluent` trait.
    public static var available: [PostgresImplementation] {
        allCases.filter { $0 != .fluent || fluentIsBuilt }
    }

    /// Whether this build has Fluent (the package's `Fluent` trait).
    public static var fluentIsBuilt: Bool {
        #if Fluent
            return true
        #else
            return false
        #endif
    }
}

extension Sizes {
    /// The PostgreSQL table's sizes: a fifth of SQLite's, because a round trip per object (Fluent's
    /// updates, deletes and look-ups) costs tens of microseconds to a server rather than a function
    /// call into SQLite.
    public static var postgres: Sizes {
        var sizes = Sizes()
        sizes.insert = 10_000
        sizes.fetch = 40_000
        sizes.update = 10_000
        sizes.fetchByID = 2_000
        sizes.fetchByIDTable = 10_000
        sizes.delete = 10_000
        return sizes
    }
}

/// The PostgreSQL server the benchmarks run against, and the untimed set-up they share: each run
/// gets a fresh, empty schema of its own (dropped and created again), so that every run starts
/// from empty tables, as the SQLite runs start from a new in-memory database.
public final class PostgresBenchServer {
    /// A libpq connection string or URI.
    public let connectionString: String
    let admin: PGConnection

    public init(connectionString: String) {
        self.connectionString = connectionString
        admin = PGConnection(connectionString)
    }

    /// `PostgreSQL 15.18, libpq 15.18`.
    public var versions: String { "PostgreSQL \(admin.serverVersion), libpq \(libpqVersion)" }

    /// A fresh schema for one run of `implementation`.
    func freshSchema(_ implementation: PostgresImplementation) -> String {
        let schema = "skerry_bench_" + implementation.rawValue.replacingOccurrences(of: "-", with: "_")
        admin.recreateSchema(schema)
        return schema
    }

    /// The store description of a run, in `schema`.
    func storeDescription(_ schema: String) -> StoreDescription {
        .postgres(connectionString, schema: schema)
    }

    /// The connection string with `schema` first on the search path (libpq's `options`).
    func connectionString(schema: String) -> String {
        let option = "-c search_path=\(schema)"
        if connectionString.contains("://") {
            return connectionString + (connectionString.contains("?") ? "&" : "?")
                + "options=" + option.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        }
        return connectionString + " options='\(option)'"
    }

    /// Builds a fresh schema for one run of `scenario` and fills it (untimed); returns the work to time.
    public func prepare(
        _ scenario: Scenario, _ implementation: PostgresImplementation, _ shape: Shape,
        _ sizes: Sizes
    ) throws -> Work {
        switch shape {
        case .int10: return try prepare(scenario, implementation, IntItem.self, sizes.validated(for: scenario))
        case .mixed: return try prepare(scenario, implementation, MixedItem.self, sizes.validated(for: scenario))
        }
    }

    func prepare<Item: PostgresShape & FluentShape>(
        _ scenario: Scenario, _ implementation: PostgresImplementation,
        _: Item.Type, _ sizes: Sizes
    ) throws -> Work {
        let schema = freshSchema(implementation)
        switch implementation {
        case .raw: return PostgresRawBench<Item>.prepare(scenario, sizes, connectionString: connectionString(schema: schema))
        case .engine: return try EngineBench<Item>.prepare(scenario, sizes, store: storeDescription(schema))
        case .typed: return try TypedBench<Item>.prepare(scenario, sizes, store: storeDescription(schema))
        case .fluent:
            #if Fluent
                return try FluentBench<Item>.prepare(scenario, sizes, server: self, schema: schema)
            #else
                preconditionFailure("this build has no Fluent: build with --traits Fluent")
            #endif
        }
    }
}
