import DockTrackCore
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// VISCA, the control protocol of Sony-style PTZ cameras: byte packets `8x ... FF` to camera x,
/// replies `y0 4z FF` (acknowledged), `y0 5z ... FF` (completed, or an inquiry's answer),
/// `y0 6z ee FF` (error ee). Pure encoding and decoding; transports are separate.
public enum VISCA {
    /// How DockTrack's angles and speeds map onto one camera's VISCA units.
    public struct Units: Sendable, Equatable {
        /// Position units per degree (Sony BRC/EVI: about 14.4 for pan and tilt).
        public var panPerDegree = 14.4
        public var tiltPerDegree = 14.4
        /// The fastest speed codes (pan 0x18, tilt 0x14 on most cameras) and the speeds they mean.
        public var maximumPanCode = 0x18
        public var maximumTiltCode = 0x14
        public var maximumPanSpeed = 100.0 * .pi / 180
        public var maximumTiltSpeed = 90.0 * .pi / 180
        public init() {}
    }

    /// A reply from the camera.
    public enum Reply: Equatable, Sendable {
        case acknowledged(socket: UInt8)
        case completed(socket: UInt8, payload: [UInt8])
        case error(socket: UInt8, code: UInt8)

        /// Parses one `y0 ... FF` packet; `nil` when it is not one.
        public init?(_ bytes: [UInt8]) {
            guard bytes.count >= 3, bytes.first! & 0x8F == 0x80 || bytes.first! & 0xF0 == 0x90, bytes.last == 0xFF else { return nil }
            let kind = bytes[1] & 0xF0, socket = bytes[1] & 0x0F
            switch kind {
            case 0x40: self = .acknowledged(socket: socket)
            case 0x50: self = .completed(socket: socket, payload: Array(bytes[2..<(bytes.count - 1)]))
            case 0x60 where bytes.count >= 4: self = .error(socket: socket, code: bytes[2])
            default: return nil
            }
        }

        /// The error a caller can act on, for an error reply.
        public var dockError: DockError? {
            guard case .error(_, let code) = self else { return nil }
            switch code {
            case 0x02: return .invalidRequest("VISCA syntax error")
            case 0x03: return .rateTooHigh(limit: 2)
            case 0x41: return .notCapable("the camera cannot execute this now (VISCA 41)")
            default: return .invalidRequest(String(format: "VISCA error %02X", code))
            }
        }
    }

    /// Pan-tilt drive: move at speeds (rad/s, pan positive right, tilt positive down) until
    /// told otherwise; zero stops that axis.
    public static func drive(_ velocity: AngularVelocity, units: Units, address: UInt8 = 1) -> [UInt8] {
        let pan = speedCode(abs(velocity.y), maximum: units.maximumPanSpeed, codes: units.maximumPanCode)
        let tilt = speedCode(abs(velocity.x), maximum: units.maximumTiltSpeed, codes: units.maximumTiltCode)
        let panDirection: UInt8 = pan == 0 ? 0x03 : velocity.y < 0 ? 0x01 : 0x02
        let tiltDirection: UInt8 = tilt == 0 ? 0x03 : velocity.x < 0 ? 0x01 : 0x02  // 01 up, 02 down
        return [0x80 | address, 0x01, 0x06, 0x01, UInt8(max(pan, 1)), UInt8(max(tilt, 1)), panDirection, tiltDirection, 0xFF]
    }

    /// Absolute (or relative) position at the fastest speeds.
    public static func position(_ orientation: DockOrientation, relative: Bool, units: Units, address: UInt8 = 1) -> [UInt8] {
        // Positions are 16-bit on the wire: beyond that range, the end of it.
        let pan = Int(Int16(saturating: orientation.y * 180 / .pi * units.panPerDegree))
        // VISCA tilt is positive up; DockKit's pitch is positive down.
        let tilt = Int(Int16(saturating: -orientation.x * 180 / .pi * units.tiltPerDegree))
        return [0x80 | address, 0x01, 0x06, relative ? 0x03 : 0x02, UInt8(units.maximumPanCode), UInt8(units.maximumTiltCode)]
            + nibbles(pan) + nibbles(tilt) + [0xFF]
    }

