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
    /// The limits in force, and the dock's own (what `setLimits` may narrow) when it says them.
    case limits(DockLimits, dock: DockLimits? = nil)
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
    /// The audio route on the tracker's machine now (the answer to `getAudioRoute`).
    case audioRoute(AudioRouteNotice.Route)

    /// The message in `line`; `nil` for a line that is none of these.
    public init?(line: String) {
        guard let reply = DockReply(line: line) else { return nil }
        self = reply.message
    }
}

extension DockMessage: Decodable {
    private enum Keys: String, CodingKey {
        case date
        case type, accessory, capabilities, trackingButtonEnabled, event, enabled, time, position, velocity, error
        case name, level, chargeState, lowBattery, id, pressed, factor, limits, code, message, command, target
        case identifier, reason, previous, current, mode, rect, origin, dockLimits, gesture, subject
    }

    /// One line of the dock protocol as a typed message, by its `"type"`: the one place the
    /// client side reads what a dock sends (fields a dock may leave out have their defaults; a
    /// field of the wrong kind, or a type none of these, is no message).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        func optional<T: Decodable>(_ type: T.Type, _ key: Keys) throws -> T? { try c.decodeIfPresent(type, forKey: key) }
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "hello":
            struct Identity: Decodable {
                var name: String?, category: String?, identifier: UUID, firmwareVersion: String?, hardwareModel: String?
            }
            let a = try c.decode(Identity.self, forKey: .accessory)
            self = .hello(DockAccessory(name: a.name ?? "", category: .init(name: a.category ?? "trackingStand"), identifier: a.identifier,
                                        firmwareVersion: a.firmwareVersion.flatMap { $0.isEmpty ? nil : $0 },
                                        hardwareModel: a.hardwareModel.flatMap { $0.isEmpty ? nil : $0 },
                                        capabilities: try optional([String].self, .capabilities) ?? [],
                                        trackingButtonEnabled: try optional(Bool.self, .trackingButtonEnabled) ?? true))
        case "event":
            let event = try c.decode(String.self, forKey: .event)
            self = event == "trackingButton" ? .trackingButton(enabled: try optional(Bool.self, .enabled) ?? true) : .dockEvent(event)
        case "motionState":
            let error = try optional(String.self, .error).map { DockError(code: $0, message: "the last command") }
            self = .motionState(MotionState(time: try optional(Double.self, .time) ?? 0, position: try c.decode(DockVector.self, forKey: .position),
                                            velocity: try c.decode(DockVector.self, forKey: .velocity), error: error,
                                            date: try optional(Double.self, .date).flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0) : nil }))
        case "battery":
            var battery = BatteryState(name: try optional(String.self, .name) ?? "internal", level: try optional(Double.self, .level) ?? 0)
            battery.chargeState = BatteryState.ChargeState(rawValue: try optional(String.self, .chargeState) ?? "") ?? .notCharging
            battery.reportedLow = try optional(Bool.self, .lowBattery)
            self = .battery(battery)
        case "accessoryEvent":
            switch try c.decode(String.self, forKey: .event) {
            case "button": self = .accessoryEvent(.button(id: try optional(Int.self, .id) ?? 0, pressed: try optional(Bool.self, .pressed) ?? false))
            case "cameraShutter": self = .accessoryEvent(.cameraShutter)
            case "cameraFlip": self = .accessoryEvent(.cameraFlip)
            case "cameraZoom": self = .accessoryEvent(.cameraZoom(factor: try optional(Double.self, .factor) ?? 1))
            case "gesture": self = .accessoryEvent(.gesture(kind: try optional(String.self, .gesture) ?? "", subject: try optional(UUID.self, .subject),
                                                            time: try optional(Double.self, .time) ?? 0))
            case let name: self = .accessoryEvent(.unknown(name))
            }
        case "limits":
            self = .limits(try c.decode(DockLimits.self, forKey: .limits), dock: try optional(DockLimits.self, .dockLimits))
        case "error":
            self = .error(code: try optional(String.self, .code) ?? "", message: try optional(String.self, .message) ?? "")
        case "done":
            self = .done(command: try optional(String.self, .command) ?? "", time: try optional(Double.self, .time),
                         target: try optional(DockVector.self, .target))
        case "trackingState":
            self = .trackingState(try SubjectStatesRecord(from: decoder))
        case "selected":
            self = .selected(try c.decode(UUID.self, forKey: .identifier))
        case "audioRouteChange":
            let empty = AudioRouteNotice.Route(inputs: [], outputs: [])
            self = .audioRouteChange(AudioRouteNotice(reason: AudioRouteNotice.Reason(try c.decode(String.self, forKey: .reason)),
                                                      previous: try optional(AudioRouteNotice.Route.self, .previous) ?? empty,
                                                      current: try optional(AudioRouteNotice.Route.self, .current) ?? empty,
                                                      time: try optional(Double.self, .time) ?? 0))
        case "audioRoute":
            self = .audioRoute(try AudioRouteNotice.Route(from: decoder))
        case "systemTracking":
            self = .setting(.systemTracking(try c.decode(Bool.self, forKey: .enabled)))
        case "framingMode":
            self = .setting(.framingMode(try c.decode(FramingMode.self, forKey: .mode)))
        case "regionOfInterest":
            // Upper-left, and said so (an older tracker's lower-left rect is no answer).
            guard try optional(String.self, .origin) == TrackingRequest.regionOrigin else {
                throw DecodingError.dataCorruptedError(forKey: .origin, in: c, debugDescription: "a region that does not say its origin")
            }
            self = .setting(.regionOfInterest(upperLeft: try c.decode(UnitRect.self, forKey: .rect)))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "no message of type \(type)")
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
        guard let reply = try? JSONDecoder().decode(DockReply.self, from: Data(line.utf8)) else { return nil }
        self = reply
    }
}

