import DockTrackCore
import Foundation

/// The kinds of device a dock address names: the one list of device schemes (`--dock`,
/// `docksim --backend`, the options that need one kind).
package enum DeviceScheme: String, Sendable, CaseIterable {
    case viscaUDP = "visca-udp"
    case viscaSerial = "visca-serial"
    case uvc
    case onvif

    /// How an address of this kind is written.
    package var usage: String {
        switch self {
        case .viscaUDP: "visca-udp:HOST:PORT"
        case .viscaSerial: "visca-serial:DEVICE[@BAUD]"
        case .uvc: "uvc:/dev/videoN"
        case .onvif: "onvif:HOST:PORT"
        }
    }

    /// A network camera answering each request in tens to hundreds of milliseconds: driven
    /// from a thread of its own so that the frame loop never waits for it.
    package var answersSlowly: Bool { self == .onvif }

    /// The scheme of `address` (`KIND:REST` with something after the colon), `nil` for another.
    package init?(of address: String) {
        guard let colon = address.firstIndex(of: ":"), address.index(after: colon) < address.endIndex,
              let scheme = DeviceScheme(rawValue: String(address[..<colon])) else { return nil }
        self = scheme
    }
}

/// Real devices by address (``DeviceScheme``).
package enum DockBackend {
    /// The device at `address` (`onvif` how an ONVIF camera's spaces map to radians, and its
    /// credentials).
    package static func open(_ address: String, onvif: ONVIFSettings = ONVIFSettings()) throws(DockError) -> any DockHardware {
        let parts = address.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let scheme = DeviceScheme(of: address) else {
            throw DockError.invalidRequest("unknown backend '\(address)' (\(DeviceScheme.allCases.map(\.usage).joined(separator: ", ")))")
        }
        switch scheme {
        case .viscaUDP:
            let hostPort = parts[1].split(separator: ":").map(String.init)
            guard hostPort.count == 2, let port = UInt16(hostPort[1]) else { throw DockError.invalidRequest("expected visca-udp:HOST:PORT") }
            return VISCADock(transport: try VISCAOverUDP(host: hostPort[0], port: port))
        case .viscaSerial:
            let pathBaud = parts[1].split(separator: "@").map(String.init)
            return VISCADock(transport: try VISCAOverSerial(path: pathBaud[0], baud: pathBaud.count > 1 ? Int(pathBaud[1]) ?? 9600 : 9600))
        case .uvc:
            return try UVCDock(path: parts[1])
        case .onvif:
            let hostPort = parts[1].split(separator: ":").map(String.init)
            guard hostPort.count == 2, let port = UInt16(hostPort[1]), !hostPort[0].isEmpty else {
                throw DockError.invalidRequest("expected onvif:HOST:PORT")
            }
            return try ONVIFDock(host: hostPort[0], port: Int(port), settings: onvif)
        }
    }

    /// The ONVIF camera at `address` (`onvif:HOST:PORT`), for what only ONVIF has (presets).
    package static func openONVIF(_ address: String, onvif: ONVIFSettings = ONVIFSettings()) throws(DockError) -> ONVIFDock {
        guard DeviceScheme(of: address) == .onvif, let camera = try open(address, onvif: onvif) as? ONVIFDock else {
            throw .invalidRequest("expected onvif:HOST:PORT")
        }
        return camera
    }
}

