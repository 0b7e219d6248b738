import Foundation

/// An object's memory: its state and, for an object made loaded, its values, in one allocation.
extension EntityObject {
    /// An object's state. It lies in the object's own memory, right after the object's header,
    /// followed (for an object made with room for them) by its values, laid out by
    /// `entity.valueLayout`: one allocation per object, made by ``make(_:_:context:version:relationships:isFault:withRoomForValues:)``
    /// through `ManagedBufferPointer` (the class declares no stored property: that is what lets the
    /// values follow the state). The state is read and written through ``state``, a pointer, so
    /// no access is checked for exclusivity at run time: the state is touched only by the thread
    /// that owns the context (every entry point checks it, `checkConfinement`), and no code holds
    /// an `inout` access to one of its fields across a call that could reach the same field again.
    /// Keep it that way: mutate the fields in single statements.
    @usableFromInline
    struct State {
        @usableFromInline let entity: EntityDescription
        /// See ``EntityObject/owner``.
        @usableFromInline let owner: Unmanaged<ObjectContext>
        /// See ``EntityObject/registration``.
        @usableFromInline var registration: Registration
        /// See ``EntityObject/storage``.
        @usableFromInline var storage: UnsafeMutableRawPointer?
        var relationshipValues: [RelationshipValue]
        var version: Int64
        var side: SideState?
        /// Whether the object's memory has room for its values after the state (see
        /// ``EntityObject/inlineStorage``).
        let hasRoomForValues: Bool
    }

    /// The object's memory as `ManagedBufferPointer` sees it: the state, then room for the values
    /// in 8-byte words (every slot form is aligned to 8 bytes at most).
    @usableFromInline typealias Memory = ManagedBufferPointer<State, UInt64>

    /// A new object, unregistered, with room for its values in its own memory when
    /// `withRoomForValues` is true (a loaded object: its values go there), else without (a fault,
    /// which may never load: its values, once loaded, get a block of their own). Takes `objectID`
    /// (`consuming`: a bulk read hands over the ID it made for the row, with no retain and release).
    static func make(
        _ entity: EntityDescription, _ objectID: consuming ObjectID, context: ObjectContext, version: Int64,
        relationships: [RelationshipValue], isFault: Bool, withRoomForValues: Bool
    ) -> EntityObject {
        let words = withRoomForValues ? entity.valueLayout.size / 8 : 0
        var registration = Registration(unregistered: objectID)
        registration.isFault = isFault
        let memory = Memory(bufferClass: entity.objectClass, minimumCapacity: words) { _, _ in
            State(
                entity: entity, owner: Unmanaged.passUnretained(context), registration: registration, storage: nil,
                relationshipValues: relationships, version: version, side: nil, hasRoomForValues: withRoomForValues)
        }
        return unsafeDowncast(memory.buffer, to: EntityObject.self)
    }

    /// A new fault (no values), or an object holding `values`, unregistered.
    static func make(
        _ entity: EntityDescription, _ objectID: ObjectID, context: ObjectContext, values: [AttributeValue],
        version: Int64, isFault: Bool, relationships: [RelationshipValue]? = nil
    ) -> EntityObject {
        let object = make(
            entity, objectID, context: context, version: version,
            relationships: relationships ?? Array(repeating: .notLoaded, count: entity.relationships.count),
            isFault: isFault, withRoomForValues: !isFault)
        // A loaded object gets storage even when `values` is empty (an entity without attributes).
        if !isFault { object.values = values }
        return object
    }

    /// The object's state, in its own memory (valid while the object lives).
    @inlinable @inline(__always)
    var state: UnsafeMutablePointer<State> {
        Memory(unsafeBufferObject: self).withUnsafeMutablePointerToHeader { $0 }
    }

    /// The room for the values in the object's own memory, laid out by `entity.valueLayout` (only
    /// when `state.pointee.hasRoomForValues`).
    @inline(__always)
    var inlineStorage: UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(Memory(unsafeBufferObject: self).withUnsafeMutablePointerToElements { $0 })
    }

    /// Storage holding no value, for values about to be written (not the object's yet): the room
    /// in the object's own memory when it has some, else a new block.
    @inline(__always)
    func emptyStorage() -> UnsafeMutableRawPointer {
        let layout = entity.valueLayout
        guard state.pointee.hasRoomForValues else { return layout.allocate() }
        let base = inlineStorage
        layout.clearBitmap(base)
        return base
    }

    /// Destroys the values and frees their block (unless they lie in the object's own memory):
    /// the object holds no values afterwards.
    func releaseStorage() {
        guard let storage else { return }
        let layout = entity.valueLayout
        if state.pointee.hasRoomForValues && storage == inlineStorage { layout.destroyValues(storage) } else { layout.deallocate(storage) }
        self.storage = nil
    }

    /// Takes over `newStorage` (a block laid out by `entity.valueLayout`) as the object's values,
    /// releasing the values it had. An object with room for its values in its own memory moves
    /// them there (Swift values move bitwise) and frees the block.
    @inline(__always)
    func adoptStorage(_ newStorage: UnsafeMutableRawPointer) {
        releaseStorage()
        guard state.pointee.hasRoomForValues else {
            storage = newStorage
            return
        }
        let base = inlineStorage
        base.copyMemory(from: newStorage, byteCount: entity.valueLayout.size)
        free(newStorage)
        storage = base
    }
}
