import DockTrackCore
import Foundation

/// A line a dock sends its client, read once: the one place the client side of the dock
/// protocol is parsed (the accessory manager and the protocol dock both read these).
public enum DockMessage: Sendable, Equatable {
    case hello(DockAccessory)
    /// `docked` or `undocked`.
    case dockEvent(String)
    /// The dock's tracking button was switched on or off.
    case trackingButton(enabled: Bool)
    case motionState(MotionState)
    case battery(BatteryState)
    case accessoryEvent(AccessoryEvent)
    case limits(DockLimits)
    case error(code: String, message: String)
    /// A command sent with an id was taken (`{"id":…,"type":"done","command":…}`); a move says
    /// when it began on the dock's clock, and a move to an orientation where it goes (absolute,
    /// within the limits).
    case done(command: String, time: Double?, target: DockOrientation? = nil)
    /// The subjects of a frame, from a tracker serving the protocol (`track --serve`).
    case trackingState(SubjectStatesRecord)
    /// The subject a `selectSubject` request chose.
    case selected(UUID)
    /// A tracker's answer to a getter (`getSystemTracking`, `getFramingMode`, `getRegionOfInterest`).
    case setting(TrackerSetting)
    /// The audio route changed on the tracker's machine.
    case audioRouteChange(AudioRouteNotice)

    /// The message in `line`; `nil` for a line that is none of these.
    public init?(line: String) {
        guard let reply = DockReply(line: line) else { return nil }
        self = reply.message
    }

    fileprivate init?(object: [String: Any], line: String) {
        switch object["type"] as? String {
        case "hello":
            guard let a = object["accessory"] as? [String: Any], let id = UUID(uuidString: a["identifier"] as? String ?? "") else { return nil }
            self = .hello(DockAccessory(name: a["name"] as? String ?? "", category: a["category"] as? String ?? "", identifier: id,
                                        firmwareVersion: a["firmwareVersion"] as? String ?? "", hardwareModel: a["hardwareModel"] as? String ?? "",
                                        capabilities: object["capabilities"] as? [String] ?? [],
                                        trackingButtonEnabled: object["trackingButtonEnabled"] as? Bool ?? true))
        case "event":
            guard let event = object["event"] as? String else { return nil }
            if event == "trackingButton" {
                self = .trackingButton(enabled: object["enabled"] as? Bool ?? true)
            } else {
                self = .dockEvent(event)
            }
        case "motionState":
            func vector(_ key: String) -> DockVector? {
                guard let v = object[key] as? [String: Double] else { return nil }
                return DockVector(x: v["x"] ?? 0, y: v["y"] ?? 0, z: v["z"] ?? 0)
            }
            guard let position = vector("position"), let velocity = vector("velocity") else { return nil }
            let error = (object["error"] as? String).map { DockError(code: $0, message: "the last command") }
            self = .motionState(MotionState(time: object["time"] as? Double ?? 0, position: position, velocity: velocity, error: error))
        case "battery":
            var battery = BatteryState(name: object["name"] as? String ?? "internal", level: object["level"] as? Double ?? 0)
            battery.chargeState = BatteryState.ChargeState(rawValue: object["chargeState"] as? String ?? "") ?? .notCharging
            battery.reportedLow = object["lowBattery"] as? Bool
            self = .battery(battery)
        case "accessoryEvent":
            switch object["event"] as? String {
            case "button": self = .accessoryEvent(.button(id: object["id"] as? Int ?? 0, pressed: object["pressed"] as? Bool ?? false))
            case "cameraShutter": self = .accessoryEvent(.cameraShutter)
            case "cameraFlip": self = .accessoryEvent(.cameraFlip)
            case "cameraZoom": self = .accessoryEvent(.cameraZoom(factor: object["factor"] as? Double ?? 1))
            case let name?: self = .accessoryEvent(.unknown(name))
            case nil: return nil
            }
        case "limits":
            struct Line: Decodable { var limits: DockLimits }
            guard let decoded = try? JSONDecoder().decode(Line.self, from: Data(line.utf8)) else { return nil }
            self = .limits(decoded.limits)
        case "error":
            self = .error(code: object["code"] as? String ?? "", message: object["message"] as? String ?? "")
        case "done":
            let target = (object["target"] as? [String: Double]).map { DockOrientation(x: $0["x"] ?? 0, y: $0["y"] ?? 0, z: $0["z"] ?? 0) }
            self = .done(command: object["command"] as? String ?? "", time: object["time"] as? Double, target: target)
        case "trackingState":
            guard let record = try? JSONDecoder().decode(SubjectStatesRecord.self, from: Data(line.utf8)) else { return nil }
            self = .trackingState(record)
        case "selected":
            guard let id = UUID(uuidString: object["identifier"] as? String ?? "") else { return nil }
            self = .selected(id)
        case "audioRouteChange":
            func route(_ key: String) -> AudioRouteNotice.Route {
                let r = object[key] as? [String: Any] ?? [:]
                func names(_ k: String) -> [String] { (r[k] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String } }
                return AudioRouteNotice.Route(inputs: names("inputs"), outputs: names("outputs"))
            }
            guard let reason = object["reason"] as? String else { return nil }
            self = .audioRouteChange(AudioRouteNotice(reason: reason, previous: route("previous"), current: route("current"),
                                                      time: object["time"] as? Double ?? 0))
        case "systemTracking":
            guard let on = object["enabled"] as? Bool else { return nil }
            self = .setting(.systemTracking(on))
        case "framingMode":
            guard let mode = FramingMode(rawValue: object["mode"] as? String ?? "") else { return nil }
            self = .setting(.framingMode(mode))
        case "regionOfInterest":
            // Upper-left, and said so (an older tracker's lower-left rect is no answer).
            guard let r = object["rect"] as? [String: Double], let x = r["x"], let y = r["y"], let w = r["width"], let h = r["height"],
                  object["origin"] as? String == TrackingRequest.regionOrigin else { return nil }
            self = .setting(.regionOfInterest(upperLeft: UnitRect(x: x, y: y, width: w, height: h)))
        default:
            return nil
        }
    }
}

