import Foundation

/// What a SQLite store file holds, read without a model and without changing the file: the model
/// version it records, its entities with their row counts, properties and indexes. For tools
/// (`skerry store info`) and for checks before a migration.
///
/// ```swift
/// let summary = try StoreSummary(contentsOf: url)
/// print(summary.modelVersionHash, summary.entities.map { "\($0.name): \($0.rowCount)" })
/// ```
public struct StoreSummary: Sendable {
    /// One entity's table.
    public struct Entity: Sendable {
        /// One attribute, as the store recorded it.
        public struct Attribute: Sendable, Hashable {
            public let name: String
            public let type: AttributeType
            public let isOptional: Bool
        }

        /// One relationship, as the store recorded it.
        public struct Relationship: Sendable, Hashable {
            public let name: String
            public let destination: String
            public let inverse: String?
            public let isToMany: Bool
            public let isOrdered: Bool
        }

        /// The entity's name.
        public let name: String
        /// How many rows its table holds.
        public let rowCount: Int
        public let attributes: [Attribute]
        public let relationships: [Relationship]
        /// The uniqueness constraints, each a list of attribute names.
        public let uniquenessConstraints: [[String]]
        /// The indexes, each a list of attribute names.
        public let indexes: [[String]]
    }

    /// The file.
    public let url: URL
    /// The store's identifier (it names the store in object ID URIs).
    public let storeIdentifier: String
    /// The version hash of the model the store was last written with (``ObjectModel/versionHash``).
    public let modelVersionHash: String
    /// The storage format of Skerry's own tables.
    public let formatVersion: String
    /// SQLite's journal mode of the file (`wal`, `delete`...).
    public let journalMode: String
    /// The size of the database file in bytes (its write-ahead log not included).
    public let fileSize: Int64
    /// The entities, in the order the store recorded them.
    public let entities: [Entity]

    /// Reads the summary of the store at `url`, read-only.
    /// - Throws: ``SkerryError/Code/storeLoadFailed`` when the file is missing, is not a SQLite
    ///   database, or is not a Skerry store.
    public init(contentsOf url: URL) throws(SkerryError) {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw SkerryError(.storeLoadFailed, "\(url.path): no such file.")
        }
        self.url = url
        do {
            let connection = try SQLiteConnection(path: url.path, readOnly: true, busyTimeout: 5)
            let isStore = try connection.tableExists(SQLiteStore.metadataTable)
            guard isStore else {
                throw SkerryError(
                    .storeLoadFailed,
                    "\(url.path) is a SQLite database but not a Skerry store (it has no \(SQLiteStore.metadataTable) table).")
            }
            let metadata = try SQLiteStore.readMetadata(connection)
            guard let identifier = metadata["storeIdentifier"], let hash = metadata["modelVersionHash"],
                let schemaText = metadata["schema"],
                let schema = try? JSONDecoder().decode(StoredSchema.self, from: Data(schemaText.utf8))
            else {
                throw SkerryError(.storeLoadFailed, "The metadata of \(url.path) is incomplete or unreadable.")
            }
            storeIdentifier = identifier
            modelVersionHash = hash
            formatVersion = metadata["formatVersion"] ?? "?"
            let mode = try connection.cachedStatement("PRAGMA journal_mode")
            journalMode = try mode.step() ? mode.text(at: 0) : "?"
            mode.reset()
            var entities: [Entity] = []
            for entity in schema.entities {
                let count = try connection.scalarInt64("SELECT count(*) FROM \(SQLBuilder.quote(entity.name))") ?? 0
                entities.append(
                    Entity(
                        name: entity.name, rowCount: Int(count),
                        attributes: entity.attributes.map { Entity.Attribute(name: $0.name, type: $0.type, isOptional: $0.isOptional) },
                        relationships: entity.relationships.map {
                            Entity.Relationship(
                                name: $0.name, destination: $0.destination, inverse: $0.inverse,
                                isToMany: $0.isToMany, isOrdered: $0.isOrdered)
                        },
                        uniquenessConstraints: entity.uniquenessConstraints, indexes: entity.indexes))
            }
            self.entities = entities
        } catch let error as SkerryError {
            throw error
        } catch let error as SQLiteError {
            throw SkerryError(.storeLoadFailed, "Cannot read \(url.path): \(error.message)", sqlite: error)
        } catch {
            throw SkerryError(.storeLoadFailed, "Cannot read \(url.path): \(error)")
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) // the size is informative only
        fileSize = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}