    /// Back to the home position.
    public static func home(address: UInt8 = 1) -> [UInt8] { [0x80 | address, 0x01, 0x06, 0x04, 0xFF] }

    /// Inquiry of the pan-tilt position; answered by `y0 50 0p 0p 0p 0p 0t 0t 0t 0t FF`.
    public static func positionInquiry(address: UInt8 = 1) -> [UInt8] { [0x80 | address, 0x09, 0x06, 0x12, 0xFF] }

    /// The orientation in a position inquiry's answer payload (8 nibbles).
    public static func orientation(fromPositionPayload payload: [UInt8], units: Units) -> DockOrientation? {
        guard payload.count == 8 else { return nil }
        let pan = Double(value(ofNibbles: Array(payload[0..<4]))), tilt = Double(value(ofNibbles: Array(payload[4..<8])))
        return DockOrientation(x: -tilt / units.tiltPerDegree * .pi / 180, y: pan / units.panPerDegree * .pi / 180, z: 0)
    }

    /// A 16-bit two's-complement value as four nibbles `0p 0p 0p 0p`.
    public static func nibbles(_ value: Int) -> [UInt8] {
        let v = UInt16(truncatingIfNeeded: value)
        return [UInt8(v >> 12 & 0xF), UInt8(v >> 8 & 0xF), UInt8(v >> 4 & 0xF), UInt8(v & 0xF)]
    }

    public static func value(ofNibbles n: [UInt8]) -> Int {
        Int(Int16(bitPattern: UInt16(n[0] & 0xF) << 12 | UInt16(n[1] & 0xF) << 8 | UInt16(n[2] & 0xF) << 4 | UInt16(n[3] & 0xF)))
    }

    /// The nearest speed code; a speed under half the slowest code's is a stop (a code 1 for a
    /// speed far below it would run the axis past where the controller wants it to stop).
    static func speedCode(_ speed: Double, maximum: Double, codes: Int) -> Int {
        guard speed > 1e-6, maximum > 0 else { return 0 }
        return min(codes, max(0, Int(saturating: speed / maximum * Double(codes))))
    }
}

/// Carries VISCA packets to a camera and back.
package protocol VISCATransport: AnyObject {
    func send(_ packet: [UInt8]) throws(DockError)
    /// The next reply packet, or `nil` after `timeout` seconds.
    func receive(timeout: Double) throws(DockError) -> [UInt8]?
}

/// VISCA over IP (Sony): UDP datagrams with an 8-byte header (payload type 0x0100 for commands,
/// 0x0110 for inquiries, 0x0111 for replies; payload length; sequence number).
package final class VISCAOverUDP: VISCATransport {
    private let fd: Int32
    private var sequence: UInt32 = 0

    /// Connects a UDP socket to `host` (an IPv4 address) and `port` (52381 by default on cameras).
    package init(host: String, port: UInt16) throws(DockError) {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)  // never inherited by a child process
        guard fd >= 0 else { throw .notConnected }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        // A throw from here on runs deinit, which closes the socket (closing it here too would close
        // whatever the number is given to next).
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw .invalidRequest("\(host) is not an IPv4 address") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw .notConnected }
    }

    deinit { close(fd) }

    package func send(_ packet: [UInt8]) throws(DockError) {
        sequence &+= 1
        let type: UInt16 = packet.count > 1 && packet[1] == 0x09 ? 0x0110 : 0x0100
        let length = UInt16(packet.count)
        let header: [UInt8] = [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(length >> 8), UInt8(length & 0xFF),
                               UInt8(sequence >> 24 & 0xFF), UInt8(sequence >> 16 & 0xFF), UInt8(sequence >> 8 & 0xFF), UInt8(sequence & 0xFF)]
        let datagram = header + packet
        let sent = datagram.withUnsafeBytes { b in Syscall.retryingEINTR { Glibc.send(fd, b.baseAddress, b.count, 0) } }
        if sent < 0 { throw .notConnected }
    }

    package func receive(timeout: Double) throws(DockError) -> [UInt8]? {
        var pfd = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        guard (try? Syscall.poll(&pfd, seconds: timeout)) ?? 0 > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = Syscall.retryingEINTR { recv(fd, &buffer, buffer.count, 0) }
        if n < 0 { throw .notConnected }
        guard n > 8 else { return nil }
        return Array(buffer[8..<n])
    }
}

