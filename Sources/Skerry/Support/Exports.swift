// One `import Skerry` is enough for everything a container's set-up names (`PersistentStack`,
// `ObjectModel`, `StoreDescription`, `ObjectContext`, `SkerryError`...), as one `import Sworm`
// plus `import CoreData` is for a Sworm user. `@_exported` is the only way Swift offers to
// re-export a module; the engine's names never collide with the typed layer's (see DESIGN.md).
@_exported import SkerryCore
