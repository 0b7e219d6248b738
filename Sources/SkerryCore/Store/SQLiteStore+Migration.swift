import Foundation

extension SQLiteStore {
    /// Before a file store opens: if it was written with another model, and the change is not one
    /// the load applies in place (new entities, optional attributes, indexes...), migrates a copy
    /// of it and puts the copy in place of the original once every step succeeded and every row
    /// and link the new model can hold was found in it. Steps come from the description's
    /// ``MigrationPlan`` when the store was written with one of its versions; otherwise one step
    /// goes straight from the schema the store records to the current model, as Core Data's
    /// lightweight migration does from any earlier version. Any failure leaves the original file
    /// exactly as it was.
    static func migrateStoreFile(
        _ url: URL, description: StoreDescription, model: ObjectModel,
        entities: [EntityDescription], events: EventHub? = nil
    ) throws(SkerryError) {
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        let recorded: (schema: StoredSchema, hash: String?)
        do {
            let connection = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: description.busyTimeout)
            guard try connection.tableExists(metadataTable) else { return }
            let metadata = try readMetadata(connection)
            // An unreadable schema is left for the ordinary load, which reports it.
            guard let text = metadata["schema"], metadata["formatVersion"] == formatVersion,
                let schema = try? JSONDecoder().decode(StoredSchema.self, from: Data(text.utf8))
            else { return }
            recorded = (schema, metadata["modelVersionHash"])
        } catch {
            // Not a readable SQLite database: the ordinary load opens it and reports why.
            return
        }
        let planned = MigrationStepSpec.planSteps(
            description.migrationPlan, recordedHash: recorded.hash, from: recorded.schema, description: description)
        var steps = planned.steps
        let schema = planned.reached
        if schema.shape != StoredSchema(entities: entities).shape && (!steps.isEmpty || !isAppliedInPlace(from: schema, to: entities)) {
            if !description.shouldMigrateAutomatically {
                throw SkerryError(
                    .modelMismatch, "\(description) needs a migration (automatic migration is off). The store was left untouched.")
            }
            steps.append(
                MigrationStepSpec(
                    source: schema, sourceEntities: [], destination: entities, model: model,
                    custom: nil, number: steps.count + 1))
        }
        guard !steps.isEmpty else { return }
        // What cannot be inferred fails before anything is copied; a custom step answers for its own.
        for step in steps where step.custom?.transformRow == nil && step.custom?.finish == nil {
            let mapping = SchemaMapping(
                from: step.source, to: step.destination,
                renamedAttributes: step.custom?.renamedAttributes ?? [:],
                renamedEntities: step.custom?.renamedEntities ?? [:],
                renamedRelationships: step.custom?.renamedRelationships ?? [:])
            if !mapping.problems.isEmpty {
                throw SkerryError(
                    .modelMismatch,
                    "\(description) was written with a model that cannot be migrated automatically to this one: "
                        + mapping.problems.joined(separator: "; ")
                        + ". Give the store description a MigrationPlan whose step converts it (or an Xcode mapping model). The store was left untouched."
                )
            }
        }
        try migrateCopy(
            url, description: description, model: model, steps: steps, events: events, recordedHash: recorded.hash,
            recordedSchema: recorded.schema)
    }

    /// Whether the ordinary load brings a store of `schema` to `entities` in place: every
    /// change additive, no relationship's storage moved, no entity moved to another hierarchy
    /// (whose keys may clash with its rows': the rebuilding engine renumbers them).
    static func isAppliedInPlace(from schema: StoredSchema, to entities: [EntityDescription]) -> Bool {
        let migration = SchemaMigration(from: schema, to: entities)
        return migration.incompatibilities.isEmpty && migration.changedHierarchies.isEmpty
    }

    /// Runs `steps` on a copy of the store at `url`, each in its own transaction, and puts the
    /// copy in place of the original when all succeeded.
    private static func migrateCopy(
        _ url: URL, description: StoreDescription, model: ObjectModel,
        steps: [MigrationStepSpec], events: EventHub?, recordedHash: String?, recordedSchema: StoredSchema
    ) throws(SkerryError) {
        let copyPath = url.path + ".migrating"
        do {
            let original = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: description.busyTimeout)
            // A copy left by an interrupted migration is stale: the original was never replaced.
            try? FileManager.default.removeItem(atPath: copyPath)
            try original.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try original.cachedStatement("VACUUM INTO ?").run([.string(copyPath)])
        } catch {
            var failure = SkerryError(
                .storeLoadFailed, "Cannot prepare the migration of \(description): \(SkerryError.converting(error).message)",
                sqlite: SkerryError.converting(error).sqlite)
            failure.underlyingError = error
            throw failure
        }
        do {
            do {
                let connection = try SQLiteConnection(path: copyPath, readOnly: false, busyTimeout: description.busyTimeout)
                // The first step reads every relationship where the recorded schema keeps it: a store
                // written before a relationship with a transient inverse was stored gets its (empty) storage.
                _ = try connection.writeTransaction { try schema.addMissingRelationshipStorage(recordedSchema, entities: nil, connection) }
                try MigrationStepSpec.runAll(steps, description: description, events: events, fromVersionHash: recordedHash) { step in
                    try connection.writeTransaction {
                        try runMigrationStep(step, connection)
                    }
                }
                // The steps rebuilt the tables (new keys, new entity names): the history recorded
                // before names rows that are gone. It is cleared, and tokens taken before expire.
                if try historyTablesExist(connection) { try connection.writeTransaction { try expireAllHistory(connection) } }
            } // the copy's connection closes here
            for suffix in ["-wal", "-shm"] {
                // Only the original's own side files: stale after the checkpoint above; a missing
                // one is not an error.
                try? FileManager.default.removeItem(atPath: url.path + suffix)
            }
            guard rename(copyPath, url.path) == 0 else {
                throw SkerryError(.storeLoadFailed, "Cannot put the migrated store in place of \(url.path).")
            }
        } catch {
            // The copy is ours and useless now; the original is untouched.
            try? FileManager.default.removeItem(atPath: copyPath)
            let reason = SkerryError.converting(error)
            let code: SkerryError.Code = reason.code == .migrationWouldLoseData ? reason.code : .modelMismatch
            var failure = SkerryError(
                code,
                "The migration of \(description) to its current model (\(model.versionHash)) failed: \(reason.message) The store was left as it was.",
                entityName: reason.entityName, key: reason.key, sqlite: reason.sqlite)
            failure.objectIDs = reason.objectIDs
            failure.underlyingError = error // what a step's own code threw, kept as it was
            throw failure
        }
    }
}
