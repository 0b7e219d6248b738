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
    /// comma (which names cannot contain), so that different lists never share a name. A name
    /// longer than ``identifierLimit`` starts with as much of the entity's name as fits and ends
    /// with a hash of the entity's name and the list (PostgreSQL would cut it, and names cut
    /// after the same first 63 bytes would be one index).
    package static func indexName(_ entityName: String, _ attributes: [String], unique: Bool) -> String {
        let list = attributes.joined(separator: ",")
        let name = "\(entityName)__\(unique ? "unique" : "index")__\(ObjectModel.fnv1a64Hex(list))"
        guard name.utf8.count > identifierLimit else { return name }
        return indexNamePrefix(entityName, unique: unique) + ObjectModel.fnv1a64Hex(entityName + "," + list)
    }

    /// What the names of `entityName`'s indexes of a kind start with (``indexName(_:_:unique:)``).
    static func indexNamePrefix(_ entityName: String, unique: Bool) -> String {
        let marker = "__\(unique ? "unique" : "index")__"
        return clipped(entityName, toBytes: identifierLimit - marker.utf8.count - 16) + marker
    }

    /// Whether `name`, an index of `entityName`'s table, is one Skerry made for the entity.
    package static func isSkerryIndex(_ name: String, of entityName: String) -> Bool {
        name.hasPrefix(indexNamePrefix(entityName, unique: false)) || name.hasPrefix(indexNamePrefix(entityName, unique: true))
    }

    /// The longest identifier every store keeps as written, in bytes: PostgreSQL cuts longer ones
    /// to 63 (NAMEDATALEN - 1); SQLite has no limit. The names Skerry makes up (indexes, key
    /// sequences) stay within it; the names a model gives (entities, attributes, relationships)
    /// are used as written, and PostgreSQL cuts them the same way wherever they appear.
    package static let identifierLimit = 63

    /// A name Skerry makes up from `name` that fits ``identifierLimit``: `name` when it fits,
    /// else its first bytes, `_` and a hash of all of it, so that two long names that start
    /// alike stay apart.
    package static func fittingName(_ name: String) -> String {
        guard name.utf8.count > identifierLimit else { return name }
        return clipped(name, toBytes: identifierLimit - 17) + "_" + ObjectModel.fnv1a64Hex(name)
    }

    /// `name` as PostgreSQL keeps an identifier: at most ``identifierLimit`` bytes, cut at a
    /// character boundary. Where a name is compared with the server's catalogs.
    package static func storedName(_ name: String) -> String {
        clipped(name, toBytes: identifierLimit)
    }

    /// The longest start of `text` of at most `limit` UTF-8 bytes that ends at a character boundary.
    package static func clipped(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = "", count = 0
        for scalar in text.unicodeScalars {
            let size = String(scalar).utf8.count
            guard count + size <= limit else { break }
            result.unicodeScalars.append(scalar)
            count += size
        }
        return result
    }

}
