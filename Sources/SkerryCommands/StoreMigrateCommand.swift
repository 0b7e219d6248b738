#if CommandLineTool
    import ArgumentParser
    import Foundation
    import SkerryCore

    /// `skerry store migrate FILE --model PATH [--dry-run]`: migrates a store to the current version
    /// of an Xcode model, step by step through the model's versions, with a line per step.
    struct StoreMigrateCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate",
            abstract: "Migrate a store to the current version of an Xcode model, or rehearse it with --dry-run.",
            discussion: """
                The store is migrated through every version of the model between the one it was written \
                with and the current one (renames declared with Xcode's renaming IDs included), or \
                automatically when the change is additive. A failed migration leaves the store as it was. \
                With --dry-run the migration runs on a copy in a temporary folder and the store is not touched.
                """)

        @Argument(help: "The SQLite store file.", completion: .file())
        var file: String

        @Option(
            help: "The Xcode model (.xcdatamodeld or .xcdatamodel) whose current version the store should reach.",
            completion: .file())
        var model: String

        @Flag(help: "Run the migration on a copy of the store and report; leave the store as it is.")
        var dryRun = false

        func run() throws {
            do {
                try migrate()
            } catch {
                say("migration failed: \(error.message)")
                throw ExitCode.failure
            }
        }

        private func migrate() throws(SkerryError) {
            let storeURL = URL(fileURLWithPath: file)
            let xcodeModel = try XcodeModel(contentsOf: URL(fileURLWithPath: model))
            let versions = try xcodeModel.loadAllVersions()
            // A package that names no current version: the error saying so.
            if xcodeModel.currentVersionName.isEmpty { _ = try xcodeModel.loadCurrentVersion() }
            guard let current = versions.first(where: { $0.name == xcodeModel.currentVersionName }) else {
                throw SkerryError(.invalidModel, "\(model) has no version named \(xcodeModel.currentVersionName).")
            }
            // The plan ends at the current version (later versions, if any, are not reached).
            let planVersions = Array(versions.prefix { $0.name != current.name }) + [current]
            let before = try StoreSummary(contentsOf: storeURL)
            let from = planVersions.first { $0.model.versionHash == before.modelVersionHash }
            say("store: \(storeURL.path)")
            say("written with: \(from.map { "\"\($0.name)\"" } ?? "a model not among these versions") (\(before.modelVersionHash))")
            say("target: \"\(current.name)\" (\(current.model.versionHash))")
            if before.modelVersionHash == current.model.versionHash {
                say("The store is already at the target version: nothing to do.")
                return
            }
            let target: URL
            let rehearsal: URL?
            if dryRun {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("skerry-dry-run-\(UUID().uuidString)")
                target = folder.appendingPathComponent(storeURL.lastPathComponent)
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: storeURL.path + suffix) {
                        try FileManager.default.copyItem(atPath: storeURL.path + suffix, toPath: target.path + suffix)
                    }
                } catch {
                    throw SkerryError(.storeLoadFailed, "Cannot copy the store for the dry run: \(error.localizedDescription)")
                }
                rehearsal = folder
                say("dry run: migrating a copy in \(folder.path)")
            } else {
                target = storeURL
                rehearsal = nil
            }
            defer {
                // The rehearsal's copy is ours to remove; failing to remove a temporary folder loses nothing.
                if let rehearsal { try? FileManager.default.removeItem(at: rehearsal) }
            }
            let stack = PersistentStack(name: current.name, model: current.model)
            var description = StoreDescription(url: target)
            if planVersions.count > 1 { description.migrationPlan = MigrationPlan(xcodeVersions: planVersions) }
            stack.persistentStoreDescriptions = [description]
            let names = Dictionary(planVersions.map { ($0.model.versionHash, $0.name) }, uniquingKeysWith: { first, _ in first })
            let observation = stack.addEventObserver { event in
                guard case .migrationStep(let step) = event else { return }
                let fromName = step.fromVersionHash.flatMap { names[$0] }.map { "\"\($0)\"" } ?? step.fromVersionHash ?? "?"
                let toName = names[step.toVersionHash].map { "\"\($0)\"" } ?? step.toVersionHash
                say(
                    "step \(step.step)/\(step.stepCount): \(fromName) -> \(toName) (\(step.summary)), \(step.duration.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))"
                )
            }
            defer { observation.cancel() }
            try stack.loadPersistentStores()
            let after = try StoreSummary(contentsOf: target)
            say(
                "done: the \(dryRun ? "copy" : "store") now records \(after.modelVersionHash); "
                    + after.entities.map { "\($0.name) \($0.rowCount)" }.joined(separator: ", "))
            if dryRun { say("dry run: \(storeURL.path) was not changed.") }
        }
    }
#endif
