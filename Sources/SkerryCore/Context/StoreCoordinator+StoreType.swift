import Foundation

extension StoreDescription {
    /// A store type, as Core Data's `NSPersistentStore.StoreType` (iOS 15, macOS 12) names it:
    /// ``sqlite`` and ``inMemory`` are Skerry's; ``binary`` and ``xml`` exist so that code naming
    /// them compiles, and fail with ``SkerryError/Code/invalidArgument`` when used (Skerry has no
    /// such stores). The raw values are Core Data's, those of ``SQLiteStoreType`` and
    /// ``InMemoryStoreType``.
    ///
    /// ```swift
    /// try coordinator.addPersistentStore(type: .sqlite, at: url)
    /// ```
    public struct StoreType: RawRepresentable, Hashable, Sendable {
        /// The type's name, as ``StoreDescription/type`` and the `ofType:` methods take it.
        public var rawValue: String

        /// The type named `rawValue` (Core Data's type strings: `"SQLite"`, `"InMemory"`,
        /// `"Binary"`, `"XML"`).
        /// - Parameter rawValue: the type's name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// A SQLite database file: ``SQLiteStoreType``.
        public static let sqlite = StoreType(rawValue: SQLiteStoreType)
        /// A store kept in memory: ``InMemoryStoreType``.
        public static let inMemory = StoreType(rawValue: InMemoryStoreType)
        /// Core Data's binary store (`NSBinaryStoreType`). Skerry has none: using it throws
        /// ``SkerryError/Code/invalidArgument``.
        public static let binary = StoreType(rawValue: "Binary")
        /// Core Data's XML store (`NSXMLStoreType`, macOS only). Skerry has none: using it throws
        /// ``SkerryError/Code/invalidArgument``.
        public static let xml = StoreType(rawValue: "XML")
    }
}

// Core Data's spellings of iOS 15 and macOS 12, which take an `NSPersistentStore.StoreType`
// instead of a type string: each one calls its `ofType:` counterpart.
extension StoreCoordinator {
    /// Opens a store and adds it: Core Data's `addPersistentStore(type:configuration:at:options:)`,
    /// the same as ``addPersistentStore(ofType:configurationName:at:options:)``.
    ///
    /// ```swift
    /// try coordinator.addPersistentStore(type: .sqlite, at: url)
    /// ```
    /// - Parameters:
    ///   - storeType: ``StoreDescription/StoreType/sqlite`` or ``StoreDescription/StoreType/inMemory``.
    ///   - configuration: the model configuration whose entities the store holds; nil for all.
    ///   - storeURL: the database file (`/dev/null` for a SQLite store in memory); for an
    ///     in-memory store, the URL ``persistentStores`` lists it with.
    ///   - options: Core Data's option keys and values; nil for none.
    /// - Returns: the description of the store added (what ``persistentStores`` lists).
    /// - Throws: ``SkerryError/Code/invalidArgument`` for another store type (binary, XML) or an
    ///   option Skerry does not honour; the errors of ``addPersistentStore(with:)``.
    @discardableResult
    public func addPersistentStore(
        type storeType: StoreDescription.StoreType, configuration: String? = nil, at storeURL: URL,
        options: [AnyHashable: Any]? = nil
    ) throws(SkerryError) -> StoreDescription {
        return try addPersistentStore(ofType: storeType.rawValue, configurationName: configuration, at: storeURL, options: options)
    }

    /// Deletes the store at `url`: Core Data's `destroyPersistentStore(at:type:options:)`, the
    /// same as ``destroyPersistentStore(at:ofType:options:)``.
    ///
    /// ```swift
    /// try coordinator.destroyPersistentStore(at: url, type: .sqlite)
    /// ```
    /// - Parameters:
    ///   - url: the store's database file (for an in-memory store, the URL
    ///     ``persistentStores`` lists).
    ///   - storeType: ``StoreDescription/StoreType/sqlite`` or ``StoreDescription/StoreType/inMemory``.
    ///   - options: the options the store was added with; Skerry needs none of them.
    /// - Throws: the errors of ``destroyPersistentStore(at:ofType:options:)``.
    public func destroyPersistentStore(
        at url: URL, type storeType: StoreDescription.StoreType, options: [AnyHashable: Any]? = nil
    ) throws(SkerryError) {
        try destroyPersistentStore(at: url, ofType: storeType.rawValue, options: options)
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL`: Core
    /// Data's `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:type:)`,
    /// the same as ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)``.
    ///
    /// ```swift
    /// try coordinator.replacePersistentStore(at: storeURL, withPersistentStoreFrom: backupURL, type: .sqlite)
    /// ```
    /// - Parameters:
    ///   - destinationURL: the database file to replace (created if missing).
    ///   - destinationOptions: the destination's options; Skerry needs none of them.
    ///   - sourceURL: the database file to copy; it must exist.
    ///   - sourceOptions: the source's options; Skerry needs none of them.
    ///   - storeType: ``StoreDescription/StoreType/sqlite``.
    /// - Throws: the errors of ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)``.
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
        withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
        type storeType: StoreDescription.StoreType
    ) throws(SkerryError) {
        try replacePersistentStore(
            at: destinationURL, destinationOptions: destinationOptions, withPersistentStoreFrom: sourceURL,
            sourceOptions: sourceOptions, ofType: storeType.rawValue)
    }
}
