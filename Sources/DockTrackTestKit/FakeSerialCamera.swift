import CV4L2
import DockTrackDock
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fake VISCA camera on the master side of a pseudo-terminal: the serial line's other end.
public final class FakeSerialCamera: @unchecked Sendable {
    public let master: Int32
    public let devicePath: String
    private let lock = NSLock()
    private var _packets: [[UInt8]] = []
    private var running = true
    /// Answers packets until ``stop()``, then closes the terminal.
    private var serving: OwnedThread?
    public var packets: [[UInt8]] { lock.withLock { _packets } }

    public init() throws {
        // posix_openpt and friends are not in Swift's Glibc module: the same through /dev/ptmx
        // and its ioctls (TIOCSPTLCK to unlock, TIOCGPTN for the slave's number).
        let fd = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0, number: UInt32 = 0
        guard fd >= 0, cv4l2_ioctl(fd, 0x4004_5431, &unlock) == 0, cv4l2_ioctl(fd, 0x8004_5430, &number) == 0 else {
            throw CocoaError(.fileNoSuchFile)
        }
        master = fd
        devicePath = "/dev/pts/\(number)"
        // The thread holds the camera until stop().
        serving = OwnedThread(named: "fake serial") { [self] in serve() }
    }

    /// Ends the serving thread, which closes the terminal, and waits for it.
    public func stop() {
        lock.withLock { running = false }
        lock.withLock { serving }?.join()
    }

    private func serve() {
        var pending: [UInt8] = []
        while lock.withLock({ running }) {
            var pfd = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = read(master, &buffer, buffer.count)
            guard n > 0 else { continue }
            pending += buffer[0..<n]
            while let end = pending.firstIndex(of: 0xFF) {
                let packet = Array(pending[...end])
                pending.removeSubrange(...end)
                lock.withLock { _packets.append(packet) }
                let reply: [UInt8] = packet.starts(with: [0x81, 0x09, 0x06, 0x12])
                    ? [0x90, 0x50] + VISCA.nibbles(144) + VISCA.nibbles(-72) + [0xFF]
                    : [0x90, 0x41, 0xFF, 0x90, 0x51, 0xFF]
                _ = reply.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
            }
        }
        close(master)
    }
}