/// A line a dock sends, with the id of the request it answers when it names one. (An accessory
/// event's `id` is its button's, never a request's.)
public struct DockReply: Sendable, Equatable {
    public var message: DockMessage
    public var id: RequestID?

    public init(message: DockMessage, id: RequestID? = nil) {
        self.message = message
        self.id = id
    }

    public init?(line: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
              let message = DockMessage(object: object, line: line) else { return nil }
        self.message = message
        switch message {
        case .accessoryEvent, .dockEvent:
            id = nil
        default:
            if let text = object["id"] as? String {
                id = .text(text)
            } else if let number = object["id"] as? Int {
                id = .number(number)
            } else {
                id = nil
            }
        }
    }
}

extension DockError {
    /// The error a dock's error reply names (a code none of DockKit's is `unknown`).
    public init(code: String, message: String) {
        // The dock's message is its error's description, which names the code first.
        func detail(_ prefix: String) -> String { message.hasPrefix(prefix) ? String(message.dropFirst(prefix.count)) : message }
        switch code {
        case "notCapable": self = .notCapable(detail("not capable: "))
        case "invalidated": self = .invalidated
        case "notConnected": self = .notConnected
        case "noSubjectFound": self = .noSubjectFound
        case "rateTooHigh": self = .rateTooHigh(limit: Self.limit(in: message) ?? 2)
        case "rateTooLow": self = .rateTooLow(limit: Self.limit(in: message) ?? 10)
        case "sessionInUse": self = .sessionInUse
        case "invalidRequest": self = .invalidRequest(detail("invalid request: "))
        case "unknown": self = .unknown(detail("unknown: "))
        default: self = .unknown("\(code): \(message)")
        }
    }

    /// The rate a rate error names ("rate too high: at most 30 per second"), as the dock said it.
    private static func limit(in message: String) -> Double? {
        guard let range = message.range(of: #"at (most|least) [0-9.]+"#, options: .regularExpression) else { return nil }
        return Double(message[range].split(separator: " ").last ?? "")
    }
}

/// What a dock says about itself, unasked or to a battery query: docking (`docked`,
/// `undocked`), its tracking button, accessory events (buttons, shutter, zoom) and battery
/// states. A tracker in front of the dock (`track --serve`) relays these lines to its client as
/// the dock sent them.
public struct DockNews: Sendable, Equatable {
    public var message: DockMessage
    /// The line as the dock sent it.
    public var line: String

    /// `nil` for a message that is none of these (motion, answers, errors).
    public init?(_ message: DockMessage, line: String) {
        switch message {
        case .dockEvent, .trackingButton, .accessoryEvent, .battery: break
        default: return nil
        }
        self.message = message
        self.line = line
    }
}

/// A change of the audio route on the tracker's machine, as a client reads it
/// (`{"type":"audioRouteChange",…}`): why (`newDeviceAvailable`, `oldDeviceUnavailable`,
/// `override`), and the route's inputs and outputs (PipeWire node names) before and now.
public struct AudioRouteNotice: Sendable, Equatable {
    public struct Route: Sendable, Equatable {
        public var inputs: [String]
        public var outputs: [String]
        public init(inputs: [String], outputs: [String]) { (self.inputs, self.outputs) = (inputs, outputs) }
    }
    public var reason: String
    public var previous: Route
    public var current: Route
    public var time: Double

    public init(reason: String, previous: Route, current: Route, time: Double) {
        (self.reason, self.previous, self.current, self.time) = (reason, previous, current, time)
    }
}
