import Foundation
import Synchronization

extension XcodeMappingModel {
    /// The plan step this mapping drives, from the version at `index` of a plan to the next.
    ///
    /// With the two versions' models, every entity and property name the mapping uses is checked
    /// against them, constants are converted to their attribute's type, and key paths through
    /// to-one relationships (`$source.owner.name`) are carried out; without them, only key paths
    /// of the source object's own properties and constants are.
    /// - Parameters:
    ///   - index: the index of the source version in the plan.
    ///   - source: the source version's model.
    ///   - destination: the destination version's model.
    /// - Throws: ``SkerryError/Code/modelMismatch`` naming the entity mapping and the policy class,
    ///   expression, entity or property it cannot carry out (a name one of the models does not
    ///   have, a constant that does not fit its attribute, two source entities into one).
    public func migrationStep(from index: Int, source: ObjectModel? = nil, destination: ObjectModel? = nil) throws(SkerryError)
        -> MigrationStep
    {
        try migrationStep(from: index, source: source, destination: destination, leavingToCustomCode: false)
    }

    /// ``migrationStep(from:source:destination:)``; with `leavingToCustomCode`, what the step
    /// cannot carry out (a custom policy class, an expression it cannot compute) is left out
    /// rather than refused, for a custom step of the same versions to do.
    func migrationStep(from index: Int, source: ObjectModel?, destination: ObjectModel?, leavingToCustomCode: Bool) throws(SkerryError)
        -> MigrationStep
    {
        try migrationStepAndFiltersLeft(from: index, source: source, destination: destination, leavingToCustomCode: leavingToCustomCode)
            .step
    }

    /// ``migrationStep(from:source:destination:leavingToCustomCode:)``, with the refusals of
    /// the filter predicates it left to the custom step (whose `keepsRow` must then answer for them).
    func migrationStepAndFiltersLeft(
        from index: Int, source: ObjectModel?, destination: ObjectModel?, leavingToCustomCode: Bool
    ) throws(SkerryError) -> (step: MigrationStep, filtersLeft: [SkerryError]) {
        var builder = StepBuilder(mapping: self, index: index, source: source, destination: destination)
        builder.leavesToCustomCode = leavingToCustomCode
        let keeping = keyKeepingMappings(destination: destination)
        builder.copyMappings = Set(
            entityMappings.filter { $0.sourceEntityName != nil && $0.destinationEntityName != nil && !keeping.contains($0.name) }.map(
                \.name))
        do {
            for entityMapping in entityMappings { try builder.checkEntities(entityMapping) }
            for entityMapping in entityMappings { try builder.add(entityMapping) }
            if !leavingToCustomCode { try builder.checkLinksIntoCopies() }
        } catch {
            switch error {
            case .cannot(let error), .missing(let error): throw error
            }
        }
        return (builder.step(), builder.filtersLeft)
    }
}

/// Why a mapping cannot drive its step: something it asks that Skerry cannot carry out, or a
/// name its versions do not have.
enum Refusal: Error {
    case cannot(SkerryError)
    case missing(SkerryError)
}

/// Turns a mapping model's entity mappings into a ``MigrationStep``: renames where a mapping
/// names another entity or property, code (`prepare` and `transformRow`) for the rest.
struct StepBuilder {
    let mapping: XcodeMappingModel
    let index: Int
    let source: ObjectModel?
    let destination: ObjectModel?
    var renamedEntities: [String: String] = [:], renamedAttributes: [String: String] = [:]
    var renamedRelationships: [String: String] = [:]
    /// Destination entity -> the entity mapping that fills it.
    var filled: [String: String] = [:]
    /// Destination entity -> what each of its rows gets.
    var assignments: [String: [Assignment]] = [:]
    /// The hierarchies (by root entity name) whose rows `prepare` reads, with their entities.
    var lookups: [String: [String]] = [:]
    /// Whether what cannot be carried out is left out (for a custom step) rather than refused.
    var leavesToCustomCode = false
    /// Destination entity -> the source filter predicate that picks the source rows it takes.
    var filters: [String: MappingFilter] = [:]
    /// The foreign-key columns of the `lookups` hierarchies read from the other side (by root).
    var lookupForeignKeys: [String: Set<String>] = [:]
    /// The entity mappings whose objects `finish` makes: each mapping of a source entity that has
    /// several but the one whose rows keep their keys (see ``XcodeMappingModel/keyKeepingMappings(destination:)``).
    var copyMappings: Set<String> = []
    /// What `finish` makes for each of them.
    var copies: [Copy] = []
    /// The refusals of the filters left to a custom step's `keepsRow` (see ``leavesToCustomCode``).
    var filtersLeft: [SkerryError] = []

