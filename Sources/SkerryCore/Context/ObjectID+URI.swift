import Foundation

// Durable object IDs: a permanent ID names its store by the store's persistent identifier (kept in
// the store's own metadata since the store was created), its entity by name and its row by key, so
// its URI and its string form name the same row after the process restarts. Any store kind that
// gives its `StoreIdentity` the identifier it keeps in its metadata gets this for free.

extension ObjectID {
    /// A URL that names the object: `skerry://<store identifier>/<entity>/p<key>` for a permanent
    /// ID, with `t` in place of `p` for a temporary one (meaningful in this process only).
    ///
    /// A permanent ID's URI stays valid across process restarts: pass it to
    /// ``PersistentStack/objectID(forURIRepresentation:)`` (or the context's) to get the ID back.
    /// Core Data's `NSManagedObjectID.uriRepresentation()`.
    public func uriRepresentation() -> URL {
        var components = URLComponents()
        components.scheme = ObjectIDReference.scheme
        components.host = store.identifier
        components.path = "/\(entity.name)/\(isTemporary ? "t" : "p")\(key)"
        // Store identifiers and entity names are URL-safe (a UUID; letters, digits, underscores);
        // URLComponents percent-encodes anything else, so a URL always results.
        return components.url ?? URL(string: "\(ObjectIDReference.scheme)://invalid")!
    }

    /// A short, URL-safe string that names the object, for a service's API:
    /// `<entity>.<key>.<store>` (for example `Book.42.AZ3kQ1m8Sx2cJtYHq0v9Ow`), where the store part
    /// is the store's identifier (a UUID written in 22 base64url characters). Like the URI, a
    /// permanent ID's string stays valid across restarts; read it back with
    /// ``PersistentStack/objectID(forStringRepresentation:)``. Contains no `/`, `?`, `#` or `%`.
    public var stringRepresentation: String {
        "\(entity.name).\(isTemporary ? "t" : "")\(key).\(ObjectIDReference.compactStoreToken(store.identifier))"
    }
}

/// An object ID's parts as named by a URI or a string form, before they are checked against a
/// stack.
struct ObjectIDReference {
    static let scheme = "skerry"

    var storeIdentifier: String
    var entityName: String
    var isTemporary: Bool
    var key: Int64

    /// The parts of a URI made by ``ObjectID/uriRepresentation()``.
    /// - Throws: ``SkerryError/Code/unknownObjectURI`` when `uri` does not have that form.
    init(uri: URL) throws(SkerryError) {
        guard let components = URLComponents(url: uri, resolvingAgainstBaseURL: false),
            components.scheme?.lowercased() == Self.scheme,
            let host = components.host, !host.isEmpty,
            components.query == nil, components.fragment == nil
        else {
            throw Self.malformed("\(uri.absoluteString) is not a Skerry object URI (skerry://<store>/<entity>/p<key>).")
        }
        let parts = components.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, !parts[1].isEmpty,
            let (isTemporary, key) = Self.key(parts[2], temporaryMark: "t", permanentMark: "p")
        else {
            throw Self.malformed("\(uri.absoluteString) is not a Skerry object URI: its path must be /<entity>/p<key>.")
        }
        self.init(storeIdentifier: host, entityName: String(parts[1]), isTemporary: isTemporary, key: key)
    }

    /// The parts of a string made by ``ObjectID/stringRepresentation``.
    /// - Throws: ``SkerryError/Code/unknownObjectURI`` when `string` does not have that form.
    init(string: String) throws(SkerryError) {
        let parts = string.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[2].isEmpty,
            let (isTemporary, key) = Self.key(parts[1], temporaryMark: "t", permanentMark: nil),
            let identifier = Self.storeIdentifier(fromCompactToken: parts[2])
        else {
            throw Self.malformed("'\(string.prefix(200))' is not a Skerry object ID string (<entity>.<key>.<store>).")
        }
        self.init(storeIdentifier: identifier, entityName: String(parts[0]), isTemporary: isTemporary, key: key)
    }

    private init(storeIdentifier: String, entityName: String, isTemporary: Bool, key: Int64) {
        self.storeIdentifier = storeIdentifier
        self.entityName = entityName
        self.isTemporary = isTemporary
        self.key = key
    }

    /// A key written as a mark and digits: `t12` (temporary), `p12` or, without a permanent mark, `12`.
    private static func key(_ text: Substring, temporaryMark: Character, permanentMark: Character?) -> (Bool, Int64)? {
        var digits = text
        let isTemporary = digits.first == temporaryMark
        if isTemporary {
            digits = digits.dropFirst()
        } else if let permanentMark {
            guard digits.first == permanentMark else { return nil }
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let key = Int64(digits) else { return nil }
        return (isTemporary, key)
    }

    private static func malformed(_ message: String) -> SkerryError {
        SkerryError(.unknownObjectURI, message)
    }

    // MARK: Compact store tokens

    /// A store identifier in few URL-safe characters: a UUID as its 16 bytes in base64url (22
    /// characters); any other identifier as `~` and its UTF-8 bytes in base64url.
    static func compactStoreToken(_ identifier: String) -> String {
        if let uuid = UUID(uuidString: identifier), uuid.uuidString == identifier.uppercased() {
            let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
            return base64URL(bytes)
        }
        return "~" + base64URL(Data(identifier.utf8))
    }

    /// The identifier a token of ``compactStoreToken(_:)`` stands for, or nil.
    static func storeIdentifier(fromCompactToken token: Substring) -> String? {
        if token.first == "~" {
            guard let data = data(fromBase64URL: token.dropFirst()) else { return nil }
            return String(data: data, encoding: .utf8)
        }
        guard token.count == 22, let data = data(fromBase64URL: token), data.count == 16 else { return nil }
        let uuid = data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        return uuid.uuidString
    }

    private static func base64URL(_ data: Data) -> String {
        String(data.base64EncodedString().map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }.filter { $0 != "=" })
    }

