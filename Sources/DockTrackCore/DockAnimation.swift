import Foundation

/// DockKit's animations: short motions that start from the current pose and end there.
public enum DockAnimation: String, Sendable, CaseIterable, Codable {
    /// A nod: tilt down and up twice.
    case yes
    /// A shake: pan left and right twice.
    case no
    /// Waking up: look up, glance left and right, settle.
    case wakeup
    /// A quick tilt that snaps back with a damped oscillation.
    case kapow

    /// Seconds the animation lasts.
    public var duration: Double {
        switch self {
        case .yes, .no: 1.2
        case .wakeup: 2.0
        case .kapow: 1.5
        }
    }

    /// The offset from the starting pose `t` seconds into the animation (zero before and after).
    public func offset(at t: Double) -> DockOrientation {
        guard t > 0, t < duration else { return .zero }
        let phase = t / duration
        switch self {
        case .yes:
            return DockOrientation(x: 0.15 * sin(2 * 2 * .pi * phase), y: 0, z: 0)
        case .no:
            return DockOrientation(x: 0, y: 0.2 * sin(2 * 2 * .pi * phase), z: 0)
        case .wakeup:
            // Up over the first quarter, a look left and right, back down over the last quarter.
            let lift = phase < 0.25 ? phase / 0.25 : phase > 0.75 ? (1 - phase) / 0.25 : 1
            let glance = phase > 0.25 && phase < 0.75 ? 0.25 * sin(2 * .pi * (phase - 0.25) / 0.5) : 0
            return DockOrientation(x: -0.2 * lift, y: glance, z: 0)
        case .kapow:
            // A snap to 0.25 rad down in the first 0.1 s, then a damped oscillation back.
            let kick = 0.1
            if t < kick { return DockOrientation(x: 0.25 * t / kick, y: 0, z: 0) }
            let s = t - kick
            return DockOrientation(x: 0.25 * exp(-3 * s) * cos(2 * .pi * 2.5 * s), y: 0, z: 0)
        }
    }
}