/// A PTZ camera driven over VISCA, behind the same commands as every dock.
package final class VISCADock {
    package let transport: any VISCATransport
    package var units: VISCA.Units
    package var address: UInt8
    private var orientationRate = RateLimiter(maximumPerSecond: 2)
    package private(set) var lastVelocity = AngularVelocity.zero
    /// The part of the asked speeds the last codes did not carry (see ``apply(_:at:)``).
    private var remainder = AngularVelocity.zero
    /// Seconds a command or inquiry waits for its reply while the camera answers.
    package var replyTimeout = 1.0
    /// Seconds it waits once a wait has run out, until the camera answers again: a camera that
    /// never answers costs a tenth of a second a command, not a second.
    package var silentReplyTimeout = 0.1
    private var silent = false
    private let clock: @Sendable () -> Double

    /// `clock` (seconds) times the waits for replies: a whole exchange has one deadline, however
    /// many packets that are not its reply come in the meantime.
    package init(transport: any VISCATransport, units: VISCA.Units = .init(), address: UInt8 = 1,
                clock: @escaping @Sendable () -> Double = MonotonicClock.now) {
        self.transport = transport
        self.units = units
        self.address = address
        self.clock = clock
    }

    /// Sends a command at `time` and waits for the camera's acknowledgement (or error).
    package func apply(_ command: DockCommand, at time: Double) throws(DockError) {
        let packet: [UInt8]
        switch command {
        case .setAngularVelocity(let v):
            guard v.z == 0 else { throw .notCapable("roll") }
            packet = VISCA.drive(dithered(v), units: units, address: address)
            lastVelocity = v
        case .setOrientation(let o, _, let relative):
            try orientationRate.accept(at: time)
            packet = VISCA.position(o, relative: relative, units: units, address: address)
        case .animate:
            throw .notCapable("animations")
        case .setSystemTracking, .setLimits:
            return  // nothing on the camera; the controller enforces limits
        }
        try transport.send(packet)
        try awaitAcknowledgement()
    }

    /// Speeds on the camera's steps of speed codes: a speed between two steps is dithered across
    /// commands (what one command's code leaves out is carried to the next), so a slow speed is
    /// met on average, not rounded to a stop or up to the slowest code. A zero stops at once.
    private func dithered(_ v: AngularVelocity) -> AngularVelocity {
        var out = v
        let steps = [(DockAxis.yaw, units.maximumPanSpeed / Double(units.maximumPanCode)),
                     (DockAxis.pitch, units.maximumTiltSpeed / Double(units.maximumTiltCode))]
        for (axis, step) in steps {
            guard v[axis] != 0, v[axis].isFinite, step > 0 else {
                remainder[axis] = 0
                continue
            }
            let wanted = v[axis] + remainder[axis]
            out[axis] = (wanted / step).rounded() * step
            remainder[axis] = min(max(wanted - out[axis], -step), step)
        }
        return out
    }

    /// The camera's present pan and tilt, by inquiry.
    package func motionState(at time: Double) throws(DockError) -> MotionState {
        try transport.send(VISCA.positionInquiry(address: address))
        let units = self.units
        let position = try awaitReply { reply -> DockOrientation? in
            guard case .completed(_, let payload) = reply else { return nil }
            return VISCA.orientation(fromPositionPayload: payload, units: units)
        }
        return MotionState(time: time, position: position, velocity: lastVelocity)
    }

    private func awaitAcknowledgement() throws(DockError) {
        try awaitReply { reply -> Bool? in
            switch reply {
            case .acknowledged, .completed: true
            default: nil
            }
        }
    }

    /// Waits for the reply `accept` takes (an error reply is thrown), until one deadline:
    /// ``replyTimeout``, or ``silentReplyTimeout`` after the last wait ran out. No reply in
    /// time is `notConnected`.
    @discardableResult
    private func awaitReply<Value>(_ accept: (VISCA.Reply) -> Value?) throws(DockError) -> Value {
        let deadline = clock() + (silent ? silentReplyTimeout : replyTimeout)
        while true {
            let left = deadline - clock()
            guard left > 0, let bytes = try transport.receive(timeout: left) else {
                silent = true
                throw .notConnected
            }
            guard let reply = VISCA.Reply(bytes) else { continue }
            silent = false
            if let error = reply.dockError { throw error }
            if let value = accept(reply) { return value }
        }
    }
}

