import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

private struct MissingObject: Error, CustomStringConvertible {
    let description: String
}

private extension ObjectContext {
    /// The one object of `entity` whose string attribute is `value`.
    func graphObject(_ entity: String, _ value: String) throws -> EntityObject {
        let key = try #require(model.entity(named: entity)).attributes[0].name
        let found = try fetch(FetchRequest(entityName: entity, predicate: AttributeKey(key) == value))
        guard found.count == 1 else { throw MissingObject(description: "\(found.count) \(entity) objects named \(value)") }
        return found[0]
    }

    /// Every object of `entity`.
    func graphAll(_ entity: String) throws -> [EntityObject] {
        try fetch(FetchRequest(entityName: entity))
    }

    /// The registered object whose ID `ids` holds under `label`.
    func registered(_ ids: [String: ObjectID], _ label: String) throws -> EntityObject {
        guard let id = ids[label], let object = registeredObject(for: id) else {
            throw MissingObject(description: "\(label) is not registered in the context")
        }
        return object
    }

    func graphCount(_ entity: String) throws -> Int {
        try count(for: FetchRequest(entityName: entity))
    }
}

private extension EntityObject {
    /// The labels of a to-many relationship's members, in the relationship's order.
    func members(_ key: String) throws -> [String] {
        try relatedObjects(forKey: key).map(\.label)
    }

    /// The labels of a to-many relationship's members, sorted.
    func sortedMembers(_ key: String) throws -> [String] {
        try members(key).sorted()
    }

    /// The label of a to-one relationship's destination, or nil.
    func relatedLabel(_ key: String) throws -> String? {
        try relatedObject(forKey: key)?.label
    }

    func relationshipState(_ key: String) -> RelationshipValue? {
        entity.relationshipIndex(named: key).map { relationshipValues[$0] }
    }
}

/// Saves a graph made by `build` in a context of its own.
private func seed(_ harness: GraphHarness, _ build: (ObjectContext) throws -> Void) throws {
    let context = harness.context()
    try context.performAndWait { () throws in
        try build(context)
        try context.save()
    }
}

/// Authors X (Dune, Emma) and Y (Kim); tag sf on Dune and Emma, tag classic on Dune.
private func seedLibrary(_ harness: GraphHarness) throws {
    try seed(harness) { context in
        let x = try context.insertNamed("Author", "X")
        let y = try context.insertNamed("Author", "Y")
        let dune = try context.insertNamed("Book", "Dune")
        let emma = try context.insertNamed("Book", "Emma")
        let kim = try context.insertNamed("Book", "Kim")
        try x.addRelatedObject(dune, forKey: "books")
        try x.addRelatedObject(emma, forKey: "books")
        try y.addRelatedObject(kim, forKey: "books")
        let sf = try context.insertNamed("Tag", "sf")
        let classic = try context.insertNamed("Tag", "classic")
        try dune.addRelatedObject(sf, forKey: "tags")
        try emma.addRelatedObject(sf, forKey: "tags")
        try dune.addRelatedObject(classic, forKey: "tags")
    }
}

// MARK: - Tests

@Suite struct RelationshipTests {
    // MARK: Kinds of relationship

    @Test(arguments: StoreKind.allCases)
    func toOneAndToManyKeepTheirInverseInSync(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        let context = harness.context()
        try context.performAndWait { () throws in
            let x = try context.insertNamed("Author", "X")
            let y = try context.insertNamed("Author", "Y")
            let dune = try context.insertNamed("Book", "Dune")
            let emma = try context.insertNamed("Book", "Emma")
            let kim = try context.insertNamed("Book", "Kim")

            try dune.setRelatedObject(x, forKey: "author")
            #expect(try x.members("books") == ["Dune"])
            try x.addRelatedObject(emma, forKey: "books")
            #expect(try emma.relatedObject(forKey: "author") === x)
            #expect(try x.members("books") == ["Dune", "Emma"])

            // Setting the to-one moves the book: the old author loses it, the new one gains it.
            try dune.setRelatedObject(y, forKey: "author")
            #expect(try x.members("books") == ["Emma"])
            #expect(try y.members("books") == ["Dune"])

            // Adding to a to-many takes the book from its previous author.
            try y.addRelatedObject(emma, forKey: "books")
            #expect(try emma.relatedObject(forKey: "author") === y)
            #expect(try x.members("books").isEmpty)
            #expect(try y.members("books") == ["Dune", "Emma"])

            // Removing a member clears its to-one; clearing the to-one removes the member.
            try y.removeRelatedObject(dune, forKey: "books")
            #expect(try dune.relatedObject(forKey: "author") == nil)
            #expect(try y.members("books") == ["Emma"])
            try emma.setRelatedObject(nil, forKey: "author")
            #expect(try y.members("books").isEmpty)

            // Adding a member twice keeps one.
            try x.addRelatedObject(dune, forKey: "books")
            try x.addRelatedObject(dune, forKey: "books")
            try kim.setRelatedObject(x, forKey: "author")
            try y.addRelatedObject(emma, forKey: "books")
            #expect(try x.members("books") == ["Dune", "Kim"])
            try context.save()
        }

        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            // Read from the to-one side first, then from the to-many side.
            #expect(try reopened.graphObject("Book", "Kim").relatedLabel("author") == "X")
            #expect(try reopened.graphObject("Book", "Emma").relatedLabel("author") == "Y")
            #expect(try reopened.graphObject("Author", "X").sortedMembers("books") == ["Dune", "Kim"])
            #expect(try reopened.graphObject("Author", "Y").members("books") == ["Emma"])
        }