    init(mapping: XcodeMappingModel, index: Int, source: ObjectModel?, destination: ObjectModel?) {
        self.mapping = mapping
        self.index = index
        self.source = source
        self.destination = destination
    }

    func failure(_ entityMapping: XcodeMappingModel.EntityMapping, _ what: String) -> Refusal {
        .cannot(
            SkerryError(
                .modelMismatch,
                "\(mapping.url.path): the entity mapping '\(entityMapping.name)' \(what), which Skerry cannot carry out: write that part of the migration as a MigrationStep(from: \(index)) (transformRow or finish) and give it to the plan with the mapping model, which then drives the rest of step \(index + 1).",
                entityName: entityMapping.destinationEntityName ?? entityMapping.sourceEntityName, key: entityMapping.name))
    }

    func missing(_ entityMapping: XcodeMappingModel.EntityMapping, _ what: String, in version: String?) -> Refusal {
        .missing(
            SkerryError(
                .modelMismatch,
                "\(mapping.url.path): the entity mapping '\(entityMapping.name)' names \(what), which the model version '\(version ?? "?")' does not have: the mapping model was made for other versions of the model (make it again in Xcode).",
                entityName: entityMapping.destinationEntityName ?? entityMapping.sourceEntityName, key: entityMapping.name))
    }

    /// Fails when the entity mapping names an entity its version does not have.
    func checkEntities(_ entityMapping: XcodeMappingModel.EntityMapping) throws(Refusal) {
        if let name = entityMapping.destinationEntityName, let destination, destination.entity(named: name) == nil {
            throw missing(entityMapping, "the destination entity '\(name)'", in: mapping.destinationVersionName)
        }
        if let name = entityMapping.sourceEntityName, let source, source.entity(named: name) == nil {
            throw missing(entityMapping, "the source entity '\(name)'", in: mapping.sourceVersionName)
        }
    }

    mutating func add(_ entityMapping: XcodeMappingModel.EntityMapping) throws(Refusal) {
        if let policy = entityMapping.migrationPolicyClassName, !leavesToCustomCode {
            throw failure(entityMapping, "uses the custom migration policy class '\(policy)' (app code, which cannot run on Linux)")
        }
        // A mapping without a destination drops the source's objects; one without a source
        // (Xcode's "add" mapping) makes new objects only: nothing to do for existing rows.
        guard let destinationName = entityMapping.destinationEntityName else { return }
        let destinationEntity = destination?.entity(named: destinationName)
        if destination != nil && destinationEntity == nil {
            throw missing(entityMapping, "the destination entity '\(destinationName)'", in: mapping.destinationVersionName)
        }
        guard let sourceName = entityMapping.sourceEntityName else { return }
        let sourceEntity = source?.entity(named: sourceName)
        if source != nil && sourceEntity == nil {
            throw missing(entityMapping, "the source entity '\(sourceName)'", in: mapping.sourceVersionName)
        }
        if let other = filled[destinationName] {
            if leavesToCustomCode { return }
            throw failure(
                entityMapping,
                "fills '\(destinationName)', which the entity mapping '\(other)' fills too (objects of two source entities into one)")
        }
        filled[destinationName] = entityMapping.name
        if let filter = entityMapping.sourceFilterPredicate {
            do {
                try addFilter(filter, of: entityMapping, source: sourceEntity, destinationName: destinationName)
            } catch {
                // Left to the custom step's keepsRow, which the plan then requires.
                guard case .cannot(let refusal) = error, leavesToCustomCode else { throw error }
                filtersLeft.append(refusal)
            }
        }
        if copyMappings.contains(entityMapping.name) {
            try addCopy(entityMapping, source: sourceEntity, destination: destinationEntity)
            return
        }
        if sourceName != destinationName { renamedEntities[destinationName] = sourceName }
        for property in entityMapping.attributeMappings {
            try leavingToCustomCode { (builder: inout StepBuilder) throws(Refusal) in
                try builder.addAttribute(property, of: entityMapping, source: sourceEntity, destination: destinationEntity)
            }
        }
        for property in entityMapping.relationshipMappings {
            try leavingToCustomCode { (builder: inout StepBuilder) throws(Refusal) in
                try builder.addRelationship(property, of: entityMapping, source: sourceEntity, destination: destinationEntity)
            }
        }
    }

