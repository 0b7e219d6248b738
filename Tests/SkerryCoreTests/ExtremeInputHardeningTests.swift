import Foundation
import Testing

@testable import SkerryCore

/// Input of extreme size or shape through the public API: a typed error or the right answer,
/// never a trap or an exhausted stack; a failed save changes nothing.
@Suite struct ExtremeInputHardeningTests {
    @Test(arguments: StoreKind.allCases)
    func anEntityWithMoreColumnsThanTheStoreTakesFailsTheLoadWithATypedError(_ kind: StoreKind) throws {
        // SQLite takes 2,000 columns in a table (by default), PostgreSQL 1,600; a table has two
        // columns of Skerry's own besides the attributes.
        let count = kind == .postgres ? 1_599 : 1_999
        let attributes = (0..<count).map { AttributeDescription("a\($0)", .integer64, isOptional: true) }
        let model = try ObjectModel(entities: [EntityDescription(name: "Wide", attributes: attributes)])
        let error = try #require(throws: SkerryError.self) { _ = try makeStack(kind, model: model) }
        #expect(error.code == .storeLoadFailed, "\(error)")
        #expect(error.message.contains("columns"), "\(error.message)")
    }

    @Test func aThousandNestedChildContextsSaveUpTheChain() throws {
        let stack = try makeMemoryStack()
        let root = stack.newBackgroundContext()
        var contexts = [root]
        for _ in 0..<1_000 { contexts.append(contexts.last!.newChildContext()) }
        let deepest = contexts.last!
        try deepest.performAndWait {
            try deepest.insertBook("deep")
            try deepest.save()
        }
        for context in contexts.dropLast().reversed() {
            try context.performAndWait { try context.save() }
        }
        let reader = stack.newBackgroundContext()
        #expect(try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "Book")) } == 1)
    }

    @Test(arguments: ["nope", "", ".", "title.", ".title", "author.name", "title.length"])
    func nonsenseSortKeysAreTypedErrors(_ key: String) throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("a")
            let request = FetchRequest(entityName: "Book", sortKeys: [SortKey(key)])
            #expect(throws: SkerryError.self) { try context.fetch(request) }
            try context.save()
            #expect(throws: SkerryError.self) { try context.fetch(request) }
        }
    }

    @Test(arguments: ["children.n", "children", "parent", "children.parent.n", "n.n"])
    func sortKeysThroughToManyOrEndingInARelationshipAreTypedErrors(_ key: String) throws {
        let stack = try makeMemoryStack(model: ToManyBookkeepingTests.model)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let parent = try context.insert(entityName: "Parent")
            try context.insert(entityName: "Child").setRelatedObject(parent, forKey: "parent")
            for entity in ["Parent", "Child"] {
                let request = FetchRequest(entityName: entity, sortKeys: [SortKey(key)])
                #expect(throws: SkerryError.self) { try context.fetch(request) }
            }
            try context.save()
            for entity in ["Parent", "Child"] {
                let request = FetchRequest(entityName: entity, sortKeys: [SortKey(key)])
                #expect(throws: SkerryError.self) { try context.fetch(request) }
            }
        }
    }

    @Test func predicatesNestedTenThousandDeepAreTypedErrors() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        var notChain: FetchPredicate = AttributeKey("title") == "a"
        for _ in 0..<10_000 { notChain = .not(.and([notChain, .constant(true)])) }
        var anyChain: FetchPredicate = .constant(true)
        for _ in 0..<10_000 { anyChain = .or([.constant(false), anyChain]) }
        let format = String(repeating: "(", count: 10_000) + "title == 'a'" + String(repeating: ")", count: 10_000)
        let notFormat = String(repeating: "NOT ", count: 10_000) + "title == 'a'"
        try context.performAndWait {
            try context.insertBook("a")
            for predicate in [notChain, anyChain] {
                #expect(throws: SkerryError.self) { try context.fetch(FetchRequest(entityName: "Book", predicate: predicate)) }
            }
            #expect(throws: SkerryError.self) { try FetchPredicate(format: format) }
            // NOT NOT is dropped as the parser goes: 10,000 of them are nothing, one more a NOT.
            #expect(try FetchPredicate(format: notFormat) == (AttributeKey("title") == "a"))
            #expect(try FetchPredicate(format: "NOT " + notFormat) == !(AttributeKey("title") == "a"))
        }
    }

    @Test func keyPathsOfAThousandComponentsAreTypedErrors() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let path = Array(repeating: "author", count: 999).joined(separator: ".") + ".name"
        try context.performAndWait {
            try context.insertBook("a")
            #expect(throws: SkerryError.self) { try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey(path) == "x")) }
            #expect(throws: SkerryError.self) { try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey(path)])) }
            #expect(throws: SkerryError.self) { try FetchPredicate(format: "\(path) == 'x'") }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func longStringsAndBlobsRoundTrip(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let title = String(repeating: "é", count: 4_000_000)
        var cover = Data(repeating: 0xA5, count: 16_000_000)
        for position in stride(from: 0, to: cover.count, by: 999_983) { cover[position] = UInt8(truncatingIfNeeded: position) }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook(title)
            try book.setValue(cover, forKey: "cover")
            try context.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let book = try #require(try reader.fetch(FetchRequest(entityName: "Book")).first)
            #expect(try book.value(forKey: "title") as? String == title)
            #expect(try book.value(forKey: "cover") as? Data == cover)
            #expect(try reader.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("title") == title)) == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func nulCharactersInStrings(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("kept")
            try context.save()
            let book = try context.insertBook("a\u{0}b")
            if kind == .postgres {
                #expect(throws: SkerryError.self) { try context.save() }
                // The context keeps its changes; the store is as it was.
                #expect(context.insertedObjects.contains(book))
                #expect(try book.value(forKey: "title") as? String == "a\u{0}b")
                let reader = stack.newBackgroundContext()
                #expect(try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "Book")) } == 1)
                try book.setValue("ab", forKey: "title")
            }
            try context.save()
            let title = kind == .postgres ? "ab" : "a\u{0}b"
            #expect(try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("title") == title)) == 1)
        }
    }
}
