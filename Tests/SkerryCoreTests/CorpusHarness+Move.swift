import Foundation

@testable import SkerryCore

/// The corpus harness's move stage (`SKERRY_CORPUS_MOVE=1`, SQLite stores, under
/// `scripts/postgres-server.sh run`): each version's populated SQLite store moves with
/// `StoreCoordinator.migratePersistentStore(_:to:)` into a new PostgreSQL schema and into memory,
/// and what the new store holds is compared with what the file held, object by object: every
/// attribute value, every relationship's members (an ordered one's in order). The PostgreSQL
/// store is read again by a stack of its own, so that what was committed is compared too.
extension CorpusHarness {
    /// Moves the SQLite store `file` (written with `model`) into PostgreSQL and into memory, one
    /// report line per destination (stage "move VERSION -> postgres" / "-> memory").
    func move(_ model: ObjectModel, file: StoreDescription, versionName: String, into report: inout CorpusReport) {
        let destinations: [(String, () throws -> StoreDescription)] = [
            ("postgres", { try PostgresTestStore.newDescription() }),
            ("memory", { StoreDescription.inMemory() }),
        ]
        for (kind, makeDestination) in destinations {
            let stage = "move \(versionName) -> \(kind)"
            do {
                let stack = PersistentStack(name: "Move", model: model)
                stack.persistentStoreDescriptions = [file]
                try stack.loadPersistentStores()
                let before = try Self.read(model, stack)
                let coordinator = stack.persistentStoreCoordinator
                let destination = try makeDestination()
                let moved = try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: destination)
                guard coordinator.persistentStores == [moved] else {
                    report.add(name, stage, "LOST", "stores", "persistentStores is \(coordinator.persistentStores)")
                    continue
                }
                let after = try Self.read(model, stack)
                var problems = Self.exactDifferences(before, after)
                if kind == "postgres" {
                    // What was committed: a stack of its own reads the schema.
                    let reread = try read(model, description: destination)
                    problems += Self.exactDifferences(before, reread).map { "(re-read) \($0)" }
                }
                let objects = before.objects.values.reduce(0) { $0 + $1.count }
                let links = before.objects.values.reduce(0) {
                    $0 + $1.values.reduce(0) { $0 + $1.relationships.values.reduce(0) { $0 + $1.count } }
                }
                if problems.isEmpty {
                    report.add(name, stage, "ok", "", "\(objects) objects, \(links) links")
                } else {
                    report.add(
                        name, stage, "LOST", "move differs",
                        "\(problems.count) differences of \(objects) objects, \(links) links: " + problems.prefix(5).joined(separator: "; ")
                    )
                }
            } catch {
                report.add(name, stage, "FAIL", Self.category(error), "\(error)")
            }
        }
    }

    /// What a new context of `stack` reads.
    static func read(_ model: ObjectModel, _ stack: PersistentStack) throws -> CorpusSnapshot {
        let context = stack.newBackgroundContext()
        return try context.performAndWait { try snapshot(model, context) }
    }

    /// Every difference between two snapshots of stores of one model: objects missing or extra,
    /// attribute values, relationship members (in order for ordered ones; snapshot sorts the
    /// others).
    static func exactDifferences(_ old: CorpusSnapshot, _ new: CorpusSnapshot) -> [String] {
        var problems: [String] = []
        for entity in Set(old.objects.keys).union(new.objects.keys).sorted() {
            let was = old.objects[entity] ?? [:], now = new.objects[entity] ?? [:]
            for key in Set(was.keys).subtracting(now.keys).sorted() { problems.append("\(key) missing") }
            for key in Set(now.keys).subtracting(was.keys).sorted() { problems.append("\(key) extra") }
            for (key, object) in was.sorted(by: { $0.key < $1.key }) {
                guard let other = now[key] else { continue }
                for (attribute, value) in object.values.sorted(by: { $0.key < $1.key }) where other.values[attribute] != value {
                    problems.append("\(key).\(attribute): \(value) became \(other.values[attribute].map { "\($0)" } ?? "absent")")
                }
                for (relationship, members) in object.relationships.sorted(by: { $0.key < $1.key })
                where other.relationships[relationship] != members {
                    problems.append("\(key).\(relationship): \(members) became \(other.relationships[relationship] ?? [])")
                }
            }
        }
        return problems
    }
}
