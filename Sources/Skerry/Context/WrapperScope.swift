import SkerryCore

/// What the typed wrappers made together share (the objects of one fetch, a run of inserts, the
/// members of a relation set): the context they were wrapped in and the layout of their model
/// type in their entity. A ``ManagedObject`` holds its object and one of these, instead of a
/// reference to each: one allocation and two references per wrapper, and the context (whose
/// reference counting takes Swift's slow path, as other code holds it weakly) retained once per
/// scope instead of once per object.
///
/// Like the wrappers, a scope belongs to its context's queue; but for `relatedScope` (a cache),
/// it is never mutated.
@usableFromInline
class AnyWrapperScope {
    /// The context the objects belonged to when they were wrapped: where the errors of
    /// operations that cannot throw are recorded while an object is in it.
    let context: ObjectContext?
    /// The layout, of the model type `type`, in the objects' entity.
    @usableFromInline let anyLayout: AnyTypeLayout
    /// The scope that last wrapped the destination of a to-one relation of these objects
    /// (`object.author`): a loop reading the relation over the objects of a fetch makes one
    /// scope, not one per read (see `relatedScope(for:)`). Only ever set to a scope made after
    /// this one, so references between scopes never form a cycle.
    var relatedScope: AnyWrapperScope?

    init(context: ObjectContext?, layout: AnyTypeLayout) {
        self.context = context
        self.anyLayout = layout
    }

    /// Whether the scope serves objects of `entity` wrapped as `type` in `context`.
    @inline(__always)
    final func serves(_ type: ObjectIdentifier, _ entity: EntityDescription, in context: ObjectContext?) -> Bool {
        anyLayout.entity === entity && anyLayout.type == type && self.context === context
    }
}

/// An ``AnyWrapperScope`` of a model type.
@usableFromInline
final class WrapperScope<PlainObject: ManagedObjectConvertible>: AnyWrapperScope {
    /// The wrappers' type, kept: generic code that names `ManagedObject<PlainObject>` looks its
    /// metadata up at run time (about 300 instructions a time), `wrap(_:)` does not.
    private let wrapper: ManagedObject<PlainObject>.Type

    /// A scope for objects of `entity` in `context`.
    init(context: ObjectContext?, entity: EntityDescription) {
        wrapper = ManagedObject<PlainObject>.self
        super.init(context: context, layout: AttributeLayout.shared.layout(of: PlainObject.self, in: entity))
    }

    /// A wrapper of `object`, an object of the scope's entity and context.
    @inline(__always)
    func wrap(_ object: EntityObject) -> ManagedObject<PlainObject> {
        wrapper.init(instance: object, scope: self)
    }

    /// The layout of `PlainObject` in the objects' entity.
    @inlinable @inline(__always)
    var layout: TypeLayout<PlainObject> {
        // Made in `init` from a `TypeLayout<PlainObject>`.
        unsafeDowncast(anyLayout, to: TypeLayout<PlainObject>.self)
    }

    /// The scope of `related`, the destination of a to-one relation of an object of this scope:
    /// this scope itself when it serves it (a relation to the same type), else the one kept in
    /// `relatedScope` when it serves it, else a new one, then kept there.
    func relatedScope<Destination: ManagedObjectConvertible>(for related: EntityObject) -> WrapperScope<Destination> {
        let entity = related.entity
        let context = related.context
        if serves(ObjectIdentifier(Destination.self), entity, in: context) {
            // It serves `Destination`, so it is a `WrapperScope<Destination>`. Not kept in
            // `relatedScope`: a scope must not hold itself.
            return unsafeDowncast(self, to: WrapperScope<Destination>.self)
        }
        let scope: WrapperScope<Destination> = wrapperScope(reusing: relatedScope, for: entity, in: context)
        if scope !== relatedScope { relatedScope = scope }
        return scope
    }
}

/// `last` if it serves objects of `entity` in `context` as `PlainObject`, else a new scope. (A
/// function, not a static method of `WrapperScope<PlainObject>`: calling one of those looks the
/// class's generic metadata up at run time, which a hit here does not need.)
func wrapperScope<PlainObject: ManagedObjectConvertible>(
    reusing last: AnyWrapperScope?, for entity: EntityDescription, in context: ObjectContext?
) -> WrapperScope<PlainObject> {
    if let last, last.serves(ObjectIdentifier(PlainObject.self), entity, in: context) {
        // It serves `PlainObject`, so it is a `WrapperScope<PlainObject>`.
        return unsafeDowncast(last, to: WrapperScope<PlainObject>.self)
    }
    return WrapperScope(context: context, entity: entity)
}
