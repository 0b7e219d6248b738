/// Registering ``EntityObject`` subclasses for entities: what Core Data's
/// `managedObjectClassName` (and Xcode's Class field) does.
extension ObjectModel {
    /// Makes every object of the entity named `entityName` an instance of `type`, in every context
    /// of every stack using this model: inserted, fetched, faults, relationships' destinations.
    /// Objects of its sub-entities are too, unless a subclass of `type` is registered for them.
    ///
    /// ```swift
    /// try model.setManagedObjectClass(Book.self, forEntityName: "Book")
    /// ```
    ///
    /// Register classes before the model's first use: an entity's class is fixed when its first
    /// object is made (Core Data raises when `managedObjectClassName` is set on a model in use).
    /// - Parameters:
    ///   - type: ``EntityObject`` or a subclass that declares no stored property.
    ///   - entityName: an entity of the model.
    /// - Throws: ``SkerryError/Code/unknownEntity``; ``SkerryError/Code/invalidArgument`` when
    ///   `type` declares stored properties, when it is not a subclass of the class registered for
    ///   a superentity (or a sub-entity's class is not a subclass of it), or when objects of the
    ///   entity or of a sub-entity that takes its class were already made with another class.
    public func setManagedObjectClass(_ type: EntityObject.Type, forEntityName entityName: String) throws(SkerryError) {
        guard let entity = entity(named: entityName) else {
            throw SkerryError(.unknownEntity, "The model has no entity '\(entityName)'.", entityName: entityName)
        }
        try EntityDescription.checkSubclass(type, entity: entityName)
        let name = String(reflecting: type)
        // The classes of an entity hierarchy nest as the entities do, so that the objects a fetch
        // of an entity returns (its sub-entities' too) are all instances of its class.
        var ancestor = entity.superentity
        while let parent = ancestor {
            if let parentClass = parent.classBinding.explicit {
                guard isClass(type, kindOf: parentClass) else {
                    throw SkerryError(
                        .invalidArgument,
                        "\(name) cannot represent '\(entityName)': its superentity '\(parent.name)' is represented by \(String(reflecting: parentClass)), of which \(name) is not a subclass.",
                        entityName: entityName)
                }
                break
            }
            ancestor = parent.superentity
        }
        for other in entities where other !== entity && other.isKind(of: entity) {
            if let otherClass = other.classBinding.explicit, !isClass(otherClass, kindOf: type) {
                throw SkerryError(
                    .invalidArgument,
                    "\(name) cannot represent '\(entityName)': its sub-entity '\(other.name)' is represented by \(String(reflecting: otherClass)), which is not a subclass of \(name).",
                    entityName: entityName)
            }
        }
        // The entity and the sub-entities that would take the new class: none may have made
        // objects of another class.
        for other in entities where other.isKind(of: entity) {
            guard let made = other.classBinding.resolved else { continue }
            var inherits = true
            var current: EntityDescription? = other
            while let candidate = current, candidate !== entity {
                if candidate.classBinding.explicit != nil {
                    inherits = false
                    break
                }
                current = candidate.superentity
            }
            if inherits && made != type {
                throw SkerryError(
                    .invalidArgument,
                    "\(name) cannot represent '\(entityName)': objects of '\(other.name)' were already made as \(String(reflecting: made)). Register classes before the model is used.",
                    entityName: entityName)
            }
        }
        entity.classBinding.setExplicit(type)
        EntityDescription.recordEntityName(entityName, for: type)
    }

    /// Registers each class for the entities whose class name in the model
    /// (``EntityDescription/managedObjectClassName``, Xcode's `representedClassName`) is the
    /// class's name, with or without its module: one call ports an Xcode model's Class fields.
    ///
    /// ```swift
    /// try model.setManagedObjectClasses([Author.self, Book.self])
    /// ```
    /// - Parameter types: ``EntityObject`` subclasses without stored properties.
    /// - Throws: ``SkerryError/Code/unknownEntity`` when no entity names one of the classes; as
    ///   ``setManagedObjectClass(_:forEntityName:)`` otherwise. Superentities' classes are
    ///   registered first, whatever the order of `types`. When one fails, none is registered:
    ///   the entities keep the classes they had.
    public func setManagedObjectClasses(_ types: [EntityObject.Type]) throws(SkerryError) {
        var pairs: [(EntityObject.Type, EntityDescription)] = []
        for type in types {
            let qualified = String(reflecting: type)
            let named = entities.filter { entity in
                guard let name = entity.classBinding.declaredName else { return false }
                let unqualified = name.split(separator: ".").last.map(String.init) ?? name
                return name == qualified || (!name.dropFirst().contains(".") && unqualified == String(describing: type))
            }
            guard !named.isEmpty else {
                throw SkerryError(
                    .unknownEntity,
                    "No entity of the model names the class \(qualified) (Xcode's Class field, representedClassName): register it with setManagedObjectClass(_:forEntityName:)."
                )
            }
            pairs += named.map { (type, $0) }
        }
        // Superentities first, so that each sub-entity's class is checked against its parent's.
        func depth(_ entity: EntityDescription) -> Int {
            var depth = 0
            var current = entity.superentity
            while let parent = current {
                depth += 1
                current = parent.superentity
            }
            return depth
        }
        let before = entities.map { ($0, $0.classBinding.explicit) }
        do throws(SkerryError) {
            for (type, entity) in pairs.sorted(by: { depth($0.1) < depth($1.1) }) {
                try setManagedObjectClass(type, forEntityName: entity.name)
            }
        } catch {
            for (entity, type) in before { entity.classBinding.setExplicit(type) }
            throw error
        }
    }

    /// The entities whose own class (not inherited from a superentity) is exactly `type`.
    func entities(representedBy type: EntityObject.Type) -> [EntityDescription] {
        entities.filter { $0.classBinding.explicit == type }
    }
}
