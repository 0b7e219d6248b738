import Dispatch
import Foundation

/// Marks the main queue, so that code running on it is recognised where the main queue is drained
/// by a thread other than the process's first one: on Linux after `dispatchMain()`, which is how
/// the main actor runs in an async command-line program (`Thread.isMainThread` is false there).
private let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// Marks a thread that holds the main queue while it runs another context's block through
/// `performAndWait` (the main queue waits in `DispatchQueue.sync`, which runs the block on this
/// thread): a main-queue context is this thread's to use meanwhile, as on the main thread.
private let mainQueueHolderKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "Skerry: cannot create a thread-specific key (pthread_key_create: \(status))")
    return key
}()

/// Whether the caller runs on the main thread or on the main queue (the main actor), or holds
/// the main queue while it runs a block of another context for it.
func isOnMainThreadOrQueue() -> Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true || pthread_getspecific(mainQueueHolderKey) != nil
}

/// Runs `body`, marking the calling thread as holding the main queue meanwhile when it is
/// `holder`, the thread that waits for it from the main queue (see `mainQueueHolderKey`).
func holdingMainQueue<T, E: Error>(_ holder: UInt?, _ body: () throws(E) -> T) throws(E) -> T {
    guard let holder, holder == currentThreadToken(), pthread_getspecific(mainQueueHolderKey) == nil else { return try body() }
    // Any non-nil pointer marks the thread; it is never dereferenced.
    pthread_setspecific(mainQueueHolderKey, UnsafeRawPointer(bitPattern: 1))
    defer { pthread_setspecific(mainQueueHolderKey, nil) }
    return try body()
}

/// Which threads may use a context and its objects.
enum ContextConfinement: Sendable, Equatable {
    /// Only the thread running one of the context's blocks (`perform`/`performAndWait`): Core
    /// Data's private-queue context.
    case privateQueue
    /// That thread, and the main thread at any time: Core Data's main-queue context, used directly
    /// from the main thread. (Its blocks must then run on the main queue, so that the main thread
    /// and a block never run at once.)
    case mainQueue
}

extension ObjectContext {
    /// Stops the process, with a message naming the context and `function`, unless the calling
    /// thread owns the context now: it runs one of the context's blocks, or it is the main thread
    /// and the context is a main-queue context.
    ///
    /// Checked in every build at every entry point of a context and every object mutator, before
    /// any state is touched, so that misuse from another thread stops with this message instead of
    /// corrupting memory. Cost: a thread-identity read, an atomic load and a compare.
    @inline(__always)
    package func checkConfinement(_ function: StaticString = #function) {
        if ownerThread.load(ordering: .relaxed) == currentThreadToken() { return }
        if confinement == .mainQueue && isOnMainThreadOrQueue() {
            if !hasBeenUsed.load(ordering: .relaxed) { hasBeenUsed.store(true, ordering: .releasing) }
            return
        }
        confinementViolation(function)
    }

    /// Whether the calling thread may use the context now (see ``checkConfinement(_:)``).
    var isOwnedByCurrentThread: Bool {
        ownerThread.load(ordering: .relaxed) == currentThreadToken() || (confinement == .mainQueue && isOnMainThreadOrQueue())
    }

    @inline(never)
    private func confinementViolation(_ function: StaticString) -> Never {
        // `fatalError`, not `preconditionFailure`: release builds print its message.
        fatalError(
            "Skerry: \(function) was called on ObjectContext '\(name ?? "unnamed")' (or one of its objects) outside its perform/performAndWait block. A context and its objects may only be used on the context's queue; pass object IDs between contexts."
        )
    }
}
