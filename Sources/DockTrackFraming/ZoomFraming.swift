import DockTrackCore
import Foundation

/// How far a dock with a zoom (a ``VirtualDock``'s window, a PTZ camera) should zoom for the
/// subjects in view: in, to frame one person head and shoulders; out, to fit a group (DockKit's
/// automatic framing); out to the widest when nobody has been seen for a while. The target moves
/// only when it is more than a dead band from where it is heading, so the picture does not
/// breathe with every detection, and it never runs away after a lost face: with nobody in view
/// it holds, then widens.
public struct ZoomFraming: Sendable {
    public struct Params: Sendable, Equatable {
        /// The share of the window's height (and width) the subjects' shot may fill.
        public var fill = 0.8
        /// A face's shot: head and shoulders, this many face heights tall (from half a face above
        /// it to two below) and three face widths wide.
        public var shotHeightInFaces = 3.5
        public var shotWidthInFaces = 3.0
        /// A relative change of the wanted zoom smaller than this leaves the target as it is.
        public var deadBand = 0.15
        /// Seconds with nobody in view before zooming out to the widest.
        public var widenAfter = 4.0
        /// People ranked up to this, at least half as tall as the primary subject, are framed
        /// together in automatic mode (as the framing controller's group).
        public var groupRanks = 4
        public init() {}
    }

    public var params: Params
    public private(set) var target: Double?
    private var lastSeen: Double?

    public init(params: Params = Params()) {
        self.params = params
    }

    /// The zoom to head for at `now`, for `subjects` (unit coordinates of the whole picture,
    /// ranked) framed in `mode` through `window`; `current` is where the zoom is now.
    public mutating func update(subjects: [TrackedSubject], mode: FramingMode, window: CropWindow, current: Double, now: Double) -> Double {
        let held = target ?? window.clampZoom(current)
        guard let shot = Self.shot(of: subjects, mode: mode, params: params) else {
            if let seen = lastSeen, now - seen < params.widenAfter { target = held } else { target = 1 }
            return target!
        }
        lastSeen = now
        let source = window.sourceSize
        let widest = window.widest
        // The window's height that holds the shot in `fill` of its height and width.
        let height = max(shot.height * Double(source.height), shot.width * Double(source.width) / window.aspect) / params.fill
        let wanted = window.clampZoom(height > 0 ? widest.height / height : 1)
        if target == nil || abs(log(wanted / held)) > log(1 + params.deadBand) {
            target = wanted
        }
        return target!
    }

    /// The part of the picture to keep in view (unit coordinates, lower-left origin): the
    /// primary subject's shot, joined by the group's in automatic mode; `nil` with nobody.
    static func shot(of subjects: [TrackedSubject], mode: FramingMode, params: Params) -> UnitRect? {
        guard let primary = subjects.min(by: { ($0.saliencyRank ?? .max) < ($1.saliencyRank ?? .max) }) else { return nil }
        var members = [primary]
        if mode == .automatic {
            members += subjects.filter {
                $0.id != primary.id && $0.kind == .person && ($0.saliencyRank ?? .max) <= params.groupRanks
                    && $0.rect.height >= 0.5 * primary.rect.height
            }
        }
        let shots = members.map { subject -> UnitRect in
            guard let face = subject.faceRect else { return subject.rect }
            let height = params.shotHeightInFaces * face.height, width = params.shotWidthInFaces * face.width
            return UnitRect(x: face.midX - width / 2, y: face.maxY + 0.5 * face.height - height, width: width, height: height)
        }
        let union = shots.dropFirst().reduce(shots[0]) { $0.union($1) }
        guard [union.x, union.y, union.width, union.height].allSatisfy(\.isFinite) else { return nil }
        return union
    }
}
