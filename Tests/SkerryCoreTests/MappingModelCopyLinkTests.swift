import Foundation
import Testing

@testable import SkerryCore

/// The links of the objects a second entity mapping of a source entity makes (UnCloudNotes'
/// NoteToAttachment next to NoteToNote), as Core Data's migration manager sets them: to the
/// object its entity mapping made of the source object, under the key that object has in the
/// new store, or to none when the step did not migrate it (a custom step's `keepsRow` left it
/// out); a required relationship left empty fails the migration. On SQLite files and PostgreSQL.
@Suite struct MappingModelCopyLinkTests {
    /// Notes in folders and memos; version 2 puts notes and memos under an abstract Item (keys
    /// counted apart before: the step renumbers the notes whose keys memos have) and makes
    /// attachments of the notes' photos. `required` names relationships of version 2 made
    /// required ("Attachment.note", "Note.folder"); with `covers`, folders have a cover note, and
    /// version 2 gives each note its folder's cover (`folderCover`).
    static func versions(_ directory: TemporaryDirectory, required: Set<String> = [], covers: Bool = false) throws
        -> [XcodeModelVersion]
    {
        func optional(_ name: String) -> String { required.contains(name) ? "" : "optional=\"YES\" " }
        let package = directory.file("Notes-\(required.sorted().joined(separator: "-"))\(covers ? "-covers" : "").xcdatamodeld")
        let cover =
            covers
            ? "<relationship name=\"cover\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"Note\" inverseName=\"coverOf\" inverseEntity=\"Note\"/>"
            : ""
        let coverOf =
            covers
            ? "<relationship name=\"coverOf\" optional=\"YES\" toMany=\"YES\" deletionRule=\"Nullify\" destinationEntity=\"Folder\" inverseName=\"cover\" inverseEntity=\"Folder\"/>"
            : ""
        let folderCover =
            covers
            ? """
            <relationship name="folderCover" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Note" inverseName="folderCoverOf" inverseEntity="Note"/>
            <relationship name="folderCoverOf" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folderCover" inverseEntity="Note"/>
            """ : ""
        let header = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23D56" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            """
        let v1 = """
            \(header)
                <entity name="Folder" representedClassName="Folder" syncable="YES">
                    <attribute name="name" attributeType="String" defaultValueString=""/>
                    \(cover)
                    <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
                </entity>
                <entity name="Memo" representedClassName="Memo" syncable="YES">
                    <attribute name="text" attributeType="String" defaultValueString=""/>
                </entity>
                <entity name="Note" representedClassName="Note" syncable="YES">
                    <attribute name="photo" optional="YES" attributeType="Binary"/>
                    <attribute name="text" attributeType="String" defaultValueString=""/>
                    <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
                    \(coverOf)
                </entity>
            </model>
            """
        let v2 = """
            \(header)
                <entity name="Attachment" representedClassName="Attachment" syncable="YES">
                    <attribute name="photo" attributeType="Binary"/>
                    <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="attachments" inverseEntity="Folder"/>
                    <relationship name="note" \(optional("Attachment.note"))maxCount="1" deletionRule="Nullify" destinationEntity="Note" inverseName="attachments" inverseEntity="Note"/>
                </entity>
                <entity name="Folder" representedClassName="Folder" syncable="YES">
                    <attribute name="name" attributeType="String" defaultValueString=""/>
                    \(cover)
                    <relationship name="attachments" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Attachment" inverseName="folder" inverseEntity="Attachment"/>
                    <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
                </entity>
                <entity name="Item" representedClassName="Item" isAbstract="YES" syncable="YES">
                    <attribute name="text" attributeType="String" defaultValueString=""/>
                </entity>
                <entity name="Memo" representedClassName="Memo" parentEntity="Item" syncable="YES"/>
                <entity name="Note" representedClassName="Note" parentEntity="Item" syncable="YES">
                    <attribute name="photo" optional="YES" attributeType="Binary"/>
                    <relationship name="attachments" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Attachment" inverseName="note" inverseEntity="Attachment"/>
                    <relationship name="folder" \(optional("Note.folder"))maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
                    \(coverOf)
                    \(folderCover)
                </entity>
            </model>
            """
        for (name, text) in [("Notes", v1), ("Notes 2", v2)] {
            let folder = package.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try text.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        return try XcodeModel(contentsOf: package).loadAllVersions()
    }

    /// NoteToAttachment (the notes with a photo; `attachment.note` = the note NoteToNote makes of
    /// the same note, `attachment.folder` = the folder of the note) next to NoteToNote,
    /// MemoToMemo and FolderToFolder; `filter` replaces NoteToAttachment's filter predicate.
    /// With `covers`, NoteToNote sets `folderCover` to the destination object of
    /// `$source.folder.cover`.
    static func mapping(_ directory: TemporaryDirectory, filter: String = "photo != nil", covers: Bool = false) -> XcodeMappingModel {
        typealias Entity = XcodeMappingModel.EntityMapping
        func keeping(_ name: String) -> Entity {
            Entity(
                name: "\(name)To\(name)", sourceEntityName: name, destinationEntityName: name, migrationPolicyClassName: nil,
                attributeMappings: [],
                relationshipMappings: covers && name == "Note"
                    ? [.init(name: "folderCover", valueExpression: .destinationInstances(sourceKeyPath: "folder.cover"))] : [])
        }
        let attachments = Entity(
            name: "NoteToAttachment", sourceEntityName: "Note", destinationEntityName: "Attachment", migrationPolicyClassName: nil,
            attributeMappings: [.init(name: "photo", valueExpression: .keyPath("photo"))],
            relationshipMappings: [
                .init(name: "note", valueExpression: .destinationInstances(sourceKeyPath: ""), sourceMappingName: "NoteToNote"),
                .init(name: "folder", valueExpression: .destinationInstances(sourceKeyPath: "folder")),
            ],
            sourceFilterPredicate: filter)
        return XcodeMappingModel(
            url: directory.file("NotesToNotes2.xcmappingmodel"), sourceVersionName: "Notes", destinationVersionName: "Notes 2",
            entityMappings: [attachments, keeping("Note"), keeping("Memo"), keeping("Folder")])
    }

    /// A store of version 1: memos m1 and m2 (keys 1 and 2), folders F1 and F2, notes n1 (a
    /// photo, in F2), n2 (a photo, in F1) and n3 (in F1), whose keys 1 and 2 the memos have too;
    /// with `covers`, n2 is F1's cover and n3 F2's.
    static func populate(_ description: StoreDescription, _ versions: [XcodeModelVersion], covers: Bool = false) throws {
        let stack = PersistentStack(name: "Notes", model: versions[0].model)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for text in ["m1", "m2"] { try context.insert(entityName: "Memo").setValue(text, forKey: "text") }
            var folders: [String: EntityObject] = [:]
            for name in ["F1", "F2"] {
                folders[name] = try context.insert(entityName: "Folder")
                try folders[name]?.setValue(name, forKey: "name")
            }
            try context.save()
            for (text, photo, folder) in [("n1", Data([1]), "F2"), ("n2", Data([2]), "F1"), ("n3", nil, "F1")] as [(String, Data?, String)]
            {
                let note = try context.insert(entityName: "Note")
                try note.setValue(text, forKey: "text")
                try note.setValue(photo, forKey: "photo")
                try note.setRelatedObject(folders[folder], forKey: "folder")
                try context.save() // one at a time: keys 1, 2, 3
                if covers && text != "n1" { try folders[text == "n2" ? "F1" : "F2"]?.setRelatedObject(note, forKey: "cover") }
            }
            try context.save()
        }
    }

