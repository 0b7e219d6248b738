import Foundation

/// A temporary folder, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The folder.
    public let url: URL

    /// Creates an empty folder under the system's temporary folder.
    public init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("skerry-tests-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    // try?: a folder the system cleans up anyway; failing to remove it must not fail a test.
    deinit { try? FileManager.default.removeItem(at: url) }

    /// A file URL inside the folder.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }
}
