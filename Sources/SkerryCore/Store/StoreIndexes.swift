/// The indexes of an entity's table, the same for every store of this package (the SQL is
/// common to SQLite and PostgreSQL).
package enum StoreIndexes {
    /// One index of a table, as created.
    package struct TableIndex {
        package let name: String
        package let sql: String
    }

    /// The indexes `entity`'s table gets, each column list once: a single-column index on each
    /// foreign-key column, a unique index per uniqueness constraint, and an index per fetch index
    /// (a to-one relationship's name stands for its foreign-key column; one kept in the other
    /// table of a one-to-one pair is left out). Two fetch indexes over the same columns (in
    /// another order or under another name in Xcode) give one index, and an index that a unique
    /// index or a foreign-key index already covers exactly is not made again.
    package static func wanted(_ entity: EntityDescription, extraColumns: Set<String>) -> [TableIndex] {
        let q = SQLBuilder.quote
        var seen = Set<[String]>()
        var result: [TableIndex] = []
        func add(_ columns: [String], unique: Bool) {
            guard !columns.isEmpty, seen.insert(columns).inserted || unique else { return }
            let name = indexName(entity.name, columns, unique: unique)
            guard !result.contains(where: { $0.name == name }) else { return }
            result.append(
                TableIndex(
                    name: name,
                    sql:
                        "CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(q(name)) ON \(q(entity.name)) (\(columns.map(q).joined(separator: ", ")))"
                ))
        }
        for constraint in entity.uniquenessConstraints { add(constraint, unique: true) }
        for column in extraColumns.sorted() where !column.hasPrefix("_") { add([column], unique: false) }
        for index in entity.indexes {
            var columns: [String] = []
            for name in index.attributeNames where entity.attribute(named: name).map({ !$0.isTransient }) ?? extraColumns.contains(name) {
                if !columns.contains(name) { columns.append(name) }
            }
            add(columns, unique: false)
        }
        return result
    }

    /// The index's name: the entity, the kind, and a hash of the attribute list joined with a
    /// comma (which names cannot contain), so that different lists never share a name.
    package static func indexName(_ entityName: String, _ attributes: [String], unique: Bool) -> String {
        "\(entityName)__\(unique ? "unique" : "index")__\(ObjectModel.fnv1a64Hex(attributes.joined(separator: ",")))"
    }

}