        // Changes of saved objects: a move through the to-one, then through the to-many.
        let second = harness.context()
        try second.performAndWait { () throws in
            let kim = try second.graphObject("Book", "Kim")
            try kim.setRelatedObject(try second.graphObject("Author", "Y"), forKey: "author")
            let x = try second.graphObject("Author", "X")
            let y = try second.graphObject("Author", "Y")
            try x.addRelatedObject(try second.graphObject("Book", "Emma"), forKey: "books")
            #expect(try x.sortedMembers("books") == ["Dune", "Emma"])
            #expect(try y.members("books") == ["Kim"])
            try second.save()
        }
        let again = try harness.reopened()
        try again.performAndWait { () throws in
            #expect(try again.graphObject("Author", "X").sortedMembers("books") == ["Dune", "Emma"])
            #expect(try again.graphObject("Author", "Y").members("books") == ["Kim"])
            #expect(try again.graphObject("Book", "Emma").relatedLabel("author") == "X")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func setRelatedObjectsReplacesTheMembers(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = harness.context()
        try context.performAndWait { () throws in
            let x = try context.graphObject("Author", "X")
            let kim = try context.graphObject("Book", "Kim")
            let sofia = try context.insertNamed("Book", "Sofia")
            try x.setRelatedObjects([kim, sofia], forKey: "books")
            #expect(try x.sortedMembers("books") == ["Kim", "Sofia"])
            #expect(try context.graphObject("Book", "Dune").relatedObject(forKey: "author") == nil)
            #expect(try context.graphObject("Book", "Emma").relatedObject(forKey: "author") == nil)
            #expect(try kim.relatedObject(forKey: "author") === x)
            #expect(try sofia.relatedObject(forKey: "author") === x)
            #expect(try context.graphObject("Author", "Y").members("books").isEmpty)

            // Many-to-many: a book's tags are replaced, and each tag's books follow.
            let dune = try context.graphObject("Book", "Dune")
            try dune.setRelatedObjects([try context.graphObject("Tag", "sf")], forKey: "tags")
            try kim.setRelatedObjects([try context.graphObject("Tag", "classic"), try context.graphObject("Tag", "sf")], forKey: "tags")
            #expect(try context.graphObject("Tag", "classic").members("books") == ["Kim"])
            #expect(try context.graphObject("Tag", "sf").sortedMembers("books") == ["Dune", "Emma", "Kim"])
            try context.save()
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphObject("Author", "X").sortedMembers("books") == ["Kim", "Sofia"])
            #expect(try reopened.graphObject("Author", "Y").members("books").isEmpty)
            #expect(try reopened.graphObject("Book", "Dune").relatedObject(forKey: "author") == nil)
            #expect(try reopened.graphObject("Tag", "classic").members("books") == ["Kim"])
            #expect(try reopened.graphObject("Tag", "sf").sortedMembers("books") == ["Dune", "Emma", "Kim"])
            #expect(try reopened.graphObject("Book", "Kim").sortedMembers("tags") == ["classic", "sf"])
            #expect(try reopened.graphObject("Book", "Dune").members("tags") == ["sf"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func oneToOneMovesTheDestinationAway(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        let context = harness.context()
        try context.performAndWait { () throws in
            let herbert = try context.insertNamed("Author", "Herbert")
            let austen = try context.insertNamed("Author", "Austen")
            let painting = try context.insertNamed("Portrait", "painting")
            let photo = try context.insertNamed("Portrait", "photo")
            try herbert.setRelatedObject(painting, forKey: "portrait")
            #expect(try painting.relatedObject(forKey: "author") === herbert)

            // Giving the portrait to another author clears the first author's portrait.
            try austen.setRelatedObject(painting, forKey: "portrait")
            #expect(try herbert.relatedObject(forKey: "portrait") == nil)
            #expect(try painting.relatedObject(forKey: "author") === austen)

            // From the other side.
            try photo.setRelatedObject(herbert, forKey: "author")
            #expect(try herbert.relatedObject(forKey: "portrait") === photo)
            try context.save()
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            // The side that reads the other's column first.
            #expect(try reopened.graphObject("Portrait", "painting").relatedLabel("author") == "Austen")
            #expect(try reopened.graphObject("Portrait", "photo").relatedLabel("author") == "Herbert")
            #expect(try reopened.graphObject("Author", "Herbert").relatedLabel("portrait") == "photo")
            #expect(try reopened.graphObject("Author", "Austen").relatedLabel("portrait") == "painting")

            // Saved objects: the painting goes to Herbert, whose photo is left without an author.
            let painting = try reopened.graphObject("Portrait", "painting")
            try painting.setRelatedObject(try reopened.graphObject("Author", "Herbert"), forKey: "author")
            #expect(try reopened.graphObject("Author", "Austen").relatedObject(forKey: "portrait") == nil)
            #expect(try reopened.graphObject("Portrait", "photo").relatedObject(forKey: "author") == nil)
            try reopened.save()
        }
        let again = try harness.reopened()
        try again.performAndWait { () throws in
            #expect(try again.graphObject("Author", "Herbert").relatedLabel("portrait") == "painting")
            #expect(try again.graphObject("Author", "Austen").relatedObject(forKey: "portrait") == nil)
            #expect(try again.graphObject("Portrait", "photo").relatedObject(forKey: "author") == nil)
            #expect(try again.graphObject("Portrait", "painting").relatedLabel("author") == "Herbert")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func orderedToManyKeepsItsOrder(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        let context = harness.context()
        try context.performAndWait { () throws in
            let shelf = try context.insertNamed("Shelf", "S")
            let a = try context.insertNamed("Book", "a")
            let b = try context.insertNamed("Book", "b")
            let c = try context.insertNamed("Book", "c")
            let d = try context.insertNamed("Book", "d")
            let e = try context.insertNamed("Book", "e")
            for book in [a, b, c] { try shelf.addRelatedObject(book, forKey: "items") }
            #expect(try shelf.members("items") == ["a", "b", "c"])
            try shelf.insertRelatedObject(d, at: 0, forKey: "items")
            #expect(try shelf.members("items") == ["d", "a", "b", "c"])
            #expect(try d.relatedObject(forKey: "shelf") === shelf)
            try shelf.moveRelatedObject(from: 0, to: 3, forKey: "items")
            #expect(try shelf.members("items") == ["a", "b", "c", "d"])
            // Inserting a member moves it.
            try shelf.insertRelatedObject(c, at: 0, forKey: "items")
            #expect(try shelf.members("items") == ["c", "a", "b", "d"])
            // Setting the to-one appends; clearing it removes.
            try e.setRelatedObject(shelf, forKey: "shelf")
            #expect(try shelf.members("items") == ["c", "a", "b", "d", "e"])
            try e.setRelatedObject(nil, forKey: "shelf")
            #expect(try shelf.members("items") == ["c", "a", "b", "d"])
            try context.save()
        }
        let first = try harness.reopened()
        try first.performAndWait { () throws in
            let shelf = try first.graphObject("Shelf", "S")
            #expect(try shelf.members("items") == ["c", "a", "b", "d"])
            #expect(try first.graphObject("Book", "e").relatedObject(forKey: "shelf") == nil)
            try shelf.moveRelatedObject(from: 3, to: 0, forKey: "items")
            try shelf.insertRelatedObject(try first.insertNamed("Book", "f"), at: 2, forKey: "items")
            #expect(try shelf.members("items") == ["d", "c", "f", "a", "b"])
            try first.save()
        }
        let second = try harness.reopened()
        try second.performAndWait { () throws in
            let shelf = try second.graphObject("Shelf", "S")
            #expect(try shelf.members("items") == ["d", "c", "f", "a", "b"])
            // Replacing the members sets the new order; books left out lose their shelf.
            try shelf.setRelatedObjects(
                [
                    try second.graphObject("Book", "b"), try second.graphObject("Book", "a"),
                    try second.graphObject("Book", "d"),
                ], forKey: "items")
            #expect(try shelf.members("items") == ["b", "a", "d"])
            #expect(try second.graphObject("Book", "c").relatedObject(forKey: "shelf") == nil)
            // A book moved to another shelf leaves this one.
            let other = try second.insertNamed("Shelf", "T")
            try second.graphObject("Book", "a").setRelatedObject(other, forKey: "shelf")
            #expect(try shelf.members("items") == ["b", "d"])
            #expect(try other.members("items") == ["a"])
            try second.save()
        }
        let third = try harness.reopened()
        try third.performAndWait { () throws in
            #expect(try third.graphObject("Shelf", "S").members("items") == ["b", "d"])
            #expect(try third.graphObject("Shelf", "T").members("items") == ["a"])
            #expect(try third.graphObject("Book", "d").relatedLabel("shelf") == "S")
            #expect(try third.graphObject("Book", "f").relatedObject(forKey: "shelf") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func manyToManySurvivesReopeningFromBothSides(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        let context = harness.context()
        try context.performAndWait { () throws in
            let dune = try context.insertNamed("Book", "Dune")
            let emma = try context.insertNamed("Book", "Emma")
            let sf = try context.insertNamed("Tag", "sf")
            let classic = try context.insertNamed("Tag", "classic")
            try dune.addRelatedObject(sf, forKey: "tags")
            try dune.addRelatedObject(classic, forKey: "tags")
            try classic.addRelatedObject(emma, forKey: "books")
            #expect(try sf.members("books") == ["Dune"])
            #expect(try classic.sortedMembers("books") == ["Dune", "Emma"])
            #expect(try emma.members("tags") == ["classic"])
            try classic.removeRelatedObject(dune, forKey: "books")
            #expect(try dune.members("tags") == ["sf"])
            #expect(try classic.members("books") == ["Emma"])
            try classic.addRelatedObject(dune, forKey: "books")
            #expect(try dune.sortedMembers("tags") == ["classic", "sf"])
            try context.save()
        }
        #expect(try harness.scalar("SELECT count(*) FROM \"_Book_tags\"") == 3)

        let tagsFirst = try harness.reopened()
        try tagsFirst.performAndWait { () throws in
            #expect(try tagsFirst.graphObject("Tag", "sf").members("books") == ["Dune"])
            #expect(try tagsFirst.graphObject("Tag", "classic").sortedMembers("books") == ["Dune", "Emma"])
        }
        let booksFirst = try harness.reopened()
        try booksFirst.performAndWait { () throws in
            #expect(try booksFirst.graphObject("Book", "Dune").sortedMembers("tags") == ["classic", "sf"])
            #expect(try booksFirst.graphObject("Book", "Emma").members("tags") == ["classic"])
            // A change made from the side that does not own the join table.
            let sf = try booksFirst.graphObject("Tag", "sf")
            try sf.addRelatedObject(try booksFirst.graphObject("Book", "Emma"), forKey: "books")
            try sf.removeRelatedObject(try booksFirst.graphObject("Book", "Dune"), forKey: "books")
            try booksFirst.save()
        }
        let again = try harness.reopened()
        try again.performAndWait { () throws in
            #expect(try again.graphObject("Tag", "sf").members("books") == ["Emma"])
            #expect(try again.graphObject("Book", "Emma").sortedMembers("tags") == ["classic", "sf"])
            #expect(try again.graphObject("Book", "Dune").members("tags") == ["classic"])
        }
        #expect(try harness.scalar("SELECT count(*) FROM \"_Book_tags\"") == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func savedObjectsChangedFromTheSideWithoutTheJoinTablePersist(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = harness.context()
        try context.performAndWait { () throws in
            // Nothing loaded: the tag gains Kim and loses Dune.
            let sf = try context.graphObject("Tag", "sf")
            let kim = try context.graphObject("Book", "Kim")
            let dune = try context.graphObject("Book", "Dune")
            try sf.addRelatedObject(kim, forKey: "books")
            try sf.removeRelatedObject(dune, forKey: "books")
            #expect(try kim.members("tags") == ["sf"])
            #expect(try dune.members("tags") == ["classic"])
            #expect(kim.hasChanges, "Kim's tags (the join table's owning side) changed")
            #expect(dune.hasChanges, "Dune's tags (the join table's owning side) changed")
            try context.save()
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphObject("Tag", "sf").sortedMembers("books") == ["Emma", "Kim"])
            #expect(try reopened.graphObject("Book", "Kim").members("tags") == ["sf"])
            #expect(try reopened.graphObject("Book", "Dune").members("tags") == ["classic"])
        }
        #expect(try harness.scalar("SELECT count(*) FROM \"_Book_tags\"") == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func aBookJoiningASavedShelfFromItsSideGoesLast(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seed(harness) { context in
            let shelf = try context.insertNamed("Shelf", "S")
            for title in ["a", "b", "c"] {
                try shelf.addRelatedObject(try context.insertNamed("Book", title), forKey: "items")
            }
            _ = try context.insertNamed("Book", "d")
        }
        let context = harness.context()
        try context.performAndWait { () throws in
            // The shelf's items are not loaded when the book joins it from its side.
            let shelf = try context.graphObject("Shelf", "S")
            try context.graphObject("Book", "d").setRelatedObject(shelf, forKey: "shelf")
            #expect(try shelf.members("items") == ["a", "b", "c", "d"])
            try context.save()
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphObject("Shelf", "S").members("items") == ["a", "b", "c", "d"])
            // A new book too.
            let shelf = try reopened.graphObject("Shelf", "S")
            try reopened.insertNamed("Book", "e").setRelatedObject(shelf, forKey: "shelf")
            try reopened.save()
        }
        let again = try harness.reopened()
        try again.performAndWait { () throws in
            #expect(try again.graphObject("Shelf", "S").members("items").last == "e")
        }
    }

    // MARK: Loading

    @Test(arguments: StoreKind.allCases)
    func relationshipsLoadLazilyIntoTheSameContext(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = try harness.reopened()
        try context.performAndWait { () throws in
            let x = try context.graphObject("Author", "X")
            #expect(x.relationshipState("books") == .notLoaded)
            let books = try x.relatedObjects(forKey: "books")
            #expect(books.map(\.label).sorted() == ["Dune", "Emma"])
            guard case .toMany(let ids)? = x.relationshipState("books") else {
                Issue.record("books did not load: \(String(describing: x.relationshipState("books")))")
                return
            }
            #expect(Set(ids) == Set(books.map(\.objectID)))
            // The related objects are the context's: a fetch returns the same instances.
            let fetched = try context.graphAll("Book")
            for book in books {
                #expect(book.context === context)
                #expect(context.registeredObject(for: book.objectID) === book)
                #expect(fetched.contains { $0 === book })
                #expect(try book.relatedObject(forKey: "author") === x)
            }
            // Tags, through the join table, load on first touch too.
            let dune = try #require(books.first { $0.label == "Dune" })
            #expect(dune.relationshipState("tags") == .notLoaded)
            let tags = try dune.relatedObjects(forKey: "tags")
            #expect(tags.map(\.label).sorted() == ["classic", "sf"])
            let sf = try context.graphObject("Tag", "sf")
            #expect(tags.contains { $0 === sf })
        }
    }

    @Test(arguments: StoreKind.allCases)
    func unsavedChangesTakePartWhenRelationshipsLoad(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = harness.context()
        try context.performAndWait { () throws in
            let dune = try context.graphObject("Book", "Dune")
            let x = try context.graphObject("Author", "X")
            let y = try context.graphObject("Author", "Y")
            #expect(x.relationshipState("books") == .notLoaded)
            try dune.setRelatedObject(y, forKey: "author") // unsaved move X -> Y
            let rebecca = try context.insertNamed("Book", "Rebecca")
            try rebecca.setRelatedObject(y, forKey: "author") // unsaved insert for Y
            try context.delete(try context.graphObject("Book", "Kim")) // unsaved delete of Y's Kim

            // The authors forget what they loaded; loading again reads the store, corrected by the
            // context's unsaved changes.
            try context.refresh(x, mergeChanges: false)
            try context.refresh(y, mergeChanges: false)
            #expect(x.relationshipState("books") == .notLoaded)
            #expect(try x.members("books") == ["Emma"])
            #expect(try y.sortedMembers("books") == ["Dune", "Rebecca"])
            #expect(try dune.relatedObject(forKey: "author") === y)

            // So does a tag whose book was deleted.
            let sf = try context.graphObject("Tag", "sf")
            try context.delete(try context.graphObject("Book", "Emma"))
            try context.refresh(sf, mergeChanges: false)
            #expect(try sf.members("books") == ["Dune"])

            // A child context sees the same state.
            let child = context.newChildContext()
            let xID = x.objectID, yID = y.objectID
            try child.performAndWait { () throws in
                #expect(try child.existingObject(with: xID).members("books").isEmpty)
                #expect(try child.existingObject(with: yID).sortedMembers("books") == ["Dune", "Rebecca"])
            }
        }
    }

    // MARK: Delete rules

    @Test(arguments: StoreKind.allCases)
    func nullifyRemovesADeletedBookFromItsAuthorAndTags(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = harness.context()
        try context.performAndWait { () throws in
            let x = try context.graphObject("Author", "X")
            let sf = try context.graphObject("Tag", "sf")
            #expect(try x.sortedMembers("books") == ["Dune", "Emma"])
            #expect(try sf.sortedMembers("books") == ["Dune", "Emma"])
            let dune = try context.graphObject("Book", "Dune")
            try context.delete(dune)
            #expect(dune.isDeleted)
            #expect(try x.members("books") == ["Emma"])
            #expect(try sf.members("books") == ["Emma"])
            #expect(try context.graphObject("Tag", "classic").members("books").isEmpty)
            try context.save()
            #expect(try x.members("books") == ["Emma"])
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphObject("Author", "X").members("books") == ["Emma"])
            #expect(try reopened.graphObject("Tag", "sf").members("books") == ["Emma"])
            #expect(try reopened.graphObject("Tag", "classic").members("books").isEmpty)
            #expect(try reopened.graphCount("Book") == 2)

            // A book whose relationships were never loaded.
            try reopened.delete(try reopened.graphObject("Book", "Emma"))
            try reopened.save()
        }
        let again = try harness.reopened()
        try again.performAndWait { () throws in
            #expect(try again.graphObject("Author", "X").members("books").isEmpty)
            #expect(try again.graphObject("Tag", "sf").members("books").isEmpty)
        }
        #expect(try harness.scalar("SELECT count(*) FROM \"_Book_tags\"") == 0)
        #expect(try harness.scalar("SELECT count(*) FROM \"Book\"") == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func cascadeDeletesTheBooksOfADeletedAuthor(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = try harness.reopened()
        try context.performAndWait { () throws in
            let x = try context.graphObject("Author", "X")
            #expect(x.relationshipState("books") == .notLoaded)
            try context.delete(x)
            #expect(context.deletedObjects.map(\.label).sorted() == ["Dune", "Emma", "X"])
            try context.save()
            #expect(try context.graphAll("Book").map(\.label) == ["Kim"])
            #expect(try context.graphObject("Tag", "sf").members("books").isEmpty)
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphAll("Book").map(\.label) == ["Kim"])
            #expect(try reopened.graphAll("Author").map(\.label) == ["Y"])
            #expect(try reopened.graphObject("Author", "Y").members("books") == ["Kim"])
            #expect(try reopened.graphObject("Tag", "sf").members("books").isEmpty)
            #expect(try reopened.graphObject("Tag", "classic").members("books").isEmpty)
            #expect(try reopened.graphCount("Tag") == 2)
        }
        #expect(try harness.scalar("SELECT count(*) FROM \"_Book_tags\"") == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func denyRefusesToDeleteAPublisherWithAuthors(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seed(harness) { context in
            let ace = try context.insertNamed("Publisher", "Ace")
            let tor = try context.insertNamed("Publisher", "Tor")
            try ace.addRelatedObject(try context.insertNamed("Author", "X"), forKey: "authors")
            try ace.addRelatedObject(try context.insertNamed("Author", "Y"), forKey: "authors")
            try tor.addRelatedObject(try context.insertNamed("Author", "Z"), forKey: "authors")
        }
        let context = harness.context()
        try context.performAndWait { () throws in
            let ace = try context.graphObject("Publisher", "Ace")
            try context.delete(ace)
            let error = expectError(.relationshipViolation) { try context.save() }
            #expect(error?.key == "authors")
            #expect(error?.entityName == "Publisher")
            #expect(error?.objectID == ace.objectID)
        }
        let check = try harness.reopened()
        try check.performAndWait { () throws in
            #expect(try check.graphCount("Publisher") == 2)
            #expect(try check.graphObject("Author", "X").relatedLabel("publisher") == "Ace")
        }
        try context.performAndWait { () throws in
            context.rollback()
            let ace = try context.graphObject("Publisher", "Ace")
            #expect(!ace.isDeleted)
            #expect(try ace.sortedMembers("authors") == ["X", "Y"])
            // Once it has no authors, it can go.
            try context.graphObject("Author", "X").setRelatedObject(nil, forKey: "publisher")
            try ace.removeRelatedObject(try context.graphObject("Author", "Y"), forKey: "authors")
            try context.delete(ace)
            // Deleted together with its authors, a publisher may go too.
            try context.delete(try context.graphObject("Author", "Z"))
            try context.delete(try context.graphObject("Publisher", "Tor"))
            try context.save()
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphCount("Publisher") == 0)
            #expect(try reopened.graphAll("Author").map(\.label).sorted() == ["X", "Y"])
            #expect(try reopened.graphObject("Author", "X").relatedObject(forKey: "publisher") == nil)
            #expect(try reopened.graphObject("Author", "Y").relatedObject(forKey: "publisher") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func noActionLeavesTheRelatedObjectsAlone(kind: StoreKind) throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Owner", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("pets", destination: "Pet", inverse: "owner", toMany: true, deleteRule: .noAction)
                ]),
            EntityDescription(
                name: "Pet", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("owner", destination: "Owner", inverse: "pets")
                ]),
        ])
        let harness = try GraphHarness(kind, model: model)
        try seed(harness) { context in
            let ann = try context.insertNamed("Owner", "Ann")
            try ann.addRelatedObject(try context.insertNamed("Pet", "Rex"), forKey: "pets")
            try ann.addRelatedObject(try context.insertNamed("Pet", "Tom"), forKey: "pets")
        }
        let annKey = try harness.scalar("SELECT _pk FROM \"Owner\"")
        let context = harness.context()
        try context.performAndWait { () throws in
            let ann = try context.graphObject("Owner", "Ann")
            let rex = try context.graphObject("Pet", "Rex")
            #expect(try rex.relatedObject(forKey: "owner") === ann)
            try context.delete(ann)
            #expect(!rex.isDeleted)
            #expect(try rex.relatedObject(forKey: "owner") === ann) // not nullified
            #expect(!rex.hasChanges)
            try context.save()
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphAll("Pet").map(\.label).sorted() == ["Rex", "Tom"])
            #expect(try reopened.graphCount("Owner") == 0)
        }
        // The pets' rows were not touched: they still hold the deleted owner's key.
        #expect(try harness.scalar("SELECT count(*) FROM \"Pet\" WHERE owner = \(annKey)") == 2)
    }

    // MARK: Validation

    private static func validationModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Team", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("members", destination: "Player", inverse: "team", toMany: true, minCount: 1, maxCount: 2)
                ]),
            EntityDescription(
                name: "Player", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("team", destination: "Team", inverse: "members"),
                    RelationshipDescription("badges", destination: "Badge", inverse: "holder", toMany: true),
                ]),
            EntityDescription(
                name: "Badge", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("holder", destination: "Player", inverse: "badges", isOptional: false)
                ]),
        ])
    }

    @Test(arguments: StoreKind.allCases)
    func toManyCountsAreValidatedAtSave(kind: StoreKind) throws {
        let harness = try GraphHarness(kind, model: try Self.validationModel())
        let context = harness.context()
        try context.performAndWait { () throws in
            let red = try context.insertNamed("Team", "Red")
            let tooFew = expectError(.relationshipViolation) { try context.save() }
            #expect(tooFew?.key == "members")
            #expect(tooFew?.message.contains("members") == true)
            #expect(red.isInserted)

            let ann = try context.insertNamed("Player", "Ann")
            try red.addRelatedObject(ann, forKey: "members")
            try context.save()

            let bob = try context.insertNamed("Player", "Bob")
            let cid = try context.insertNamed("Player", "Cid")
            try red.addRelatedObject(bob, forKey: "members")
            try cid.setRelatedObject(red, forKey: "team")
            let tooMany = expectError(.relationshipViolation) { try context.save() }
            #expect(tooMany?.key == "members")
            #expect(bob.isInserted)
        }
        let check = try harness.reopened()
        try check.performAndWait { () throws in
            #expect(try check.graphAll("Player").map(\.label) == ["Ann"])
        }
        try context.performAndWait { () throws in
            try context.graphObject("Team", "Red").removeRelatedObject(try context.graphObject("Player", "Cid"), forKey: "members")
            try context.save()
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            let red = try reopened.graphObject("Team", "Red")
            #expect(try red.sortedMembers("members") == ["Ann", "Bob"])
            #expect(try reopened.graphCount("Player") == 3)
            // Emptying a saved team is refused too.
            try red.setRelatedObjects([], forKey: "members")
            expectError(.relationshipViolation) { try reopened.save() }
            reopened.rollback()
            #expect(try red.sortedMembers("members") == ["Ann", "Bob"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aRequiredToOneMustBeSet(kind: StoreKind) throws {
        let harness = try GraphHarness(kind, model: try Self.validationModel())
        let context = harness.context()
        try context.performAndWait { () throws in
            let gold = try context.insertNamed("Badge", "gold")
            let error = expectError(.missingRequiredValue) { try context.save() }
            #expect(error?.key == "holder")
            #expect(error?.entityName == "Badge")
            #expect(error?.message.contains("holder") == true)
            let ann = try context.insertNamed("Player", "Ann")
            let red = try context.insertNamed("Team", "Red")
            try red.addRelatedObject(ann, forKey: "members")
            try gold.setRelatedObject(ann, forKey: "holder")
            try context.save()
        }
        let second = harness.context()
        try second.performAndWait { () throws in
            let ann = try second.graphObject("Player", "Ann")
            try ann.removeRelatedObject(try second.graphObject("Badge", "gold"), forKey: "badges")
            let error = expectError(.missingRequiredValue) { try second.save() }
            #expect(error?.key == "holder")
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphObject("Badge", "gold").relatedLabel("holder") == "Ann")
        }
    }

    // MARK: Errors

    @Test func misusesThrowPreciseErrors() throws {
        let harness = try GraphHarness(.memory)
        let context = harness.context()
        let other = harness.context()
        try context.performAndWait { () throws in
            let x = try context.insertNamed("Author", "X")
            let dune = try context.insertNamed("Book", "Dune")
            let tag = try context.insertNamed("Tag", "sf")
            let shelf = try context.insertNamed("Shelf", "S")
            let a = try context.insertNamed("Book", "a")
            let b = try context.insertNamed("Book", "b")
            try shelf.setRelatedObjects([a, b], forKey: "items")

            try other.performAndWait { () throws in
                let foreign = try other.insertNamed("Author", "Foreign")
                let foreignBook = try other.insertNamed("Book", "Foreign")
                expectError(.objectNotInContext) { try dune.setRelatedObject(foreign, forKey: "author") }
                expectError(.objectNotInContext) { try x.addRelatedObject(foreignBook, forKey: "books") }
                expectError(.objectNotInContext) { try x.setRelatedObjects([dune, foreignBook], forKey: "books") }
                expectError(.objectNotInContext) { try shelf.insertRelatedObject(foreignBook, at: 0, forKey: "items") }
            }

            let wrong = expectError(.wrongValueType) { try dune.setRelatedObject(tag, forKey: "author") }
            #expect(wrong?.key == "author")
            expectError(.wrongValueType) { try x.addRelatedObject(tag, forKey: "books") }
            expectError(.wrongValueType) { try x.setRelatedObjects([tag], forKey: "books") }
            expectError(.wrongValueType) { try shelf.insertRelatedObject(x, at: 0, forKey: "items") }

            expectError(.unknownAttribute) { _ = try x.relatedObject(forKey: "books") }
            expectError(.unknownAttribute) { try x.setRelatedObject(dune, forKey: "books") }
            expectError(.unknownAttribute) { _ = try dune.relatedObjects(forKey: "author") }
            expectError(.unknownAttribute) { try dune.addRelatedObject(x, forKey: "author") }
            expectError(.unknownAttribute) { _ = try x.relatedObjects(forKey: "novels") }
            expectError(.unknownAttribute) { try x.setRelatedObject(dune, forKey: "name") }

            try x.addRelatedObject(dune, forKey: "books")
            expectError(.invalidArgument) { try x.insertRelatedObject(a, at: 0, forKey: "books") }
            expectError(.invalidArgument) { try x.moveRelatedObject(from: 0, to: 0, forKey: "books") }
            expectError(.invalidArgument) { try shelf.insertRelatedObject(dune, at: 3, forKey: "items") }
            expectError(.invalidArgument) { try shelf.insertRelatedObject(dune, at: -1, forKey: "items") }
            expectError(.invalidArgument) { try shelf.moveRelatedObject(from: 2, to: 0, forKey: "items") }
            expectError(.invalidArgument) { try shelf.moveRelatedObject(from: 0, to: -1, forKey: "items") }

            // Nothing changed.
            #expect(try dune.relatedObject(forKey: "author") === x)
            #expect(try x.members("books") == ["Dune"])
            #expect(try a.relatedObject(forKey: "author") == nil)
            #expect(try shelf.members("items") == ["a", "b"])
            #expect(try dune.relatedObject(forKey: "shelf") == nil)
            #expect(try tag.members("books").isEmpty)
            // The last position is allowed.
            try shelf.insertRelatedObject(dune, at: 2, forKey: "items")
            #expect(try shelf.members("items") == ["a", "b", "Dune"])
        }
    }

    // MARK: Across contexts

    @Test(arguments: StoreKind.allCases)
    func anotherContextSeesSavedRelationshipsAfterItsMerge(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let reader = harness.context()
        let writer = harness.context()
        // The reader has the graph loaded, and keeps its objects (no fetch later reloads them).
        let ids = try reader.performAndWait { () throws -> [String: ObjectID] in
            let x = try reader.graphObject("Author", "X")
            let y = try reader.graphObject("Author", "Y")
            let dune = try reader.graphObject("Book", "Dune")
            let kim = try reader.graphObject("Book", "Kim")
            let sf = try reader.graphObject("Tag", "sf")
            #expect(try x.sortedMembers("books") == ["Dune", "Emma"])
            #expect(try y.members("books") == ["Kim"])
            #expect(try dune.relatedLabel("author") == "X")
            #expect(try sf.sortedMembers("books") == ["Dune", "Emma"])
            #expect(try kim.members("tags").isEmpty)
            return ["X": x.objectID, "Y": y.objectID, "Dune": dune.objectID, "Kim": kim.objectID, "sf": sf.objectID]
        }
        try writer.performAndWait { () throws in
            let dune = try writer.graphObject("Book", "Dune")
            try dune.setRelatedObject(try writer.graphObject("Author", "Y"), forKey: "author")
            let sofia = try writer.insertNamed("Book", "Sofia")
            try sofia.setRelatedObject(try writer.graphObject("Author", "X"), forKey: "author")
            try writer.graphObject("Book", "Kim").addRelatedObject(try writer.graphObject("Tag", "sf"), forKey: "tags")
            try writer.save()
        }
        // performAndWait runs after the merge the writer's save queued on the reader.
        try reader.performAndWait { () throws in
            func object(_ label: String) throws -> EntityObject { try reader.registered(ids, label) }
            #expect(try object("Dune").relatedObject(forKey: "author") === (try object("Y")))
            #expect(try object("X").sortedMembers("books") == ["Emma", "Sofia"])
            #expect(try object("Y").sortedMembers("books") == ["Dune", "Kim"])
            #expect(try object("sf").sortedMembers("books") == ["Dune", "Emma", "Kim"])
            #expect(try object("Kim").members("tags") == ["sf"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func relatingToObjectsDeletedElsewhereLeavesNoDanglingReference(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = harness.context()
        let other = harness.context()
        try context.performAndWait { () throws in
            let y = try context.graphObject("Author", "Y")
            let classic = try context.graphObject("Tag", "classic")
            #expect(try y.members("books") == ["Kim"])
            #expect(try classic.members("books") == ["Dune"])
            // Meanwhile another context deletes Y (Kim goes by cascade) and the tag.
            try other.performAndWait { () throws in
                try other.delete(try other.graphObject("Author", "Y"))
                try other.delete(try other.graphObject("Tag", "classic"))
                try other.save()
            }
            // This context, not merged yet, relates new and saved books to them.
            let sofia = try context.insertNamed("Book", "Sofia")
            try sofia.setRelatedObject(y, forKey: "author")
            try context.graphObject("Book", "Emma").addRelatedObject(classic, forKey: "tags")
            do throws(SkerryError) {
                try context.save()
            } catch {
                #expect(error.code == .mergeConflict, "\(error)") // refusing the save is fine
            }
        }
        // Whatever happened, nothing in the store points at the deleted rows.
        #expect(
            try harness.scalar("SELECT count(*) FROM \"Book\" WHERE author IS NOT NULL AND author NOT IN (SELECT _pk FROM \"Author\")") == 0
        )
        #expect(
            try harness.scalar(
                "SELECT count(*) FROM \"_Book_tags\" WHERE target NOT IN (SELECT _pk FROM \"Tag\") OR source NOT IN (SELECT _pk FROM \"Book\")"
            ) == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func childContextsCarryRelationshipsToTheStore(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let parent = harness.context()
        let child = parent.newChildContext()
        try child.performAndWait { () throws in
            let herbert = try child.insertNamed("Author", "Herbert")
            let messiah = try child.insertNamed("Book", "Messiah")
            try herbert.addRelatedObject(messiah, forKey: "books")
            try messiah.addRelatedObject(try child.graphObject("Tag", "sf"), forKey: "tags")
            // Saved objects too: Dune moves to Herbert, Kim gets a shelf.
            try child.graphObject("Book", "Dune").setRelatedObject(herbert, forKey: "author")
            let shelf = try child.insertNamed("Shelf", "S")
            try shelf.addRelatedObject(try child.graphObject("Book", "Kim"), forKey: "items")
            try shelf.insertRelatedObject(messiah, at: 0, forKey: "items")
            try child.save()
        }
        try parent.performAndWait { () throws in
            let herbert = try parent.graphObject("Author", "Herbert")
            #expect(try herbert.sortedMembers("books") == ["Dune", "Messiah"])
            #expect(try parent.graphObject("Author", "X").members("books") == ["Emma"])
            #expect(try parent.graphObject("Tag", "sf").sortedMembers("books") == ["Dune", "Emma", "Messiah"])
            try parent.save()
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphObject("Author", "Herbert").sortedMembers("books") == ["Dune", "Messiah"])
            #expect(try reopened.graphObject("Author", "X").members("books") == ["Emma"])
            #expect(try reopened.graphObject("Book", "Dune").relatedLabel("author") == "Herbert")
            #expect(try reopened.graphObject("Book", "Messiah").members("tags") == ["sf"])
            #expect(try reopened.graphObject("Tag", "sf").sortedMembers("books") == ["Dune", "Emma", "Messiah"])
            #expect(try reopened.graphObject("Shelf", "S").members("items") == ["Messiah", "Kim"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackRestoresRelationships(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = harness.context()
        try context.performAndWait { () throws in
            let x = try context.graphObject("Author", "X")
            let y = try context.graphObject("Author", "Y")
            let dune = try context.graphObject("Book", "Dune")
            let sf = try context.graphObject("Tag", "sf")
            #expect(try x.sortedMembers("books") == ["Dune", "Emma"])
            #expect(try dune.sortedMembers("tags") == ["classic", "sf"])

            try y.addRelatedObject(dune, forKey: "books")
            let sofia = try context.insertNamed("Book", "Sofia")
            try x.addRelatedObject(sofia, forKey: "books")
            try sf.removeRelatedObject(dune, forKey: "books")
            try context.delete(try context.graphObject("Book", "Emma"))
            #expect(try x.members("books") == ["Sofia"])

            context.rollback()
            #expect(!context.hasChanges)
            #expect(sofia.context == nil)
            #expect(try x.sortedMembers("books") == ["Dune", "Emma"])
            #expect(try y.members("books") == ["Kim"])
            #expect(try dune.relatedObject(forKey: "author") === x)
            #expect(try dune.sortedMembers("tags") == ["classic", "sf"])
            #expect(try sf.sortedMembers("books") == ["Dune", "Emma"])
            // Nothing to save.
            try context.save()
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphObject("Author", "X").sortedMembers("books") == ["Dune", "Emma"])
            #expect(try reopened.graphCount("Book") == 3)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func refreshWithoutMergingReloadsRelationships(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = harness.context()
        context.automaticallyMergesChangesFromParent = false
        let ids = try context.performAndWait { () throws -> [String: ObjectID] in
            let x = try context.graphObject("Author", "X")
            let y = try context.graphObject("Author", "Y")
            let dune = try context.graphObject("Book", "Dune")
            let emma = try context.graphObject("Book", "Emma")
            #expect(try x.sortedMembers("books") == ["Dune", "Emma"])
            #expect(try y.members("books") == ["Kim"])
            #expect(try dune.sortedMembers("tags") == ["classic", "sf"])

            // Pending changes are dropped.
            try x.removeRelatedObject(emma, forKey: "books")
            #expect(try emma.relatedObject(forKey: "author") == nil)
            try context.refresh(x, mergeChanges: false)
            try context.refresh(emma, mergeChanges: false)
            #expect(!x.hasChanges)
            #expect(!emma.hasChanges)
            #expect(try x.sortedMembers("books") == ["Dune", "Emma"])
            #expect(try emma.relatedObject(forKey: "author") === x)
            return ["X": x.objectID, "Y": y.objectID, "Dune": dune.objectID]
        }
        let writer = harness.context()
        try writer.performAndWait { () throws in
            let dune = try writer.graphObject("Book", "Dune")
            try dune.setRelatedObject(try writer.graphObject("Author", "Y"), forKey: "author")
            try dune.removeRelatedObject(try writer.graphObject("Tag", "classic"), forKey: "tags")
            try writer.save()
        }
        try context.performAndWait { () throws in
            let x = try context.registered(ids, "X")
            let y = try context.registered(ids, "Y")
            let dune = try context.registered(ids, "Dune")
            // Not merged: the context still has what it loaded.
            #expect(try x.sortedMembers("books") == ["Dune", "Emma"])
            for object in [x, y, dune] { try context.refresh(object, mergeChanges: false) }
            #expect(try x.members("books") == ["Emma"])
            #expect(try y.sortedMembers("books") == ["Dune", "Kim"])
            #expect(try dune.relatedObject(forKey: "author") === y)
            #expect(try dune.members("tags") == ["sf"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func oneContextSavesRelationshipChangesOfTheSameObjectsRepeatedly(kind: StoreKind) throws {
        let harness = try GraphHarness(kind)
        try seedLibrary(harness)
        let context = harness.context()
        try context.performAndWait { () throws in
            /// Makes a change and saves it; a failure is recorded, and the context goes back to the store's state.
            func save(_ what: String, _ change: () throws -> Void) {
                do {
                    try change()
                    try context.save()
                } catch {
                    Issue.record("Saving \(what) failed: \(error)")
                    context.rollback()
                    for object in context.registeredObjects { try? context.refresh(object, mergeChanges: false) }
                }
            }
            let dune = try context.graphObject("Book", "Dune")
            let x = try context.graphObject("Author", "X")
            let y = try context.graphObject("Author", "Y")
            let sf = try context.graphObject("Tag", "sf")
            let shelf = try context.insertNamed("Shelf", "S")
            // Each save changes only relationships of objects an earlier save of this context wrote.
            save("a new shelf") { try shelf.setRelatedObjects([dune, try context.graphObject("Book", "Kim")], forKey: "items") }
            save("Dune's move to Y") { try dune.setRelatedObject(y, forKey: "author") }
            save("Dune's move back to X") { try dune.setRelatedObject(x, forKey: "author") }
            save("Dune losing sf") { try dune.removeRelatedObject(sf, forKey: "tags") }
            save("Dune getting sf back") { try dune.addRelatedObject(sf, forKey: "tags") }
            save("a move on the shelf") { try shelf.moveRelatedObject(from: 0, to: 1, forKey: "items") }
            save("another move on the shelf") { try shelf.moveRelatedObject(from: 0, to: 1, forKey: "items") }
        }
        let reopened = try harness.reopened()
        try reopened.performAndWait { () throws in
            #expect(try reopened.graphObject("Book", "Dune").relatedLabel("author") == "X")
            #expect(try reopened.graphObject("Book", "Dune").sortedMembers("tags") == ["classic", "sf"])
            #expect(try reopened.graphObject("Shelf", "S").members("items") == ["Dune", "Kim"])
        }
    }

    // MARK: Migration

    @Test func addingARelationshipMigratesTheStore() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Graph.sqlite")
        do {
            let stack = try GraphHarness.openStack(url, model: GraphFixtures.model(tags: .absent))
            let context = stack.newBackgroundContext()
            try context.performAndWait { () throws in
                let x = try context.insertNamed("Author", "X")
                let shelf = try context.insertNamed("Shelf", "S")
                for title in ["Dune", "Emma"] {
                    let book = try context.insertNamed("Book", title)
                    try x.addRelatedObject(book, forKey: "books")
                    try shelf.insertRelatedObject(book, at: 0, forKey: "items")
                }
                try context.save()
            }
        }
        let model = GraphFixtures.model()
        do {
            let stack = try GraphHarness.openStack(url, model: model)
            let context = stack.newBackgroundContext()
            try context.performAndWait { () throws in
                // The old relationships are intact.
                #expect(try context.graphObject("Author", "X").sortedMembers("books") == ["Dune", "Emma"])
                #expect(try context.graphObject("Shelf", "S").members("items") == ["Emma", "Dune"])
                // The new one starts empty and works.
                let dune = try context.graphObject("Book", "Dune")
                #expect(try dune.members("tags").isEmpty)
                let sf = try context.insertNamed("Tag", "sf")
                try dune.addRelatedObject(sf, forKey: "tags")
                try context.graphObject("Book", "Emma").addRelatedObject(sf, forKey: "tags")
                #expect(try sf.sortedMembers("books") == ["Dune", "Emma"])
                try context.save()
            }
        }
        let stack = try GraphHarness.openStack(url, model: model)
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            #expect(try context.graphObject("Tag", "sf").sortedMembers("books") == ["Dune", "Emma"])
            #expect(try context.graphObject("Book", "Emma").members("tags") == ["sf"])
            #expect(try context.graphObject("Author", "X").sortedMembers("books") == ["Dune", "Emma"])
        }
        #expect(try rawSQL(url, "SELECT count(*) FROM _Book_tags") == [["2"]])
    }

    @Test func removingARelationshipMigratesTheRows() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Graph.sqlite")
        do {
            let stack = try GraphHarness.openStack(url, model: GraphFixtures.model())
            let context = stack.newBackgroundContext()
            try context.performAndWait { () throws in
                let dune = try context.insertNamed("Book", "Dune")
                try dune.addRelatedObject(try context.insertNamed("Tag", "sf"), forKey: "tags")
                try context.save()
            }
        }
        // Tag stays, but Book.tags <-> Tag.books goes.
        let reduced = GraphFixtures.model(tags: .unrelated)
        // Lightweight migration drops the relationship and keeps every row.
        let stack = PersistentStack(name: "Graph", model: reduced)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            #expect(try context.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title", as: String.self) } == ["Dune"])
            #expect(try context.fetch(FetchRequest(entityName: "Tag")).map { try $0.value(forKey: "label", as: String.self) } == ["sf"])
        }
        #expect(try rawSQL(url, "SELECT count(*) FROM sqlite_master WHERE name = '_Book_tags'") == [["0"]])
    }
}
