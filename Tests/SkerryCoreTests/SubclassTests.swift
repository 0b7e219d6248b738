import Foundation
import SkerryCore // not @testable: subclassing EntityObject must work from another module
import Synchronization
import Testing

// Core Data code with NSManagedObject subclasses, ported: the classes declare computed
// properties over EntityObject's typed subscripts where Core Data declares @NSManaged ones (they
// need the Objective-C runtime: on Linux they compile and fail to link), and are registered for
// their entities where the Xcode model names them.

// doc: subclass-declaration
final class Author: EntityObject {
    var name: String? {
        get { self[attribute: "name"] }
        set { self[attribute: "name"] = newValue }
    }
    var books: Set<Book> {
        get { self[toMany: "books"] }
        set { self[toMany: "books"] = newValue }
    }
}

final class Book: EntityObject {
    var title: String? {
        get { self[attribute: "title"] }
        set { self[attribute: "title"] = newValue }
    }
    var year: Int {
        get { self[attribute: "year"] }
        set { self[attribute: "year"] = newValue }
    }
    var author: Author? {
        get { self[toOne: "author"] }
        set { self[toOne: "author"] = newValue }
    }
}
// doc: end

/// A playlist with an ordered to-many relationship (Core Data's `NSOrderedSet`).
final class Playlist: EntityObject {
    var tracks: [Track] {
        get { self[orderedToMany: "tracks"] }
        set { self[orderedToMany: "tracks"] = newValue }
    }
}

final class Track: EntityObject {
    var name: String? {
        get { self[attribute: "name"] }
        set { self[attribute: "name"] = newValue }
    }
}

/// A class whose `deinit` runs user code on its object: it records whether it still had a context.
/// Used by one test only (the record is shared).
final class Sketch: EntityObject {
    static let deinitSawContext = Mutex<[Bool]>([])
    var name: String? {
        get { self[attribute: "name"] }
        set { self[attribute: "name"] = newValue }
    }
    deinit {
        name = nil // a property set as the object goes: must not reach the context
        let hadContext = managedObjectContext != nil
        Self.deinitSawContext.withLock { $0.append(hadContext) }
    }
}

/// The playlist model: playlists of tracks, in order.
private func playlistStack() throws -> PersistentStack {
    let model = try ObjectModel(entities: [
        EntityDescription(
            name: "Playlist", attributes: [],
            relationships: [RelationshipDescription("tracks", destination: "Track", inverse: "playlists", toMany: true, ordered: true)]),
        EntityDescription(
            name: "Track", attributes: [AttributeDescription("name", .string, isOptional: true)],
            relationships: [RelationshipDescription("playlists", destination: "Playlist", inverse: "tracks", toMany: true)]),
    ])
    try model.setManagedObjectClass(Playlist.self, forEntityName: "Playlist")
    try model.setManagedObjectClass(Track.self, forEntityName: "Track")
    let stack = PersistentStack(name: "Playlists", model: model)
    stack.persistentStoreDescriptions = [.inMemory()]
    try stack.loadPersistentStores()
    return stack
}

/// A class with a stored property: it cannot represent an entity.
final class CachingBook: EntityObject {
    var cachedTitle = ""
}

/// A hierarchy of classes for a hierarchy of entities.
class Media: EntityObject {
    var title: String? { self[attribute: "title"] }
}
final class Film: Media {}
final class Podcast: EntityObject {}

/// Named module-qualified by an Xcode model written by the tests.
final class ShelfNote: EntityObject {}

/// The library model: authors and their books.
private func libraryModel() throws -> ObjectModel {
    try ObjectModel(entities: [
        EntityDescription(
            name: "Author", attributes: [AttributeDescription("name", .string, isOptional: true)],
            relationships: [RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)]),
        EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription("title", .string, isOptional: true),
                AttributeDescription("year", .integer64, defaultValue: 0),
            ],
            relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")]),
    ])
}

/// A stack on `store` whose model makes Author and Book objects.
private func libraryStack(_ store: StoreDescription) throws -> PersistentStack {
    // doc: subclass-registration
    let model = try libraryModel()
    try model.setManagedObjectClass(Author.self, forEntityName: "Author")
    try model.setManagedObjectClass(Book.self, forEntityName: "Book")
    // doc: end
    let stack = PersistentStack(name: "Library", model: model)
    stack.persistentStoreDescriptions = [store]
    try stack.loadPersistentStores()
    return stack
}

