import Foundation
import SkerryCore

extension ManagedObjectContext {
    /// Gives the objects (inserted in this perform and not saved yet) their permanent IDs now, so
    /// that an ID or URI taken before the save stays valid after it; see
    /// `ObjectContext.obtainPermanentIDs(for:)`.
    /// - Parameter objects: objects of this context.
    /// - Throws: ``SkerryError/Code/objectNotInContext`` for an object of another context.
    public func obtainPermanentIDs<PlainObject: ManagedObjectConvertible>(for objects: [ManagedObject<PlainObject>]) throws(SkerryError) {
        try instance.obtainPermanentIDs(for: objects.map(\.instance))
    }

    /// The ID a URI made by `ObjectID.uriRepresentation()` names, in this process or an earlier
    /// one; read the object with ``existingObject(with:as:)``.
    /// - Throws: ``SkerryError/Code/unknownObjectURI`` when the URI is malformed, or names a store
    ///   the stack has not loaded, an entity it does not hold, or a temporary ID.
    public func objectID(forURIRepresentation uri: URL) throws(SkerryError) -> ObjectID {
        try instance.objectID(forURIRepresentation: uri)
    }

    /// The ID a string made by `ObjectID.stringRepresentation` names; see
    /// ``objectID(forURIRepresentation:)``.
    /// - Throws: ``SkerryError/Code/unknownObjectURI``.
    public func objectID(forStringRepresentation string: String) throws(SkerryError) -> ObjectID {
        try instance.objectID(forStringRepresentation: string)
    }
}
