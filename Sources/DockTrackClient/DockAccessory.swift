import DockTrackCore
import DockTrackSystem
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A dock as the client knows it after its hello.
public struct DockAccessory: Sendable, Hashable, CustomDebugStringConvertible {
    /// What kind of accessory it is (DockKit's `DockAccessory.Category`).
    public enum Category: Sendable, Hashable, CustomDebugStringConvertible {
        /// A motorized stand that turns a camera: every DockTrack server says this.
        case trackingStand
        /// A category this client does not know (a newer server's), by its name.
        case unknown(String)

        public init(name: String) { self = name == "trackingStand" ? .trackingStand : .unknown(name) }

        public var debugDescription: String {
            switch self {
            case .trackingStand: "trackingStand"
            case .unknown(let name): name
            }
        }
    }

    public var name: String
    public var category: Category
    public var identifier: UUID
    /// nil when the dock does not say (DockKit's optional).
    public var firmwareVersion: String?
    /// nil when the dock does not say (DockKit's optional).
    public var hardwareModel: String?
    public var capabilities: [String]
    /// Whether the dock's own tracking button works (DockKit's `trackingButtonEnabled`).
    public var trackingButtonEnabled: Bool

    public var debugDescription: String {
        "\(name) (\(category.debugDescription), \(identifier.uuidString), firmware \(firmwareVersion ?? "unknown"), model \(hardwareModel ?? "unknown"), \(capabilities.joined(separator: " ")))"
    }
}

extension DockAccessory {
    /// DockKit's `Limits`: each axis's range (radians) and top speed (rad/s). Read from a dock,
    /// an axis it lacks (it cannot turn about it: no range, no speed) is nil; in ``DockAccessoryManager/setLimits(_:)``,
    /// an axis left nil keeps the limits in force.
    public struct Limits: Sendable, Equatable {
        public var yaw: AxisLimits?
        public var pitch: AxisLimits?
        public var roll: AxisLimits?

        public init(yaw: AxisLimits? = nil, pitch: AxisLimits? = nil, roll: AxisLimits? = nil) {
            (self.yaw, self.pitch, self.roll) = (yaw, pitch, roll)
        }

        /// A dock's limits as DockKit gives them: an axis that cannot turn is nil, and so is one
        /// the dock's `capabilities` (its hello's) do not name when they are given (`pan` for yaw,
        /// `tilt` for pitch, `roll`): a camera without tilt whose limits still say a tilt range.
        public init(_ limits: DockLimits, capabilities: [String]? = nil) {
            func turning(_ axis: AxisLimits, _ capability: DockCapability) -> AxisLimits? {
                if let capabilities, !capabilities.contains(capability.rawValue) { return nil }
                return axis.range.lowerBound == axis.range.upperBound && axis.maximumSpeed == 0 ? nil : axis
            }
            self.init(yaw: turning(limits.yaw, .pan), pitch: turning(limits.pitch, .tilt), roll: turning(limits.roll, .roll))
        }

        /// The request these make: a nil axis is left as it is.
        public var request: DockLimits {
            DockLimits(pitch: pitch ?? .unchanged, yaw: yaw ?? .unchanged, roll: roll ?? .unchanged)
        }
    }
}

/// Docked or undocked, as DockKit's accessory state changes; `docked` again, with the accessory
/// as it is now, when its tracking button is switched on or off.
public enum AccessoryStateChange: Sendable, Hashable, CustomDebugStringConvertible {
    case docked(DockAccessory)
    case undocked(DockAccessory)
    /// The connection to the dock ended (it hung up, or ``DockAccessoryManager/disconnect()``):
    /// the last change; every stream ends after it.
    case disconnected

    public var debugDescription: String {
        switch self {
        case .docked(let accessory): "docked: \(accessory.debugDescription)"
        case .undocked(let accessory): "undocked: \(accessory.debugDescription)"
        case .disconnected: "disconnected"
        }
    }
}

/// Buttons and camera controls on the dock.
public enum AccessoryEvent: Sendable, Equatable {
    case button(id: Int, pressed: Bool)
    case cameraShutter
    case cameraFlip
    case cameraZoom(factor: Double)
    /// A gesture the tracker recognized (`track --serve`; no DockKit counterpart): its kind
    /// (`followMe`: an open palm held up, which chose the person or let them go), the
    /// person's identifier, the tracker's time.
    case gesture(kind: String, subject: UUID?, time: Double)
    /// An event this client does not know (a newer dock's), by its name: passed on, as
    /// DockKit's `@unknown default`, not dropped.
    case unknown(String)
}
