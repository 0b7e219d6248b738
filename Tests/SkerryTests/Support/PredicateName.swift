import Skerry

// doc: predicate-beside-foundation
// Once per module (beside the container set-up): Foundation has a `Predicate` too, and a
// declaration of the module itself takes precedence over both imports, in every file.
typealias Predicate = Skerry.Predicate
// doc: end
