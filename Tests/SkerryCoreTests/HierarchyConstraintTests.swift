import Foundation
import Testing

@testable import SkerryCore

/// A uniqueness constraint an entity declares holds among the objects of all its sub-entities
/// (Core Data keeps a hierarchy in one table, so its constraint spans it), in every kind of store: an
/// abstract Item with a unique `code`, and its sub-entities Book and Film, each in its own table.
@Suite struct HierarchyConstraintTests: ItemHierarchyFixture {
    @Test(arguments: StoreKind.allCases)
    func aConstraintOfTheParentHoldsAcrossSubentityTables(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let stack =
            kind == .file ? try makeFileStack(directory, model: Self.model(), name: "Items") : try makeStack(kind, model: Self.model()).0
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try Self.insert("Book", "A", in: context)
            _ = try Self.insert("Film", "B", in: context)
            // Objects without a value never collide.
            _ = try Self.insert("Book", nil, in: context)
            _ = try Self.insert("Film", nil, in: context)
            try context.save()

            // Insert: a film with a book's code.
            let film = try Self.insert("Film", "A", in: context)
            let error = expectError(.constraintViolation) { try context.save() }
            #expect(error?.key == "code")
            #expect(error?.message.contains("Item.code") == true)
            #expect(context.hasChanges) // the context keeps its changes
            try context.delete(film)
            try context.save()

            // Update: a film takes a book's code; under a merge policy too, nothing is merged
            // into an object of another entity.
            context.mergePolicy = .mergeByPropertyObjectTrump
            let b = try #require(try context.fetch(FetchRequest(entityName: "Film", predicate: AttributeKey("code") == "B")).first)
            try b.setValue("A", forKey: "code")
            _ = expectError(.constraintViolation) { try context.save() }
            try b.setValue("C", forKey: "code")
            try context.save()
        }
        #expect(try Self.codes("Item", in: stack) == ["A", "C"])
        #expect(try Self.codes("Film", in: stack) == ["C"])
    }

    /// Where a store of `kind` lives, to open it again with another model: a file, or a schema
    /// of the PostgreSQL test server.
    struct Place {
        let kind: StoreKind
        /// The stack's name (and the file's, `<name>.sqlite`).
        var name = "Items"
        let directory = TemporaryDirectory()
        let schema = PostgresTestServer.newSchema()

        func open(_ model: ObjectModel) throws -> PersistentStack {
            guard kind == .postgres else { return try makeFileStack(directory, model: model, name: name) }
            let stack = PersistentStack(name: name, model: model)
            stack.persistentStoreDescriptions = [try PostgresTestStore.newDescription(schema: schema)]
            try stack.loadPersistentStores()
            return stack
        }
    }

    /// The kinds of store that keep data across loads.
    static let lastingKinds = StoreKind.allCases.filter { $0 != .memory }

    @Test(arguments: lastingKinds)
    func aSubentityAddedLaterIsHeldToo(kind: StoreKind) throws {
        let place = Place(kind: kind)
        do {
            let stack = try place.open(Self.model())
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                _ = try Self.insert("Film", "A", in: context)
                try context.save()
            }
        }
        // Ebook comes as an additive change: its table joins the hierarchy's checks.
        let stack = try place.open(Self.model(ebooks: true))
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try Self.insert("Ebook", "A", in: context)
            _ = expectError(.constraintViolation) { try context.save() }
            context.rollback()
            let film = try Self.insert("Film", "E", in: context)
            _ = try Self.insert("Ebook", "E", in: context)
            _ = expectError(.constraintViolation) { try context.save() }
            try context.delete(film)
            try context.save()
        }
        #expect(try Self.codes("Item", in: stack) == ["A", "E"])
    }

    /// A store whose sub-entities already share values cannot take the constraint: the
    /// migration to the constrained model fails with a typed error and the store keeps all.
    @Test(arguments: lastingKinds)
    func aMigrationToAConstraintTheDataBreaksLosesNothing(kind: StoreKind) throws {
        let place = Place(kind: kind)
        do {
            let stack = try place.open(Self.model(constrained: false))
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                _ = try Self.insert("Book", "A", in: context)
                _ = try Self.insert("Film", "A", in: context)
                try context.save()
            }
        }
        let error = expectError(.modelMismatch) { _ = try place.open(Self.model()) }
        // Both stores' migrations find the clash once the rows are in place, and roll back.
        #expect(error?.message.contains("uniqueness constraint (code) of 'Item'") == true, "\(String(describing: error))")
        let stack = try place.open(Self.model(constrained: false))
        #expect(try Self.codes("Item", in: stack) == ["A", "A"])
    }
}
