import Foundation
import Testing

@testable import SkerryCore

/// An entity may have relationships and no attributes (a join entity, a tag that is only its
/// links). Its objects have no values to hold, yet they are loaded objects, not faults: inserting,
/// saving through a child, changing their relationships and saving again all work, on every store.
@Suite struct AttributelessEntityTests {
    private func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Note", attributes: [AttributeDescription("text", .string)],
                relationships: [RelationshipDescription("tags", destination: "Tag", inverse: "notes", toMany: true)]),
            EntityDescription(
                name: "Tag", attributes: [],
                relationships: [RelationshipDescription("notes", destination: "Note", inverse: "tags", toMany: true)]),
        ])
    }

    @Test(arguments: StoreKind.allCases)
    func objectsWithoutAttributesSaveThroughAChildAndAgain(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: try model())
        _ = directory
        let parent = stack.newBackgroundContext()
        let tagID = try parent.performAndWait {
            let child = parent.newChildContext()
            try child.performAndWait {
                let tag = try child.insert(entityName: "Tag")
                let note = try child.insert(entityName: "Note")
                try note.setValue("first", forKey: "text")
                try tag.setRelatedObjects([note], forKey: "notes")
                try child.save()
            }
            // The parent now holds the child's insert; its save validates and writes it.
            try parent.save()
            let tags = try parent.fetch(FetchRequest(entityName: "Tag"))
            #expect(tags.count == 1)
            let tag = try #require(tags.first)
            #expect(!tag.isFault)
            // A second change to the object's relationships, saved twice over.
            let second = try parent.insert(entityName: "Note")
            try second.setValue("second", forKey: "text")
            try tag.setRelatedObjects(try tag.relatedObjects(forKey: "notes") + [second], forKey: "notes")
            try parent.save()
            let third = try parent.insert(entityName: "Note")
            try third.setValue("third", forKey: "text")
            try tag.setRelatedObjects(try tag.relatedObjects(forKey: "notes") + [third], forKey: "notes")
            try parent.save()
            return tag.objectID
        }
        let reader = stack.newBackgroundContext()
        let texts = try reader.performAndWait {
            try reader.existingObject(with: tagID).relatedObjects(forKey: "notes")
                .map { try $0.value(forKey: "text", as: String.self) }.sorted()
        }
        #expect(texts == ["first", "second", "third"])
    }
}
