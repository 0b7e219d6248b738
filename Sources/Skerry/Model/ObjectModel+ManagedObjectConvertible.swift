import SkerryCore

extension ManagedObjectConvertible {
    /// The entity described by the model type's declarations: one attribute per declared
    /// ``Attribute`` (sorted by name), the relations of ``relations`` with the inverses they
    /// declare, and the uniqueness constraints, indexes and defaults of ``entityOptions``.
    ///
    /// Inverses a declaration leaves out are derived only when a model is made of several types
    /// (`ObjectModel.init(types:)`), which sees both sides.
    public static func entityDescription() throws(SkerryError) -> EntityDescription {
        try entityDescription(derivedInverses: [:])
    }

    /// The entity, with `derivedInverses` (relation name -> inverse name) for relations that
    /// declare none.
    static func entityDescription(derivedInverses: [String: String]) throws(SkerryError) -> EntityDescription {
        let options = entityOptions
        if let error = options.encodingError { throw error }
        func names(_ keyPaths: [PartialKeyPath<Self>]) throws(SkerryError) -> [String] {
            var result: [String] = []
            for keyPath in keyPaths { result.append(try attributeName(keyPath)) }
            return result
        }
        let descriptions = attributes.sorted { $0.name < $1.name }.map { attribute in
            AttributeDescription(
                attribute.name, attribute.attributeType, isOptional: attribute.isOptional,
                defaultValue: options.defaults.last { $0.keyPath == attribute.keyPath }?.value)
        }
        let relationships = relationDeclarations.map { declaration in
            let declared = declaration.relationshipDescription
            guard declared.inverseName == nil, let inverse = derivedInverses[declared.name] else { return declared }
            return declaration.relationshipDescription(inverse: inverse)
        }
        var constraints: [[String]] = []
        for constraint in options.uniquenessConstraints { constraints.append(try names(constraint)) }
        var indexes: [IndexDescription] = []
        for index in options.indexes { indexes.append(IndexDescription(try names(index))) }
        return EntityDescription(
            name: entityName, attributes: descriptions, relationships: relationships,
            uniquenessConstraints: constraints, indexes: indexes)
    }
}

extension ObjectModel {
    /// A model of these model types, each an entity derived from its declarations.
    ///
    /// ```swift
    /// let model = try ObjectModel(types: [Book.self, Author.self])
    /// ```
    ///
    /// Relations written as in Sworm, without an `inverse:`, get their inverse here when it is
    /// unambiguous: when each of two types names the other's type in exactly one relation, those
    /// two relations are each other's inverse (`Author.books` ↔ `Book.author`). A relation whose
    /// inverse is declared on the other side only gets the matching inverse too. Other relations
    /// (two relations to the same type, a type related to itself) keep no inverse unless declared.
    /// - Throws: ``SkerryError/Code/invalidModel`` as `init(entities:)` does, and
    ///   ``SkerryError/Code/unknownAttribute`` for an option naming an undeclared key path.
    public convenience init(types: [any ManagedObjectConvertible.Type]) throws(SkerryError) {
        let declared = Dictionary(types.map { ($0.entityName, $0.relationshipDescriptions) }, uniquingKeysWith: { first, _ in first })
        let inverses = Self.derivedInverses(declared)
        var entities: [EntityDescription] = []
        for type in types { entities.append(try type.entityDescription(derivedInverses: inverses[type.entityName] ?? [:])) }
        try self.init(entities: entities)
    }

    /// The inverses Sworm-style declarations leave out (see ``init(types:)``): for each entity, the
    /// relations that declare no inverse and the inverse each one gets.
    /// - Parameter declared: each entity's relationships as declared, by entity name.
    static func derivedInverses(_ declared: [String: [RelationshipDescription]]) -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for (entity, relationships) in declared {
            for relationship in relationships where relationship.inverseName == nil {
                let destination = relationship.destinationEntityName
                guard destination != entity, let destinationRelationships = declared[destination] else { continue }
                let pointingBack = destinationRelationships.filter { $0.destinationEntityName == entity }
                if let declaredBack = pointingBack.first(where: { $0.inverseName == relationship.name }) {
                    result[entity, default: [:]][relationship.name] = declaredBack.name // declared on the other side only
                } else if relationships.filter({ $0.destinationEntityName == destination }).count == 1,
                    pointingBack.count == 1, pointingBack[0].inverseName == nil
                {
                    result[entity, default: [:]][relationship.name] = pointingBack[0].name // each names the other once
                }
            }
        }
        return result
    }
}
