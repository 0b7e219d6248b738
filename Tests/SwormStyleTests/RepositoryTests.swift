import Foundation
import Skerry
import Testing

@Suite struct RepositoryTests {
    @Test func repository() throws {
        try TestDB.perform(with: DataModels.repository) { pc in
            let repository = Repository<Note>(container: pc)

            #expect((try repository.all()).isEmpty)

            // insert

            var note = Note(id: .init(), body: "first")

            try repository.add(note)

            #expect((try repository.all()) == [note])

            // update

            note.body = "second"

            try repository.save(note)

            #expect((try repository.all()) == [note])

            // delete

            try repository.remove(note)

            #expect((try repository.all()).isEmpty)
        }
    }
}
