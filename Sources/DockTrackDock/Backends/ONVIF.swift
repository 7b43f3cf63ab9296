import DockTrackCore
import DockTrackSystem
import Foundation

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
    /// The magnification at the end of the camera's zoom space (zoom 1; linear from 1 at zoom
    /// 0), when zoom is driven; `nil` when it is not.
    public var maximumMagnification: Double?
    /// A digital PTZ (ipycam): the picture is a window cropped from a wider one and scaled up,
    /// 1/m of its width and height at magnification m, and pan and tilt move the window's centre
    /// within the wider picture (x = 1: the window's right edge at the picture's). Pan and tilt
    /// then turn through this window's geometry (its `maximumZoom` the camera's largest
    /// magnification), so their range in degrees shrinks to nothing at zoom 0, and
    /// ``panRange`` and ``tiltRange`` are not used. `nil`: a camera that turns.
    public var digitalWindow: CropWindow?
    public init() {}
}

/// An ONVIF PTZ camera (the PTZ service of ONVIF Profile S, SOAP over HTTP) behind the same
/// commands as every dock: velocity commands become `ContinuousMove`, orientation commands
/// `AbsoluteMove`, and `GetStatus` reads where it points. Pan and tilt go through
/// ``ONVIFSettings``: ONVIF's generic spaces are -1...1 with no unit, the degrees are the
/// camera's (or, for a digital PTZ, the field of view's).
package final class ONVIFDock {
    package let settings: ONVIFSettings
    /// The service addresses the device reported (its own paths when it reported none).
    package let ptzService: URL
    package let mediaService: URL
    /// The media profile whose PTZ configuration is driven.
    package let profile: String
    /// The camera's absolute pan and tilt position spaces (`GetConfigurationOptions`): -1...1,
    /// ONVIF's generic space, unless the camera reports others. ``ONVIFSettings/panRange`` and
    /// ``ONVIFSettings/tiltRange`` are the degrees at their ends.
    package private(set) var panSpace: ClosedRange<Double> = -1...1
    package private(set) var tiltSpace: ClosedRange<Double> = -1...1
    private var lastVelocity: (pan: Double, tilt: Double)?
    /// The zoom (0...1) last sent or read: the frame loop and the device's thread both ask.
    private let zoomLock = NSLock()
    private var zoomValue = 0.0

    /// Connects to the device service at `host`:`port`: its capabilities (where the media and
    /// PTZ services are) and its first media profile.
    package init(host: String, port: Int, settings: ONVIFSettings = ONVIFSettings()) throws(DockError) {
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
        // The position spaces of the profile's PTZ configuration; a camera that does not answer
        // (ipycam) is taken to use the generic -1...1.
        if let configuration = Self.element("Profiles", in: profiles).flatMap({ Self.attribute("token", ofFirst: "PTZConfiguration", in: $0) }),
           let options = try? send("GetConfigurationOptions", "<tptz:GetConfigurationOptions><tptz:ConfigurationToken>\(Self.escaped(configuration))</tptz:ConfigurationToken></tptz:GetConfigurationOptions>"),
           let spaces = Self.positionSpaces(in: options) {
            (panSpace, tiltSpace) = spaces
        }
        // Where its zoom is (for the spaces and for zoom framing), before anything moves it.
        _ = try? status()
    }

    /// The absolute pan/tilt position space's ranges in a `GetConfigurationOptions` reply;
    /// `nil` when it names none, or one that is empty or not finite (its span included).
    package static func positionSpaces(in reply: String) -> (pan: ClosedRange<Double>, tilt: ClosedRange<Double>)? {
        guard let space = element("AbsolutePanTiltPositionSpace", in: reply) else { return nil }
        func range(_ axis: String) -> ClosedRange<Double>? {
            guard let text = element(axis, in: space),
                  let low = element("Min", in: text).flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
                  let high = element("Max", in: text).flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
                  low.isFinite, high.isFinite, low < high, (high - low).isFinite else { return nil }
            return low...high
        }
        guard let pan = range("XRange"), let tilt = range("YRange") else { return nil }
        return (pan, tilt)
    }

    /// The zoom (0...1 of the camera's generic zoom space) last sent or read.
    package var zoom: Double {
        zoomLock.lock(); defer { zoomLock.unlock() }
        return zoomValue
    }

    /// Zoom to magnification: linear up to ``ONVIFSettings/maximumMagnification`` (1 without it).
    package var zoomScale: ZoomScale { ZoomScale(maximumMagnification: settings.maximumMagnification) }

    /// Radians a generic pan or tilt of 1 turns the camera now: the degrees of the settings, or,
    /// for a digital PTZ, how far the window's centre may go at the present magnification.
    private var unitTurn: (pan: Double, tilt: Double) {
        guard let window = settings.digitalWindow else { return (settings.panRange * .pi / 180, settings.tiltRange * .pi / 180) }
        let range = window.limits(at: zoomScale.magnification(at: zoom), from: .standard)
        return (range.yaw.range.upperBound, range.pitch.range.upperBound)
    }

    /// The camera's pan/tilt position for a dock orientation (pan right, tilt up are positive
    /// there): the radians over a generic turn of 1 (``unitTurn``; -1...1, kept within), onto
    /// the camera's own space. A digital PTZ at zoom 0 cannot turn: 0.
    func normalised(_ orientation: DockOrientation) -> (pan: Double, tilt: Double) {
        let unit = unitTurn
        func generic(_ radians: Double, over turn: Double) -> Double { turn > 0 ? max(-1, min(1, radians / turn)) : 0 }
        return (pan: Self.onto(panSpace, generic(orientation.y, over: unit.pan)),
                tilt: Self.onto(tiltSpace, generic(-orientation.x, over: unit.tilt)))
    }

    /// The dock orientation of the camera's position `pan`, `tilt` (its own spaces).
    func orientation(pan: Double, tilt: Double) -> DockOrientation {
        let unit = unitTurn
        return DockOrientation(x: -Self.generic(tiltSpace, tilt) * unit.tilt, y: Self.generic(panSpace, pan) * unit.pan, z: 0)
    }

    /// -1...1 onto `space`, and back: the one place the camera's own ranges come in.
    package static func onto(_ space: ClosedRange<Double>, _ generic: Double) -> Double {
        space.lowerBound + (generic + 1) / 2 * (space.upperBound - space.lowerBound)
    }
    package static func generic(_ space: ClosedRange<Double>, _ value: Double) -> Double {
        2 * (value - space.lowerBound) / (space.upperBound - space.lowerBound) - 1
    }

    private func send(_ action: String, _ body: String) throws(DockError) -> String {
        do {
            return try sendPTZ(action, body)
        } catch {
            throw error.dockError
        }
    }

    private func sendPTZ(_ action: String, _ body: String) throws(CallFailure) -> String {
        try Self.soapCall(ptzService, action: "http://www.onvif.org/ver20/ptz/wsdl/\(action)", body: body, settings: settings)
    }

    /// Stops pan and tilt.
    package func stop() throws(DockError) {
        _ = try send("Stop", "<tptz:Stop><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:PanTilt>true</tptz:PanTilt><tptz:Zoom>false</tptz:Zoom></tptz:Stop>")
        lastVelocity = (0, 0)
    }

    /// Zooms to `zoom` in 0...1 (the camera's generic zoom space: wide to tele).
    package func zoom(to zoom: Double) throws(DockError) {
        guard zoom.isFinite else { throw .invalidRequest("zoom must be a number") }
        let zoom = max(0, min(1, zoom))
        _ = try send("AbsoluteMove", "<tptz:AbsoluteMove><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:Position><tt:Zoom x=\"\(Self.number(zoom))\"/></tptz:Position></tptz:AbsoluteMove>")
        zoomLock.lock(); zoomValue = zoom; zoomLock.unlock()
    }

    /// Where the camera points (`GetStatus`), and its zoom in 0...1.
    package func status() throws(DockError) -> (orientation: DockOrientation, zoom: Double?) {
        let reply = try send("GetStatus", "<tptz:GetStatus><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken></tptz:GetStatus>")
        guard let position = Self.element("Position", in: reply),
              let pan = Self.attribute("x", ofFirst: "PanTilt", in: position).flatMap(Double.init),
              let tilt = Self.attribute("y", ofFirst: "PanTilt", in: position).flatMap(Double.init), pan.isFinite, tilt.isFinite else {
            throw .invalidRequest("the camera's status has no pan/tilt position")
        }
        let zoom = Self.attribute("x", ofFirst: "Zoom", in: position).flatMap(Double.init)
        if let zoom, zoom.isFinite { zoomLock.lock(); zoomValue = max(0, min(1, zoom)); zoomLock.unlock() }
        return (orientation(pan: pan, tilt: tilt), zoom)
    }

    /// Turns by `change` from where the camera points (`RelativeMove`, a translation in its
    /// position space); a camera that refuses it is read (`GetStatus`) and sent the sum
    /// (`AbsoluteMove`).
    package func turn(by change: DockOrientation) throws(DockError) {
        let unit = unitTurn
        let pan = unit.pan > 0 ? change.y / unit.pan * (panSpace.upperBound - panSpace.lowerBound) / 2 : 0
        let tilt = unit.tilt > 0 ? -change.x / unit.tilt * (tiltSpace.upperBound - tiltSpace.lowerBound) / 2 : 0
        guard pan.isFinite, tilt.isFinite else { throw .invalidRequest("a turn must be numbers") }
        do {
            _ = try sendPTZ("RelativeMove", "<tptz:RelativeMove><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:Translation><tt:PanTilt x=\"\(Self.number(pan))\" y=\"\(Self.number(tilt))\"/></tptz:Translation></tptz:RelativeMove>")
        } catch .fault(action: "RelativeMove", _) {
            try point(at: try status().orientation + change)
        } catch {
            throw error.dockError
        }
        lastVelocity = nil
    }

    /// Points at `orientation` (`AbsoluteMove`).
    package func point(at orientation: DockOrientation) throws(DockError) {
        let (pan, tilt) = normalised(orientation)
        _ = try send("AbsoluteMove", "<tptz:AbsoluteMove><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:Position><tt:PanTilt x=\"\(Self.number(pan))\" y=\"\(Self.number(tilt))\"/></tptz:Position></tptz:AbsoluteMove>")
        lastVelocity = nil
    }

    // MARK: Presets

    /// A position saved in the camera (`GetPresets`).
    package struct Preset: Sendable, Equatable {
        package var token: String
        package var name: String
        /// Where it points, when the camera says.
        package var orientation: DockOrientation?
        package var zoom: Double?
    }

    /// The presets saved in the camera, in its order.
    package func presets() throws(DockError) -> [Preset] {
        let reply = try send("GetPresets", "<tptz:GetPresets><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken></tptz:GetPresets>")
        return Self.presets(in: reply).map { found in
            Preset(token: found.token, name: found.name, orientation: found.pan.flatMap { pan in found.tilt.map { orientation(pan: pan, tilt: $0) } },
                   zoom: found.zoom)
        }
    }

    /// The presets of a `GetPresets` reply, as the camera gives them (its own spaces).
    package static func presets(in reply: String) -> [(token: String, name: String, pan: Double?, tilt: Double?, zoom: Double?)] {
        var found: [(token: String, name: String, pan: Double?, tilt: Double?, zoom: Double?)] = []
        var rest = Substring(reply)
        while let open = rest.range(of: "<(?:[A-Za-z0-9_]+:)?Preset\\s[^>]*>", options: .regularExpression) {
            let tag = String(rest[open])
            let after = rest[open.upperBound...]
            let close = after.range(of: "</(?:[A-Za-z0-9_]+:)?Preset>", options: .regularExpression)
            let body = String(close.map { after[..<$0.lowerBound] } ?? after)
            rest = close.map { after[$0.upperBound...] } ?? ""
            guard let token = attribute("token", ofFirst: "Preset", in: tag) else { continue }
            func number(_ name: String, _ axis: String) -> Double? {
                attribute(axis, ofFirst: name, in: body).flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
            }
            found.append((token: unescaped(token), name: unescaped(element("Name", in: body) ?? ""),
                          pan: number("PanTilt", "x"), tilt: number("PanTilt", "y"), zoom: number("Zoom", "x")))
        }
        return found
    }

    /// The preset whose token is `key`, else the last one named `key`.
    package func preset(_ key: String) throws(DockError) -> Preset {
        let all = try presets()
        guard let preset = all.first(where: { $0.token == key }) ?? all.last(where: { $0.name == key }) else {
            throw .invalidRequest("the camera has no preset \(key) (it has: \(all.isEmpty ? "none" : all.map(\.name).joined(separator: ", ")))")
        }
        return preset
    }

    /// Saves where the camera points now as a preset named `name` (`SetPreset`; the preset of
    /// that name is replaced on a camera that keeps tokens), and returns its token.
    @discardableResult
    package func savePreset(named name: String) throws(DockError) -> String {
        guard !name.isEmpty else { throw .invalidRequest("a preset needs a name") }
        let existing = try presets().last { $0.name == name }
        let token = existing.map { "<tptz:PresetToken>\(Self.escaped($0.token))</tptz:PresetToken>" } ?? ""
        let reply = try send("SetPreset", "<tptz:SetPreset><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:PresetName>\(Self.escaped(name))</tptz:PresetName>\(token)</tptz:SetPreset>")
        return Self.element("PresetToken", in: reply).map { Self.unescaped($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? existing?.token ?? name
    }

    /// Moves to the preset whose token or name is `key` (`GotoPreset`).
    package func goToPreset(_ key: String) throws(DockError) {
        let preset = try preset(key)
        _ = try send("GotoPreset", "<tptz:GotoPreset><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken><tptz:PresetToken>\(Self.escaped(preset.token))</tptz:PresetToken></tptz:GotoPreset>")
        lastVelocity = nil
    }

    /// Moves to the camera's home position (`GotoHomePosition`).
    package func goHome() throws(DockError) {
        _ = try send("GotoHomePosition", "<tptz:GotoHomePosition><tptz:ProfileToken>\(Self.escaped(profile))</tptz:ProfileToken></tptz:GotoHomePosition>")
        lastVelocity = nil
    }

    // MARK: SOAP

    /// Why a SOAP call failed, decided once where the reply is read (never by matching words).
    enum CallFailure: Error, Equatable {
        /// Nobody answered, or not in time.
        case unreachable
        /// The camera answered with a SOAP fault to `action` (its reason, as one clean line).
        case fault(action: String, reason: String)
        /// The camera wants credentials (HTTP 401).
        case credentials
        /// Another HTTP status.
        case status(Int, url: String)
        /// A reply that is not HTTP, or over its budget.
        case badReply(String)

        /// The failure as the dock reports it: nobody there is `notConnected`; a refusal or
        /// missing credentials is the request's fault (`invalidRequest`); a broken or failing
        /// camera is `unknown`, with its words.
        var dockError: DockError {
            switch self {
            case .unreachable: .notConnected
            case .fault(let action, let reason): .invalidRequest("the camera refused \(action): \(reason)")
            case .credentials: .invalidRequest("the camera wants credentials (--onvif-user, --onvif-password)")
            case .status(let status, let url): status >= 400 && status < 500 ? .invalidRequest("HTTP \(status) from \(url)") : .unknown("HTTP \(status) from \(url)")
            case .badReply(let reason): .unknown(reason)
            }
        }
    }

    /// Posts `body` in a SOAP 1.2 envelope (with a UsernameToken when there are credentials) and
    /// returns the reply's text; a fault or an HTTP error is a DockError.
    static func call(_ url: URL, action: String, body: String, settings: ONVIFSettings) throws(DockError) -> String {
        do {
            return try soapCall(url, action: action, body: body, settings: settings)
        } catch {
            throw error.dockError
        }
    }

    /// ``call(_:action:body:settings:)`` with its failure as it was found.
    static func soapCall(_ url: URL, action: String, body: String, settings: ONVIFSettings) throws(CallFailure) -> String {
        let envelope = envelope(body, security: settings.user.map { usernameToken(user: $0, password: settings.password ?? "") })
        let reply: HTTPReplyParser.Reply
        do {
            reply = try HTTPClient.send("POST", to: url, headers: [
                ("Content-Type", "application/soap+xml; charset=utf-8; action=\"\(action)\""),
                ("SOAPAction", "\"\(action)\""),
            ], body: Array(envelope.utf8), timeout: settings.timeout, maximumBytes: maximumReplyBytes)
        } catch {
            switch error {
            case .unreachable, .timedOut: throw .unreachable
            case .reply, .unsupported: throw .badReply("\(action.split(separator: "/").last ?? ""): \(error)")
            }
        }
        let text = String(decoding: reply.body, as: UTF8.self)
        if let fault = element("Fault", in: text) {
            let reason = element("Text", in: fault) ?? element("faultstring", in: fault) ?? "a SOAP fault"
            throw .fault(action: String(action.split(separator: "/").last ?? ""), reason: TerminalText.line(reason))
        }
        if !(200..<300).contains(reply.status) {
            throw reply.status == 401 ? .credentials : .status(reply.status, url: url.absoluteString)
        }
        return text
    }

    /// The largest SOAP reply read (4 MiB: a camera's GetProfiles or GetPresets is a few kB;
    /// anything larger is abandoned as it arrives).
    package static let maximumReplyBytes = 4 << 20


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

    /// XML's five entities back to their characters (names and tokens in replies).
    static func unescaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    static func number(_ value: Double) -> String { String(format: "%.5f", value) }

    /// SHA-1 of `message` (for tests of the digest).
    package static func sha1(_ message: [UInt8]) -> [UInt8] { SHA1.hash(message) }
}

extension ONVIFDock: ZoomingHardware {
    package var capabilities: [DockCapability] { [.pan, .tilt, .zoom, .systemTracking] }

    package func apply(_ command: DockCommand, at time: Double) throws(DockError) {
        switch command {
        case .setOrientation(let orientation, _, let relative):
            if relative { try turn(by: orientation) } else { try point(at: orientation) }
        case .setAngularVelocity(let velocity):
            guard velocity.z == 0 else { throw .notCapable("roll") }
            // Radians a second over the radians a second of velocity 1 on each axis.
            let unit = unitTurn
            let panSpeed = settings.fullSpeed * unit.pan, tiltSpeed = settings.fullSpeed * unit.tilt
            func speed(_ radians: Double, over full: Double) -> Double { full > 0 ? max(-1, min(1, radians / full)) : 0 }
            let pan = speed(velocity.y, over: panSpeed), tilt = speed(-velocity.x, over: tiltSpeed)
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

    package func orientation() throws(DockError) -> DockOrientation? { try status().orientation }
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
