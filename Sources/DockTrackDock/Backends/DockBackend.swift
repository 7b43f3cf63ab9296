import DockTrackCore
import Foundation

/// Real devices by address: `visca-udp:HOST:PORT`, `visca-serial:PATH[@BAUD]`, `uvc:/dev/videoN`,
/// `onvif:HOST:PORT`.
public enum DockBackend {
    /// The device at `address` (`onvif` how an ONVIF camera's spaces map to radians, and its
    /// credentials).
    public static func open(_ address: String, onvif: ONVIFSettings = ONVIFSettings()) throws(DockError) -> any DockHardware {
        let parts = address.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw DockError.invalidRequest("expected KIND:ADDRESS") }
        switch parts[0] {
        case "visca-udp":
            let hostPort = parts[1].split(separator: ":").map(String.init)
            guard hostPort.count == 2, let port = UInt16(hostPort[1]) else { throw DockError.invalidRequest("expected visca-udp:HOST:PORT") }
            return VISCADock(transport: try VISCAOverUDP(host: hostPort[0], port: port))
        case "visca-serial":
            let pathBaud = parts[1].split(separator: "@").map(String.init)
            return VISCADock(transport: try VISCAOverSerial(path: pathBaud[0], baud: pathBaud.count > 1 ? Int(pathBaud[1]) ?? 9600 : 9600))
        case "uvc":
            return try UVCDock(path: parts[1])
        case "onvif":
            let hostPort = parts[1].split(separator: ":").map(String.init)
            guard hostPort.count == 2, let port = UInt16(hostPort[1]), !hostPort[0].isEmpty else {
                throw DockError.invalidRequest("expected onvif:HOST:PORT")
            }
            return try ONVIFDock(host: hostPort[0], port: Int(port), settings: onvif)
        default:
            throw DockError.invalidRequest("unknown backend '\(parts[0])' (visca-udp, visca-serial, uvc, onvif)")
        }
    }

    /// The ONVIF camera at `address` (`onvif:HOST:PORT`), for what only ONVIF has (presets).
    public static func openONVIF(_ address: String, onvif: ONVIFSettings = ONVIFSettings()) throws(DockError) -> ONVIFDock {
        guard address.hasPrefix("onvif:"), let camera = try open(address, onvif: onvif) as? ONVIFDock else {
            throw .invalidRequest("expected onvif:HOST:PORT")
        }
        return camera
    }
}

