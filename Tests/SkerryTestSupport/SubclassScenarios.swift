import Foundation
import SkerryCore
import Testing

/// `EntityObject` subclasses over a store: a scenario that the SQLite and the PostgreSQL suites
/// both run. The classes live in this module, another module than `SkerryCore`'s.
public enum SubclassScenarios {
    /// A shelf of records.
    public final class Shelf: EntityObject {
        public var label: String? {
            get { self[attribute: "label"] }
            set { self[attribute: "label"] = newValue }
        }
        public var records: Set<Record> {
            get { self[toMany: "records"] }
            set { self[toMany: "records"] = newValue }
        }
    }

    /// A record on a shelf.
    public final class Record: EntityObject {
        public var title: String? {
            get { self[attribute: "title"] }
            set { self[attribute: "title"] = newValue }
        }
        public var plays: Int {
            get { self[attribute: "plays"] }
            set { self[attribute: "plays"] = newValue }
        }
        public var shelf: Shelf? {
            get { self[toOne: "shelf"] }
            set { self[toOne: "shelf"] = newValue }
        }
    }

    /// A new model of shelves and records, with the classes registered.
    public static func model() throws -> ObjectModel {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Shelf", attributes: [AttributeDescription("label", .string)],
                relationships: [RelationshipDescription("records", destination: "Record", inverse: "shelf", toMany: true)]),
            EntityDescription(
                name: "Record",
                attributes: [AttributeDescription("title", .string), AttributeDescription("plays", .integer32, defaultValue: 0)],
                relationships: [RelationshipDescription("shelf", destination: "Shelf", inverse: "records")]),
        ])
        try model.setManagedObjectClass(Shelf.self, forEntityName: "Shelf")
        try model.setManagedObjectClass(Record.self, forEntityName: "Record")
        return model
    }

    /// Saves a shelf of two records in one stack, and reads, changes and deletes them in
    /// another (`reopened`, on the same store), through the classes' properties: fetched objects,
    /// relationship faults, a batched fetch, a prefetch and objects from IDs are of their classes.
    public static func roundTrip(_ stack: PersistentStack, reopened: PersistentStack) throws {
        let writer = stack.newBackgroundContext()
        let shelfID = try writer.performAndWait {
            let shelf = try Shelf(context: writer)
            shelf.label = "Jazz"
            for (title, plays) in [("Kind of Blue", 12), ("A Love Supreme", 7)] {
                let record = try Record(context: writer)
                record.title = title
                record.plays = plays
                record.shelf = shelf
            }
            try writer.save()
            return shelf.objectID
        }
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            var request = Record.fetchRequest()
            request.sortKeys = [SortKey("title")]
            let records = try #require(try reader.fetch(request) as? [Record])
            #expect(records.map(\.title) == ["A Love Supreme", "Kind of Blue"])
            #expect(records.map(\.plays) == [7, 12])
            let shelf = try #require(records[0].shelf)
            #expect(shelf.isFault)
            let reopenedShelfID = shelf.objectID
            #expect(shelf.label == "Jazz" && shelf.records == Set(records))
            records[1].plays += 1
            try reader.save()

            var batched = Record.fetchRequest()
            batched.fetchBatchSize = 1
            batched.relationshipKeyPathsForPrefetching = ["shelf"]
            let other = reopened.newBackgroundContext()
            try other.performAndWait {
                let fetched = try other.fetch(batched)
                #expect(fetched.count == 2 && fetched.allSatisfy { $0 is Record })
                #expect(Set(fetched.compactMap { ($0 as? Record)?.shelf?.label }) == ["Jazz"])
                let fromID = try #require(try other.existingObject(with: reopenedShelfID) as? Shelf)
                #expect(fromID.records.map(\.plays).sorted() == [7, 13])
                try other.delete(fromID.records.first { $0.plays == 7 }!)
                try other.save()
            }
        }
        try writer.performAndWait {
            writer.refreshAllObjects()
            let shelf = try #require(try writer.existingObject(with: shelfID) as? Shelf)
            #expect(shelf.records.map(\.title) == ["Kind of Blue"])
        }
    }
}
