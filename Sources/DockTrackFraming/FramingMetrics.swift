import DockTrackCore
import Foundation

/// How well a closed loop kept its subject framed.
package struct FramingMetrics: Sendable, Equatable {
    package var frames = 0
    /// Frames in which a primary subject was tracked.
    package var framesWithSubject = 0
    /// Of those, the frames in which the point framing brings to the target (the primary
    /// subject's anchor; in an automatic group shot the group's middle) was inside the target zone.
    package var framesInZone = 0
    /// Distances (unit coordinates of the view) from the anchor to the framing target.
    package var errors: [Double] = []
    /// The largest amount (radians) the pan went past its target while moving.
    package var overshoot = 0.0
    package var commands = 0
    package var duration = 0.0
    /// Seconds from the first frame to the first with the primary subject in the target zone.
    package var firstInZone: Double?
    /// The longest stretch (seconds) with the primary subject out of the target zone, or with
    /// none tracked; the start counts (a run that begins away from its subject begins out).
    package var longestOutOfZone: Double { max(longestClosedOutOfZone, outOfZoneSince.map { (firstTime ?? 0) + duration - $0 } ?? 0) }
    private var longestClosedOutOfZone = 0.0
    /// When the stretch out of the zone now running began.
    private var outOfZoneSince: Double?
    /// The first frame's time, and the pan error and target of the last frame tracked (for
    /// overshoot).
    private var firstTime: Double?
    private var previousError: Double?
    private var previousTarget: Double?

    package init() {}

    /// Counts one frame captured at `time` from a camera running at `framesPerSecond`: where
    /// the controller aimed (``FramingController/aim(at:)``), its state and target pose, the
    /// dock's pose at capture and its pan speed when the command was made; whether a command
    /// was sent.
    package mutating func record(time: Double, framesPerSecond: Double, aim: (subject: (x: Double, y: Double), target: (x: Double, y: Double))?,
                                state: FramingController.State, target: DockOrientation?, pose: DockOrientation, panSpeed: Double,
                                commanded: Bool = true) {
        firstTime = firstTime ?? time
        frames += 1
        if commanded { commands += 1 }
        duration = time - firstTime! + 1 / framesPerSecond
        var inZone = false
        if let aim {
            framesWithSubject += 1
            errors.append(hypot(aim.subject.x - aim.target.x, aim.subject.y - aim.target.y))
            if isInTargetZone(aim.subject, target: aim.target) {
                inZone = true
                framesInZone += 1
                firstInZone = firstInZone ?? time - firstTime!
            }
        }
        if inZone, let since = outOfZoneSince {
            longestClosedOutOfZone = max(longestClosedOutOfZone, time - since)
            outOfZoneSince = nil
        } else if !inZone && outOfZoneSince == nil {
            outOfZoneSince = time
        }
        // Overshoot: the pan passing its target while moving, as long as the target itself
        // holds still (a new primary subject is a new target, not an overshoot).
        if state == .tracking, let target {
            let error = target.y - pose.y
            let steady = previousTarget.map { abs($0 - target.y) < 0.01 } ?? false
            if steady, let previous = previousError, previous * error < 0, abs(panSpeed) > 0.05 {
                overshoot = max(overshoot, abs(error))
            }
            previousError = error
            previousTarget = target.y
        } else {
            previousError = nil
            previousTarget = nil
        }
    }

    package var inZoneFraction: Double { framesWithSubject == 0 ? 0 : Double(framesInZone) / Double(framesWithSubject) }
    /// The share of all frames (those without a subject included) with the primary subject in the target zone.
    package var inZoneFractionOfAllFrames: Double { frames == 0 ? 0 : Double(framesInZone) / Double(frames) }
    package var meanError: Double { errors.isEmpty ? 0 : errors.reduce(0, +) / Double(errors.count) }
    package var p95Error: Double { Statistics.percentile(errors, 0.95) }
    package var commandRate: Double { duration > 0 ? Double(commands) / duration : 0 }

    /// `{"frames":…,"framesWithSubject":…,"inTargetZone":…,"meanError":…,"p95Error":…,"overshootDegrees":…,"commandsPerSecond":…,"inTargetZoneOfAllFrames":…,"longestOutOfZoneSeconds":…}`
    package var jsonLine: String {
        var line = JSONLine()
        line.add("frames", frames)
        line.add("framesWithSubject", framesWithSubject)
        line.add("inTargetZone", inZoneFraction, digits: 3)
        line.add("meanError", meanError, digits: 4)
        line.add("p95Error", p95Error, digits: 4)
        line.add("overshootDegrees", overshoot * 180 / .pi, digits: 2)
        line.add("commandsPerSecond", commandRate, digits: 1)
        line.add("inTargetZoneOfAllFrames", inZoneFractionOfAllFrames, digits: 3)
        line.add("longestOutOfZoneSeconds", longestOutOfZone, digits: 2)
        return line.text
    }
}

/// The framing target zone: around the framing target, a sixth of the view's width and a fifth
/// of its height either way (for automatic framing of a group, the target is the group's centre).
package func isInTargetZone(_ point: (x: Double, y: Double), target: (x: Double, y: Double)) -> Bool {
    abs(point.x - target.x) <= 1.0 / 6 && abs(point.y - target.y) <= 0.2
}