    /// A source filter predicate: the step keeps the source rows that match it (its `keepsRow`,
    /// or the `finish` that makes the objects of a second mapping of the same source entity),
    /// evaluated as a fetch's predicate is. One Skerry cannot evaluate on the old rows is refused.
    mutating func addFilter(
        _ filter: String, of entityMapping: XcodeMappingModel.EntityMapping, source sourceEntity: EntityDescription?,
        destinationName: String
    ) throws(Refusal) {
        func refusal(_ reason: String) -> Refusal {
            .cannot(
                SkerryError(
                    .modelMismatch,
                    "\(mapping.url.path): the entity mapping '\(entityMapping.name)' keeps only the source objects that match its filter predicate '\(filter)', which Skerry cannot evaluate on the old rows (\(reason)): give the plan, with the mapping model, a MigrationStep(from: \(index)) whose keepsRow, asked with the entity '\(destinationName)' and an old '\(entityMapping.sourceEntityName ?? "")' row, returns whether the filter keeps that row.",
                    entityName: destinationName, key: entityMapping.name))
        }
        guard let source, let sourceEntity else { throw refusal("the plan has no source model to resolve it against") }
        switch MappingFilter.compile(filter, mapping: entityMapping.name, entity: sourceEntity, model: source) {
        case .failure(let problem):
            throw refusal(problem.reason)
        case .success(let compiled):
            for (root, entities) in compiled.hierarchies { lookups[root] = entities }
            lookupForeignKeys.merge(compiled.foreignKeys) { $0.union($1) }
            filters[destinationName] = compiled
        }
    }

    /// Runs `body`; when the builder leaves to custom code what it cannot carry out, such a
    /// refusal is dropped (a name the versions do not have never is).
    mutating func leavingToCustomCode(_ body: (inout StepBuilder) throws(Refusal) -> Void) throws(Refusal) {
        do {
            try body(&self)
        } catch {
            if case .cannot = error, leavesToCustomCode { return }
            throw error
        }
    }

    mutating func addAttribute(
        _ property: XcodeMappingModel.PropertyMapping, of entityMapping: XcodeMappingModel.EntityMapping,
        source sourceEntity: EntityDescription?, destination destinationEntity: EntityDescription?
    ) throws(Refusal) {
        let destinationName = entityMapping.destinationEntityName!, key = "\(destinationName).\(property.name)"
        let attribute = destinationEntity?.attribute(named: property.name)
        if let destinationEntity, attribute == nil {
            throw missing(entityMapping, "the attribute '\(destinationEntity.name).\(property.name)'", in: mapping.destinationVersionName)
        }
        guard let expression = property.valueExpression else { return }
        if case .keyPath(let path) = expression, !path.contains(".") {
            if let sourceEntity, sourceEntity.attribute(named: path) == nil {
                throw missing(entityMapping, "the attribute '\(sourceEntity.name).\(path)'", in: mapping.sourceVersionName)
            }
            if path != property.name { renamedAttributes[key] = path }
            return
        }
        if case .constant(let value) = expression {
            var converted = value
            if let attribute {
                guard let fitting = MappingValue.convert(value, to: attribute.type) else {
                    throw failure(entityMapping, "sets '\(property.name)' to the constant \(value), which is no \(attribute.type) value")
                }
                converted = fitting
            }
            assignments[destinationName, default: []].append(
                Assignment(name: property.name, type: attribute?.type, value: .constant(converted)))
            return
        }
        let value = try evaluable(expression, of: entityMapping, source: sourceEntity, what: "sets '\(property.name)' to \(expression)")
        assignments[destinationName, default: []].append(Assignment(name: property.name, type: attribute?.type, value: value))
    }

