import DockTrackCore
import DockTrackDock
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fake VISCA-over-IP camera on a UDP port of this machine's loopback: it keeps a pan/tilt
/// position, answers commands with ACK and completion, inquiries with the position, anything
/// else with a syntax error, and records every packet it got.
///
/// Without motors an absolute position is taken at once and drive commands do not move it.
/// With motors (``init(motors:latency:units:clock:)``) it moves as a real camera does: drive
/// commands at the speeds their codes mean, absolute positions at top speed, within the
/// motors' limits, on the real clock, each command taking effect `latency` seconds after it
/// arrived.
public final class FakeVISCACamera: @unchecked Sendable {
    public let fd: Int32
    public let port: UInt16
    private let lock = NSLock()
    private var _packets: [[UInt8]] = []
    private var pan = 0, tilt = 0
    private var running = true
    private var motors: SimulatedDock?
    private var queued: [(at: Double, command: DockCommand)] = []
    private let latency: Double
    private let units: VISCA.Units
    private let clock: @Sendable () -> Double
    /// Answers packets until ``stop()``, then closes the socket.
    private var serving: OwnedThread?

    public var packets: [[UInt8]] { lock.withLock { _packets } }
    public var position: (pan: Int, tilt: Int) {
        lock.withLock {
            guard motors != nil else { return (pan, tilt) }
            let p = advanceMotors()
            return (Int((p.y * 180 / .pi * units.panPerDegree).rounded()), Int((-p.x * 180 / .pi * units.tiltPerDegree).rounded()))
        }
    }

    /// A camera whose position jumps to each absolute position it is sent.
    public convenience init() throws {
        try self.init(motors: nil)
    }

    /// A camera with motors of these limits (`nil`: none, as ``init()``).
    public init(motors: DockLimits?, latency: Double = 0, units: VISCA.Units = .init(), clock: @escaping @Sendable () -> Double = MonotonicClock.now) throws {
        self.latency = latency
        self.units = units
        self.clock = clock
        self.motors = motors.map { SimulatedDock(limits: $0, time: clock()) }
        let socketFD = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) } }
        fd = socketFD
        port = UInt16(bigEndian: address.sin_port)
        // The thread holds the camera until stop().
        serving = OwnedThread(named: "fake visca") { [self] in serve() }
    }

    /// Moves the motors on to now, taking the queued commands that are due; the position.
    private func advanceMotors() -> DockOrientation {
        guard var dock = motors else { return .zero }
        let now = clock()
        while let next = queued.first, next.at <= now {
            queued.removeFirst()
            _ = try? dock.apply(next.command, at: next.at)
        }
        dock.advance(to: now)
        motors = dock
        return dock.position
    }

    /// Ends the serving thread, which closes the socket, and waits for it (up to one poll, 50
    /// ms). The socket is closed by the thread that polls it, after its last poll: a descriptor
    /// closed under a poll may be reused by the next socket opened, whose packets the old thread
    /// would then answer.
    public func stop() {
        lock.withLock { running = false }
        lock.withLock { serving }?.join()
    }

    private func serve() {
        defer { close(fd) }
        while lock.withLock({ running }) {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 512)
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = withUnsafeMutablePointer(to: &from) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &length) } }
            guard n > 8 else { continue }
            let packet = Array(buffer[8..<n])
            lock.withLock { _packets.append(packet) }
            var replies: [[UInt8]]
            switch Array(packet.prefix(4)) {
            case [0x81, 0x01, 0x06, 0x02] where packet.count == 15:
                lock.withLock {
                    pan = VISCA.value(ofNibbles: Array(packet[6..<10]))
                    tilt = VISCA.value(ofNibbles: Array(packet[10..<14]))
                    let o = DockOrientation(x: -Double(tilt) / units.tiltPerDegree * .pi / 180, y: Double(pan) / units.panPerDegree * .pi / 180, z: 0)
                    queued.append((clock() + latency, .setOrientation(o, duration: 0, relative: false)))
                }
                replies = [[0x90, 0x41, 0xFF], [0x90, 0x51, 0xFF]]
            case [0x81, 0x01, 0x06, 0x01] where packet.count == 9:
                func speed(_ code: UInt8, _ direction: UInt8, maximumCode: Int, maximumSpeed: Double) -> Double {
                    guard direction == 0x01 || direction == 0x02 else { return 0 }
                    return (direction == 0x01 ? -1 : 1) * Double(min(Int(code), maximumCode)) / Double(maximumCode) * maximumSpeed
                }
                let v = AngularVelocity(x: speed(packet[5], packet[7], maximumCode: units.maximumTiltCode, maximumSpeed: units.maximumTiltSpeed),
                                        y: speed(packet[4], packet[6], maximumCode: units.maximumPanCode, maximumSpeed: units.maximumPanSpeed), z: 0)
                lock.withLock { queued.append((clock() + latency, .setAngularVelocity(v))) }
                replies = [[0x90, 0x41, 0xFF], [0x90, 0x51, 0xFF]]
            case [0x81, 0x09, 0x06, 0x12]:
                let p = position
                replies = [[0x90, 0x50] + VISCA.nibbles(p.pan) + VISCA.nibbles(p.tilt) + [0xFF]]
            default:
                replies = [[0x90, 0x60, 0x02, 0xFF]]
            }
            for reply in replies {
                let datagram: [UInt8] = [0x01, 0x11, 0x00, UInt8(reply.count), 0, 0, 0, 1] + reply
                _ = withUnsafePointer(to: &from) { p in
                    p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, datagram, datagram.count, 0, $0, length) }
                }
            }
        }
    }
}
