import Foundation
import Skerry
import Testing

// The container set-up: the one part of this suite that differs from a Sworm suite, where an
// NSPersistentContainer loaded a model from the bundle. Everything else is written in Sworm's API.

/// What a test store is made of: plain model types (Skerry derives the model from them,
/// inverses included), or an Xcode model file as Sworm's users have.
struct StoreSetUp: Sendable, CustomTestStringConvertible {
    let name: String
    let makeModel: @Sendable () throws -> ObjectModel

    var testDescription: String { name }

    /// A model derived from plain types.
    static func types(_ name: String, _ makeTypes: @escaping @Sendable () -> [any ManagedObjectConvertible.Type]) -> StoreSetUp {
        StoreSetUp(name: name) { try ObjectModel(types: makeTypes()) }
    }

    /// The model of an Xcode model file among the test resources.
    static func xcodeModel(_ name: String) -> StoreSetUp {
        StoreSetUp(name: "\(name).xcdatamodeld") {
            guard let url = Bundle.module.url(forResource: name, withExtension: "xcdatamodeld", subdirectory: "DataModels") else {
                throw SkerryError(.invalidArgument, "No \(name).xcdatamodeld among the test resources.")
            }
            return try XcodeModel.loadModel(contentsOf: url) // unversioned, as Xcode writes it
        }
    }
}

enum DataModels {
    static let attributes = StoreSetUp.types("attributes") { [EveryPrimitive.self, Painted.self, Counter.self] }
    static let predicates = StoreSetUp.types("predicates") { [Gauge.self, Locator.self] }
    static let shelf = StoreSetUp.types("shelf") {
        [Shelf.Writer.self, Shelf.Novel.self, Shelf.Novel.Chapter.self, Shelf.Novel.Jacket.self]
    }
    /// The same model as an Xcode model file.
    static let shelfFromXcode = StoreSetUp.xcodeModel("Shelf")
    static let repository = StoreSetUp.types("repository") { [Note.self] }
}

/// The uniqueness constraint a Sworm user declares in the Xcode model; for a model derived from
/// types, declared beside them.
extension Shelf.Novel {
    static let entityOptions = EntityOptions<Shelf.Novel>().unique(\.id)
}

enum TestDB {
    /// A container over a new in-memory store of `store`'s model.
    static func perform(
        with store: StoreSetUp,
        overwriteMergePolicy: Bool = false,
        action: (PersistentContainer) throws -> Void
    ) throws {
        try action(container(for: try loadedStack(store), overwriteMergePolicy: overwriteMergePolicy))
    }

    /// The asynchronous form of ``perform(with:overwriteMergePolicy:action:)``.
    static func schedule(
        with store: StoreSetUp,
        overwriteMergePolicy: Bool = false,
        action: (PersistentContainer) async throws -> Void
    ) async throws {
        try await action(container(for: try loadedStack(store), overwriteMergePolicy: overwriteMergePolicy))
    }

    static func loadedStack(_ store: StoreSetUp) throws -> PersistentStack {
        let stack = PersistentStack(name: store.name, model: try store.makeModel())
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        return stack
    }

    private static func container(for stack: PersistentStack, overwriteMergePolicy: Bool) -> PersistentContainer {
        PersistentContainer(managedObjectContext: {
            let context = stack.newBackgroundContext()
            if overwriteMergePolicy {
                context.mergePolicy = .overwrite
            }
            return context
        })
    }
}

// Once per module, beside the container set-up: Foundation has a `Predicate` too.
typealias Predicate = Skerry.Predicate
