import Foundation
import SkerryCore

/// A temporary folder, removed when the value is released.
final class TemporaryFolder: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("skerry-integration-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
}

/// A value shared between threads under a lock.
final class Shared<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `stored` is only touched while `lock` is held.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }
    func update(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

/// The Xcode model fixtures of the engine's tests.
func fixture(_ name: String) -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("SkerryCoreTests/Fixtures/\(name)")
}

/// A model with one entity, for the integrations' tests.
func bookModel() throws -> ObjectModel {
    try ObjectModel(entities: [
        EntityDescription(name: "Book", attributes: [
            AttributeDescription("title", .string),
            AttributeDescription("year", .integer32, isOptional: true),
        ]),
    ])
}
