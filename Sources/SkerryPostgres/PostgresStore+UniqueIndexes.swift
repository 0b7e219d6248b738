import SkerryCore

extension PostgresStore {
    /// Creates again the unique index of each uniqueness constraint of `entities` whose index is
    /// missing from `schemaName` (dropped by hand, or left out by a failed migration of an older
    /// version): without it, saves would write duplicates and upserts would insert instead of
    /// update. Runs in the load's transaction; one round trip when every index is there.
    /// - Throws: ``SkerryCore/SkerryError/Code/storeLoadFailed`` naming the entity, the
    ///   constraint and the index when the rows hold duplicates of the constraint's values (the
    ///   load's transaction rolls back: the store is left as it was).
    static func restoreUniqueIndexes(
        _ entities: [EntityDescription], schemaName: String, _ description: StoreDescription,
        _ connection: PostgresConnection
    ) throws {
        let result = try connection.query("SELECT indexname::text FROM pg_indexes WHERE schemaname = ?", [.string(schemaName)])
        let present = Set((0..<result.rowCount).map { result.text($0, 0) })
        let q = SQLBuilder.quote
        for entity in entities where !entity.uniquenessConstraints.isEmpty {
            // The indexes as the table's creation makes them (the extra columns give no unique one).
            let wanted = StoreIndexes.wanted(entity, extraColumns: [])
            for constraint in entity.uniquenessConstraints {
                let name = StoreIndexes.indexName(entity.name, constraint, unique: true)
                guard !present.contains(name), let index = wanted.first(where: { $0.name == name }) else { continue }
                do {
                    try connection.execute(index.sql)
                } catch {
                    guard error.isUniqueViolation else { throw error }
                    var failure = SkerryError(
                        .storeLoadFailed,
                        "Cannot load \(description): the unique index \(q(name)) of the uniqueness constraint ("
                            + constraint.joined(separator: ", ")
                            + ") of '\(entity.name)' is missing, and it cannot be made again because the rows hold duplicates"
                            + (error.detail.map { " (\($0))" } ?? "")
                            + ". Remove the duplicates, then load the store again.",
                        entityName: entity.name, key: name)
                    failure.underlyingError = error
                    throw failure
                }
            }
        }
    }
}
