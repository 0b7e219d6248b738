// Core Data's spellings of fetch and batch delete requests.

extension SortKey {
    /// Sorts on `key`: Core Data's `NSSortDescriptor(key:ascending:)`.
    /// - Parameters:
    ///   - key: an attribute name.
    ///   - ascending: true for smallest first.
    public init(key: String, ascending: Bool) {
        self.init(key, ascending: ascending)
    }
}

extension FetchRequest {
    /// Core Data's `sortDescriptors`: the same as ``sortKeys``; nil sets none.
    public var sortDescriptors: [SortKey]? {
        get { sortKeys }
        set { sortKeys = newValue ?? [] }
    }
}

/// Core Data's `NSBatchDeleteRequestResultType`.
public typealias BatchDeleteRequestResultType = BatchDeleteRequest.ResultType

extension BatchDeleteRequest.ResultType {
    /// Core Data's `.resultTypeObjectIDs`: ``objectIDs``.
    public static var resultTypeObjectIDs: Self { .objectIDs }
    /// Core Data's `.resultTypeCount`: ``count``.
    public static var resultTypeCount: Self { .count }
    /// Core Data's `.resultTypeStatusOnly`: ``statusOnly``.
    public static var resultTypeStatusOnly: Self { .statusOnly }
}

extension BatchDeleteResult {
    /// Core Data's `result`: the deleted objects' IDs (`[ObjectID]`) for a
    /// ``BatchDeleteRequest/ResultType/objectIDs`` request, their number (`Int`) for a
    /// ``BatchDeleteRequest/ResultType/count`` one, `true` (`Bool`: the delete succeeded; a failed
    /// one throws) for a ``BatchDeleteRequest/ResultType/statusOnly`` one.
    public var result: Any? {
        switch resultType {
        case .objectIDs: return deletedObjectIDs
        case .count: return count
        case .statusOnly: return true
        }
    }
}
