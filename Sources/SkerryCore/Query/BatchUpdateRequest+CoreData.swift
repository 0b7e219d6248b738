// Core Data's spellings of batch update requests.

/// Core Data's `NSBatchUpdateRequestResultType`.
public typealias BatchUpdateRequestResultType = BatchUpdateRequest.ResultType

extension BatchUpdateRequest.ResultType {
    /// Core Data's `.statusOnlyResultType`: ``statusOnly``.
    public static var statusOnlyResultType: Self { .statusOnly }
    /// Core Data's `.updatedObjectIDsResultType`: ``objectIDs``.
    public static var updatedObjectIDsResultType: Self { .objectIDs }
    /// Core Data's `.updatedObjectsCountResultType`: ``count``.
    public static var updatedObjectsCountResultType: Self { .count }
}

extension BatchUpdateRequest {
    /// Core Data's `propertiesToUpdate`: the attributes to set (keys: names, or the
    /// ``AttributeDescription``s), each to a constant or a ``BatchUpdateExpression`` (Core Data's
    /// `NSExpression`: `BatchUpdateExpression(forKeyPath:)` and the others).
    ///
    /// ```swift
    /// var request = BatchUpdateRequest(entityName: "Message")
    /// request.propertiesToUpdate = ["isRead": true, "readCount": BatchUpdateExpression(forKeyPath: "views")]
    /// ```
    ///
    /// Setting it replaces ``propertyUpdates``; nil sets none. Values are read as
    /// ``BatchUpdateExpression/init(forConstantValue:)`` reads them, keys of another kind by
    /// their description; what cannot be read fails when the request runs, with a typed error.
    /// Reading it gives ``propertyUpdates`` (nil when empty), constants as ``AttributeValue``s.
    public var propertiesToUpdate: [AnyHashable: Any]? {
        get {
            guard !propertyUpdates.isEmpty else { return nil }
            var properties: [AnyHashable: Any] = [:]
            for (name, expression) in propertyUpdates {
                if case .constant(let value) = expression {
                    properties[name] = value
                } else {
                    properties[name] = expression
                }
            }
            return properties
        }
        set {
            var updates: [String: BatchUpdateExpression] = [:]
            for (key, value) in newValue ?? [:] {
                let name: String
                switch key.base {
                case let string as String: name = string
                case let attribute as AttributeDescription: name = attribute.name
                case let relationship as RelationshipDescription: name = relationship.name
                default: name = "\(key.base)"
                }
                updates[name] = BatchUpdateExpression.constantOrUnsupported(value)
            }
            propertyUpdates = updates
        }
    }
}

extension BatchUpdateResult {
    /// Core Data's `result`: the updated objects' IDs (`[ObjectID]`) for a
    /// ``BatchUpdateRequest/ResultType/objectIDs`` request, their number (`Int`) for a
    /// ``BatchUpdateRequest/ResultType/count`` one, `true` (`Bool`: the update succeeded; a failed
    /// one throws) for a ``BatchUpdateRequest/ResultType/statusOnly`` one.
    public var result: Any? {
        switch resultType {
        case .objectIDs: return updatedObjectIDs
        case .count: return count
        case .statusOnly: return true
        }
    }
}
