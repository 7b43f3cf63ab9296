import DockTrackCore
import Foundation

/// How far a dock with a zoom (a ``VirtualDock``'s window, a PTZ camera) should zoom for the
/// subjects in view: in, to frame one person head and shoulders; out, to fit a group (DockKit's
/// automatic framing); out to the widest when nobody has been seen for a while. The target moves
/// only when it is more than a dead band from where it is heading, so the picture does not
/// breathe with every detection, and it never runs away after a lost face: with nobody in view
/// it holds, then widens.
package struct ZoomFraming: Sendable {
    package struct Params: Sendable, Equatable {
        /// The share of the window's height (and width) the subjects' shot may fill.
        package var fill = 0.8
        /// A face's shot: head and shoulders, this many face heights tall (from half a face above
        /// it to two below) and three face widths wide.
        package var shotHeightInFaces = 3.5
        package var shotWidthInFaces = 3.0
        /// A relative change of the wanted zoom smaller than this leaves the target as it is.
        package var deadBand = 0.15
        /// Seconds with nobody in view before zooming out to the widest.
        package var widenAfter = 4.0
        /// People ranked up to this, at least half as tall as the primary subject, are framed
        /// together in automatic mode (as the framing controller's group).
        package var groupRanks = 4
        package init() {}
    }

    package var params: Params
    package private(set) var target: Double?
    private var lastSeen: Double?

    package init(params: Params = Params()) {
        self.params = params
    }

    /// The zoom to head for at `now`, for `subjects` (unit coordinates of the whole picture,
    /// ranked) framed in `mode` through `window`; `current` is where the zoom is now.
    package mutating func update(subjects: [TrackedSubject], mode: FramingMode, window: CropWindow, current: Double, now: Double) -> Double {
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

    /// Counts `now` as when someone was last seen, when nobody has been yet: a camera that
    /// starts zoomed stays so for ``Params/widenAfter`` seconds before widening.
    package mutating func holdIfUnseen(at now: Double) {
        if lastSeen == nil, now.isFinite { lastSeen = now }
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

/// Zoom as part of framing for a camera that zooms itself (an ONVIF PTZ camera): the subjects,
/// seen in the zoomed picture, are taken back to the widest picture, ``ZoomFraming`` says the
/// magnification to head for there (one person head and shoulders, a group whole, the widest
/// after ``ZoomFraming/Params/widenAfter`` seconds with nobody: it never runs away after a lost
/// face), and the framing controller aims with the camera at the magnification in force.
package struct CameraZoomFraming: Sendable {
    /// The picture at the widest zoom: its size and aspect, its field of view across its width,
    /// and the camera's largest magnification (`maximumZoom`).
    package let widest: CropWindow
    /// A digital PTZ (a window cropped from the widest picture): its angles are the widest
    /// picture's, linear (``CropWindow/camera(at:)``). An optical zoom: a pinhole whose field of
    /// view narrows with the magnification.
    package let digital: Bool
    package var framing: ZoomFraming
    /// Seconds between two zoom requests at least (a camera's zoom is slow to settle).
    package var minimumInterval = 1.0
    private var sent: (magnification: Double, time: Double)?

    package init(widest: CropWindow, digital: Bool, framing: ZoomFraming = ZoomFraming()) {
        self.widest = widest
        self.digital = digital
        self.framing = framing
    }

    /// The camera the framing controller aims with at `magnification`.
    package func camera(at magnification: Double) -> CameraModel {
        let m = widest.clampZoom(magnification)
        if digital { return widest.camera(at: m) }
        let size = widest.size(at: 1)
        let horizontal = 2 * atan(tan(widest.fieldOfView / 2) / m)
        return CameraModel(horizontalFieldOfView: horizontal, size: ImageSize(width: Int(size.width.rounded()), height: Int(size.height.rounded())))
    }

    /// The pan and tilt ranges the camera can turn through at `magnification`, with the speeds
    /// of `base`: a digital PTZ's window stays inside the widest picture (no turn at all at the
    /// widest); an optical zoom does not change them.
    package func limits(at magnification: Double, from base: DockLimits) -> DockLimits {
        guard digital else { return base }
        let range = widest.limits(at: widest.clampZoom(magnification), from: base)
        var limits = base
        limits.yaw.range = range.yaw.range
        limits.pitch.range = range.pitch.range
        return limits
    }

    /// `subjects` of a picture at `magnification` as the widest picture would show them: sizes
    /// shrunk by the magnification about the centre (what ``ZoomFraming`` weighs is their size).
    package static func widened(_ subjects: [TrackedSubject], from magnification: Double) -> [TrackedSubject] {
        let m = magnification.isFinite && magnification >= 1 ? magnification : 1
        func widened(_ rect: UnitRect) -> UnitRect {
            UnitRect(x: 0.5 + (rect.x - 0.5) / m, y: 0.5 + (rect.y - 0.5) / m, width: rect.width / m, height: rect.height / m)
        }
        return subjects.map { subject in
            var wide = subject
            wide.rect = widened(subject.rect)
            wide.faceRect = subject.faceRect.map(widened)
            wide.bodyRect = subject.bodyRect.map(widened)
            return wide
        }
    }

    /// The magnification to ask the camera for at `now`, for `subjects` of its picture (ranked)
    /// framed in `mode` while it is at `magnification`; `nil` when the request would change
    /// nothing (within the dead band of the last one sent) or come within ``minimumInterval``
    /// of it.
    package mutating func request(subjects: [TrackedSubject], mode: FramingMode, magnification: Double, now: Double) -> Double? {
        let current = widest.clampZoom(magnification)
        // The camera's own zoom holds at the start, as after a face is lost.
        framing.holdIfUnseen(at: now)
        let wanted = framing.update(subjects: Self.widened(subjects, from: current), mode: mode, window: widest, current: current, now: now)
        guard now.isFinite else { return nil }
        // At the start the camera's zoom is taken as asked: nothing is sent for the first
        // ``minimumInterval``.
        guard let sent else {
            sent = (current, now)
            return nil
        }
        if now - sent.time < minimumInterval || abs(log(wanted / sent.magnification)) < log(1 + framing.params.deadBand) / 2 { return nil }
        self.sent = (wanted, now)
        return wanted
    }
}
