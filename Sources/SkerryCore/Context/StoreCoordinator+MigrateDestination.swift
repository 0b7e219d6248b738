import Foundation

/// What the place of a migration's destination holds before the migration opens it
/// (``ObjectStoreFactory/existingStore(entities:)``): a Skerry store written with some model
/// version, and whether it holds objects.
package struct ExistingStore: Sendable {
    /// The version hash of the model the store was written with; nil when it recorded none.
    package var modelVersionHash: String?
    /// An entity (of those asked about) whose table holds rows, with how many; nil when none does.
    package var occupied: (entity: String, count: Int)?

    package init(modelVersionHash: String?, occupied: (entity: String, count: Int)?) {
        self.modelVersionHash = modelVersionHash
        self.occupied = occupied
    }
}

extension StoreCoordinator {
    /// Fails, before anything opens it, for a migration's destination that holds a Skerry store
    /// written with another version of the model (opening it would migrate it) or holding
    /// objects: it is refused untouched. A place with no Skerry store (no file, an empty file, a
    /// PostgreSQL schema without one) is left for the load to create the store in.
    func checkDestinationIsNew(_ destination: StoreDescription, entities: [EntityDescription]) throws(SkerryError) {
        let existing: ExistingStore?
        if let factory = destination.storeFactory {
            existing = try factory.existingStore(entities: entities)
        } else if destination.kind == .sqlite, let url = destination.url, FileManager.default.fileExists(atPath: url.path) {
            existing = try SQLiteStore.existingStore(at: url, entities: entities, description: destination)
        } else {
            existing = nil
        }
        guard let existing else { return }
        guard existing.modelVersionHash == model.versionHash else {
            throw SkerryError(
                .invalidArgument,
                "\(destination) holds a store written with another version of the model: a store migrates into a new store, "
                    + "or an empty one at this model's version (it was left untouched; destroy it, or load and migrate it first).")
        }
        if let (entity, count) = existing.occupied {
            throw SkerryError(
                .invalidArgument,
                "\(destination) already holds \(count) object(s) of '\(entity)': a store migrates into an empty store only "
                    + "(it was left untouched; destroy the destination first).",
                entityName: entity)
        }
    }
}

extension SQLiteStore {
    /// What the SQLite file at `url` holds, read through a read-only connection (nothing is
    /// written); nil when it holds no Skerry store.
    static func existingStore(at url: URL, entities: [EntityDescription], description: StoreDescription) throws(SkerryError)
        -> ExistingStore?
    {
        do {
            let connection = try SQLiteConnection(path: url.path, readOnly: true, busyTimeout: 5)
            guard try connection.tableExists(metadataTable) else { return nil }
            let metadata = try readMetadata(connection)
            var existing = ExistingStore(modelVersionHash: metadata["modelVersionHash"], occupied: nil)
            for entity in entities where try connection.tableExists(entity.name) {
                let count = try connection.scalarInt64("SELECT count(*) FROM \(SQLBuilder.quote(entity.name))") ?? 0
                if count > 0 {
                    existing.occupied = (entity.name, Int(count))
                    break
                }
            }
            return existing
        } catch let error as SQLiteError {
            throw SkerryError(.storeLoadFailed, "Cannot read \(description): \(error.message)", sqlite: error)
        } catch {
            throw SkerryError.converting(error)
        }
    }
}
