import DockTrackCore
import Foundation

/// How fast the pose that frames the primary subject moves (rad/s per axis): a walker seen from
/// a turning dock keeps a steady rate, which the axes add to their commands so that they move
/// with the person instead of trailing them.
///
/// The rate is the least-squares slope of the framing poses of the last ``window`` seconds, for
/// one subject: a new primary subject starts afresh (a switch from one person to another is not
/// motion), and so do a gap of more than ``window`` and a pose more than ``jump`` from where the
/// rate would have put it (the subject placed anew: found again, or placed by another camera). A slope over half a second is steady
/// where a frame-to-frame difference is not: at 30 frames a second a face's box jittering by 1%
/// of a 50° view is 15°/s from one frame to the next, under 1°/s as a slope.
package struct SubjectMotion: Sendable, Equatable {
    /// Seconds of poses the slope is fitted over.
    package var window = 0.5
    /// The fewest poses, and the shortest span (seconds), for a rate: less says nothing yet.
    package var minimumSamples = 3
    package var minimumSpan = 0.25
    /// Radians off the course so far past which a pose starts afresh.
    package var jump = 0.05
    private var subject: UUID?
    private var samples: [(time: Double, pose: DockOrientation)] = []

    package init() {}

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.subject == rhs.subject && lhs.samples.elementsEqual(rhs.samples) { $0.time == $1.time && $0.pose == $1.pose }
    }

    /// Adds the pose framing `subject` in a frame captured at `time`; the rate now (zero until
    /// enough of one subject's poses are in).
    package mutating func add(subject: UUID, pose: DockOrientation, at time: Double) -> DockOrientation {
        guard time.isFinite, pose.x.isFinite, pose.y.isFinite else { return .zero }
        let expected = samples.last.map { $0.pose + rate * (time - $0.time) }
        if subject != self.subject || samples.last.map({ !(time > $0.time && time - $0.time <= window) }) ?? false
            || expected.map({ max(abs($0.x - pose.x), abs($0.y - pose.y)) > jump }) ?? false {
            samples.removeAll()
            self.subject = subject
        }
        samples.append((time, pose))
        samples.removeAll { time - $0.time > window }
        return rate
    }

    /// Nobody is framed: the next subject starts afresh.
    package mutating func reset() {
        subject = nil
        samples.removeAll()
    }

    /// The slope of the poses kept (rad/s per axis), zero while there are too few.
    package var rate: DockOrientation {
        guard samples.count >= minimumSamples, let first = samples.first, let last = samples.last,
              last.time - first.time >= minimumSpan else { return .zero }
        let meanTime = samples.reduce(0) { $0 + $1.time } / Double(samples.count)
        let variance = samples.reduce(0) { $0 + ($1.time - meanTime) * ($1.time - meanTime) }
        guard variance > 0 else { return .zero }
        func slope(_ value: (DockOrientation) -> Double) -> Double {
            let mean = samples.reduce(0) { $0 + value($1.pose) } / Double(samples.count)
            return samples.reduce(0) { $0 + ($1.time - meanTime) * (value($1.pose) - mean) } / variance
        }
        return DockOrientation(x: slope(\.x), y: slope(\.y), z: 0)
    }
}
