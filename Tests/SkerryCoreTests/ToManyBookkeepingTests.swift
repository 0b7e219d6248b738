import Foundation
import Testing

@testable import SkerryCore

/// To-many relationships changed one member at a time, thousands of times: the members, their
/// order (ordered relationships) and the inverses stay right. (Each change used to scan and copy
/// the whole list: adding or removing n members one by one cost O(n^2); see ``ObjectIDList``.)
@Suite struct ToManyBookkeepingTests {
    static let model = try! ObjectModel(entities: [
        EntityDescription(
            name: "Parent", attributes: [AttributeDescription("n", .integer64, isOptional: true)],
            relationships: [
                RelationshipDescription("children", destination: "Child", inverse: "parent", toMany: true),
                RelationshipDescription("ordered", destination: "Child", inverse: "owner", toMany: true, ordered: true),
            ]),
        EntityDescription(
            name: "Child", attributes: [AttributeDescription("n", .integer64, isOptional: true)],
            relationships: [
                RelationshipDescription("parent", destination: "Parent", inverse: "children"),
                RelationshipDescription("owner", destination: "Parent", inverse: "ordered"),
            ]),
    ])

    @Test func aLongListKeepsOrderThroughRemovalsAndAdditions() throws {
        let stack = try makeMemoryStack(model: Self.model)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let space = try context.insert(entityName: "Child").objectID.space
            let ids = (0..<200).map { ObjectID(space: space, key: Int64($0)) }
            var list = ObjectIDList()
            var expected: [ObjectID] = []
            for id in ids {
                let added = list.append(id)
                #expect(added)
                expected.append(id)
            }
            let addedTwice = list.append(ids[5])
            #expect(!addedTwice)
            // Every third leaves: tombstones, compacted once they are half the entries.
            for (position, id) in ids.enumerated() where position % 3 == 0 {
                let removed = list.remove(id)
                #expect(removed)
                expected.removeAll { $0 == id }
                #expect(list.ids == expected)
            }
            let removedTwice = list.remove(ids[0])
            #expect(!removedTwice)
            #expect(list.count == expected.count && !list.contains(ids[3]) && list.contains(ids[4]))
            #expect(list.first == expected.first && list.firstIndex(of: ids[199]) == expected.firstIndex(of: ids[199]))
            // A removed member comes back at the end, not at its old place.
            let back = list.append(ids[3])
            #expect(back)
            expected.append(ids[3])
            #expect(list.ids == expected)
            // Moves and insertions at a position.
            list.insert(ids[3], at: 0)
            expected.removeLast()
            expected.insert(ids[3], at: 0)
            list.insert(ids[6], at: 10)
            expected.insert(ids[6], at: 10)
            list.insert(ids[7], at: 1_000)
            expected.removeAll { $0 == ids[7] }
            expected.append(ids[7])
            #expect(list.ids == expected)
            #expect(list.firstIndex(of: ids[6]) == 9 && expected[9] == ids[6])
            #expect(list == ObjectIDList(expected))
            // Removing down to nothing.
            let emptied = expected.allSatisfy { list.remove($0) }
            #expect(emptied)
            #expect(list.isEmpty && list.ids.isEmpty && list.first == nil)
        }
    }

    @Test func thousandsOfOneByOneChangesKeepMembersOrderAndInverses() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory, model: Self.model)
        let count = 2_000
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let parent = try context.insert(entityName: "Parent")
            let children = try (0..<count).map { n in
                let child = try context.insert(entityName: "Child")
                try child.setValue(Int64(n), forKey: "n")
                return child
            }
            // From the to-one side: the parent's to-many follows.
            for child in children { try child.setRelatedObject(parent, forKey: "parent") }
            #expect(try parent.relatedObjects(forKey: "children") == children)
            // From the to-many side: every third leaves, its inverse too.
            for (n, child) in children.enumerated() where n % 3 == 0 { try parent.removeRelatedObject(child, forKey: "children") }
            let staying = children.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
            #expect(try parent.relatedObjects(forKey: "children") == staying)
            let stayed = Set(staying.map(ObjectIdentifier.init))
            #expect(
                try children.allSatisfy { try $0.relatedObject(forKey: "parent") == (stayed.contains(ObjectIdentifier($0)) ? parent : nil) }
            )
            // Ordered: appended, then the first half moved to the front in reverse.
            for child in children { try parent.addRelatedObject(child, forKey: "ordered") }
            for child in children.prefix(count / 2) { try parent.insertRelatedObject(child, at: 0, forKey: "ordered") }
            let ordered = children.prefix(count / 2).reversed() + children.suffix(count - count / 2)
            #expect(try parent.relatedObjects(forKey: "ordered") == Array(ordered))
            // Removed from the to-one side, from the end.
            for child in children.suffix(10).reversed() { try child.setRelatedObject(nil, forKey: "owner") }
            #expect(try parent.relatedObjects(forKey: "ordered") == Array(ordered.dropLast(10)))
            try context.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let parent = try #require(try reader.fetch(FetchRequest(entityName: "Parent")).first)
            let numbers = { (key: String) in
                try parent.relatedObjects(forKey: key).map { try #require($0.value(forKey: "n") as? Int64) }
            }
            let ordered = Array((0..<Int64(count / 2)).reversed()) + Array(Int64(count / 2)..<Int64(count - 10))
            #expect(try numbers("ordered") == ordered)
            #expect(try Set(numbers("children")) == Set((0..<Int64(count)).filter { $0 % 3 != 0 }))
        }
    }
}
