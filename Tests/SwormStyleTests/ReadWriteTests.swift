import Dispatch
import Foundation
import Skerry
import Testing

@Suite struct ReadWriteTests {
    /// Insert, read, update and read again objects related every way: to-many, ordered to-many,
    /// one-to-one; with the model derived from the types and with the Xcode model file.
    @Test(arguments: [DataModels.shelf, DataModels.shelfFromXcode])
    func crud(store: StoreSetUp) throws {
        try TestDB.perform(with: store) { pc in
            let Writer = Shelf.Writer(
                name: "a writer",
                born: 1920
            )

            let Novel = Shelf.Novel(
                title: "a novel",
                year: 1965
            )

            let Chapter1 = Shelf.Novel.Chapter(
                title: "one",
                pages: 12
            )

            let Chapter2 = Shelf.Novel.Chapter(
                title: "two",
                pages: 30
            )

            let Jacket = Shelf.Novel.Jacket(
                artwork: URL(string: "https://example.org/jacket.png")
            )

            // insert objects

            try pc.perform { ctx in
                let writerObject = try ctx.insert(Writer)
                let novelObject = try ctx.insert(Novel)
                let chapter1Object = try ctx.insert(Chapter1)
                let chapter2Object = try ctx.insert(Chapter2)
                let jacketObject = try ctx.insert(Jacket)

                novelObject.chapters.add(chapter1Object)
                novelObject.chapters.add(chapter2Object)
                novelObject.jacket = jacketObject
                writerObject.novels.add(novelObject)
            }

            // read and check

            try pc.perform { ctx in
                guard let writer = try ctx.fetchOne(Shelf.Writer.all) else {
                    Issue.record("no writer")

                    return
                }

                #expect((try writer.decode()) == Writer)

                let novels = Array(writer.novels)

                #expect(novels.count == 1)

                let novel = novels[0]

                #expect((try novel.decode()) == Novel)
                #expect((try novel.writer?.decode()) == Writer)
                #expect((try novel.jacket?.decode()) == Jacket)
                #expect((try novel.jacket?.novel?.decode()) == Novel)

                let chapters = Array(novel.chapters)

                #expect(chapters.count == 2)

                let chapter1 = chapters[0]
                let chapter2 = chapters[1]

                #expect((try chapter1.decode()) == Chapter1)
                #expect((try chapter1.novel?.decode()) == Novel)
                #expect((try chapter2.decode()) == Chapter2)
                #expect((try chapter2.novel?.decode()) == Novel)
            }

            // update

            let Chapter3 = Shelf.Novel.Chapter(
                title: "three",
                pages: 7
            )

            try pc.perform { ctx in
                guard let writer = try ctx.fetchOne(Shelf.Writer.all),
                    let novel = Array(writer.novels).first
                else {
                    return
                }

                novel.writer = nil
                novel.jacket = nil
                novel.chapters.forEach {
                    novel.chapters.remove($0)
                    ctx.delete($0)
                }

                try novel.chapters.add(ctx.insert(Chapter3))
            }

            // read and check

            try pc.perform { ctx in
                do {
                    guard let writer = try ctx.fetchOne(Shelf.Writer.all) else {
                        Issue.record("no writer")

                        return
                    }

                    #expect((try writer.decode()) == Writer)

                    let novels = Array(writer.novels)

                    #expect(novels.isEmpty)
                }

                do {
                    guard let novel = try ctx.fetchOne(Shelf.Novel.all) else {
                        Issue.record("no novel")

                        return
                    }

                    #expect((try novel.decode()) == Novel)

                    #expect(novel.writer == nil)
                    #expect(novel.jacket == nil)

                    let chapters = Array(novel.chapters)

                    #expect(chapters.count == 1)
                    #expect((try chapters[0].decode()) == Chapter3)
                    #expect((try chapters[0].novel?.decode()) == Novel)
                }

                #expect(try ctx.count(of: Shelf.Novel.Chapter.all) == 1)
                #expect(try ctx.count(of: Shelf.Novel.Jacket.all) == 1)
            }
        }
    }

    /// The to-one setter from a plain value and the to-one delete.
    @Test func setAndDeleteToOneByValue() throws {
        try TestDB.perform(with: DataModels.shelf) { pc in
            try pc.perform { ctx in
                let novel = try ctx.insert(Shelf.Novel(title: "with a jacket"))
                try novel.set(\.jacket, value: Shelf.Novel.Jacket(artwork: URL(string: "https://example.org/1.png")), context: ctx)
            }
            try pc.perform { ctx in
                let novel = try ctx.fetchOne(Shelf.Novel.all)
                try novel?.set(\.jacket, value: Shelf.Novel.Jacket(artwork: URL(string: "https://example.org/2.png")), context: ctx)
            }
            let artwork = try pc.perform { ctx in
                try ctx.fetch(Shelf.Novel.Jacket.all, \.artwork)
            }
            #expect(artwork == [URL(string: "https://example.org/2.png")])

            try pc.perform { ctx in
                try ctx.fetchOne(Shelf.Novel.all)?.delete(\.jacket, context: ctx)
            }
            let jackets = try pc.perform { ctx in
                try ctx.count(of: Shelf.Novel.Jacket.all)
            }
            #expect(jackets == 0)
        }
    }

