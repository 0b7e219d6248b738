/// Where a migration step put the rows of the version it leaves: which rows it kept (the others
/// its `keepsRow`, or a mapping model's filter, left out), and the new keys of the rows it
/// renumbered (a hierarchy of the new version made of several old ones, whose keys clash).
/// Code that links new objects to old rows in `finish` asks it for the row's key in the new
/// store, as Core Data's `destinationInstances(forEntityMappingName:sourceInstances:)` finds the
/// objects a migration made of source objects (none for a source object it did not migrate).
package struct CarriedRows: Sendable {
    /// The keys of the rows kept, by old entity name.
    let kept: [String: Set<Int64>]
    /// Old entity name -> old key -> new key, for the rows whose key changed.
    let renumbered: [String: [Int64: Int64]]
    /// Each old entity's hierarchy (its root and every entity under it), by old entity name.
    let hierarchies: [String: [String]]

    /// Where the step being run put the old rows, while the stores run a step's `transformRow`
    /// (whose closure gets no context): a mapping model's relationship set through a path of
    /// to-one relationships looks up the key the reached row has in the new store.
    @TaskLocal package static var current: CarriedRows?

    /// - Parameters:
    ///   - source: the schema the store had before the step.
    ///   - kept: the keys of the rows the step kept, by old entity name (an entity whose rows
    ///     the step drops has none).
    ///   - renumbered: old entity name -> old key -> new key.
    package init(source: StoredSchema, kept: [String: Set<Int64>], renumbered: [String: [Int64: Int64]]) {
        self.kept = kept
        self.renumbered = renumbered
        let parents = Dictionary(source.entities.map { ($0.name, $0.parent) }, uniquingKeysWith: { first, _ in first })
        func root(_ name: String) -> String {
            var root = name, seen: Set<String> = [name]
            while let parent = parents[root] ?? nil, parents[parent] != nil, seen.insert(parent).inserted { root = parent }
            return root
        }
        let byRoot = Dictionary(grouping: source.entities.map(\.name), by: root)
        hierarchies = Dictionary(
            source.entities.map { ($0.name, byRoot[root($0.name)] ?? [$0.name]) }, uniquingKeysWith: { first, _ in first })
    }

    /// The key in the new store of the row of `entity`'s old hierarchy whose key was `key`
    /// (keys are unique in a hierarchy); nil when the step did not keep it.
    package func newKey(_ entity: String, _ key: Int64) -> Int64? {
        for member in hierarchies[entity] ?? [entity] where kept[member]?.contains(key) == true {
            return renumbered[member]?[key] ?? key
        }
        return nil
    }
}