extension DockReply: Decodable {
    private enum Keys: String, CodingKey { case id }

    public init(from decoder: any Decoder) throws {
        message = try DockMessage(from: decoder)
        switch message {
        case .accessoryEvent, .dockEvent:
            id = nil  // a button's id, never a request's
        default:
            id = try? decoder.container(keyedBy: Keys.self).decodeIfPresent(RequestID.self, forKey: .id)
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
        case "notSupported": self = .notSupported(detail("not supported: "))
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
/// (`{"type":"audioRouteChange",…}`, AVAudioSession's route change): why, and the route's inputs
/// and outputs before and now.
public struct AudioRouteNotice: Sendable, Equatable {
    /// Why the route changed (AVAudioSession's `RouteChangeReason`).
    public enum Reason: Sendable, Equatable {
        /// The route moved to a device that appeared.
        case newDeviceAvailable
        /// A device of the route went away.
        case oldDeviceUnavailable
        /// The route moved to a device that was there already (a person chose it).
        case override
        /// A reason this client does not know (a newer tracker's), by its name.
        case other(String)

        public init(_ name: String) {
            switch name {
            case "newDeviceAvailable": self = .newDeviceAvailable
            case "oldDeviceUnavailable": self = .oldDeviceUnavailable
            case "override": self = .override
            default: self = .other(name)
            }
        }
    }

    /// One end of the route (AVAudioSession's port description): the device's name, what a
    /// person reads, and its kind of device.
    public struct Port: Sendable, Equatable, Decodable {
        public var name: String
        public var description: String
        public var type: AudioPortType

        public init(name: String, description: String = "", type: AudioPortType = .unknown) {
            (self.name, self.description, self.type) = (name, description, type)
        }

        private enum Keys: String, CodingKey { case name, description, type }
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            name = try c.decode(String.self, forKey: .name)
            description = try c.decodeIfPresent(String.self, forKey: .description) ?? name
            // A type this client does not know is unknown, not an unreadable route.
            type = (try? c.decodeIfPresent(AudioPortType.self, forKey: .type)) ?? .unknown
        }
    }

    /// Where sound comes in and goes out (AVAudioSession's `currentRoute`).
    public struct Route: Sendable, Equatable, Decodable {
        public var inputs: [Port]
        public var outputs: [Port]
        public init(inputs: [Port], outputs: [Port]) { (self.inputs, self.outputs) = (inputs, outputs) }

        private enum Keys: String, CodingKey { case inputs, outputs }
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            inputs = try c.decodeIfPresent([Port].self, forKey: .inputs) ?? []
            outputs = try c.decodeIfPresent([Port].self, forKey: .outputs) ?? []
        }
    }
    public var reason: Reason
    public var previous: Route
    public var current: Route
    public var time: Double

    public init(reason: Reason, previous: Route, current: Route, time: Double) {
        (self.reason, self.previous, self.current, self.time) = (reason, previous, current, time)
    }
}
