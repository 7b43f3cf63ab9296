import DockTrackCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How an ONVIF camera's normalised spaces map onto a dock's radians, and who may move it.
public struct ONVIFSettings: Sendable, Equatable {
    /// The pan (degrees) at x = 1 of ONVIF's generic position space (x = -1 is its negative).
    public var panRange = 170.0
    /// The tilt (degrees) at y = 1 (up).
    public var tiltRange = 90.0
    /// How far the camera moves in the generic position space per second at velocity 1 of the
    /// generic velocity space (ipycam: 1; a camera that crosses its pan range of 2 in 3 s: 0.67).
    public var fullSpeed = 0.6
    /// WS-Security UsernameToken credentials (password digest); `nil` for a camera without.
    public var user: String?
    public var password: String?
    /// Seconds a request may take.
    public var timeout = 2.0
    public init() {}
}

/// An ONVIF PTZ camera (the PTZ service of ONVIF Profile S, SOAP over HTTP) behind the same
/// commands as every dock: velocity commands become `ContinuousMove`, orientation commands
/// `AbsoluteMove`, and `GetStatus` reads where it points. Pan and tilt go through
/// ``ONVIFSettings``: ONVIF's generic spaces are -1...1 with no unit, the degrees are the
/// camera's (or, for a digital PTZ, the field of view's).
public final class ONVIFDock {
    public let settings: ONVIFSettings
    /// The service addresses the device reported (its own paths when it reported none).
    public let ptzService: URL
    public let mediaService: URL
    /// The media profile whose PTZ configuration is driven.
    public let profile: String
    private var lastVelocity: (pan: Double, tilt: Double)?

    /// Connects to the device service at `host`:`port`: its capabilities (where the media and
    /// PTZ services are) and its first media profile.
    public init(host: String, port: Int, settings: ONVIFSettings = ONVIFSettings()) throws(DockError) {
        self.settings = settings
        guard let device = URL(string: "http://\(host):\(port)/onvif/device_service") else {
            throw .invalidRequest("onvif:\(host):\(port) is not an address")
        }
        let capabilities = try Self.call(device, action: "http://www.onvif.org/ver10/device/wsdl/GetCapabilities",
                                         body: "<tds:GetCapabilities><tds:Category>All</tds:Category></tds:GetCapabilities>", settings: settings)
        func service(_ name: String, _ fallback: String) -> URL {
            Self.element(name, in: capabilities).flatMap { Self.element("XAddr", in: $0) }.flatMap { URL(string: $0.trimmingCharacters(in: .whitespaces)) }
                ?? URL(string: "http://\(host):\(port)/onvif/\(fallback)")!
        }
        // The addresses a camera reports may name its outside address; the port asked is the one that answers.
        func reachable(_ url: URL) -> URL {
            guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
            parts.host = host
            parts.port = port
            return parts.url ?? url
        }
        ptzService = reachable(service("PTZ", "ptz_service"))
        mediaService = reachable(service("Media", "media_service"))
        let profiles = try Self.call(mediaService, action: "http://www.onvif.org/ver10/media/wsdl/GetProfiles",
                                     body: "<trt:GetProfiles/>", settings: settings)
        guard let token = Self.attribute("token", ofFirst: "Profiles", in: profiles) else {
            throw .notCapable("the camera reports no media profile")
        }
        profile = token
    }

    /// ONVIF pan/tilt in -1...1 for a dock orientation (pan right, tilt up are positive there).
    func normalised(_ orientation: DockOrientation) -> (pan: Double, tilt: Double) {
        (pan: max(-1, min(1, orientation.y * 180 / .pi / settings.panRange)),
         tilt: max(-1, min(1, -orientation.x * 180 / .pi / settings.tiltRange)))
    }

    private func send(_ action: String, _ body: String) throws(DockError) -> String {
        try Self.call(ptzService, action: "http://www.onvif.org/ver20/ptz/wsdl/\(action)", body: body, settings: settings)
    }

    /// Stops pan and tilt.
    public func stop() throws(DockError) {
        _ = try send("Stop", "<tptz:Stop><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:PanTilt>true</tptz:PanTilt><tptz:Zoom>false</tptz:Zoom></tptz:Stop>")
        lastVelocity = (0, 0)
    }