    mutating func addRelationship(
        _ property: XcodeMappingModel.PropertyMapping, of entityMapping: XcodeMappingModel.EntityMapping,
        source sourceEntity: EntityDescription?, destination destinationEntity: EntityDescription?
    ) throws(Refusal) {
        let destinationName = entityMapping.destinationEntityName!, key = "\(destinationName).\(property.name)"
        let relationship = destinationEntity?.relationship(named: property.name)
        if let destinationEntity, relationship == nil {
            throw missing(
                entityMapping, "the relationship '\(destinationEntity.name).\(property.name)'", in: mapping.destinationVersionName)
        }
        let path: String
        switch property.valueExpression {
        case nil: return
        case .destinationInstances(let keyPath)?, .keyPath(let keyPath)?: path = keyPath
        case let expression?: throw failure(entityMapping, "sets the relationship '\(property.name)' to \(expression)")
        }
        if path.isEmpty {
            // The objects a second entity mapping makes of the source object: they link back,
            // setting this relationship's inverse.
            guard let relationship, isSetByANewObject(inverseOf: relationship) else {
                throw failure(
                    entityMapping, "sets the relationship '\(property.name)' to the objects another entity mapping makes of $source")
            }
            return
        }
        if !path.contains(".") {
            if let sourceEntity, sourceEntity.relationship(named: path) == nil {
                throw missing(entityMapping, "the relationship '\(sourceEntity.name).\(path)'", in: mapping.sourceVersionName)
            }
            if path != property.name { renamedRelationships[key] = path }
            return
        }
        // A path of to-one relationships into a to-one relationship: the foreign key of the
        // object it reaches (keys carry over).
        let what = "sets the relationship '\(property.name)' to the destination objects of $source.\(path)"
        guard let relationship else { throw failure(entityMapping, what) }
        if relationship.isToMany {
            // The to-many side of a pair whose to-one side this mapping model sets too (as Core
            // Data keeps both sides of a pair consistent, its links are the to-one side's).
            guard isSetByAnotherMapping(inverseOf: relationship) else {
                throw failure(entityMapping, what + " (a to-many relationship whose to-one inverse the mapping model does not set)")
            }
            return
        }
        let value = try evaluable(.keyPath(path), of: entityMapping, source: sourceEntity, what: what, endingInRelationship: true)
        assignments[destinationName, default: []].append(
            Assignment(name: property.name, type: nil, value: value, reached: sourceEntity.flatMap { reachedEntity(path, from: $0) }))
    }

    /// Whether the inverse of `relationship` is set, to the source object's own destination
    /// object, on the objects a second entity mapping makes (see ``addCopy(_:source:destination:)``).
    func isSetByANewObject(inverseOf relationship: RelationshipDescription) -> Bool {
        guard let inverseName = relationship.inverseName else { return false }
        return mapping.entityMappings.contains { other in
            copyMappings.contains(other.name)
                && other.destinationEntityName.flatMap { destination?.entity(named: $0) }?.isKind(
                    ofEntityNamed: relationship.destinationEntityName) == true
                && other.relationshipMappings.contains {
                    $0.name == inverseName
                        && ($0.valueExpression == .destinationInstances(sourceKeyPath: "") || $0.valueExpression == .keyPath(""))
                }
        }
    }

    /// Whether `relationship` has a to-one inverse that an entity mapping of this mapping model
    /// sets with an expression.
    func isSetByAnotherMapping(inverseOf relationship: RelationshipDescription) -> Bool {
        guard let inverseName = relationship.inverseName,
            let inverse = destination?.entity(named: relationship.destinationEntityName)?.relationship(named: inverseName),
            !inverse.isToMany
        else { return false }
        return mapping.entityMappings.contains { other in
            other.sourceEntityName != nil && other.destinationEntityName == relationship.destinationEntityName
                && other.relationshipMappings.contains { $0.name == inverseName && $0.valueExpression != nil }
        }
    }

    /// The source entity a path of relationships from `entity` reaches (nil: a name on the way
    /// is no relationship, which ``evaluable(_:of:source:what:endingInRelationship:)`` reports).
    func reachedEntity(_ path: String, from entity: EntityDescription) -> String? {
        var reached = entity
        for name in path.split(separator: ".").map(String.init) {
            guard let next = reached.relationship(named: name).flatMap({ source?.entity(named: $0.destinationEntityName) }) else {
                return nil
            }
            reached = next
        }
        return reached.name
    }