@Suite struct SubclassTests {
    @Test func coreDataStylePortOnASQLiteFile() throws {
        let directory = TemporaryDirectory()
        let stack = try libraryStack(StoreDescription(url: directory.file("Library.sqlite")))
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            // doc: subclass-use
            let herbert = try Author(context: writer)
            herbert.name = "Frank Herbert"
            let dune = try Book(context: writer)
            dune.title = "Dune"
            dune.year = 1965
            dune.author = herbert
            try writer.save()
            // doc: end
            #expect(herbert.books == [dune])
            let inserted = try EntityDescription.insertNewObject(forEntityName: "Book", into: writer)
            let messiah = try #require(inserted as? Book)
            messiah.title = "Dune Messiah"
            messiah.author = herbert
            let entity = try #require(EntityDescription.entity(forEntityName: "Book", in: writer))
            let children = try Book(entity: entity, insertInto: writer)
            children.title = "Children of Dune"
            try writer.save()
        }
        // A new stack on the same file: every object it makes is of its entity's class.
        let reopened = try libraryStack(StoreDescription(url: directory.file("Library.sqlite")))
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            var request = Book.fetchRequest()
            request.sortKeys = [SortKey("title")]
            let fetched = try reader.fetch(request)
            let books = try #require(fetched as? [Book])
            #expect(books.map(\.title) == ["Children of Dune", "Dune", "Dune Messiah"])
            #expect(books[1].year == 1965 && books[0].year == 0)
            // The relationship's destination comes as a fault of its class.
            let herbert = try #require(books[1].author)
            #expect(herbert.isFault)
            #expect(herbert.name == "Frank Herbert" && !herbert.isFault)
            #expect(Set(herbert.books.map(\.title)) == ["Dune", "Dune Messiah"])
            #expect(books[0].author == nil)
            // Set and saved through the properties (Xcode's generated addToBooks(_:) and
            // removeFromBooks(_:) become insert and remove), read back through key-value coding.
            herbert.books.insert(books[0])
            herbert.books.remove(books[2])
            books[0].year = 1976
            try reader.save()
            #expect(reader.recordedError == nil)
            #expect(try books[0].value(forKey: "year", as: Int.self) == 1976)
            #expect(try books[0].relatedObject(forKey: "author") === herbert)
            #expect(books[2].author == nil)
            #expect(Set(try herbert.relatedObjects(forKey: "books")) == [books[0], books[1]])
        }
    }

    @Test func classesFromAnotherModuleOnSQLiteFiles() throws {
        let directory = TemporaryDirectory()
        func stack() throws -> PersistentStack {
            let stack = PersistentStack(name: "Records", model: try SubclassScenarios.model())
            stack.persistentStoreDescriptions = [StoreDescription(url: directory.file("Records.sqlite"))]
            try stack.loadPersistentStores()
            return stack
        }
        try SubclassScenarios.roundTrip(stack(), reopened: stack())
    }

    @Test func everyPathMakesObjectsOfTheClass() throws {
        let stack = try libraryStack(.inMemory())
        let context = stack.newBackgroundContext()
        let (bookID, authorID) = try context.performAndWait {
            let author = try Author(context: context)
            author.name = "Le Guin"
            let book = try Book(context: context)
            book.title = "The Dispossessed"
            book.author = author
            try context.save()
            return (book.objectID, author.objectID)
        }
        let other = stack.newBackgroundContext()
        try other.performAndWait {
            // A fault made from an ID, then loaded by a property.
            let fault = other.object(with: bookID)
            #expect(fault is Book && fault.isFault)
            #expect((fault as? Book)?.title == "The Dispossessed")
            #expect(try other.existingObject(with: authorID) is Author)
            // Turned back into a fault: still the same object, of the same class.
            try other.refresh(fault, mergeChanges: false)
            #expect(fault.isFault && (fault as? Book)?.author?.name == "Le Guin")
        }
        // A child context's objects, and the parent's objects made by the child's save.
        let child = context.newChildContext()
        let newID = try child.performAndWait {
            let book = try #require(try child.existingObject(with: bookID) as? Book)
            #expect(book.author?.name == "Le Guin")
            let sequel = try Book(context: child)
            sequel.title = "The Word for World Is Forest"
            sequel.author = book.author
            try child.save()
            return sequel.objectID
        }
        try context.performAndWait {
            let sequel = try #require(context.registeredObject(for: newID) as? Book)
            #expect(sequel.title == "The Word for World Is Forest")
            #expect(sequel.author?.books.count == 2)
            try context.save()
        }
        // A merged save reaches the view context's objects, which stay of their class.
        let view = stack.viewContext
        let watched = try view.performAndWait { try #require(try view.existingObject(with: authorID) as? Author) }
        try context.performAndWait {
            let author = try #require(try context.existingObject(with: authorID) as? Author)
            author.name = "Ursula K. Le Guin"
            try context.save()
        }
        view.performAndWait {
            #expect(watched.name == "Ursula K. Le Guin")
            #expect(watched.books.allSatisfy { $0.author === watched })
        }
    }

    @Test func aClassWithAStoredPropertyIsRefused() throws {
        let model = try libraryModel()
        let error = expectError(.invalidArgument) { try model.setManagedObjectClass(CachingBook.self, forEntityName: "Book") }
        #expect(error?.message.contains("stored properties") == true)
        let entity = try #require(model.entity(named: "Book"))
        #expect(entity.managedObjectClass == EntityObject.self)
        expectError(.unknownEntity) { try model.setManagedObjectClass(Book.self, forEntityName: "Shelf") }
    }

    @Test func initializersCheckTheEntityAndTheContext() throws {
        let stack = PersistentStack(name: "Library", model: try libraryModel())
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            // Not registered: no entity is represented by the class.
            expectError(.unknownEntity) { _ = try Book(context: context) }
            let bookEntity = try #require(context.model.entity(named: "Book"))
            expectError(.wrongValueType) { _ = try Book(entity: bookEntity, insertInto: context) }
            expectError(.invalidArgument) { _ = try Book(entity: bookEntity, insertInto: nil) }
            #expect(context.insertedObjects.isEmpty)
            // Without classes, objects are EntityObjects, as before.
            let plain = try context.insert(entityName: "Book")
            #expect(type(of: plain) == EntityObject.self)
        }
        // The class of an entity in use is fixed.
        let error = expectError(.invalidArgument) { try stack.model.setManagedObjectClass(Book.self, forEntityName: "Book") }
        #expect(error?.message.contains("already made") == true)
        // One class for two entities: init(context:) cannot choose.
        let model = try libraryModel()
        try model.setManagedObjectClass(Podcast.self, forEntityName: "Author")
        try model.setManagedObjectClass(Podcast.self, forEntityName: "Book")
        let twice = PersistentStack(name: "Twice", model: model)
        twice.persistentStoreDescriptions = [.inMemory()]
        try twice.loadPersistentStores()
        let twiceContext = twice.newBackgroundContext()
        twiceContext.performAndWait {
            expectError(.invalidArgument) { _ = try Podcast(context: twiceContext) }
        }
    }

    @Test func propertyErrorsAreRecordedOnTheContext() throws {
        let stack = try libraryStack(.inMemory())
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try Book(context: context)
            book.title = "Solaris"
            let missing: String? = book[attribute: "subtitle"]
            #expect(missing == nil)
            let error = try #require(context.recordedError as? SkerryError)
            #expect(error.code == .unknownAttribute)
            expectError(.unknownAttribute) { try context.save() }
            context.rollback()
            let author = try Author(context: context)
            let wrong: Author? = author[toOne: "books"] // a to-many relationship
            #expect(wrong == nil && context.recordedError != nil)
        }
    }

    @Test func theResultTypeMakesAFetchTyped() throws {
        let stack = try libraryStack(.inMemory())
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try Book(context: context)
            book.title = "Dune"
            try context.save()
            // doc: subclass-typed-fetch
            let books: [Book] = try context.fetch(Book.fetchRequest())
            // doc: end
            #expect(books.map(\.title) == ["Dune"])
            // Without a result type, the fetch is the engine's: [EntityObject].
            let objects = try context.fetch(Book.fetchRequest())
            #expect(objects.count == 1 && objects[0] === books[0])
            // A class the entity's objects are not: a typed error, nothing returned.
            expectError(.invalidArgument) {
                let _: [Author] = try context.fetch(Book.fetchRequest())
            }
        }
    }

    @Test func anOrderedRelationshipKeepsTheArraysOrder() throws {
        let stack = try playlistStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let playlist = try Playlist(context: context)
            let names = (0..<8).map { "track \($0)" }
            var tracks: [Track] = []
            for name in names.reversed() {
                let track = try Track(context: context)
                track.name = name
                tracks.append(track)
            }
            playlist.tracks = tracks
            try context.save()
            #expect(playlist.tracks.map(\.name) == names.reversed().map { $0 })
            // A set has no order to keep: setting an ordered relationship through one is an error.
            playlist[toMany: "tracks"] = Set(tracks.prefix(2))
            #expect((context.recordedError as? SkerryError)?.code == .invalidArgument)
            #expect(playlist.tracks.count == 8)
        }
    }

    @Test func aSubclassDeinitFindsItsObjectOutOfItsContext() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Sketch", attributes: [AttributeDescription("name", .string, isOptional: true)])
        ])
        try model.setManagedObjectClass(Sketch.self, forEntityName: "Sketch")
        let stack = PersistentStack(name: "Sketches", model: model)
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        Sketch.deinitSawContext.withLock { $0 = [] }
        do {
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                for i in 0..<3 {
                    let sketch = try Sketch(context: context)
                    sketch.name = "sketch \(i)"
                }
                try context.save()
                // The sketches are held by the context alone: reset frees them.
                context.reset()
            }
        }
        // Each deinit ran with its object out of the context, and setting a property there did not
        // stop the process.
        #expect(Sketch.deinitSawContext.withLock { $0 } == [false, false, false])
    }

    @Test func nonOptionalPropertiesReadMissingValuesAsCoreDataDoes() throws {
        let stack = try libraryStack(.inMemory())
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try Book(context: context)
            // A missing string or number through a non-optional property: "" and 0, no error.
            let title: String = book[attribute: "title"]
            book[attribute: "year"] = Int?.none
            #expect(title == "" && book.year == 0)
            #expect(context.recordedError == nil)
            book.year = 1961
            // Any other failure reads as an empty value and is recorded: the save refuses.
            let published: Date = book[attribute: "published"]
            #expect(published == Date(timeIntervalSinceReferenceDate: 0))
            #expect((context.recordedError as? SkerryError)?.code == .unknownAttribute)
            expectError(.unknownAttribute) { try context.save() }
            context.rollback()
            let other = try Book(context: context)
            other.title = "Solaris"
            let count: Int = other[attribute: "title"]
            #expect(count == 0)
            #expect((context.recordedError as? SkerryError)?.code == .wrongValueType)
            context.rollback()
            // A type the attribute cannot hold is an error even while the attribute is empty.
            let empty = try Book(context: context)
            let number: Int = empty[attribute: "title"]
            #expect(number == 0)
            #expect((context.recordedError as? SkerryError)?.code == .wrongValueType)
        }
    }

    @Test func entityHierarchiesTakeNestedClasses() throws {
        let media = EntityDescription(name: "Media", attributes: [AttributeDescription("title", .string)], isAbstract: true)
        let film = EntityDescription(name: "Film", attributes: [], superentity: media)
        let podcast = EntityDescription(name: "Podcast", attributes: [], superentity: media)
        let model = try ObjectModel(entities: [media, film, podcast])
        try model.setManagedObjectClass(Media.self, forEntityName: "Media")
        // A sub-entity's class must be a subclass of its superentity's.
        expectError(.invalidArgument) { try model.setManagedObjectClass(Podcast.self, forEntityName: "Podcast") }
        try model.setManagedObjectClass(Film.self, forEntityName: "Film")
        // ... and a superentity's class a superclass of its sub-entities' classes.
        expectError(.invalidArgument) { try model.setManagedObjectClass(Podcast.self, forEntityName: "Media") }
        #expect(film.managedObjectClass == Film.self && podcast.managedObjectClass == Media.self)
        #expect(film.managedObjectClassName == String(reflecting: Film.self))
        let stack = PersistentStack(name: "Media", model: model)
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            // A sub-entity without a class of its own takes its superentity's.
            let show = try context.insert(entityName: "Podcast")
            try show.setValue("Radiolab", forKey: "title")
            let movie = try Film(context: context)
            try movie.setValue("Stalker", forKey: "title")
            try context.save()
            #expect(type(of: show) == Media.self)
            let all = try #require(try context.fetch(FetchRequest(entityName: "Media", sortKeys: [SortKey("title")])) as? [Media])
            #expect(all.map(\.title) == ["Radiolab", "Stalker"] && all[1] is Film)
        }
    }

    @Test func xcodeModelsCarryTheirClassNames() throws {
        let shelf = try XcodeModel.loadModel(
            contentsOf: FixtureFiles.url("Shelf.xcdatamodeld").appendingPathComponent("Shelf 1.xcdatamodel"))
        let book = try #require(shelf.entity(named: "Book"))
        // Xcode's unqualified name is kept; the class must be registered on Linux.
        #expect(book.managedObjectClassName == "Book" && book.managedObjectClass == EntityObject.self)
        // doc: subclass-xcode-names
        try shelf.setManagedObjectClasses([Author.self, Book.self])
        // doc: end
        #expect(book.managedObjectClass == Book.self && book.managedObjectClassName == String(reflecting: Book.self))
        #expect(try #require(shelf.entity(named: "Author")).managedObjectClass == Author.self)
        expectError(.unknownEntity) { try shelf.setManagedObjectClasses([Media.self]) }
        let stack = PersistentStack(name: "Shelf", model: shelf)
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let shelfContext = stack.newBackgroundContext()
        try shelfContext.performAndWait {
            let author = try Author(context: shelfContext)
            author.name = "Lem"
            let solaris = try Book(context: shelfContext)
            solaris.title = "Solaris"
            solaris.author = author
            try shelfContext.save()
            #expect(author.books.map(\.title) == ["Solaris"])
        }

        // All or nothing: once Book's objects are made as EntityObject, registering Author and
        // Book together fails and leaves Author without a class too.
        let unregistered = try XcodeModel.loadModel(
            contentsOf: FixtureFiles.url("Shelf.xcdatamodeld").appendingPathComponent("Shelf 1.xcdatamodel"))
        let early = PersistentStack(name: "Early", model: unregistered)
        early.persistentStoreDescriptions = [.inMemory()]
        try early.loadPersistentStores()
        let earlyContext = early.newBackgroundContext()
        try earlyContext.performAndWait { _ = try earlyContext.insert(entityName: "Book") }
        expectError(.invalidArgument) { try unregistered.setManagedObjectClasses([Author.self, Book.self]) }
        #expect(try #require(unregistered.entity(named: "Author")).managedObjectClass == EntityObject.self)

        // A module-qualified name is looked up; a class with stored properties fails the load.
        let directory = TemporaryDirectory()
        func write(_ className: String) throws -> URL {
            let folder = directory.file("\(UUID().uuidString).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let contents = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
                    <entity name="Note" representedClassName="\(className)" syncable="YES" codeGenerationType="class">
                        <attribute name="text" attributeType="String"/>
                    </entity>
                </model>
                """
            try contents.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
            return folder
        }
        let model = try XcodeModel.loadModel(contentsOf: try write(String(reflecting: ShelfNote.self)))
        #expect(try #require(model.entity(named: "Note")).managedObjectClass == ShelfNote.self)
        let notes = PersistentStack(name: "Notes", model: model)
        notes.persistentStoreDescriptions = [.inMemory()]
        try notes.loadPersistentStores()
        let context = notes.newBackgroundContext()
        try context.performAndWait {
            let note = try ShelfNote(context: context)
            try note.setValue("found by name", forKey: "text")
            try context.save()
            #expect(try context.fetch(ShelfNote.fetchRequest()).allSatisfy { $0 is ShelfNote })
        }
        let refused = expectError(.invalidModel) {
            _ = try XcodeModel.loadModel(contentsOf: try write(String(reflecting: CachingBook.self)))
        }
        #expect(refused?.message.contains("stored properties") == true)
        let unknown = try XcodeModel.loadModel(contentsOf: try write("SkerryCoreTests.NoSuchClass"))
        #expect(try #require(unknown.entity(named: "Note")).managedObjectClass == EntityObject.self)
    }
}