    private static func data(fromBase64URL text: Substring) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

extension StoreCoordinator {
    /// The ID `reference` names in this stack.
    /// - Throws: ``SkerryError/Code/unknownObjectURI`` when it names a store this stack has not
    ///   loaded (another store, or one not loaded yet), an entity the store does not hold, or a
    ///   temporary ID (which names an unsaved object of one context, in one process).
    func objectID(for reference: ObjectIDReference, named text: String) throws(SkerryError) -> ObjectID {
        let stores = loadedStores
        // A store a migration replaced (in this process) names its objects in the store that holds them now.
        let moved = migratedIdentity(ofStoreIdentifiedBy: reference.storeIdentifier)
        guard
            let store = stores.first(where: { $0.identity.identifier.lowercased() == reference.storeIdentifier.lowercased() })
                ?? moved.flatMap({ moved in stores.first { $0.identity === moved } })
        else {
            throw SkerryError(
                .unknownObjectURI,
                "\(text) names an object of store \(reference.storeIdentifier), which is not loaded in this stack (loaded: \(stores.map(\.identity.identifier).joined(separator: ", ")); an ID names its row only in the store that made it.",
                entityName: reference.entityName)
        }
        guard let entity = model.entity(named: reference.entityName), store.storeDescription.holds(entity, of: model) else {
            throw SkerryError(
                .unknownObjectURI,
                "\(text) names entity '\(reference.entityName)', which store \(reference.storeIdentifier) does not hold in this model.",
                entityName: reference.entityName)
        }
        guard !reference.isTemporary else {
            throw SkerryError(
                .unknownObjectURI,
                "\(text) is a temporary ID: it named an object not saved yet, in one context of one process, and names nothing now. Save the object (or call obtainPermanentIDs(for:)) before taking its URI.",
                entityName: reference.entityName)
        }
        return ObjectID(store: store.identity, entity: entity, primaryKey: reference.key)
    }
}

extension PersistentStack {
    /// The ID a URI made by ``ObjectID/uriRepresentation()`` names, in this process or an earlier
    /// one. Reads nothing: the row may have been deleted since (reading the object then throws
    /// ``SkerryError/Code/objectNotFound``).
    /// - Parameter uri: the URI.
    /// - Throws: ``SkerryError/Code/unknownObjectURI`` when `uri` is not an object URI, names a store
    ///   this stack has not loaded, an entity that store does not hold, or a temporary ID.
    public func objectID(forURIRepresentation uri: URL) throws(SkerryError) -> ObjectID {
        try coordinator.objectID(for: ObjectIDReference(uri: uri), named: uri.absoluteString)
    }

    /// The ID a string made by ``ObjectID/stringRepresentation`` names; see
    /// ``objectID(forURIRepresentation:)``.
    /// - Throws: ``SkerryError/Code/unknownObjectURI``, as ``objectID(forURIRepresentation:)``.
    public func objectID(forStringRepresentation string: String) throws(SkerryError) -> ObjectID {
        try coordinator.objectID(for: ObjectIDReference(string: string), named: "'\(string)'")
    }

    /// Core Data's `managedObjectID(forURIRepresentation:)`: the ID, or nil where
    /// ``objectID(forURIRepresentation:)`` throws (which says why).
    public func managedObjectID(forURIRepresentation uri: URL) -> ObjectID? {
        try? objectID(forURIRepresentation: uri) // Core Data's optional form; the throwing one says why.
    }
}

extension ObjectContext {
    /// The ID a URI made by ``ObjectID/uriRepresentation()`` names in this context's stack; see
    /// ``PersistentStack/objectID(forURIRepresentation:)``.
    /// - Throws: ``SkerryError/Code/unknownObjectURI``.
    public func objectID(forURIRepresentation uri: URL) throws(SkerryError) -> ObjectID {
        try coordinator.objectID(for: ObjectIDReference(uri: uri), named: uri.absoluteString)
    }

    /// The ID a string made by ``ObjectID/stringRepresentation`` names in this context's stack;
    /// see ``PersistentStack/objectID(forStringRepresentation:)``.
    /// - Throws: ``SkerryError/Code/unknownObjectURI``.
    public func objectID(forStringRepresentation string: String) throws(SkerryError) -> ObjectID {
        try coordinator.objectID(for: ObjectIDReference(string: string), named: "'\(string)'")
    }
}
