#if CommandLineTool
    import ArgumentParser
    import Foundation
    @testable import SkerryCommands
    import SkerryCore
    import Testing

    /// The `skerry` tool's commands, run on the engine's Xcode model fixtures and on real store files.
    @Suite struct CommandLineToolTests {
        /// Parses `arguments` as the tool does, runs the command, and returns what it wrote and
        /// whether it succeeded.
        func run(_ arguments: [String]) throws -> (output: [String], succeeded: Bool) {
            var command = try SkerryCommand.parseAsRoot(arguments)
            let lines = Locked<[String]>([])
            let output = CommandOutput { line in lines.update { $0.append(line) } }
            do {
                try CommandOutput.$current.withValue(output) { try command.run() }
                return (lines.value, true)
            } catch let exit as ExitCode where exit != .success {
                return (lines.value, false)
            }
        }

        /// A store of `version` of the Notes fixture holding notes with these texts.
        func notesStore(_ folder: TemporaryDirectory, version: String, texts: [String]) throws -> URL {
            let model = try XcodeModel(contentsOf: FixtureFiles.url("Notes.xcdatamodeld")).load(version: version).model
            let url = folder.file("Notes.sqlite")
            let stack = PersistentStack(name: "Notes", model: model)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                for text in texts {
                    let note = try context.insert(entityName: "Note")
                    try note.setValue(text, forKey: "text")
                }
                try context.save()
            }
            return url
        }

        @Test func modelCheckReportsWhatEachVersionHolds() throws {
            let (output, succeeded) = try run(["model", "check", FixtureFiles.url("Notes.xcdatamodeld").path])
            #expect(succeeded)
            #expect(output.first == #"Notes.xcdatamodeld: 2 versions, current "Notes 2""#)
            #expect(output.contains("    body: string"))
            #expect(output.contains("  renamed: Note.body was text"))
            #expect(output.last == "Every version can be used.")
        }

        @Test func modelCheckFailsOnAVersionItCannotUseAndSaysWhy() throws {
            let (output, succeeded) = try run(["model", "check", FixtureFiles.url("BadUnknownType.xcdatamodel").path])
            #expect(!succeeded)
            #expect(output.contains(#"version "BadUnknownType" (current): CANNOT BE USED"#))
            #expect(output.contains { $0.contains("the attribute type 'Integer 8' is unknown") })
        }

        @Test func modelCheckListsWhatItIgnores() throws {
            let (output, _) = try run(["model", "check", FixtureFiles.url("AllTypes.xcdatamodel").path])
            let ignored = try #require(output.first { $0.contains("ignored") })
            #expect(ignored.contains("1 user info dictionary"))
            #expect(ignored.contains("3 validation rules"))
        }

        @Test func storeInfoShowsHashEntitiesRowsAndIndexes() throws {
            let folder = TemporaryDirectory()
            let library = try XcodeModel(contentsOf: FixtureFiles.url("Library.xcdatamodeld")).loadCurrentVersion().model
            let url = folder.file("Library.sqlite")
            let stack = PersistentStack(name: "Library", model: library)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                for (title, isbn) in [("Dune", "1"), ("Solaris", "2")] {
                    let book = try context.insert(entityName: "Book")
                    try book.setValue(title, forKey: "title")
                    try book.setValue(isbn, forKey: "isbn")
                    try book.setValue("1960s", forKey: "year")
                }
                try context.save()
            }
            let (output, succeeded) = try run(["store", "info", url.path])
            #expect(succeeded)
            #expect(output.contains("model version hash: \(library.versionHash)"))
            #expect(output.contains("Book: 2 rows"))
            #expect(output.contains("Author: 0 rows"))
            #expect(output.contains("  unique index (isbn)"))
        }

        @Test func storeInfoRefusesAFileThatIsNotAStore() throws {
            let folder = TemporaryDirectory()
            let url = folder.file("notes.txt")
            try Data("not a database".utf8).write(to: url)
            let (output, succeeded) = try run(["store", "info", url.path])
            #expect(!succeeded)
            #expect(output.count == 1)
            #expect(try Data(contentsOf: url) == Data("not a database".utf8))
        }

        @Test func migrateRehearsesWithDryRunThenMigratesWithProgress() throws {
            let folder = TemporaryDirectory()
            let url = try notesStore(folder, version: "Notes 1", texts: ["milk", "eggs"])
            let model = try XcodeModel(contentsOf: FixtureFiles.url("Notes.xcdatamodeld"))
            let version1 = try model.load(version: "Notes 1").model, version2 = try model.load(version: "Notes 2").model

            let rehearsal = try run(["store", "migrate", url.path, "--model", FixtureFiles.url("Notes.xcdatamodeld").path, "--dry-run"])
            #expect(rehearsal.succeeded)
            #expect(rehearsal.output.contains { $0.hasPrefix(#"step 1/1: "Notes 1" -> "Notes 2""#) })
            #expect(rehearsal.output.last == "dry run: \(url.path) was not changed.")
            #expect(try StoreSummary(contentsOf: url).modelVersionHash == version1.versionHash)

            let migration = try run(["store", "migrate", url.path, "--model", FixtureFiles.url("Notes.xcdatamodeld").path])
            #expect(migration.succeeded)
            #expect(migration.output.contains { $0.hasPrefix("step 1/1") })
            #expect(try StoreSummary(contentsOf: url).modelVersionHash == version2.versionHash)
            // The renamed attribute kept its values.
            let stack = PersistentStack(name: "Notes", model: version2)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let bodies = try stack.viewContext.performAndWait {
                try stack.viewContext.fetch(FetchRequest(entityName: "Note", sortKeys: [SortKey("body")]))
                    .map { try $0.value(forKey: "body", as: String.self) }
            }
            #expect(bodies == ["eggs", "milk"])

            let again = try run(["store", "migrate", url.path, "--model", FixtureFiles.url("Notes.xcdatamodeld").path])
            #expect(again.output.last == "The store is already at the target version: nothing to do.")
        }

        @Test(arguments: [
            ["--help"], ["model", "--help"], ["model", "check", "--help"], ["store", "--help"],
            ["store", "info", "--help"], ["store", "migrate", "--help"],
        ])
        func everyCommandAnswersHelpWithoutRunning(_ arguments: [String]) throws {
            // The tool's `main` prints the message of the error the command throws and exits with its code.
            var command = try SkerryCommand.parseAsRoot(arguments)
            let lines = Locked<[String]>([])
            do {
                try CommandOutput.$current.withValue(CommandOutput { line in lines.update { $0.append(line) } }) {
                    try command.run()
                }
                Issue.record("--help ran a command")
            } catch {
                #expect(SkerryCommand.exitCode(for: error) == .success)
                #expect(SkerryCommand.fullMessage(for: error).contains("USAGE: skerry"))
            }
            #expect(lines.value.isEmpty)
        }
    }
#endif