    /// An expression as code, checking each key path against the source model.
    mutating func evaluable(
        _ expression: XcodeMappingModel.ValueExpression, of entityMapping: XcodeMappingModel.EntityMapping,
        source sourceEntity: EntityDescription?, what: String, endingInRelationship: Bool = false
    ) throws(Refusal) -> Evaluable {
        switch expression {
        case .constant(let value):
            return .constant(value)
        case .keyPath(let path):
            let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard let source, var entity = sourceEntity else {
                guard names.count == 1 else {
                    throw failure(entityMapping, what + " (a key path through relationships needs the source model)")
                }
                return .keyPath(hops: [], last: names[0])
            }
            var hops: [Hop] = []
            for name in names.dropLast() {
                guard let relationship = entity.relationship(named: name) else {
                    if entity.attribute(named: name) == nil && !name.hasPrefix("@") {
                        throw missing(
                            entityMapping, "the relationship '\(entity.name).\(name)' (in $source.\(path))", in: mapping.sourceVersionName)
                    }
                    throw failure(entityMapping, what + " ('\(name)' is no relationship)")
                }
                guard !relationship.isToMany, let next = source.entity(named: relationship.destinationEntityName) else {
                    throw failure(entityMapping, what + " ('\(entity.name).\(name)' is a to-many relationship)")
                }
                let root = next.rootEntity.name
                lookups[root] = source.entityAndSubentities(of: next.rootEntity).map(\.name)
                hops.append(Hop(relationship: name, hierarchy: root))
                entity = next
            }
            let last = names[names.count - 1]
            let found =
                endingInRelationship
                ? entity.relationship(named: last).map { !$0.isToMany } : entity.attribute(named: last).map { _ in true }
            guard let found else {
                throw missing(
                    entityMapping,
                    "the \(endingInRelationship ? "relationship" : "attribute") '\(entity.name).\(last)' (in $source.\(path))",
                    in: mapping.sourceVersionName)
            }
            guard found else { throw failure(entityMapping, what + " ('\(entity.name).\(last)' is a to-many relationship)") }
            return .keyPath(hops: hops, last: last)
        case .function(let receiver, let selector, let arguments):
            guard MappingValue.selectors.contains(selector) else {
                throw failure(entityMapping, what + " (Skerry knows no method '\(selector)')")
            }
            var values: [Evaluable] = []
            for argument in arguments { values.append(try evaluable(argument, of: entityMapping, source: sourceEntity, what: what)) }
            return .function(try evaluable(receiver, of: entityMapping, source: sourceEntity, what: what), selector, values)
        case .predefinedFunction(let name, let arguments):
            guard MappingValue.predefinedFunctions[name] == arguments.count else {
                throw failure(entityMapping, what + " (Skerry knows no function '\(name)' of \(arguments.count) argument(s))")
            }
            var values: [Evaluable] = []
            for argument in arguments { values.append(try evaluable(argument, of: entityMapping, source: sourceEntity, what: what)) }
            return .predefined(name, values)
        case .destinationInstances, .unsupported:
            throw failure(entityMapping, what)
        }
    }

