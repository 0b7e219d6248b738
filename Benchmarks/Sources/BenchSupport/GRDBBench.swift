import GRDB

/// GRDB records on an in-memory `DatabaseQueue`, one `write` (one transaction) or `read` per scenario.
final class GRDBBench<Record: GRDBRecord> {
    typealias Item = Record.Item
    let dbQueue: DatabaseQueue

    init() throws {
        dbQueue = try DatabaseQueue()
        try dbQueue.write { db in try db.execute(sql: Item.createTableSQL) }
    }

    static func prepare(_ scenario: Scenario, _ sizes: Sizes) throws -> Work {
        let grdb = try GRDBBench()
        let prefill = sizes.prefill(scenario)
        if prefill > 0 { try grdb.insert(makeItems(prefill)) }
        switch scenario {
        case .insert:
            let items: [Item] = makeItems(sizes.insert)
            return Work({ try grdb.insert(items) }, verify: { try expect(grdb.count() == items.count, "GRDB insert") })
        case .fetch:
            return Work {
                let records = try grdb.dbQueue.read { db in try Record.fetchAll(db) }
                expect(records.count == sizes.fetch, "GRDB fetch")
            }
        case .update:
            let column = Item.columns[Item.updatedColumnIndex].name
            return Work(
                {
                    let count = try grdb.dbQueue.write { db in
                        let records = try Record.fetchAll(db)
                        for var record in records {
                            record.bump()
                            try record.update(db, columns: [column])
                        }
                        return records.count
                    }
                    expect(count == sizes.update, "GRDB update")
                },
                verify: {
                    let sum = try grdb.dbQueue.read { db in try Int64.fetchOne(db, sql: "SELECT SUM(\(column)) FROM item") }
                    expect(sum == expectedSum(Item.self, sizes.update), "GRDB update sum")
                })
        case .fetchByID:
            let all = try grdb.dbQueue.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM item") }
            let ids = randomSelection(all, count: sizes.fetchByID)
            return Work {
                let records = try grdb.dbQueue.read { db in
                    var records: [Record] = []
                    records.reserveCapacity(ids.count)
                    for id in ids {
                        guard let record = try Record.fetchOne(db, key: id) else { preconditionFailure("GRDB: no row \(id)") }
                        records.append(record)
                    }
                    return records
                }
                expect(records.count == ids.count, "GRDB fetch by ID")
            }
        case .deleteBatch:
            return Work(
                {
                    let count = try grdb.dbQueue.write { db in try Record.deleteAll(db) }
                    expect(count == sizes.delete, "GRDB batch delete")
                }, verify: { try expect(grdb.count() == 0, "GRDB batch delete left rows") })
        case .deleteEach:
            return Work(
                {
                    let count = try grdb.dbQueue.write { db in
                        let records = try Record.fetchAll(db)
                        for record in records { try record.delete(db) }
                        return records.count
                    }
                    expect(count == sizes.delete, "GRDB delete each")
                }, verify: { try expect(grdb.count() == 0, "GRDB delete each left rows") })
        }
    }

    func insert(_ items: [Item]) throws {
        try dbQueue.write { db in
            for item in items {
                var record = Record(item)
                try record.insert(db)
            }
        }
    }

    func count() throws -> Int {
        try dbQueue.read { db in try Record.fetchCount(db) }
    }
}
