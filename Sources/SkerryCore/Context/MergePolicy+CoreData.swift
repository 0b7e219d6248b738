// Core Data's other spellings of the merge policies, with the `NS` prefix dropped.

/// Core Data's `NSErrorMergePolicy`: ``MergePolicy/error``.
public let ErrorMergePolicy = MergePolicy.error
/// Core Data's `NSMergeByPropertyStoreTrumpMergePolicy`: ``MergePolicy/mergeByPropertyStoreTrump``.
public let MergeByPropertyStoreTrumpMergePolicy = MergePolicy.mergeByPropertyStoreTrump
/// Core Data's `NSMergeByPropertyObjectTrumpMergePolicy`: ``MergePolicy/mergeByPropertyObjectTrump``.
public let MergeByPropertyObjectTrumpMergePolicy = MergePolicy.mergeByPropertyObjectTrump
/// Core Data's `NSOverwriteMergePolicy`: ``MergePolicy/overwrite``.
public let OverwriteMergePolicy = MergePolicy.overwrite
/// Core Data's `NSRollbackMergePolicy`: ``MergePolicy/rollback``.
public let RollbackMergePolicy = MergePolicy.rollback

/// Core Data's `NSMergePolicyType`, for ``MergePolicy/init(merge:)``.
public enum MergePolicyType: Sendable, Hashable {
    /// ``MergePolicy/error``.
    case errorMergePolicyType
    /// ``MergePolicy/mergeByPropertyStoreTrump``.
    case mergeByPropertyStoreTrumpMergePolicyType
    /// ``MergePolicy/mergeByPropertyObjectTrump``.
    case mergeByPropertyObjectTrumpMergePolicyType
    /// ``MergePolicy/overwrite``.
    case overwriteMergePolicyType
    /// ``MergePolicy/rollback``.
    case rollbackMergePolicyType
}

extension MergePolicy {
    /// The policy of `type`: Core Data's `NSMergePolicy(merge:)`.
    /// - Parameter type: one of Core Data's policy types.
    public init(merge type: MergePolicyType) {
        switch type {
        case .errorMergePolicyType: self = .error
        case .mergeByPropertyStoreTrumpMergePolicyType: self = .mergeByPropertyStoreTrump
        case .mergeByPropertyObjectTrumpMergePolicyType: self = .mergeByPropertyObjectTrump
        case .overwriteMergePolicyType: self = .overwrite
        case .rollbackMergePolicyType: self = .rollback
        }
    }
}