/// VISCA over a serial line (RS-232/RS-422, 9600 8N1 by default): raw packets, replies split at 0xFF.
package final class VISCAOverSerial: VISCATransport {
    private let fd: Int32
    private var pending: [UInt8] = []
    private let clock: @Sendable () -> Double

    /// Opens the serial device at `path` in raw mode at `baud` (9600, 19200, 38400 or 115200);
    /// `clock` (seconds) times the wait for replies.
    package init(path: String, baud: Int = 9600, clock: @escaping @Sendable () -> Double = MonotonicClock.now) throws(DockError) {
        self.clock = clock
        fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw errno == ENOENT || errno == ENODEV ? .notConnected : .invalidRequest("\(path): \(String(cString: strerror(errno)))") }
        var settings = termios()
        if tcgetattr(fd, &settings) == 0 {
            cfmakeraw(&settings)
            let speed: speed_t = switch baud {
            case 19200: speed_t(B19200)
            case 38400: speed_t(B38400)
            case 115200: speed_t(B115200)
            default: speed_t(B9600)
            }
            cfsetispeed(&settings, speed)
            cfsetospeed(&settings, speed)
            tcsetattr(fd, TCSANOW, &settings)
        }
    }

    deinit { close(fd) }

    package func send(_ packet: [UInt8]) throws(DockError) {
        do {
            try Syscall.writeAll(packet, to: fd)
        } catch {
            throw error.errno == EIO || error.errno == ENODEV ? .invalidated : .notConnected
        }
    }

    package func receive(timeout: Double) throws(DockError) -> [UInt8]? {
        let deadline = clock() + timeout
        while true {
            if let end = pending.firstIndex(of: 0xFF) {
                let packet = Array(pending[...end])
                pending.removeSubrange(...end)
                return packet
            }
            let left = deadline - clock()
            guard left > 0 else { return nil }
            var pfd = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            guard (try? Syscall.poll(&pfd, seconds: left + 0.001, clock: clock)) ?? 0 > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = Syscall.retryingEINTR { read(fd, &buffer, buffer.count) }
            if n < 0 && errno == EAGAIN { continue }
            if n <= 0 { throw .invalidated }
            pending += buffer[0..<n]
        }
    }
}

extension VISCADock: DockHardware {
    /// Pan and tilt, driven by speed and absolute position (zoom is not driven by DockTrack;
    /// no battery, buttons or animations).
    package var capabilities: [DockCapability] { [.pan, .tilt, .systemTracking] }
    package func orientation() throws(DockError) -> DockOrientation? { try motionState(at: 0).position }
}
