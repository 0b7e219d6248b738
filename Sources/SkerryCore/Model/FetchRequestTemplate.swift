/// A fetch request stored in a model (Core Data's fetch request template, or the request of a
/// fetched property): an entity and a predicate in Core Data's format language, whose `$VARIABLE`s
/// get values when the request is made.
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The template's name.
    public let name: String
    /// The entity it fetches.
    public let entityName: String
    /// The predicate, in Core Data's predicate format language (with `$VARIABLE`s), or nil for
    /// every object of the entity.
    public let predicateFormat: String?
    /// The most objects to fetch; 0 for no limit.
    public let fetchLimit: Int
    /// How many matching objects to skip first.
    public let fetchOffset: Int
    /// The batch size of the fetch; 0 to load every object at once.
    public let fetchBatchSize: Int

    /// Describes a template.
    /// - Parameters:
    ///   - name: the name it is found by.
    ///   - entityName: the entity it fetches.
    ///   - predicateFormat: its predicate in Core Data's format language; nil for all objects.
    ///   - fetchLimit: the most objects, 0 for no limit.
    ///   - fetchOffset: how many objects to skip.
    ///   - fetchBatchSize: the batch size, 0 for none.
    public init(
        name: String, entityName: String, predicateFormat: String? = nil,
        fetchLimit: Int = 0, fetchOffset: Int = 0, fetchBatchSize: Int = 0
    ) {
        self.name = name
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.fetchBatchSize = fetchBatchSize
    }
}

/// A fetched property: a property of an entity whose value is the result of a fetch, made for
/// each object, whose predicate can name the object as `$FETCH_SOURCE` (Core Data's
/// `NSFetchedPropertyDescription`). It is not stored.
public struct FetchedPropertyDescription: Sendable, Hashable {
    /// The property's name.
    public let name: String
    /// The fetch: its entity, and a predicate that may use `$FETCH_SOURCE` (the object) and
    /// `$FETCH_SOURCE.key` (a value of the object).
    public let fetchRequest: FetchRequestTemplate

    /// Describes a fetched property.
    /// - Parameters:
    ///   - name: the property's name.
    ///   - fetchRequest: the fetch it runs.
    public init(_ name: String, fetchRequest: FetchRequestTemplate) {
        self.name = name
        self.fetchRequest = fetchRequest
    }
}

extension FetchRequestTemplate {
    /// The fetch request this template describes, its `$VARIABLE`s replaced by
    /// `substitutionVariables` (Core Data's `fetchRequestFromTemplate(withName:substitutionVariables:)`).
    /// - Parameter substitutionVariables: a value for each variable, by name without `$`.
    /// - Throws: ``SkerryError/Code/invalidPredicateFormat`` when the predicate does not parse or
    ///   a variable has no value.
    public func fetchRequest(substitutionVariables: [String: Any] = [:]) throws(SkerryError) -> FetchRequest {
        var request = FetchRequest(entityName: entityName)
        if let predicateFormat {
            let predicate = try FetchPredicate(format: predicateFormat)
            request.predicate = try predicate.withSubstitutionVariables(substitutionVariables)
        }
        request.fetchLimit = fetchLimit
        request.fetchOffset = fetchOffset
        request.fetchBatchSize = fetchBatchSize
        return request
    }
}

extension ObjectModel {
    /// The fetch request of the template named `name`, with its variables replaced.
    /// - Parameters:
    ///   - name: the template's name.
    ///   - substitutionVariables: a value for each `$VARIABLE`, by name without `$`.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for a name the model has no template of;
    ///   as ``FetchRequestTemplate/fetchRequest(substitutionVariables:)``.
    public func fetchRequest(fromTemplate name: String, substitutionVariables: [String: Any] = [:]) throws(SkerryError) -> FetchRequest {
        guard let template = fetchRequestTemplates[name] else {
            throw SkerryError(
                .invalidArgument,
                "The model has no fetch request template '\(name)'; its templates are \(fetchRequestTemplates.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")).",
                key: name)
        }
        return try template.fetchRequest(substitutionVariables: substitutionVariables)
    }
}
