// The examples of docs/*.md, verbatim between the `// doc:` markers. Keep both in step: a guide's
// example is code that runs here.
import Foundation
import SkerryCore
import Testing

// doc: shared-stack
final class SharedStack: PersistentStack, @unchecked Sendable {
    // `@unchecked Sendable`: adds no state to PersistentStack, whose invariant holds.
    override class func defaultDirectoryURL() -> URL {
        URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("skerry-shared", isDirectory: true)
    }
}
// doc: end

@Suite struct DocExamplesTests {
    @Test func sharedStackUsesItsDirectory() throws {
        let model = try ObjectModel(entities: [EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string)])])
        let name = "Shared-\(UUID().uuidString)"
        let stack = SharedStack(name: name, model: model)
        try stack.loadPersistentStores()
        let expected = SharedStack.defaultDirectoryURL().appendingPathComponent("\(name).sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: expected.path + suffix) } }
        #expect(stack.persistentStoreDescriptions.first?.url == expected)
        #expect(FileManager.default.fileExists(atPath: expected.path))
    }

    /// Every `// doc:` block of the test files appears verbatim (dedented) in some guide of docs/.
    @Test func guidesQuoteTheseExamples() throws {
        let thisFile = URL(fileURLWithPath: #filePath)
        let root = thisFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let docsFolder = root.appendingPathComponent("docs")
        let guides = try FileManager.default.contentsOfDirectory(atPath: docsFolder.path)
            .filter { $0.hasSuffix(".md") }
            .map { try String(contentsOf: docsFolder.appendingPathComponent($0), encoding: .utf8) }
            .joined(separator: "\n")
        let testsFolder = root.appendingPathComponent("Tests")
        let testFiles = (FileManager.default.enumerator(atPath: testsFolder.path)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".swift") }.sorted().map { testsFolder.appendingPathComponent($0) }
        let lines = try testFiles.flatMap {
            try String(contentsOf: $0, encoding: .utf8).components(separatedBy: "\n")
        }
        var blocks: [String: [String]] = [:]
        var current: (name: String, lines: [String])?
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// doc: ") {
                let name = String(trimmed.dropFirst("// doc: ".count))
                if name == "end", let block = current {
                    blocks[block.name] = block.lines
                    current = nil
                } else {
                    current = (name, [])
                }
            } else if current != nil {
                current!.lines.append(line)
            }
        }
        #expect(blocks.count >= 20)
        for (name, block) in blocks {
            let indent =
                block.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                .map { $0.prefix { $0 == " " }.count }.min() ?? 0
            let text = block.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }.joined(separator: "\n")
            #expect(guides.contains(text), "docs/ does not quote the example '\(name)' of DocExamplesTests.swift verbatim")
        }
    }

    @Test func gettingStarted() throws {
        let directory = TemporaryDirectory()
        // doc: getting-started
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription("title", .string),
                    AttributeDescription("year", .integer32, isOptional: true),
                    AttributeDescription("isbn", .string, isOptional: true),
                ], uniquenessConstraints: [["isbn"]], indexes: [IndexDescription(["year"])])
        ])

        let stack = PersistentStack(name: "Library", model: model)
        stack.persistentStoreDescriptions = [StoreDescription(url: directory.file("Library.sqlite"))]
        try stack.loadPersistentStores()

        let context = stack.newBackgroundContext()
        let titles = try context.performAndWait {
            for (title, year) in [("Dune", 1965), ("Solaris", 1961), ("Neuromancer", 1984)] {
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(Int32(year), forKey: "year")
            }
            try context.save()

            let request = FetchRequest(
                entityName: "Book",
                predicate: AttributeKey("year") < 1970,
                sortKeys: [SortKey("year")])
            return try context.fetch(request).map { try $0.value(forKey: "title", as: String.self) }
        }
        // titles == ["Solaris", "Dune"]
        // doc: end
        #expect(titles == ["Solaris", "Dune"])
    }

    @Test func contextsLifecycle() async throws {
        let stack = try makeMemoryStack()
        // doc: contexts-lifecycle
        let context = stack.newBackgroundContext()
        let savedID = try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            precondition(book.objectID.isTemporary) // temporary until saved
            try context.save()
            return book.objectID // permanent now; IDs are Sendable
        }

        // Another context finds the same row by ID; objects themselves never cross contexts.
        let title = try await stack.performBackgroundTask { other in
            try other.existingObject(with: savedID).value(forKey: "title", as: String.self)
        }

        try context.performAndWait {
            let book = try context.existingObject(with: savedID)
            try book.setValue("Dune Messiah", forKey: "title")
            context.rollback() // back to "Dune"
            try book.setValue(Int32(1965), forKey: "year")
            try context.save() // writes the year column only
            context.reset() // forgets every object
        }
        // doc: end
        #expect(title == "Dune")
        let year = try await stack.performBackgroundTask { other in
            try other.existingObject(with: savedID).value(forKey: "year", as: Int32?.self)
        }
        #expect(year == 1965)
    }

    @Test func failedSave() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("First", isbn: "0-441-17271-7")
            try context.save()
        }
        // doc: failed-save
        try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try book.setValue("0-441-17271-7", forKey: "isbn") // already taken
            do {
                try context.save()
            } catch let error as SkerryError where error.code == .constraintViolation {
                // Nothing was written; the insert is still pending, with its temporary ID.
                precondition(error.objectID == book.objectID && book.isInserted)
                try book.setValue("0-441-17271-8", forKey: "isbn")
                try context.save()
            }
        }
        // doc: end
        let count = try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) }
        #expect(count == 2)
    }

    @Test func queries() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Dune", year: 1965)
            try context.insertBook("Dune Messiah", year: 1969)
            try context.insertBook("Crème de la crème", year: 2001)
            try context.insertBook("Solaris", year: nil)
            try context.save()
        }
        // doc: queries
        let result = try context.performAndWait {
            let dune = AttributeKey("title").beginsWith("dune", options: .caseInsensitive)
            let sixties = AttributeKey("year").between(Int32(1960)...Int32(1969))
            var request = FetchRequest(entityName: "Book", predicate: dune && sixties)
            request.sortKeys = [SortKey("year", ascending: false)]
            request.fetchLimit = 1
            let newest = try context.fetch(request).first?.value(forKey: "title", as: String.self)

            let accents = AttributeKey("title").contains("creme", options: [.caseInsensitive, .diacriticInsensitive])
            let undated = try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("year").isNil))
            let titles = try context.fetchDictionaries(
                {
                    var r = FetchRequest(entityName: "Book", predicate: accents || AttributeKey("year") == Int32(1965))
                    r.propertiesToFetch = ["title"]
                    r.sortKeys = [SortKey("title")]
                    return r
                }())
            return (newest, undated, titles.map { $0["title"] })
        }
        // result == ("Dune Messiah", 1, [.string("Crème de la crème"), .string("Dune")])
        // doc: end
        #expect(result.0 == "Dune Messiah")
        #expect(result.1 == 1)
        #expect(result.2 == [.string("Crème de la crème"), .string("Dune")])
    }

    @Test func batchDelete() throws {
        let stack = try makeMemoryStack()
        let viewContext = stack.viewContext
        let background = stack.newBackgroundContext()
        try background.performAndWait {
            for year in [1950, 1960, 1990] as [Int32] { try background.insertBook("B\(year)", year: year) }
            try background.save()
        }
        _ = try viewContext.performAndWait { try viewContext.fetch(FetchRequest(entityName: "Book")) }
        // doc: batch-delete
        let deleted = try background.performAndWait {
            try background.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("year") < 1970))
        }
        // deleted.count == 2; live contexts still show those objects until the IDs are merged:
        viewContext.performAndWait {
            viewContext.mergeChanges(deleted.changes)
        }
        // doc: end
        #expect(deleted.count == 2)
        let left = try viewContext.performAndWait {
            (try viewContext.fetch(FetchRequest(entityName: "Book")).count, viewContext.registeredObjects.count)
        }
        #expect(left.0 == 1 && left.1 == 1)
    }

    @Test func batchInsert() throws {
        let stack = try makeMemoryStack()
        let viewContext = stack.viewContext
        let background = stack.newBackgroundContext()
        let json: [[String: Any]] = [
            ["title": "Dune", "isbn": "0441013597", "year": 1965],
            ["title": "Emma", "isbn": "0141439580"],
        ]
        // doc: batch-insert
        var request = BatchInsertRequest(entityName: "Book", objects: json)
        request.resultType = .objectIDs
        let result = try background.performAndWait { try background.execute(request) }
        // live contexts see the new objects once the IDs are merged:
        ObjectContext.mergeChanges(
            fromRemoteContextSave: [InsertedObjectsKey: result.result as? [ObjectID] ?? []], into: [viewContext])
        // doc: end
        #expect(result.count == 2)
        let titles = try viewContext.performAndWait {
            try viewContext.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title", as: String.self) }.sorted()
        }
        #expect(titles == ["Dune", "Emma"])
    }

    @Test func batchUpdate() throws {
        let stack = try makeMemoryStack()
        let viewContext = stack.viewContext
        let background = stack.newBackgroundContext()
        try background.performAndWait {
            for year in [1950, 1960, 1990] as [Int32] { try background.insertBook("B\(year)", year: year) }
            try background.save()
        }
        let books = try viewContext.performAndWait { try viewContext.fetch(FetchRequest(entityName: "Book")) }
        // doc: batch-update
        var request = BatchUpdateRequest(entityName: "Book", predicate: AttributeKey("year") < 1970)
        request.propertiesToUpdate = ["inPrint": false, "sales": BatchUpdateExpression(forKeyPath: "year")]
        request.resultType = .updatedObjectIDsResultType
        let result = try background.performAndWait { try background.execute(request) }
        // result.count == 2; live contexts keep the old values until the IDs are merged:
        ObjectContext.mergeChanges(fromRemoteContextSave: [UpdatedObjectsKey: result.updatedObjectIDs], into: [viewContext])
        // doc: end
        #expect(result.count == 2)
        let outOfPrint = try viewContext.performAndWait {
            try books.filter { try !$0.value(forKey: "inPrint", as: Bool.self) }.map { try $0.value(forKey: "sales", as: Int64.self) }
        }
        #expect(outOfPrint.sorted() == [1950, 1960])
    }

    @Test func didSaveEvents() async throws {
        let stack = try makeMemoryStack()
        // doc: did-save
        let events = stack.didSaveEvents // subscribe before saving
        let listener = Task {
            for await event in events {
                return event.changes.inserted.count // the first save's inserts
            }
            return 0
        }
        let background = stack.newBackgroundContext()
        try await background.perform {
            try background.insert(entityName: "Book").setValue("Dune", forKey: "title")
            try background.save()
        }
        let inserted = await listener.value // 1
        // doc: end
        #expect(inserted == 1)
    }

    @Test func automaticMerging() throws {
        let stack = try makeMemoryStack()
        let background = stack.newBackgroundContext()
        let id = try background.performAndWait {
            let book = try background.insertBook("Dune")
            try background.save()
            return book.objectID
        }
        // doc: auto-merge
        let view = stack.viewContext // merges other saves by itself
        let book = try view.performAndWait { try view.existingObject(with: id) }
        try background.performAndWait {
            try background.existingObject(with: id).setValue("Dune Messiah", forKey: "title")
            try background.save() // queues the merge on the view context
        }
        let title = try view.performAndWait { try book.value(forKey: "title", as: String.self) }
        // title == "Dune Messiah"
        // doc: end
        #expect(title == "Dune Messiah")
    }

    @Test func mergePolicyUpsert() throws {
        let stack = try makeMemoryStack()
        try stack.viewContext.performAndWait {
            try stack.viewContext.insertBook("Dune", year: 1965, isbn: "0-441-17271-7")
            try stack.viewContext.save()
        }
        // doc: merge-policy
        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let changes = try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune (new cover)", forKey: "title")
            try book.setValue("0-441-17271-7", forKey: "isbn") // already in the store
            return try context.save() // updates that row: an upsert
        }
        // changes.inserted is empty and changes.updated holds the existing row's ID; the row takes
        // every value of the new object, nil and defaults too: its year (1965) is now nil.
        // doc: end
        #expect(changes.inserted.isEmpty && changes.updated.count == 1)
        let row = try stack.viewContext.performAndWait {
            let books = try stack.viewContext.fetch(FetchRequest(entityName: "Book"))
            return try books.map {
                "\(try $0.value(forKey: "title", as: String.self)) \(try $0.value(forKey: "year", as: Int32?.self) ?? 0)"
            }
        }
        #expect(row == ["Dune (new cover) 0"])
    }

    @Test func nestedContexts() throws {
        let stack = try makeMemoryStack()
        // doc: nested-stack
        let persisting = stack.newBackgroundContext() // writes to the store
        let main = persisting.newChildContext(name: "main") // the context the app reads
        func save() throws { // one save that saves both
            try main.performAndWait { try main.save() }
            try persisting.performAndWait { try persisting.save() }
        }

        let editor = main.newChildContext(name: "editor") // a short-lived write context
        try editor.performAndWait {
            let book = try editor.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try editor.save() // into main only
        }
        let seenByMain = try main.performAndWait { try main.count(for: FetchRequest(entityName: "Book")) } // 1
        try save() // main -> persisting -> store
        // doc: end
        #expect(seenByMain == 1)
        #expect(try stack.viewContext.performAndWait { try stack.viewContext.count(for: FetchRequest(entityName: "Book")) } == 1)
    }

    @Test func relationships() throws {
        // doc: relationships
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Author", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true, deleteRule: .cascade)
                ]),
            EntityDescription(
                name: "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [
                    RelationshipDescription("author", destination: "Author", inverse: "books")
                ]),
        ])
        let stack = PersistentStack(name: "Library", model: model)
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        let (titles, booksLeft) = try context.performAndWait {
            let herbert = try context.insert(entityName: "Author")
            try herbert.setValue("Frank Herbert", forKey: "name")
            for title in ["Dune", "Dune Messiah"] {
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setRelatedObject(herbert, forKey: "author") // herbert's "books" follows
            }
            try context.save()
            let titles = try herbert.relatedObjects(forKey: "books").map { try $0.value(forKey: "title", as: String.self) }
            try context.delete(herbert) // cascade: the books go too
            try context.save()
            return (titles, try context.count(for: FetchRequest(entityName: "Book")))
        }
        // titles == ["Dune", "Dune Messiah"], booksLeft == 0
        // doc: end
        #expect(titles == ["Dune", "Dune Messiah"] && booksLeft == 0)
    }

    @Test func xcodeModelAndMigrationPlan() throws {
        let modelURL = FixtureFiles.url("Library.xcdatamodeld")
        let directory = TemporaryDirectory()
        let storeURL = directory.file("Library.sqlite")
        do { // a store written by an older version of the app
            let stack = PersistentStack(name: "Library", model: try XcodeModel(contentsOf: modelURL).load(version: "Library 1").model)
            stack.persistentStoreDescriptions = [StoreDescription(url: storeURL)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let book = try context.insert(entityName: "Book")
                try book.setValue("Dune", forKey: "title")
                try book.setValue(Int16(1965), forKey: "year")
                try book.setValue(995.0, forKey: "price")
                try context.save()
            }
        }
        // doc: xcode-migration
        let package = try XcodeModel(contentsOf: modelURL) // the app's Library.xcdatamodeld
        let versions = try package.loadAllVersions() // Library 1 … Library 4
        let plan = MigrationPlan(
            versions: versions.map(\.model),
            steps: [
                MigrationStep(
                    from: 0,
                    transformRow: { entity, old, new in // 1 -> 2: year Integer 16 -> String
                        if entity == "Book", case .int(let year) = old["year"] { new["year"] = .string(String(year)) }
                    }),
                MigrationStep(
                    from: 1,
                    transformRow: { entity, old, new in // 2 -> 3: price in cents -> euros
                        if entity == "Book", case .double(let cents) = old["price"] { new["price"] = .double(cents / 100) }
                    }),
            ], progress: { step, steps in print("migrating: step \(step) of \(steps)") }) // 3 -> 4 is automatic

        let stack = PersistentStack(name: "Library", model: try package.loadCurrentVersion().model)
        var description = StoreDescription(url: storeURL)
        description.migrationPlan = plan
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores() // runs steps 1, 2 and 3
        // doc: end
        let price = try stack.viewContext.performAndWait {
            try stack.viewContext.fetch(FetchRequest(entityName: "Book"))[0].value(forKey: "price", as: Double.self)
        }
        #expect(price == 9.95)
    }

    @Test func migrationAndStores() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        let version1 = try ObjectModel(entities: [
            EntityDescription(name: "Book", attributes: [AttributeDescription("title", .string)])
        ])
        do {
            let stack = PersistentStack(name: "Library", model: version1)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
        }
        // doc: migration
        let version2 = try ObjectModel(entities: [
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription("title", .string),
                    AttributeDescription("subtitle", .string, isOptional: true), // new, optional
                    AttributeDescription("inPrint", .boolean, defaultValue: true), // new, with a default
                ]),
            EntityDescription(name: "Author", attributes: [AttributeDescription("name", .string)]), // new entity
        ])
        let stack = PersistentStack(name: "Library", model: version2)
        var description = StoreDescription(url: url)
        description.journalMode = .wal // the default
        description.synchronous = .normal // the default
        stack.persistentStoreDescriptions = [description, .inMemory()]
        var results: [String] = []
        stack.loadPersistentStores { description, error in
            results.append("\(description.kind): \(error.map { "\($0)" } ?? "loaded")")
        }
        // results == ["sqlite: loaded", "inMemory: loaded"]

        let version3 = try ObjectModel(entities: [
            EntityDescription(name: "Book", attributes: [AttributeDescription("title", .integer64)])
        ])
        let incompatible = PersistentStack(name: "Library", model: version3)
        incompatible.persistentStoreDescriptions = [StoreDescription(url: url)]
        do {
            try incompatible.loadPersistentStores()
        } catch {
            // error.code == .modelMismatch; the message names each difference, e.g.
            // "attribute 'Book.title' changed type from string to integer64"; the file is untouched.
        }
        // doc: end
        #expect(results == ["sqlite: loaded", "inMemory: loaded"])
        #expect(throws: SkerryError.self) { try incompatible.loadPersistentStores() }
        do { try incompatible.loadPersistentStores() } catch {
            #expect(error.code == .modelMismatch)
            #expect(error.message.contains("attribute 'Book.title' changed type from string to integer64"))
        }
    }
}
