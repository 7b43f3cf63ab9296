import DockTrackCore
import DockTrackDetection
import Foundation

/// What a hand's 21 points say about its shape (``HandReading``'s points, MediaPipe's order), in
/// the measures the "follow me" palm is decided by. Thresholds measured on the labelled frames
/// of `samples/gestures` (palm_close_portrait.mp4, every 3rd frame, the palm detector's hands):
/// a spread palm's fingers bend 1-15°, a fist's and a folded finger's 150° and more; fingertips
/// stand 0.67-0.95 palm widths apart on a spread palm, 0.44-0.55 on a flat one (fingers
/// together), under 0.4 on a fist, a pointing hand or a thumb.
package struct HandShape: Sendable, Equatable {
    /// Each long finger's bend (index, middle, ring, little; degrees): the turn from its root
    /// joint's bone to the rest of it, 0 for a straight finger.
    package var bends: [Double]
    /// The mean gap between neighbouring fingertips, in palm widths (the index finger's root to
    /// the little finger's).
    package var fingertipGap: Double
    /// How far the hand leans from upright (degrees; the wrist to the middle finger's root).
    package var lean: Double
    /// The palm's width (pixels), and the hand's middle (the mean of its points).
    package var palmWidth: Double
    package var centre: PixelPoint

    /// The most a finger of an open palm bends, the least gap between fingertips of a spread
    /// hand, the most it leans. (The thumb is not asked about: near a picture's edge or turned
    /// away, its points are the least sure, and a flat hand is told by its fingertips.)
    package static let straightBend = 40.0
    package static let spreadGap = 0.6
    package static let uprightLean = 45.0

    /// `nil` without 21 finite points or with a palm of no width.
    package init?(_ points: [PixelPoint]) {
        guard points.count == 21, points.allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else { return nil }
        func vector(_ from: Int, _ to: Int) -> (x: Double, y: Double) { (points[to].x - points[from].x, points[to].y - points[from].y) }
        func distance(_ a: Int, _ b: Int) -> Double { let v = vector(a, b); return (v.x * v.x + v.y * v.y).squareRoot() }
        palmWidth = distance(5, 17)
        guard palmWidth > 0 else { return nil }
        bends = [(5, 6, 7, 8), (9, 10, 11, 12), (13, 14, 15, 16), (17, 18, 19, 20)].map { root, middle, end, tip in
            let bone = vector(root, middle)
            return Self.angle(bone, vector(middle, tip)) + Self.angle(bone, vector(middle, end)) / 2
        }
        fingertipGap = [(8, 12), (12, 16), (16, 20)].map { distance($0.0, $0.1) }.reduce(0, +) / 3 / palmWidth
        lean = Self.angle(vector(0, 9), (0, -1))
        centre = PixelPoint(x: points.map(\.x).reduce(0, +) / 21, y: points.map(\.y).reduce(0, +) / 21)
    }

    /// An open palm with its fingers spread, held about upright: every long finger straight,
    /// the fingertips apart.
    package var isSpreadPalm: Bool {
        bends.allSatisfy { $0 < Self.straightBend } && fingertipGap >= Self.spreadGap && lean <= Self.uprightLean
    }

    /// A hand closed: two or more long fingers folded over (a fist, a pointing hand, a thumb
    /// up). Unlike a reading that misses the palm (a blur, a finger misread), it ends a hold.
    package var isClosed: Bool {
        bends.filter { $0 > Self.foldedBend }.count >= 2
    }

    /// A finger bent more than this (degrees) is folded over.
    package static let foldedBend = 90.0

    /// The angle between two vectors (degrees, 0...180); 180 when either has no length.
    static func angle(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
        let lengths = (a.x * a.x + a.y * a.y).squareRoot() * (b.x * b.x + b.y * b.y).squareRoot()
        guard lengths > 0, lengths.isFinite else { return 180 }
        return acos(min(1, max(-1, (a.x * b.x + a.y * b.y) / lengths))) * 180 / .pi
    }
}
