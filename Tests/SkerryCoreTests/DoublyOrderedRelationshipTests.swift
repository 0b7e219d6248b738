import Foundation
import Testing

@testable import SkerryCore

/// A many-to-many relationship ordered on both sides (`Team.sponsors` <-> `Tag.sponsored`):
/// each side keeps its own order through save, refetch, refresh, reopen, a move to another
/// store and a schema migration, on every kind of store. The join table belongs to Tag (its
/// "Entity.name" sorts first), so `Team.sponsors` is the side that does not own it.
@Suite struct DoublyOrderedRelationshipTests {
    static func model(team: String = "Team", renamedFrom: String? = nil, note: Bool = false, tagsOrdered: Bool = true) throws
        -> ObjectModel
    {
        try ObjectModel(entities: [
            EntityDescription(
                name: team,
                attributes: [AttributeDescription("name", .string)]
                    + (note ? [AttributeDescription("note", .string, isOptional: true)] : []),
                relationships: [RelationshipDescription("sponsors", destination: "Tag", inverse: "sponsored", toMany: true, ordered: true)],
                renamingIdentifier: renamedFrom),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription("label", .string)],
                relationships: [
                    RelationshipDescription("sponsored", destination: team, inverse: "sponsors", toMany: true, ordered: tagsOrdered)
                ]),
        ])
    }

    /// Each team's sponsors and each tag's teams, in their order, as "name: related…" lines
    /// sorted by name.
    static func contents(_ context: ObjectContext, team teamEntity: String = "Team") throws -> [String] {
        try context.performAndWait {
            var lines: [String] = []
            for team in try context.fetch(FetchRequest(entityName: teamEntity, sortKeys: [SortKey("name")])) {
                let sponsors = try team.relatedObjects(forKey: "sponsors").map { try $0.value(forKey: "label", as: String.self) }
                lines.append("\(try team.value(forKey: "name", as: String.self)): \(sponsors.joined(separator: " "))")
            }
            for tag in try context.fetch(FetchRequest(entityName: "Tag", sortKeys: [SortKey("label")])) {
                let teams = try tag.relatedObjects(forKey: "sponsored").map { try $0.value(forKey: "name", as: String.self) }
                lines.append("\(try tag.value(forKey: "label", as: String.self)): \(teams.joined(separator: " "))")
            }
            return lines
        }
    }

    /// What `fill` saves.
    static let filled = ["A: t3 t0 t1", "B: t1 t3", "t0: A", "t1: B A", "t2: ", "t3: B A"]

    /// Tags t0…t3 and teams A (sponsored by t3, t0, t1: not in key order) and B (t1, t3); t1's
    /// and t3's teams are B then A (the reverse of the order the teams were linked in).
    static func fill(_ context: ObjectContext, team: String = "Team") throws {
        try context.performAndWait {
            let tags = try (0..<4).map { index in
                let tag = try context.insert(entityName: "Tag")
                try tag.setValue("t\(index)", forKey: "label")
                return tag
            }
            let a = try context.insert(entityName: team), b = try context.insert(entityName: team)
            try a.setValue("A", forKey: "name")
            try b.setValue("B", forKey: "name")
            try a.setRelatedObjects([tags[3], tags[0], tags[1]], forKey: "sponsors")
            try b.setRelatedObjects([tags[1], tags[3]], forKey: "sponsors")
            try tags[1].setRelatedObjects([b, a], forKey: "sponsored")
            try tags[3].setRelatedObjects([b, a], forKey: "sponsored")
            #expect(try Self.contents(context) == Self.filled)
            try context.save()
        }
    }

    static func object(_ context: ObjectContext, _ entity: String, _ key: String, _ value: String) throws -> EntityObject {
        try #require(try context.fetch(FetchRequest(entityName: entity, predicate: AttributeKey(key) == value)).first)
    }

    /// The same pair as an app writes it: an Xcode model file as Xcode 15 saves it (a playlist's
    /// songs and a song's playlists, both "Ordered"; the join table is Playlist's), and the order
    /// set from the song's side, as `mutableOrderedSetValue(forKey: "playlists")` code sets it.
    /// Both orders hold after a save and a reopen.
    @Test(arguments: StoreKind.allCases)
    func anXcodeModelsDoublyOrderedPairKeepsTheSongsSideOrder(_ kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let folder = directory.file("Music.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23D56" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Playlist" representedClassName="Playlist" syncable="YES" codeGenerationType="class">
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="songs" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Song" inverseName="playlists" inverseEntity="Song"/>
            </entity>
            <entity name="Song" representedClassName="Song" syncable="YES" codeGenerationType="class">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="playlists" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Playlist" inverseName="songs" inverseEntity="Playlist"/>
            </entity>
        </model>
        """.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let harness = try GraphHarness(kind, model: try XcodeModel(contentsOf: folder).loadCurrentVersion().model)
        func contents(_ context: ObjectContext) throws -> [String] {
            try context.performAndWait {
                var lines: [String] = []
                for song in try context.fetch(FetchRequest(entityName: "Song", sortKeys: [SortKey("name")])) {
                    let playlists = try song.relatedObjects(forKey: "playlists").map { try $0.value(forKey: "title", as: String.self) }
                    lines.append("\(try song.value(forKey: "name", as: String.self)): \(playlists.joined(separator: " "))")
                }
                for playlist in try context.fetch(FetchRequest(entityName: "Playlist", sortKeys: [SortKey("title")])) {
                    let songs = try playlist.relatedObjects(forKey: "songs").map { try $0.value(forKey: "name", as: String.self) }
                    lines.append("\(try playlist.value(forKey: "title", as: String.self)): \(songs.joined(separator: " "))")
                }
                return lines
            }
        }
        let context = harness.context()
        try context.performAndWait {
            let playlists = try ["p0", "p1", "p2"].map { title in
                let playlist = try context.insert(entityName: "Playlist")
                try playlist.setValue(title, forKey: "title")
                return playlist
            }
            let song = try context.insert(entityName: "Song")
            try song.setValue("s", forKey: "name")
            let other = try context.insert(entityName: "Song")
            try other.setValue("t", forKey: "name")
            try playlists[1].setRelatedObjects([other, song], forKey: "songs")
            try song.setRelatedObjects([playlists[2], playlists[0], playlists[1]], forKey: "playlists")
            try context.save()
        }
        let saved = ["s: p2 p0 p1", "t: p1", "p0: s", "p1: t s", "p2: s"]
        #expect(try contents(harness.context()) == saved)
        #expect(try contents(harness.reopened()) == saved)
    }

    /// Ordered only on the side that does not own the join table (`Team.sponsors`; Tag, whose
    /// `sponsored` is unordered, owns it): the teams' order, kept in `target_order`, holds when
    /// a team's list changes, when a tag's changes (which changes the team's too), and when a
    /// tag's rows are rewritten for another team while the team keeps its list.
    @Test(arguments: StoreKind.allCases)
    func aRelationshipOrderedOnlyOnTheSideWithoutTheJoinTableKeepsItsOrder(_ kind: StoreKind) throws {
        let harness = try GraphHarness(kind, model: try Self.model(tagsOrdered: false))
        /// Each team's sponsors in their order, then each tag's teams sorted (they have no order).
        func contents(_ context: ObjectContext) throws -> [String] {
            try context.performAndWait {
                var lines: [String] = []
                for team in try context.fetch(FetchRequest(entityName: "Team", sortKeys: [SortKey("name")])) {
                    let sponsors = try team.relatedObjects(forKey: "sponsors").map { try $0.value(forKey: "label", as: String.self) }
                    lines.append("\(try team.value(forKey: "name", as: String.self)): \(sponsors.joined(separator: " "))")
                }
                for tag in try context.fetch(FetchRequest(entityName: "Tag", sortKeys: [SortKey("label")])) {
                    let teams = try tag.relatedObjects(forKey: "sponsored").map { try $0.value(forKey: "name", as: String.self) }
                    lines.append("\(try tag.value(forKey: "label", as: String.self)): \(teams.sorted().joined(separator: " "))")
                }
                return lines
            }
        }
        let context = harness.context()
        try context.performAndWait {
            let tags = try (0..<4).map { index in
                let tag = try context.insert(entityName: "Tag")
                try tag.setValue("t\(index)", forKey: "label")
                return tag
            }
            let a = try context.insert(entityName: "Team"), b = try context.insert(entityName: "Team")
            try a.setValue("A", forKey: "name")
            try b.setValue("B", forKey: "name")
            try a.setRelatedObjects([tags[3], tags[0], tags[1]], forKey: "sponsors")
            try b.setRelatedObjects([tags[1], tags[3]], forKey: "sponsors")
            try context.save()
        }
        let filled = ["A: t3 t0 t1", "B: t1 t3", "t0: A", "t1: A B", "t2: ", "t3: A B"]
        #expect(try contents(harness.context()) == filled)
        #expect(try contents(harness.reopened()) == filled)

        try context.performAndWait {
            try Self.object(context, "Team", "name", "A").moveRelatedObject(from: 1, to: 0, forKey: "sponsors") // t0 t3 t1
            let b = try Self.object(context, "Team", "name", "B")
            try Self.object(context, "Tag", "label", "t3").removeRelatedObject(b, forKey: "sponsored")
            try Self.object(context, "Tag", "label", "t0").addRelatedObject(b, forKey: "sponsored") // B: t1 t0
            try context.save()
        }
        let changed = ["A: t0 t3 t1", "B: t1 t0", "t0: A B", "t1: A B", "t2: ", "t3: A"]
        #expect(try contents(harness.context()) == changed)
        #expect(try contents(harness.reopened()) == changed)

        try context.performAndWait {
            // t1's rows are written for C; A and B, whose lists hold t1, are not saved.
            let c = try context.insert(entityName: "Team")
            try c.setValue("C", forKey: "name")
            try Self.object(context, "Tag", "label", "t1").addRelatedObject(c, forKey: "sponsored")
            try context.save()
        }
        let added = ["A: t0 t3 t1", "B: t1 t0", "C: t1", "t0: A B", "t1: A B C", "t2: ", "t3: A"]
        #expect(try contents(harness.context()) == added)
        #expect(try contents(harness.reopened()) == added)
    }

    @Test(arguments: StoreKind.allCases)
    func bothSidesKeepTheirOrderThroughSaveRefetchAndReopen(_ kind: StoreKind) throws {
        let harness = try GraphHarness(kind, model: try Self.model())
        try Self.fill(harness.context())
        #expect(try Self.contents(harness.context()) == Self.filled)
        #expect(try Self.contents(harness.reopened()) == Self.filled)
    }

    @Test(arguments: StoreKind.allCases)
    func reorderingOnlyTheSideWithoutTheJoinTableIsSaved(_ kind: StoreKind) throws {
        let harness = try GraphHarness(kind, model: try Self.model())
        try Self.fill(harness.context())
        let context = harness.context()
        try context.performAndWait {
            let a = try Self.object(context, "Team", "name", "A")
            try a.moveRelatedObject(from: 1, to: 0, forKey: "sponsors") // t3 t0 t1 -> t0 t3 t1
            try context.save()
        }
        let expected = ["A: t0 t3 t1", "B: t1 t3", "t0: A", "t1: B A", "t2: ", "t3: B A"]
        #expect(try Self.contents(harness.context()) == expected)
        #expect(try Self.contents(harness.reopened()) == expected)
    }

    @Test(arguments: StoreKind.allCases)
    func changesOnTheOwningSideKeepTheOrderOfTeamsThatWereNotSaved(_ kind: StoreKind) throws {
        let harness = try GraphHarness(kind, model: try Self.model())
        try Self.fill(harness.context())
        let context = harness.context()
        try context.performAndWait {
            // t0 takes B first (B's sponsors get t0 at the end); A is not changed, and its
            // sponsors t3 t0 t1 must keep their order although t0's links are rewritten.
            let t0 = try Self.object(context, "Tag", "label", "t0")
            let b = try Self.object(context, "Team", "name", "B")
            try t0.insertRelatedObject(b, at: 0, forKey: "sponsored")
            // t2 takes A: A's sponsors get t2 at the end.
            let t2 = try Self.object(context, "Tag", "label", "t2")
            try t2.addRelatedObject(try Self.object(context, "Team", "name", "A"), forKey: "sponsored")
            try context.save()
        }
        let expected = ["A: t3 t0 t1 t2", "B: t1 t3 t0", "t0: B A", "t1: B A", "t2: A", "t3: B A"]
        #expect(try Self.contents(harness.context()) == expected)
        #expect(try Self.contents(harness.reopened()) == expected)

        try context.performAndWait {
            // t3 drops A; B moves ahead in t1's list by a change that touches only t1.
            let t3 = try Self.object(context, "Tag", "label", "t3")
            try t3.removeRelatedObject(try Self.object(context, "Team", "name", "A"), forKey: "sponsored")
            let t1 = try Self.object(context, "Tag", "label", "t1")
            try t1.moveRelatedObject(from: 1, to: 0, forKey: "sponsored")
            try context.save()
        }
        let after = ["A: t0 t1 t2", "B: t1 t3 t0", "t0: B A", "t1: A B", "t2: A", "t3: B"]
        #expect(try Self.contents(harness.context()) == after)
        #expect(try Self.contents(harness.reopened()) == after)
    }

    @Test(arguments: StoreKind.allCases)
    func aRefreshReadsTheOrderAnotherContextSaved(_ kind: StoreKind) throws {
        let harness = try GraphHarness(kind, model: try Self.model())
        try Self.fill(harness.context())
        let reader = harness.context()
        let a = try reader.performAndWait {
            let a = try Self.object(reader, "Team", "name", "A")
            #expect(try a.relatedObjects(forKey: "sponsors").count == 3)
            return a
        }
        let writer = harness.context()
        try writer.performAndWait {
            let a = try Self.object(writer, "Team", "name", "A")
            let tags = try a.relatedObjects(forKey: "sponsors")
            try a.setRelatedObjects(tags.reversed(), forKey: "sponsors") // t1 t0 t3
            try writer.save()
        }
        try reader.performAndWait {
            try reader.refresh(a, mergeChanges: false)
            #expect(try a.relatedObjects(forKey: "sponsors").map { try $0.value(forKey: "label", as: String.self) } == ["t1", "t0", "t3"])
        }
        #expect(try Self.contents(harness.reopened()).first == "A: t1 t0 t3")
    }

    /// The store moves into a SQLite file, into memory (unless it is in memory), and (with a test
    /// server) into PostgreSQL: the new store holds both orders.
    @Test(arguments: StoreKind.allCases)
    func aStoreMovedToAnotherStoreKeepsBothOrders(_ kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        var destinations = [StoreDescription(url: directory.file("Moved.sqlite"))]
        if kind != .memory { destinations.append(.inMemory()) }
        if PostgresTestServer.isAvailable { destinations.append(try PostgresTestStore.newDescription()) }
        for destination in destinations {
            let harness = try GraphHarness(kind, model: try Self.model())
            try Self.fill(harness.context())
            let coordinator = harness.stack.persistentStoreCoordinator
            let moved = try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: destination)
            #expect(moved.kind == destination.kind)
            #expect(try Self.contents(harness.stack.newBackgroundContext()) == Self.filled, "\(kind) -> \(destination.kind)")
        }
    }

    /// A schema migration that renames Team to Club moves the join table to Club (whose
    /// "Entity.name" now sorts first), with each side's order in the other column; one that only
    /// adds an attribute leaves the join table as it is. Both orders arrive. Each stack removes
    /// its store before the next one opens it, as an app does: no migration runs while another
    /// stack holds the store.
    @Test(arguments: StoreKind.allCases.filter { $0 != .memory })
    func aSchemaMigrationKeepsBothOrders(_ kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Sponsors.sqlite")
        let description = kind == .postgres ? try PostgresTestStore.newDescription() : StoreDescription(url: url)
        /// Opens the store with `model`, runs `body` with the stack, then removes the store.
        func withStack<T>(_ model: ObjectModel, _ body: (PersistentStack) throws -> T) throws -> T {
            let stack = PersistentStack(name: "Sponsors", model: model)
            stack.persistentStoreDescriptions = [description]
            try stack.loadPersistentStores()
            let result = try body(stack)
            let coordinator = stack.persistentStoreCoordinator
            for store in coordinator.persistentStores { try coordinator.remove(store) }
            #expect(coordinator.persistentStores.isEmpty)
            return result
        }
        try withStack(try Self.model()) { try Self.fill($0.newBackgroundContext()) }
        try withStack(try Self.model(note: true)) { (added) throws in
            #expect(try Self.contents(added.newBackgroundContext()) == Self.filled)
        }
        try withStack(try Self.model(team: "Club", renamedFrom: "Team", note: true)) { (renamed) throws in
            #expect(try Self.contents(renamed.newBackgroundContext(), team: "Club") == Self.filled)
            // The renamed store goes on keeping both orders.
            let context = renamed.newBackgroundContext()
            try context.performAndWait {
                let a = try Self.object(context, "Club", "name", "A")
                try a.moveRelatedObject(from: 2, to: 0, forKey: "sponsors") // t1 t3 t0
                try context.save()
            }
        }
        let expected = ["A: t1 t3 t0", "B: t1 t3", "t0: A", "t1: B A", "t2: ", "t3: B A"]
        try withStack(try Self.model(team: "Club", renamedFrom: "Team", note: true)) { (reopened) throws in
            #expect(try Self.contents(reopened.newBackgroundContext(), team: "Club") == expected)
        }
    }
}
