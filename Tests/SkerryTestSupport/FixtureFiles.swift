import Foundation

/// The hand-written Xcode model and mapping model files the tests read (Tests/SkerryTestSupport/
/// Fixtures), shipped as the support target's resources.
public enum FixtureFiles {
    /// The fixtures folder in the target's resource bundle.
    public static let folder: URL = {
        guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            fatalError("SkerryTestSupport's resource bundle has no Fixtures folder")
        }
        return url
    }()

    /// The fixture at `path` (a name such as `Library.xcdatamodeld`, or a path inside one).
    public static func url(_ path: String) -> URL {
        folder.appendingPathComponent(path)
    }
}
