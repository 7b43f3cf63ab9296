import DockTrackCore
import Foundation

/// How long before it arrives a camera's picture was taken, on the clock of the dock's motion
/// reports, measured from the pictures themselves.
///
/// A network camera's pictures are stamped when they arrive, and a camera that encodes, buffers
/// and sends them (a busy one most of all) delivers each a fraction of a second or more after
/// it took it. Taken as seen from where the dock pointed on arrival, a picture's subject is placed
/// where the dock was not: a velocity loop then overshoots and swings (the emulated IP camera on a
/// loaded machine swung from side to side until the person left its view).
///
/// For each candidate delay, the subject's direction in the world is the dock's pose that long
/// before the picture arrived plus the subject's angle in the picture. At the right delay the
/// direction changes only as the subject moves; at a wrong one it also swings with each change
/// of the dock's speed. The estimate is the candidate whose directions changed least over the
/// last ``memory`` seconds, taken when it is clearly better than the one in force.
public struct PictureDelay: Sendable {
    /// The delays weighed (s).
    public static let candidates: [Double] = (0...30).map { Double($0) / 10 }
    /// The delay in force (s): 0 until measured.
    public private(set) var seconds = 0.0
    /// Seconds over which past changes fade.
    public var memory = 8.0
    /// For each candidate, the squared changes of the subject's direction (rad²), fading.
    private(set) var costs = [Double](repeating: 0, count: PictureDelay.candidates.count)
    private var previous: (time: Double, directions: [DockOrientation])?

    public init() {}

    /// One picture's subject at `time` (arrival), in the world as seen from the dock's pose at
    /// each candidate delay before it (``candidates``' order).
    public mutating func observe(_ directions: [DockOrientation], at time: Double) {
        guard directions.count == costs.count, time.isFinite,
              directions.allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else { return }
        defer { previous = (time, directions) }
        // A gap, or the framed subject changed (every candidate jumps): nothing to compare.
        guard let previous, time > previous.time, time - previous.time <= 0.5 else { return }
        let changes = zip(directions, previous.directions).map { now, before in
            (now.x - before.x) * (now.x - before.x) + (now.y - before.y) * (now.y - before.y)
        }
        guard let least = changes.min(), least < Self.jump * Self.jump else { return }
        let fade = exp(-(time - previous.time) / memory)
        for index in costs.indices { costs[index] = costs[index] * fade + changes[index] }
        guard let best = costs.indices.min(by: { costs[$0] < costs[$1] }),
              let current = Self.candidates.firstIndex(of: seconds) else { return }
        if costs[best] < Self.clearlyBetter * costs[current], costs[current] - costs[best] > Self.evidence {
            seconds = Self.candidates[best]
        }
    }

    /// No subject in this picture: the next one is not compared with the last.
    public mutating func lost() { previous = nil }

    /// A change of direction between two pictures larger than this (rad) at every candidate is
    /// another subject, not motion.
    static let jump = 0.2
    /// A candidate replaces the one in force when its cost is under this share of that one's…
    static let clearlyBetter = 0.6
    /// …and lower by at least this (rad²: a few frames of a tenth of a radian's swing).
    static let evidence = 0.02
}
