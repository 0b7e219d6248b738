// A runnable example: create a store in the default directory, write, close, reopen, read, print.
//
//     swift run skerry-example            # store in the default directory
//     swift run skerry-example /some/dir  # store in /some/dir
import Foundation
import SkerryCore

/// A stack whose default directory can be chosen on the command line, the way Core Data apps
/// override `defaultDirectoryURL()` to share a store.
final class ExampleStack: PersistentStack, @unchecked Sendable {
    // `@unchecked Sendable`: adds no state to PersistentStack, whose invariant holds.

    /// The folder given on the command line, if any.
    // `nonisolated(unsafe)`: written once at the top of main before any stack exists, then only read.
    nonisolated(unsafe) static var directory: URL?

    override class func defaultDirectoryURL() -> URL {
        directory ?? super.defaultDirectoryURL().appendingPathComponent("skerry-example", isDirectory: true)
    }
}

let model = try ObjectModel(entities: [
    EntityDescription(
        name: "Book",
        attributes: [
            AttributeDescription("title", .string),
            AttributeDescription("year", .integer32),
            AttributeDescription("addedAt", .date),
        ], indexes: [IndexDescription(["year"])])
])

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
    print(
        """
        usage: skerry-example [FOLDER]

        Creates (or opens) the store Library.sqlite in FOLDER (default: the stack's default
        directory, skerry-example/ in the user's data folder), writes three books, closes the
        store, reopens it, reads and prints.
        """)
    exit(0)
}
if let option = arguments.first(where: { $0.hasPrefix("-") }) {
    FileHandle.standardError.write(Data("skerry-example: unknown option \(option); see --help\n".utf8))
    exit(2)
}
if let folder = arguments.first {
    ExampleStack.directory = URL(fileURLWithPath: folder, isDirectory: true)
}

// 1. Create (or open) the store and write.
do {
    let stack = ExampleStack(name: "Library", model: model)
    try stack.loadPersistentStores()
    print("Store: \(stack.persistentStoreDescriptions[0].url!.path)")
    let context = stack.newBackgroundContext()
    try context.performAndWait {
        for (title, year) in [("Dune", 1965), ("Neuromancer", 1984), ("Solaris", 1961)] {
            let book = try context.insert(entityName: "Book")
            try book.setValue(title, forKey: "title")
            try book.setValue(Int32(year), forKey: "year")
            try book.setValue(Date(), forKey: "addedAt")
        }
        let changes = try context.save()
        print("Saved \(changes.inserted.count) books.")
    }
} // The stack, its contexts and its connections are released here: the store is closed.

// 2. Reopen and read.
let stack = ExampleStack(name: "Library", model: model)
try stack.loadPersistentStores()
let lines = try stack.viewContext.performAndWait {
    let request = FetchRequest(
        entityName: "Book", predicate: AttributeKey("year") < 1970,
        sortKeys: [SortKey("year")])
    let total = try stack.viewContext.count(for: FetchRequest(entityName: "Book"))
    return try ["\(total) books in the store; before 1970:"]
        + stack.viewContext.fetch(request).map { book in
            "  \(try book.value(forKey: "year", as: Int.self))  \(try book.value(forKey: "title", as: String.self))"
        }
}
lines.forEach { print($0) }