    static func description(_ kind: StoreKind, _ directory: TemporaryDirectory, _ name: String) throws -> StoreDescription {
        kind == .postgres ? try PostgresTestStore.newDescription() : StoreDescription(url: directory.file("\(name).sqlite"))
    }

    /// Opens `description` with the last version, through `mapping` and `steps`.
    static func migrated(
        _ description: StoreDescription, _ versions: [XcodeModelVersion], _ mapping: XcodeMappingModel, steps: [MigrationStep] = []
    ) throws -> ObjectContext {
        let stack = PersistentStack(name: "Notes", model: versions[versions.count - 1].model)
        var migrating = description
        migrating.migrationPlan = try MigrationPlan(xcodeVersions: versions, mappingModels: [mapping], steps: steps)
        stack.persistentStoreDescriptions = [migrating]
        try stack.loadPersistentStores()
        return stack.newBackgroundContext()
    }

    /// Each attachment's photo, note text and folder name, by photo.
    static func attachments(_ context: ObjectContext) throws -> [[String?]] {
        try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Attachment", sortKeys: [SortKey("photo")])).map { attachment in
                [
                    try attachment.value(forKey: "photo", as: Data.self).map(String.init).joined(),
                    try attachment.relatedObject(forKey: "note")?.value(forKey: "text", as: String.self),
                    try attachment.relatedObject(forKey: "folder")?.value(forKey: "name", as: String.self),
                ]
            }
        }
    }

    /// The notes are renumbered (the memos keep keys 1 and 2 in the new Item hierarchy): each
    /// attachment links to the note it was made from under the note's new key, and to its folder.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func linksOfNewObjectsFollowRenumberedKeys(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let versions = try Self.versions(directory)
        let description = try Self.description(kind, directory, "Renumbered")
        try Self.populate(description, versions)
        let context = try Self.migrated(description, versions, Self.mapping(directory))
        #expect(try Self.attachments(context) == [["1", "n1", "F2"], ["2", "n2", "F1"]])
        try context.performAndWait {
            let items = try context.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("text")]))
            #expect(try items.map { try $0.value(forKey: "text", as: String.self) } == ["m1", "m2", "n1", "n2", "n3"])
            let notes = try context.fetch(FetchRequest(entityName: "Note", sortKeys: [SortKey("text")]))
            #expect(try notes.map { try $0.relatedObjects(forKey: "attachments").count } == [1, 1, 0])
        }
    }

    /// A custom step's `keepsRow` leaves note n2 and folder F2 out: the attachment made of n2
    /// links to no note, and the one made of n1 (in F2) to no folder, rather than to keys no row
    /// has. It is also asked about the attachments: the one it declines is not made.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func linksToRowsAKeepsRowLeftOutAreNotMade(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let versions = try Self.versions(directory)
        for declinesAttachments in [false, true] {
            let description = try Self.description(kind, directory, "LeftOut-\(declinesAttachments)")
            try Self.populate(description, versions)
            let step = MigrationStep(
                from: 0,
                keepsRow: { entity, row in
                    switch entity {
                    case "Note": return row["text"] != .string("n2")
                    case "Folder": return row["name"] != .string("F2")
                    case "Attachment": return !declinesAttachments || row["text"] != .string("n1")
                    default: return true
                    }
                })
            let context = try Self.migrated(description, versions, Self.mapping(directory), steps: [step])
            #expect(
                try Self.attachments(context) == (declinesAttachments ? [["2", nil, "F1"]] : [["1", "n1", nil], ["2", nil, "F1"]]))
            try context.performAndWait {
                let notes = try context.fetch(FetchRequest(entityName: "Note", sortKeys: [SortKey("text")]))
                #expect(try notes.map { try $0.value(forKey: "text", as: String.self) } == ["n1", "n3"])
                #expect(try notes.map { try $0.relatedObject(forKey: "folder")?.value(forKey: "name", as: String.self) } == [nil, "F1"])
            }
        }
    }

    /// A filter predicate of NoteToAttachment that Skerry cannot evaluate is left to a custom
    /// step's keepsRow (asked with "Attachment"); a custom step without one does not take it,
    /// and the plan is refused, saying what to write.
    @Test func anUnevaluableFilterOfASecondMappingNeedsTheCustomStepsKeepsRow() throws {
        let directory = TemporaryDirectory()
        let versions = try Self.versions(directory)
        let mapping = Self.mapping(directory, filter: "photo >>> 0")
        let refusal = expectError(.modelMismatch) {
            _ = try MigrationPlan(
                xcodeVersions: versions, mappingModels: [mapping],
                steps: [MigrationStep(from: 0, transformRow: { _, _, _ in })])
        }
        #expect(refusal?.key == "NoteToAttachment")
        #expect(
            refusal?.message.contains(
                "whose keepsRow, asked with the entity 'Attachment' and an old 'Note' row, returns whether the filter keeps that row")
                == true,
            "\(refusal?.message ?? "")")
        let description = StoreDescription(url: directory.file("Unevaluable.sqlite"))
        try Self.populate(description, versions)
        let step = MigrationStep(from: 0, keepsRow: { entity, row in entity != "Attachment" || row["text"] == .string("n2") })
        #expect(try Self.attachments(Self.migrated(description, versions, mapping, steps: [step])) == [["2", "n2", "F1"]])
    }

    /// A required relationship the step leaves empty fails the migration (Core Data validates
    /// the objects it migrated): the attachment made of a note `keepsRow` left out, a note whose
    /// folder it left out. The store is left as it was.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aRequiredRelationshipLeftEmptyFailsTheMigration(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        for (required, entity, key) in [("Attachment.note", "Attachment", "note"), ("Note.folder", "Note", "folder")] {
            let versions = try Self.versions(directory, required: [required])
            let description = try Self.description(kind, directory, "Required-\(entity)")
            try Self.populate(description, versions)
            let step = MigrationStep(
                from: 0,
                keepsRow: { entity, row in entity == "Attachment" || (row["text"] != .string("n2") && row["name"] != .string("F2")) })
            let error = expectError(.modelMismatch) { _ = try Self.migrated(description, versions, Self.mapping(directory), steps: [step]) }
            #expect(error?.entityName == entity && error?.key == key, "\(error?.message ?? "")")
            #expect((error?.underlyingError as? SkerryError)?.code == .missingRequiredValue)
            #expect(
                error?.message.contains("the required relationship '\(required)' is empty in 1 row(s)") == true, "\(error?.message ?? "")")
            // Untouched: version 1 still opens it, with every note.
            let stack = PersistentStack(name: "Notes", model: versions[0].model)
            stack.persistentStoreDescriptions = [description]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Note")) } == 3)
        }
    }
    /// A relationship a mapping model sets through a path (`folderCover`: the object NoteToNote
    /// made of `$source.folder.cover`) gets the key the reached note has in the new store, which
    /// only a store running the step knows. Code that calls the mapping model's transformRow
    /// outside the store's call (here on another thread) gets a clear error, rather than the old
    /// key written as is (n2's old key 2 is memo m2's now, n3's old key 3 is n1's).
    @Test func aPathAssignmentOutsideTheStoresMigrationIsRefused() throws {
        let directory = TemporaryDirectory()
        let versions = try Self.versions(directory, covers: true)
        let description = StoreDescription(url: directory.file("Elsewhere.sqlite"))
        try Self.populate(description, versions, covers: true)
        let mapped = try #require(
            try MigrationPlan(xcodeVersions: versions, mappingModels: [Self.mapping(directory, covers: true)]).steps[0])
        let transform = try #require(mapped.transformRow)
        let elsewhere = MigrationStep(
            from: 0, renamedAttributes: mapped.renamedAttributes, renamedEntities: mapped.renamedEntities,
            renamedRelationships: mapped.renamedRelationships, prepare: mapped.prepare, keepsRow: mapped.keepsRow,
            transformRow: { entity, source, row in
                let outcome = Locked<Result<MigrationRow, any Error>?>(nil)
                let done = DispatchSemaphore(value: 0)
                let start = row
                Thread {
                    var moved = start
                    outcome.update { $0 = Result { try transform(entity, source, &moved) }.map { moved } }
                    done.signal()
                }.start()
                done.wait()
                row = try outcome.value!.get()
            },
            finish: mapped.finish)
        let stack = PersistentStack(name: "Notes", model: versions[1].model)
        var migrating = description
        migrating.migrationPlan = MigrationPlan(versions: versions.map(\.model), steps: [elsewhere])
        stack.persistentStoreDescriptions = [migrating]
        let error = #expect(throws: SkerryError.self) { try stack.loadPersistentStores() }
        let reason = (error?.underlyingError as? SkerryError) ?? error
        #expect(reason?.code == .invalidArgument, "\(String(describing: error))")
        #expect(
            reason?.key == "folderCover" && reason?.message.contains("called outside the store's migration") == true,
            "\(reason?.message ?? "")")
    }

    /// A relationship optional in version 1 and required in version 2 (`Note.folder`) that a note
    /// had no link for before the step: the step with code fails the migration as before, and its
    /// message says the row may have had no link before the step (rather than blaming the step's
    /// code alone, which kept every row here).
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aRequiredRelationshipEmptyBeforeTheStepIsNotBlamedOnTheStep(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let versions = try Self.versions(directory, required: ["Note.folder"])
        let description = try Self.description(kind, directory, "EmptyBefore")
        try Self.populate(description, versions)
        let stack = PersistentStack(name: "Notes", model: versions[0].model)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insert(entityName: "Note").setValue("n4", forKey: "text") // in no folder
            try context.save()
        }
        try stack.persistentStoreCoordinator.remove(stack.persistentStoreCoordinator.persistentStores[0])
        let step = MigrationStep(from: 0, keepsRow: { _, _ in true })
        let error = expectError(.modelMismatch) { _ = try Self.migrated(description, versions, Self.mapping(directory), steps: [step]) }
        let message = error?.message ?? ""
        #expect((error?.underlyingError as? SkerryError)?.code == .missingRequiredValue)
        #expect(message.contains("the required relationship 'Note.folder' is empty in 1 row(s)"), "\(message)")
        #expect(
            message.contains("it was optional in the version left, so these may be rows that had no link before the step"), "\(message)")
    }

    /// A custom step's `finish` that links the objects it makes to rows the step carried: by
    /// the key the row has in the new store (`carriedKey(of:_:)`: note n1 was renumbered), the
    /// link holds; by the old key, which no note has now, the migration fails naming the
    /// relationship (it committed a link to nothing), and the store is left as it was.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aFinishLinksToCarriedRowsByTheirKeysInTheNewStore(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let versions = try Self.versions(directory)
        for carried in [true, false] {
            let description = try Self.description(kind, directory, "Finish-\(carried)")
            try Self.populate(description, versions)
            let step = MigrationStep(
                from: 0,
                finish: { context in
                    for note in try context.sourceRows(of: "Note") where note["text"] == .string("n1") {
                        let key = carried ? try context.carriedKey(of: "Note", note.primaryKey) : note.primaryKey
                        _ = try context.insert("Attachment", ["photo": .data(Data([9])), "note": key.map(AttributeValue.int) ?? .null])
                    }
                })
            guard carried else {
                let error = expectError(.modelMismatch) {
                    _ = try Self.migrated(description, versions, Self.mapping(directory), steps: [step])
                }
                #expect(error?.entityName == "Attachment" && error?.key == "note", "\(error?.message ?? "")")
                #expect((error?.underlyingError as? SkerryError)?.code == .relationshipViolation)
                #expect(
                    error?.message.contains("1 row(s) of 'Attachment' link 'note' to 'Note' objects the store does not have") == true,
                    "\(error?.message ?? "")")
                let stack = PersistentStack(name: "Notes", model: versions[0].model)
                stack.persistentStoreDescriptions = [description]
                try stack.loadPersistentStores()
                let context = stack.newBackgroundContext()
                #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Note")) } == 3)
                continue
            }
            let context = try Self.migrated(description, versions, Self.mapping(directory), steps: [step])
            #expect(try Self.attachments(context) == [["1", "n1", "F2"], ["2", "n2", "F1"], ["9", "n1", nil]])
        }
    }
    /// NoteToNote sets `folderCover` through a path of to-one relationships
    /// (`$source.folder.cover`) to a note the step renumbers: the link names that note under its
    /// new key (the old one is a memo's now), as the links the step carries do.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aPathOfRelationshipsReachesRenumberedObjectsByTheirNewKeys(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let versions = try Self.versions(directory, covers: true)
        let description = try Self.description(kind, directory, "Covers")
        try Self.populate(description, versions, covers: true)
        let context = try Self.migrated(description, versions, Self.mapping(directory, covers: true))
        try context.performAndWait {
            let notes = try context.fetch(FetchRequest(entityName: "Note", sortKeys: [SortKey("text")]))
            #expect(
                try notes.map { try $0.relatedObject(forKey: "folderCover")?.value(forKey: "text", as: String.self) } == ["n3", "n2", "n2"])
            let folders = try context.fetch(FetchRequest(entityName: "Folder", sortKeys: [SortKey("name")]))
            #expect(try folders.map { try $0.relatedObject(forKey: "cover")?.value(forKey: "text", as: String.self) } == ["n2", "n3"])
        }
    }
}
