import Foundation

extension SQLiteStore {
    /// For a store opened read-only: checks, without writing anything, that the file is a Skerry
    /// store whose schema is the model's. Returns what ``prepareSchema(pool:description:model:entities:)``
    /// returns; `unstored` gets the storage the store lacks (see ``SQLiteStoreLayout/init(entities:identity:unstored:)``).
    /// - Throws: ``SkerryError/Code/storeLoadFailed`` for a file that is not a Skerry store (or a
    ///   newer format); ``SkerryError/Code/modelMismatch`` when the store needs a migration, which a
    ///   read-only store cannot have.
    static func checkSchema(
        pool: ConnectionPool, description: StoreDescription, model: ObjectModel,
        entities: [EntityDescription], unstored: inout Set<String>
    ) throws(SkerryError)
        -> (identifier: String, outcome: StoreLoadEvent.Outcome, previousVersionHash: String?)
    {
        let metadata: [String: String]
        do {
            metadata = try pool.read { connection in
                guard try connection.tableExists(metadataTable) else { return [:] }
                return try readMetadata(connection)
            }
        } catch let error as SQLiteError {
            throw SkerryError(.storeLoadFailed, "Cannot load \(description): \(error.message)", sqlite: error)
        } catch {
            throw SkerryError.converting(error)
        }
        guard let identifier = metadata["storeIdentifier"], let schemaText = metadata["schema"] else {
            throw SkerryError(
                .storeLoadFailed, "\(description) is not a Skerry store (or its metadata is unreadable); it was left untouched.")
        }
        guard metadata["formatVersion"] == formatVersion else {
            throw SkerryError(
                .storeLoadFailed,
                "\(description) has storage format \(metadata["formatVersion"] ?? "?"), which this version of Skerry does not read (it reads format \(formatVersion))."
            )
        }
        let stored: StoredSchema
        do {
            stored = try JSONDecoder().decode(StoredSchema.self, from: Data(schemaText.utf8))
        } catch {
            throw SkerryError(.storeLoadFailed, "The schema recorded in \(description) is unreadable: \(error).")
        }
        guard stored.shape == StoredSchema(entities: entities).shape else {
            throw SkerryError(
                .modelMismatch,
                "\(description) was written with another version of the model and is opened read-only, so it cannot be migrated. Open it once read-write to migrate it."
            )
        }
        let missing: (joinTables: [String], columns: [(table: String, column: String)])
        do {
            missing = try pool.read { connection in try schema.missingRelationshipStorage(stored, connection) }
        } catch {
            throw SkerryError.converting(error)
        }
        // A store written before Skerry stored a relationship whose inverse is transient lacks
        // that relationship's storage, which it cannot get read-only; nothing was ever written
        // there, so the relationship reads as empty (no links) from it.
        unstored = Set(missing.joinTables + missing.columns.map { "\($0.table).\($0.column)" })
        return (identifier, .opened, metadata["modelVersionHash"])
    }

    /// Throws unless the store may be written.
    func checkWritable() throws(SkerryError) {
        if let historyReadOnlyReason { throw SkerryError(.storeIsReadOnly, historyReadOnlyReason + " Nothing was written.") }
        guard storeDescription.isReadOnly else { return }
        throw SkerryError(.storeIsReadOnly, "\(storeDescription) was opened read-only; nothing was written.")
    }
}
