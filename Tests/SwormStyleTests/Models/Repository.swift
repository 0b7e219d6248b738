import Foundation
import Skerry

/// A model type with an identifier: the repository pattern Sworm's users build.
protocol Identified: ManagedObjectConvertible {
    associatedtype ID: SupportedAttributeType where ID.PrimitiveAttributeType: Equatable

    static var idKeyPath: KeyPath<Self, ID> { get }
}

/// A repository over one model type: every operation is one perform.
final class Repository<T: Identified> {
    private let container: PersistentContainer

    init(container: PersistentContainer) {
        self.container = container
    }

    func all() throws -> [T] {
        try self.container.perform { context in
            try context.fetch(T.all).map { try $0.decode() }
        }
    }

    func add(_ item: T) throws {
        try self.container.perform { context in
            try context.insert(item)
        }
    }

    func save(_ item: T) throws {
        try self.container.perform { context in
            if let object = try context.fetchOne(T.all.where(T.idKeyPath == item[keyPath: T.idKeyPath])) {
                object.encode(item)
            }
        }
    }

    func remove(_ item: T) throws {
        try self.container.perform { context in
            try context.delete(T.all.where(T.idKeyPath == item[keyPath: T.idKeyPath]))
        }
    }
}

struct Note: Equatable {
    var id: UUID = .init()
    var body: String = ""
}

extension Note: Identified {
    static let entityName: String = "Note"

    static var idKeyPath: KeyPath<Note, UUID> { \.id }

    static let attributes: Set<Attribute<Note>> = [
        .init(\.id, "id"),
        .init(\.body, "body"),
    ]

    static let relations: Void = ()
}
