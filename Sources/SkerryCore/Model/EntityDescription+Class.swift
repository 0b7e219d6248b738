import Foundation
import Synchronization

/// Which class an entity's objects are made of: Core Data's `managedObjectClassName`.
///
/// An entity's class is, in this order: the class registered for it with
/// ``ObjectModel/setManagedObjectClass(_:forEntityName:)``; the class an Xcode model names
/// (`representedClassName`) when the name is module-qualified (`MyApp.Book`) and the process has
/// that class (Linux has no Objective-C class table: an unqualified name, as Xcode writes it, is
/// only recorded, and the class must be registered); its superentity's class; ``EntityObject``.
/// It is decided when the entity's first object is made, and fixed from then on.
package final class EntityClassBinding: Sendable {
    /// The class objects are made of, as the bits of its metadata pointer; 0 until the first
    /// object was made. Read on every object made: one load.
    private let resolvedBits = Atomic<UInt>(0)
    /// The explicit class (registered, or named by the model and found) and the model's name.
    private let state = Mutex<(explicit: EntityObject.Type?, declaredName: String?)>((nil, nil))

    package init() {}

    /// The class chosen when the entity's first object was made, or nil before.
    @inline(__always)
    var resolved: EntityObject.Type? {
        let bits = resolvedBits.load(ordering: .acquiring)
        return bits == 0 ? nil : unsafeBitCast(bits, to: EntityObject.Type.self)
    }

    /// The class set for the entity itself (not inherited), if any.
    var explicit: EntityObject.Type? { state.withLock { $0.explicit } }
    /// The class name an Xcode model gives the entity, if any.
    var declaredName: String? { state.withLock { $0.declaredName } }

    func setExplicit(_ type: EntityObject.Type?) { state.withLock { $0.explicit = type } }
    func setDeclaredName(_ name: String?) { state.withLock { $0.declaredName = name } }

    /// Fixes the class to `type` unless it was fixed already; returns the class fixed.
    func resolve(_ type: EntityObject.Type) -> EntityObject.Type {
        let bits = unsafeBitCast(type, to: UInt.self)
        let (exchanged, original) = resolvedBits.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing)
        return exchanged ? type : unsafeBitCast(original, to: EntityObject.Type.self)
    }
}

/// The runtime's instance extents of a class, in bytes (the standard library's inlined
/// `ManagedBufferPointer` checks call it too): a subclass of ``EntityObject`` with a stored
/// property has a larger positive extent than ``EntityObject``.
#if canImport(ObjectiveC)
    @_silgen_name("_swift_getObjCClassInstanceExtents")
    private func classInstanceExtents(_ theClass: AnyClass) -> (negative: UInt, positive: UInt)
#else
    @_silgen_name("_swift_getSwiftClassInstanceExtents")
    private func classInstanceExtents(_ theClass: AnyClass) -> (negative: UInt, positive: UInt)
#endif

extension EntityDescription {
    /// The class of the entity's objects (Core Data's class for `managedObjectClassName`): every
    /// object of the entity, inserted, fetched, a fault, a relationship's destination, in any
    /// context, is an instance of it, so `as? Book` works on fetch results and relationship values.
    ///
    /// The class registered for the entity with ``ObjectModel/setManagedObjectClass(_:forEntityName:)``,
    /// or named module-qualified in the Xcode model and found; else the superentity's class; else
    /// ``EntityObject``. Fixed once the entity's first object is made.
    public var managedObjectClass: EntityObject.Type {
        if let resolved = classBinding.resolved { return resolved }
        return classBinding.explicit ?? superentity?.managedObjectClass ?? EntityObject.self
    }

    /// The name of the class that represents the entity: Core Data's `managedObjectClassName`.
    /// The module-qualified name of the class registered for the entity (`MyApp.Book`); else the
    /// name the Xcode model gives it (`representedClassName`, as written there); else the name of
    /// ``managedObjectClass``.
    public var managedObjectClassName: String {
        if let explicit = classBinding.explicit { return String(reflecting: explicit) }
        return classBinding.declaredName ?? String(reflecting: managedObjectClass)
    }

    /// The class new objects of the entity are made of (see ``managedObjectClass``), fixed by
    /// the first call. Called for every object made: one atomic load once fixed.
    @inline(__always)
    var objectClass: EntityObject.Type {
        if let resolved = classBinding.resolved { return resolved }
        return resolveObjectClass()
    }

    @inline(never)
    private func resolveObjectClass() -> EntityObject.Type {
        classBinding.resolve(classBinding.explicit ?? superentity?.objectClass ?? EntityObject.self)
    }

    /// Records the class name an Xcode model gives the entity, and uses the class when the
    /// name is module-qualified and the process has an ``EntityObject`` subclass of that name.
    /// - Throws: ``SkerryError/Code/invalidArgument`` when that class declares stored properties.
    package func declareManagedObjectClassName(_ name: String?) throws(SkerryError) {
        guard let name, !name.isEmpty else { return }
        classBinding.setDeclaredName(name)
        // Xcode writes a name without module (its "current product module"), which only the
        // Objective-C runtime finds; a qualified name is looked up as Foundation does on Linux.
        guard name.contains("."), !name.hasPrefix("."), let type = NSClassFromString(name) as? EntityObject.Type else { return }
        try Self.checkSubclass(type, entity: self.name)
        classBinding.setExplicit(type)
        Self.recordEntityName(self.name, for: type)
    }

    /// Throws unless `type` declares no stored property (its instances are ``EntityObject``'s size).
    static func checkSubclass(_ type: EntityObject.Type, entity: String) throws(SkerryError) {
        let size = classInstanceExtents(type).positive
        let base = classInstanceExtents(EntityObject.self).positive
        guard size == base else {
            throw SkerryError(
                .invalidArgument,
                "\(String(reflecting: type)) cannot represent entity '\(entity)': it declares stored properties (its instances take \(size) bytes, EntityObject's \(base)). An EntityObject subclass keeps its values in the object's own memory and declares computed properties only (see EntityObject's subscript(attribute:)).",
                entityName: entity)
        }
    }

    /// The entity name each registered class was last registered for, in any model: what
    /// `Book.fetchRequest()` and `Book.entityName` use.
    private static let entityNames = Mutex<[ObjectIdentifier: String]>([:])

    static func recordEntityName(_ name: String, for type: EntityObject.Type) {
        entityNames.withLock { $0[ObjectIdentifier(type)] = name }
    }

    static func recordedEntityName(for type: EntityObject.Type) -> String? {
        entityNames.withLock { $0[ObjectIdentifier(type)] }
    }
}

/// Whether `type` is `ancestor` or one of its subclasses.
func isClass(_ type: AnyClass, kindOf ancestor: AnyClass) -> Bool {
    var current: AnyClass? = type
    while let candidate = current {
        if candidate == ancestor { return true }
        current = _getSuperclass(candidate)
    }
    return false
}
