import SkerryCore

extension ManagedObjectConvertible {
    /// The entity described by the model type's declarations: one attribute per declared
    /// ``Attribute`` (sorted by name), with the uniqueness constraints, indexes and defaults of
    /// ``entityOptions``.
    public static func entityDescription() throws(SkerryError) -> EntityDescription {
        let options = entityOptions
        if let error = options.encodingError { throw error }
        func names(_ keyPaths: [PartialKeyPath<Self>]) throws(SkerryError) -> [String] {
            var result: [String] = []
            for keyPath in keyPaths { result.append(try attributeName(keyPath)) }
            return result
        }
        let descriptions = attributes.sorted { $0.name < $1.name }.map { attribute in
            AttributeDescription(attribute.name, attribute.attributeType, isOptional: attribute.isOptional,
                                 defaultValue: options.defaults.last { $0.keyPath == attribute.keyPath }?.value)
        }
        var constraints: [[String]] = []
        for constraint in options.uniquenessConstraints { constraints.append(try names(constraint)) }
        var indexes: [IndexDescription] = []
        for index in options.indexes { indexes.append(IndexDescription(try names(index))) }
        return EntityDescription(name: entityName, attributes: descriptions, relationships: relationshipDescriptions,
                                 uniquenessConstraints: constraints, indexes: indexes)
    }
}

extension ObjectModel {
    /// A model of these model types, each an entity derived from its declarations.
    ///
    /// ```swift
    /// let model = try ObjectModel(types: [Book.self, Author.self])
    /// ```
    /// - Throws: ``SkerryError/Code/invalidModel`` as ``init(entities:)`` does, and
    ///   ``SkerryError/Code/unknownAttribute`` for an option naming an undeclared key path.
    public convenience init(types: [any ManagedObjectConvertible.Type]) throws(SkerryError) {
        var entities: [EntityDescription] = []
        for type in types { entities.append(try type.entityDescription()) }
        try self.init(entities: entities)
    }
}