    @Test func orderedRelationKeepsItsOrder() throws {
        try TestDB.perform(with: DataModels.shelf) { pc in
            try pc.perform { ctx in
                let novel = try ctx.insert(Shelf.Novel(title: "ordered"))
                for title in ["c", "a", "b"] {
                    novel.chapters.add(try ctx.insert(Shelf.Novel.Chapter(title: title)))
                }
            }
            let titles = try pc.perform { ctx in
                try ctx.fetchOne(Shelf.Novel.all).map { novel in try novel.chapters.map { try $0.decode(\.title) } }
            }
            #expect(titles == ["c", "a", "b"])
        }
    }

    @Test func requestSortLimitOffset() throws {
        try TestDB.perform(with: DataModels.shelf) { pc in
            try pc.perform(action: { context in
                try (1...10).reversed().forEach {
                    try context.insert(
                        Shelf.Novel(
                            title: "\($0)",
                            year: $0 % 2 == 0 ? 1990 : 2000
                        )
                    )
                }
            })

            let novelTitles: [String] = try pc.perform { ctx in
                let query = Shelf.Novel
                    .all
                    .sort(\.year)
                    .sort(\.title)
                    .limit(8)
                    .offset(1)

                return try ctx.fetch(query, \.title)
            }

            #expect(novelTitles == ["2", "4", "6", "8", "1", "3", "5", "7"])
        }
    }

    @Test(arguments: [DataModels.shelf, DataModels.shelfFromXcode])
    func notUniqueInsertFails(store: StoreSetUp) throws {
        try TestDB.perform(with: store) { pc in
            let id = UUID()

            var err: Error?

            do {
                try pc.perform { ctx in
                    try ctx.insert(Shelf.Novel(id: id))
                    try ctx.insert(Shelf.Novel(id: id))
                }
            } catch {
                err = error
            }

            #expect(err != nil)

            let count = try pc.perform { ctx in
                try ctx.count(of: Shelf.Novel.all)
            }
            #expect(count == 0)
        }
    }

    @Test func multiThreadReadWrite() throws {
        try TestDB.perform(with: DataModels.shelf) { pc in
            DispatchQueue.concurrentPerform(iterations: 100) { number in
                do {
                    try pc.perform { ctx in
                        try ctx.insert(Shelf.Novel(year: number))
                    }
                } catch {
                    Issue.record(error)
                }
            }

            let years = try pc.perform { ctx in
                try ctx.fetch(Shelf.Novel.all.sort(\.year), \.year)
            }

            #expect(years == Array(0..<100))
        }
    }

    @Test func multiTaskReadWrite() async throws {
        try await TestDB.schedule(with: DataModels.shelf) { pc in
            await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<100 {
                    group.addTask {
                        return try await pc.schedule { ctx in
                            try ctx.insert(Shelf.Novel(year: number))
                        }
                    }
                }
            }

            let years = try await pc.schedule { ctx in
                try ctx.fetch(Shelf.Novel.all.sort(\.year), \.year)
            }

            #expect(years == Array(0..<100))
        }
    }

    /// 100 concurrent performs add to and delete from one relation; every one succeeds, every
    /// time (Core Data deletes an object another context deleted meanwhile without an error).
    @Test(arguments: 1...20)
    func multiThreadReadWriteRelationsStability(round: Int) throws {
        try TestDB.perform(with: DataModels.shelf, overwriteMergePolicy: true) { pc in
            try pc.perform { ctx in
                try ctx.insert(Shelf.Writer(id: .init(), name: "Ursula", born: 1929))
            }

            DispatchQueue.concurrentPerform(iterations: 100) { _ in
                do {
                    try pc.perform { ctx in
                        if let writer = try ctx.fetchOne(Shelf.Writer.all) {
                            if Bool.random() {
                                try writer.novels.add(ctx.insert(Shelf.Novel()))
                            } else {
                                writer.novels.forEach {
                                    writer.novels.delete($0, context: ctx)
                                }
                            }
                        }
                    }
                } catch {
                    Issue.record(error, "round \(round)")
                }
            }
        }
    }
}