    func step() -> MigrationStep {
        guard !assignments.isEmpty || !filters.isEmpty || !copies.isEmpty else {
            return MigrationStep(
                from: index, renamedAttributes: renamedAttributes, renamedEntities: renamedEntities,
                renamedRelationships: renamedRelationships)
        }
        let rows = RowLookup(), lookups = lookups, foreignKeys = lookupForeignKeys, assignments = assignments
        let filters = filters, copies = copies
        let made = Set(copies.map(\.destination))
        let keptRows = filters.filter { !made.contains($0.key) } // the others pick the rows `finish` makes
        // A step with a transformRow is trusted with required values: this one checks them
        // itself (as the migration does for a step without code), after its assignments; with
        // a custom step's code after it, that code answers for them.
        let required = Dictionary(
            (leavesToCustomCode ? [] : destination?.entities ?? []).map { entity in
                (
                    entity.name,
                    entity.storedAttributes.filter { !$0.isOptional && $0.defaultValue.isNull && $0.derivation == nil }.map(\.name)
                )
            }, uniquingKeysWith: { first, _ in first })
        let number = index + 1
        let checkRequired = { @Sendable (entity: String, source: MigrationRow, row: MigrationRow) throws -> Void in
            for name in required[entity] ?? [] where row[name].isNull {
                throw SkerryError(
                    .missingRequiredValue,
                    "Step \(number): '\(entity).\(name)' is required and has no default value, and the mapping model leaves it empty in the row made from row \(source.primaryKey); Core Data's migration fails the same way. Give the attribute a default value, or a value expression in the mapping model.",
                    entityName: entity, key: name)
            }
        }
        let assign = { @Sendable (entity: String, assigned: [Assignment], source: MigrationRow, row: inout MigrationRow) throws -> Void in
            let lookup = rows.storage.withLock { $0 }
            for assignment in assigned {
                let value = assignment.value.evaluate(source, lookup)
                guard let type = assignment.type else {
                    // A relationship's old key: the reached row's key in the new store, or none
                    // when the step left it out.
                    if let reached = assignment.reached, case .int(let key) = value {
                        // Only a store running the step knows the new keys: the old key, written
                        // as is, would link to another row or to none.
                        guard let carried = CarriedRows.current else {
                            throw SkerryError(
                                .invalidArgument,
                                "Step \(number): the mapping model sets '\(entity).\(assignment.name)' to an object its relationships reach, whose key in the new store is known only while a store runs the step; this transformRow was called outside the store's migration (on its own, or on another thread than the one the store called the step's code on).",
                                entityName: entity, key: assignment.name)
                        }
                        row[assignment.name] = carried.newKey(reached, key).map(AttributeValue.int) ?? .null
                    } else {
                        row[assignment.name] = value
                    }
                    continue
                }
                guard let converted = MappingValue.convert(value, to: type) else {
                    throw SkerryError(
                        .migrationWouldLoseData,
                        "Step \(number): the mapping model sets '\(entity).\(assignment.name)' of row \(source.primaryKey) to \(value), which is no \(type) value.",
                        entityName: entity, key: assignment.name)
                }
                row[assignment.name] = converted
            }
        }
        var prepare: (@Sendable (MigrationContext) throws -> Void)?
        if !lookups.isEmpty {
            prepare = { @Sendable (context: MigrationContext) throws -> Void in
                var read: [String: [Int64: MigrationRow]] = [:], entities: [String: [Int64: String]] = [:]
                for (root, names) in lookups {
                    for entity in names {
                        for row in try context.sourceRows(of: entity) {
                            read[root, default: [:]][row.primaryKey] = row
                            entities[root, default: [:]][row.primaryKey] = entity
                        }
                    }
                }
                let gathered = SourceRows(rows: read, entities: entities, foreignKeys: foreignKeys)
                rows.storage.withLock { $0 = gathered }
            }
        }
        var keepsRow: (@Sendable (String, MigrationRow) throws -> Bool)?
        if !keptRows.isEmpty {
            keepsRow = { @Sendable (entity: String, source: MigrationRow) throws -> Bool in
                guard let filter = keptRows[entity] else { return true }
                return try filter.matches(source, rows.storage.withLock { $0 })
            }
        }
        var transformRow: (@Sendable (String, MigrationRow, inout MigrationRow) throws -> Void)?
        if !assignments.isEmpty {
            transformRow = { @Sendable (entity: String, source: MigrationRow, row: inout MigrationRow) throws -> Void in
                try assign(entity, assignments[entity] ?? [], source, &row)
                try checkRequired(entity, source, row)
            }
        }
        var finish: (@Sendable (MigrationContext) throws -> Void)?
        if !copies.isEmpty {
            // The objects of the second mappings of a source entity: new rows (new keys), made
            // from the source rows their filter and the step's keepsRow keep.
            finish = { @Sendable (context: MigrationContext) throws -> Void in
                let lookup = rows.storage.withLock { $0 }
                for copy in copies {
                    let filter = filters[copy.destination]
                    for source in try context.sourceRows(of: copy.source) {
                        if let filter, try !filter.matches(source, lookup) { continue }
                        if let keepsRow = context.keepsRow, try !keepsRow(copy.destination, source) { continue }
                        var row = MigrationRow(primaryKey: source.primaryKey, values: [:])
                        try assign(copy.destination, copy.attributes, source, &row)
                        try copy.link(&row, from: source, lookup, context)
                        try checkRequired(copy.destination, source, row)
                        _ = try context.insert(copy.destination, row.values)
                    }
                }
            }
        }
        return MigrationStep(
            from: index, renamedAttributes: renamedAttributes, renamedEntities: renamedEntities,
            renamedRelationships: renamedRelationships, prepare: prepare, keepsRow: keepsRow, transformRow: transformRow,
            finish: finish)
    }
}
