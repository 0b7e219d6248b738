#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A number that identifies the calling thread while it runs; never 0. (Inlinable for the slot
/// reads of `EntityObject.value(at:as:)`.)
@inlinable @inline(__always)
func currentThreadToken() -> UInt {
    #if canImport(Darwin)
        return UInt(bitPattern: pthread_self())
    #else
        return UInt(pthread_self())
    #endif
}
