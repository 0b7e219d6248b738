import Foundation
import Skerry
import SkerryCore
import Testing

@Suite struct ContainerSmokeTests {
    @Test func theDesignDocumentsExampleRuns() throws {
        let stack = try makeStack()
        let container = PersistentContainer(
            managedObjectContext: { stack.newBackgroundContext() },
            logError: { _ in }, cleanUpAfterExecution: true)
        let titles = try container.perform { context in
            try context.insert(Book(title: "Dune", year: 1965))
            try context.insert(Book(title: "Neuromancer", year: 1984))
            try context.insert(Book(title: "Solaris", year: 1961, genre: .essay, dimensions: Dimensions(width: 1, height: 2)))
            return try context.fetch(Book.all.where(\Book.year < 1970).sort(\Book.title)).map { try $0.decode() }
        }
        #expect(titles.map(\.title) == ["Dune", "Solaris"])
        #expect(titles[1].genre == .essay && titles[1].dimensions == Dimensions(width: 1, height: 2))
        let count = try container.perform { try $0.count(of: Book.all) }
        #expect(count == 3)
    }
}
