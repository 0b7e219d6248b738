import Synchronization

/// A value shared between threads, guarded by a lock.
public final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    public init(_ value: Value) { storage = Mutex(value) }

    /// The value now.
    public var value: Value { storage.withLock { $0 } }

    /// Replaces the value.
    public func set(_ value: Value) { storage.withLock { $0 = value } }

    /// Changes the value in place, under the lock.
    public func update(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}

extension Locked where Value: RangeReplaceableCollection {
    /// Appends `element`, under the lock.
    public func append(_ element: Value.Element) { update { $0.append(element) } }
}
