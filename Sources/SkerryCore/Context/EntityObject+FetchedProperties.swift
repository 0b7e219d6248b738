import Foundation

extension EntityObject {
    /// The objects of the fetched property `key` (Core Data's `NSFetchedPropertyDescription`):
    /// its fetch, run now in the object's context, with `$FETCH_SOURCE` standing for this object
    /// and `$FETCH_SOURCE.keyPath` for a value of it.
    /// - Parameter key: the fetched property's name.
    /// - Returns: the matching objects, in the store's order.
    /// - Throws: ``SkerryError/Code/unknownAttribute`` when the entity has no such fetched
    ///   property; ``SkerryError/Code/invalidPredicateFormat`` when its predicate does not parse;
    ///   as ``ObjectContext/fetch(_:)``.
    public func fetchedObjects(forKey key: String) throws(SkerryError) -> [EntityObject] {
        guard let property = entity.fetchedProperty(named: key) else {
            throw SkerryError(
                .unknownAttribute, "Entity '\(entity.name)' has no fetched property '\(key)'.", entityName: entity.name, key: key)
        }
        guard let context else {
            throw SkerryError(
                .objectNotInContext, "The object is in no context: its fetched property '\(key)' cannot be fetched.",
                entityName: entity.name, key: key, objectID: objectID)
        }
        var template = property.fetchRequest
        var variables: [String: Any] = [:]
        if let format = template.predicateFormat {
            // `$FETCH_SOURCE.keyPath` is a value of this object: each becomes a variable of its own.
            var rewritten = ""
            var rest = Substring(format)
            while let match = rest.firstMatch(of: /\$FETCH_SOURCE((?:\.[A-Za-z_][A-Za-z0-9_]*)*)/) {
                rewritten += rest[..<match.range.lowerBound]
                let path = String(match.output.1.dropFirst())
                let name = "__FETCH_SOURCE_\(variables.count)"
                variables[name] = try path.isEmpty ? self : value(atKeyPath: path)
                rewritten += "$\(name)"
                rest = rest[match.range.upperBound...]
            }
            rewritten += rest
            template = FetchRequestTemplate(
                name: template.name, entityName: template.entityName, predicateFormat: rewritten,
                fetchLimit: template.fetchLimit, fetchOffset: template.fetchOffset,
                fetchBatchSize: template.fetchBatchSize)
        }
        return try context.fetch(try template.fetchRequest(substitutionVariables: variables))
    }

    /// The value at `path`: attributes, through to-one relationships; a relationship at the end
    /// gives its object (or nil).
    private func value(atKeyPath path: String) throws(SkerryError) -> Any {
        var object: EntityObject? = self
        let parts = path.split(separator: ".").map(String.init)
        for (position, part) in parts.enumerated() {
            guard let current = object else { return AttributeValue.null }
            if current.entity.attribute(named: part) != nil, position == parts.count - 1 {
                return try current.value(forKey: part, as: AttributeValue.self)
            }
            object = try current.relatedObject(forKey: part)
        }
        return object.map { $0 as Any } ?? AttributeValue.null
    }
}