    /// Zooms to `zoom` in 0...1 (the camera's generic zoom space: wide to tele).
    public func zoom(to zoom: Double) throws(DockError) {
        guard zoom.isFinite else { throw .invalidRequest("zoom must be a number") }
        _ = try send("AbsoluteMove", "<tptz:AbsoluteMove><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:Position><tt:Zoom x=\"\(Self.number(max(0, min(1, zoom))))\"/></tptz:Position></tptz:AbsoluteMove>")
    }

    /// Where the camera points (`GetStatus`), and its zoom in 0...1.
    public func status() throws(DockError) -> (orientation: DockOrientation, zoom: Double?) {
        let reply = try send("GetStatus", "<tptz:GetStatus><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken></tptz:GetStatus>")
        guard let position = Self.element("Position", in: reply),
              let pan = Self.attribute("x", ofFirst: "PanTilt", in: position).flatMap(Double.init),
              let tilt = Self.attribute("y", ofFirst: "PanTilt", in: position).flatMap(Double.init), pan.isFinite, tilt.isFinite else {
            throw .invalidRequest("the camera's status has no pan/tilt position")
        }
        let zoom = Self.attribute("x", ofFirst: "Zoom", in: position).flatMap(Double.init)
        return (DockOrientation(x: -tilt * settings.tiltRange * .pi / 180, y: pan * settings.panRange * .pi / 180, z: 0), zoom)
    }

    // MARK: SOAP

