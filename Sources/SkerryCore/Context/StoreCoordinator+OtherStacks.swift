import Foundation
import Synchronization

/// The coordinators of this process, for ``StoreCoordinator/destroyPersistentStore(at:ofType:options:)``
/// to reach every stack with the destroyed file open. Held weakly: a coordinator released is
/// dropped at the next registration.
private let liveCoordinators = Mutex<[WeakCoordinator]>([])

/// A coordinator of the process, not kept alive by the list.
private struct WeakCoordinator: Sendable {
    weak var coordinator: StoreCoordinator?
}

extension StoreCoordinator {
    /// Records `coordinator` as one of the process's (called once, when it is made).
    static func register(_ coordinator: StoreCoordinator) {
        liveCoordinators.withLock { list in
            list.removeAll { $0.coordinator == nil }
            list.append(WeakCoordinator(coordinator: coordinator))
        }
    }

    /// Removes the SQLite store at `path` from every other coordinator of the process that has it
    /// loaded, as ``remove(_:)`` does: once its files are deleted, a stack that kept using them
    /// would read and write a database nobody can open again. Their contexts get
    /// ``SkerryError/Code/noStore`` from then on, and a ``PersistentStack`` loads the store again (a
    /// new, empty one) on its next ``PersistentStack/loadPersistentStores()``.
    /// - Throws: ``SkerryError/Code/invalidArgument`` when another coordinator is migrating the
    ///   store (``migratePersistentStore(_:to:)`` reads it): its files must not go under the copy.
    func removeFromOtherCoordinators(sqliteFileAt path: String) throws(SkerryError) {
        try removeFromEveryCoordinator(except: self) { store in
            store.kind == .sqlite && store.url?.standardizedFileURL.path == path
        }
    }

    /// Removes the stores `matches` picks from every coordinator of the process, this one
    /// included, as ``remove(_:)`` does (for a store about to be destroyed).
    /// - Throws: ``SkerryError/Code/invalidArgument`` when a coordinator is migrating the store.
    func removeFromEveryCoordinator(
        except excluded: StoreCoordinator? = nil, where matches: (StoreDescription) -> Bool
    ) throws(SkerryError) {
        let all = liveCoordinators.withLock { list in list.compactMap(\.coordinator) }
        for coordinator in all where coordinator !== excluded {
            for store in coordinator.persistentStores where matches(store) {
                // nil when another thread removed the store meanwhile, which is what is wanted.
                try coordinator.takeStore(store)?.close()
            }
        }
    }
}
