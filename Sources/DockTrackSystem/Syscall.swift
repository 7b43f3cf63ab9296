import Foundation
#if canImport(Glibc)
import Glibc
#endif

public enum Syscall {
    /// Calls `body` again while it fails with EINTR.
    @inlinable
    public static func retryingEINTR<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result == -1 && errno == EINTR { continue }
            return result
        }
    }
}