    /// Posts `body` in a SOAP 1.2 envelope (with a UsernameToken when there are credentials) and
    /// returns the reply's text; a fault or an HTTP error is a DockError.
    static func call(_ url: URL, action: String, body: String, settings: ONVIFSettings) throws(DockError) -> String {
        var request = URLRequest(url: url, timeoutInterval: settings.timeout)
        request.httpMethod = "POST"
        request.setValue("application/soap+xml; charset=utf-8; action=\"\(action)\"", forHTTPHeaderField: "Content-Type")
        request.setValue("\"\(action)\"", forHTTPHeaderField: "SOAPAction")
        request.httpBody = Data(envelope(body, security: settings.user.map { usernameToken(user: $0, password: settings.password ?? "") }).utf8)
        let reply = Reply()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            reply.set(data: data, status: (response as? HTTPURLResponse)?.statusCode, error: error)
            done.signal()
        }.resume()
        if done.wait(timeout: .now() + settings.timeout + 1) == .timedOut { throw .notConnected }
        let (data, status, error) = reply.get()
        if error != nil || data == nil { throw .notConnected }
        let text = String(decoding: data!, as: UTF8.self)
        if let fault = element("Fault", in: text) {
            let reason = element("Text", in: fault) ?? element("faultstring", in: fault) ?? "a SOAP fault"
            throw .invalidRequest("the camera refused \(action.split(separator: "/").last ?? ""): \(reason)")
        }
        if let status, !(200..<300).contains(status) {
            throw status == 401 ? .invalidRequest("the camera wants credentials (--onvif-user, --onvif-password)") : .invalidRequest("HTTP \(status) from \(url)")
        }
        return text
    }

    /// What the URL session's callback hands over.
    private final class Reply: @unchecked Sendable {
        private let lock = NSLock()
        private var data: Data?, status: Int?, error: (any Error)?
        func set(data: Data?, status: Int?, error: (any Error)?) {
            lock.lock(); defer { lock.unlock() }
            (self.data, self.status, self.error) = (data, status, error)
        }
        func get() -> (Data?, Int?, (any Error)?) {
            lock.lock(); defer { lock.unlock() }
            return (data, status, error)
        }
    }

    static func envelope(_ body: String, security: String?) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>\
        <s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:tds="http://www.onvif.org/ver10/device/wsdl" \
        xmlns:trt="http://www.onvif.org/ver10/media/wsdl" xmlns:tptz="http://www.onvif.org/ver20/ptz/wsdl" \
        xmlns:tt="http://www.onvif.org/ver10/schema">\
        <s:Header>\(security ?? "")</s:Header><s:Body>\(body)</s:Body></s:Envelope>
        """
    }

    /// A WS-Security UsernameToken with a password digest: Base64(SHA-1(nonce + created + password)).
    package static func usernameToken(user: String, password: String, nonce: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) },
                              created: Date = Date()) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let stamp = formatter.string(from: created)
        let digest = Data(SHA1.hash(nonce + Array(stamp.utf8) + Array(password.utf8))).base64EncodedString()
        return """
        <wsse:Security s:mustUnderstand="1" xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" \
        xmlns:wsu="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"><wsse:UsernameToken>\
        <wsse:Username>\(escaped(user))</wsse:Username>\
        <wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest">\(digest)</wsse:Password>\
        <wsse:Nonce EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary">\(Data(nonce).base64EncodedString())</wsse:Nonce>\
        <wsu:Created>\(stamp)</wsu:Created></wsse:UsernameToken></wsse:Security>
        """
    }

    /// The text inside the first element called `name` (any namespace prefix).
    package static func element(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<(?:[A-Za-z0-9_]+:)?\(name)(?:\\s[^>]*)?>", options: .regularExpression) else { return nil }
        let rest = xml[open.upperBound...]
        guard let close = rest.range(of: "</(?:[A-Za-z0-9_]+:)?\(name)>", options: .regularExpression) else { return nil }
        return String(rest[..<close.lowerBound])
    }

    /// The value of `attribute` on the first element called `name`.
    package static func attribute(_ attribute: String, ofFirst name: String, in xml: String) -> String? {
        guard let tag = xml.range(of: "<(?:[A-Za-z0-9_]+:)?\(name)\\s[^>]*>", options: .regularExpression) else { return nil }
        let text = xml[tag]
        guard let value = text.range(of: "\\s\(attribute)=\"[^\"]*\"", options: .regularExpression) else { return nil }
        return String(text[value].drop { $0 != "\"" }.dropFirst().dropLast())
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func number(_ value: Double) -> String { String(format: "%.5f", value) }

    /// SHA-1 of `message` (for tests of the digest).
    package static func sha1(_ message: [UInt8]) -> [UInt8] { SHA1.hash(message) }
}

extension ONVIFDock: DockHardware {
    public var capabilities: [String] { ["pan", "tilt", "zoom", "systemTracking"] }

    public func apply(_ command: DockCommand, at time: Double) throws(DockError) {
        switch command {
        case .setOrientation(let orientation, _, let relative):
            var target = orientation
            if relative { target = target + (try status().orientation) }
            let (pan, tilt) = normalised(target)
            _ = try send("AbsoluteMove", "<tptz:AbsoluteMove><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:Position><tt:PanTilt x=\"\(Self.number(pan))\" y=\"\(Self.number(tilt))\"/></tptz:Position></tptz:AbsoluteMove>")
            lastVelocity = nil
        case .setAngularVelocity(let velocity):
            guard velocity.z == 0 else { throw .notCapable("roll") }
            // Radians a second over the radians a second of velocity 1 on each axis.
            let panSpeed = settings.fullSpeed * settings.panRange * .pi / 180, tiltSpeed = settings.fullSpeed * settings.tiltRange * .pi / 180
            let pan = max(-1, min(1, velocity.y / panSpeed)), tilt = max(-1, min(1, -velocity.x / tiltSpeed))
            // The same speed again changes nothing: not sent (a request per frame otherwise).
            if let last = lastVelocity, abs(last.pan - pan) < 1e-4, abs(last.tilt - tilt) < 1e-4 { return }
            if pan == 0 && tilt == 0 { return try stop() }
            _ = try send("ContinuousMove", "<tptz:ContinuousMove><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:Velocity><tt:PanTilt x=\"\(Self.number(pan))\" y=\"\(Self.number(tilt))\"/></tptz:Velocity></tptz:ContinuousMove>")
            lastVelocity = (pan, tilt)
        case .animate:
            throw .notCapable("animations")
        case .setSystemTracking, .setLimits:
            return
        }
    }

    public func orientation() throws(DockError) -> DockOrientation? { try status().orientation }
}

/// SHA-1 (FIPS 180-4), for the WS-Security password digest ONVIF asks for; nothing else.
enum SHA1 {
    static func hash(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var data = message
        let bitLength = UInt64(message.count) * 8
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { data.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: data.count, by: 64) {
            for i in 0..<16 {
                w[i] = data[chunk + 4 * i..<chunk + 4 * i + 4].reduce(0) { $0 << 8 | UInt32($1) }
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32) = switch i {
                case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (b ^ c ^ d, 0xCA62_C1D6)
                }
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
        }
        return h.flatMap { value in (0..<4).map { UInt8(truncatingIfNeeded: value >> UInt32(24 - 8 * $0)) } }
    }
}
