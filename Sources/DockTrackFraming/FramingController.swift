import DockTrackCore
import Foundation

/// Turns ranked subjects into dock commands: picks what to frame, computes the target
/// orientation (where the dock must point for that: the pose at capture plus the subject's
/// angle from the framing target), and sends it as it is (`setOrientation`, at most every
/// ``Params/orientationInterval``) or drives each axis there with an ``AxisController``
/// (`setAngularVelocity` every frame), as ``Params/commands`` says.
///
/// Latency compensation: a subject's direction is worked out from where the dock pointed when
/// the frame was captured, and the error from where it points when the command takes effect,
/// so the motion made since the capture is not counted twice. When nobody is in view, a
/// ``SubjectSearch`` looks for people when ``Params/search`` is set; without it the dock holds,
/// the integrals fade, and after `homeAfter` seconds it returns to the home pose.
public struct FramingController: Sendable {
    public struct Params: Sendable, Equatable {
        public var mode = FramingMode.automatic
        /// Where subjects are tracked and kept (DockKit's region of interest): within a region
        /// smaller than the picture only a subject with part of its box in it is framed, and it is
        /// framed within the region; one wholly outside is passed over, as nobody. Unit coordinates, lower-left origin (build it
        /// from an upper-left one with `UnitRect(upperLeftOrigin:)`). The whole picture by default.
        public var regionOfInterest = UnitRect(x: 0, y: 0, width: 1, height: 1)
        public var camera = CameraModel.webcam
        public var limits = DockLimits.standard
        /// The pose to return to when nobody has been seen for `homeAfter` seconds.
        public var home = DockOrientation.zero
        /// Seconds without a subject before heading home.
        public var homeAfter = 4.0
        /// Height in the region of interest (0 bottom, 1 top) where a face's centre is placed.
        public var faceHeight = 0.6
        /// A group is framed together when its width fits in this share of the region.
        public var groupFit = 0.8
        /// People ranked up to this are candidates for the group shot.
        public var groupRanks = 4
        /// How far (a share of the region's width) a group shot's middle may lie from the primary
        /// subject: within the target zone (a sixth of the width), with a margin.
        public var groupKeepsPrimaryWithin = 0.8 / 6
        /// Seconds someone stays a candidate before joining the group shot: a person walking
        /// through the picture does not pull the framing aside (0: at once).
        public var groupJoinAfter = 1.5
        package var axis = AxisController.Params()
        /// Orientation or velocity commands.
        public var commands = DockCommandKind.velocity
        /// Seconds between orientation commands (a little over the protocol's 2 per second, so
        /// a dock on another clock never sees them faster).
        public var orientationInterval = 0.55
        /// Whether the axes move with a moving subject (feed-forward of its rate, ``SubjectMotion``)
        /// besides closing on the error: a walker is followed instead of trailed.
        public var followsMotion = true
        /// How to look for people when nobody is in view; `nil`: hold, then home after `homeAfter`.
        package var search: SubjectSearch.Params?
        public init() {}
    }

    /// Why the controller moved as it did in the last update (for traces and tests).
    public enum State: String, Sendable {
        case tracking, holding, searching, returningHome
    }

    public var params: Params
    private var pitch: AxisController
    private var yaw: AxisController
    private var lastUpdate: Double?
    private var lastSeen: Double?
    /// The last subject's target and how fast it moved in yaw (rad/s), for the search.
    private var lost: (target: DockOrientation, yawRate: Double)?
    private var search: SubjectSearch
    /// Since when (capture time) each person has been a candidate for the group shot.
    private var groupCandidateSince: [UUID: Double] = [:]
    /// The capture time of the last frame updated from.
    private var latestCapture: Double?
    /// How fast the primary subject moves, for the axes' feed-forward.
    private var motion = SubjectMotion()
    /// The last orientation command: when, and where to.
    private var lastOrientation: (time: Double, target: DockOrientation)?
    public private(set) var state = State.holding
    /// The pose the controller last aimed for, when it aimed for one.
    public private(set) var target: DockOrientation?

    public init(params: Params = Params()) {
        self.params = params
        pitch = AxisController(params: params.axis)
        yaw = AxisController(params: params.axis)
        search = SubjectSearch(params: params.search ?? .init())
    }

    static let wholePicture = UnitRect(x: 0, y: 0, width: 1, height: 1)

    /// The point of the picture (unit coordinates, lower-left origin) to bring to the framing
    /// target, and that target, for these subjects; `nil` when there is nobody to frame.
    /// `pose`: where the dock pointed when the picture was taken, when known (a group shot is
    /// then kept to what the dock can turn to).
    public func aim(at everyone: [TrackedSubject], seenFrom pose: DockOrientation? = nil) -> (subject: (x: Double, y: Double), target: (x: Double, y: Double))? {
        framing(of: everyone, seenFrom: pose).map { ($0.subject, $0.target) }
    }

    /// Where a point of the picture (0...1 across and down) lies in the world, for a picture
    /// taken from `pose`.
    public func direction(ofPicturePoint point: (x: Double, y: Double), seenFrom pose: DockOrientation) -> DockOrientation {
        pose + params.camera.angles(toward: point.x, point.y)
    }

    /// ``aim(at:)`` with the primary subject's identity.
    private func framing(of everyone: [TrackedSubject], seenFrom pose: DockOrientation?) -> (subject: (x: Double, y: Double), target: (x: Double, y: Double), primary: UUID)? {
        let roi = params.regionOfInterest
        let subjects = framed(everyone)
        guard let primary = Self.primary(of: subjects) else { return nil }
        var anchor = Self.anchor(of: primary)
        var targetX: Double
        switch params.mode {
        case .center, .automatic: targetX = roi.midX
        case .left: targetX = roi.minX + roi.width / 3
        case .right: targetX = roi.minX + 2 * roi.width / 3
        }
        if params.mode == .automatic {
            let group = groupCandidates(in: subjects, primary: primary).filter { $0.id == primary.id || hasJoinedGroup($0.id) }
            if group.count > 1 {
                let union = group.map(\.rect).reduce(primary.rect) { $0.union($1) }
                if union.width <= params.groupFit * roi.width {
                    // The group is framed around the primary subject: they stay in the middle
                    // third, so that when the group breaks up the framing does not jump to them.
                    let keep = params.groupKeepsPrimaryWithin * roi.width
                    let middle = min(max(union.midX, anchor.x - keep), anchor.x + keep)
                    anchor.x = pose.map { withinReach(middle, primaryX: anchor.x, targetX: targetX, from: $0) } ?? middle
                }
            }
        }
        let targetY = primary.faceRect != nil || primary.kind == .person ? roi.minY + params.faceHeight * roi.height : roi.midY
        if primary.kind == .object { anchor.y = primary.rect.midY }
        targetX = min(max(targetX, 0), 1)
        return (anchor, (targetX, targetY), primary.id)
    }

    /// The subjects framing considers. Tracking is constrained to a region set smaller than the
    /// picture: a subject wholly outside it is not followed. The whole picture constrains nothing
    /// (a virtual dock knows subjects beyond its window, and brings them in).
    private func framed(_ everyone: [TrackedSubject]) -> [TrackedSubject] {
        let roi = params.regionOfInterest
        return roi == Self.wholePicture ? everyone : everyone.filter { $0.rect.intersectionArea(with: roi) > 0 }
    }

    private static func primary(of subjects: [TrackedSubject]) -> TrackedSubject? {
        subjects.min(by: { ($0.saliencyRank ?? .max) < ($1.saliencyRank ?? .max) })
    }

    /// The people who may share the primary subject's shot in automatic framing: ranked up to
    /// ``Params/groupRanks`` and at least half as tall (as near) as the primary subject.
    /// A group shot's middle `x`, moved towards the primary subject's `primaryX` until the dock,
    /// seen from `pose`, can turn to bring it to `targetX`: at the end of its pan a group reaching
    /// past it kept even the primary subject off the target (vtest.avi, someone walking out
    /// beyond the pan's end beside the person followed).
    private func withinReach(_ x: Double, primaryX: Double, targetX: Double, from pose: DockOrientation) -> Double {
        let range = params.limits.yaw.range
        let offset = params.camera.angles(toward: targetX, 0.5).y - pose.y
        let yaw = params.camera.angles(toward: x, 0.5).y
        let reachable = min(max(yaw, range.lowerBound + offset), range.upperBound + offset)
        guard pose.y.isFinite, reachable != yaw else { return x }
        guard abs(reachable) < .pi / 2 else { return primaryX }
        let moved = params.camera.point(at: DockOrientation(x: 0, y: reachable, z: 0)).x
        return min(max(moved, min(x, primaryX)), max(x, primaryX))
    }

    private func groupCandidates(in subjects: [TrackedSubject], primary: TrackedSubject) -> [TrackedSubject] {
        subjects.filter {
            $0.kind == .person && ($0.saliencyRank ?? .max) <= params.groupRanks && $0.rect.height >= 0.5 * primary.rect.height
        }
    }

    /// Whether a candidate has been one for ``Params/groupJoinAfter`` seconds (of capture time).
    private func hasJoinedGroup(_ id: UUID) -> Bool {
        guard params.groupJoinAfter > 0 else { return true }
        guard let since = groupCandidateSince[id], let latest = latestCapture else { return false }
        return latest - since >= params.groupJoinAfter
    }

    /// Notes who is a candidate for the group shot in a frame captured at `time`, and since when.
    private mutating func noteGroupCandidates(_ everyone: [TrackedSubject], at time: Double) {
        if let latest = latestCapture, !(time >= latest) { groupCandidateSince.removeAll() }
        latestCapture = time
        let subjects = framed(everyone)
        guard params.mode == .automatic, let primary = Self.primary(of: subjects) else {
            groupCandidateSince.removeAll()
            return
        }
        let candidates = groupCandidates(in: subjects, primary: primary).map(\.id)
        groupCandidateSince = Dictionary(candidates.map { ($0, groupCandidateSince[$0] ?? time) }, uniquingKeysWith: { first, _ in first })
    }

    /// The point of a subject that framing places: the face's centre, else the head of a body
    /// (a tenth of its height below its top), else the middle.
    static func anchor(of subject: TrackedSubject) -> (x: Double, y: Double) {
        if let face = subject.faceRect { return (face.midX, face.midY) }
        if subject.kind == .person { return (subject.rect.midX, subject.rect.maxY - 0.1 * subject.rect.height) }
        return (subject.rect.midX, subject.rect.midY)
    }

    /// The longest time between updates integrated across (seconds); a longer jump restarts the
    /// axis controllers.
    public static let maximumStep = 1.0

    /// The command for `now` (`nil`: nothing to send this frame), for the subjects seen in a
    /// frame captured at `captureTime` while the dock pointed at `poseAtCapture`; the dock points
    /// at `pose` when the command takes effect.
    public mutating func update(subjects: [TrackedSubject], captureTime: Double, poseAtCapture: DockOrientation,
                                pose: DockOrientation, now: Double) -> DockCommand? {
        var dt = lastUpdate.map { max(0, now - $0) } ?? 0
        if let last = lastUpdate, !(now - last <= Self.maximumStep) || now < last {
            // Time jumped (forward by more than a step, backward, or to a number that is not
            // one): the axes start afresh instead of integrating across the jump.
            pitch = AxisController(params: params.axis)
            yaw = AxisController(params: params.axis)
            dt = 0
        }
        lastUpdate = now
        noteGroupCandidates(subjects, at: captureTime)
        if let (subject, framingTarget, primary) = framing(of: subjects, seenFrom: poseAtCapture) {
            // Where the subject is in the world, and where the dock must point to put it on the target.
            let subjectDirection = direction(ofPicturePoint: subject, seenFrom: poseAtCapture)
            let wanted = params.limits.clamp(subjectDirection - params.camera.angles(toward: framingTarget.x, framingTarget.y))
            var yawRate = 0.0
            if let previous = lost, let seen = lastSeen, captureTime > seen, captureTime - seen < 0.5 {
                let rate = (wanted.y - previous.target.y) / (captureTime - seen)
                yawRate = previous.yawRate + min(1, (captureTime - seen) / 0.3) * (rate - previous.yawRate)
            }
            lost = (wanted, yawRate)
            lastSeen = captureTime
            search.reset()
            target = wanted
            state = .tracking
            let rate = params.followsMotion ? motion.add(subject: primary, pose: subjectDirection, at: captureTime) : .zero
            return move(toward: wanted, from: pose, dt: dt, now: now, feedforward: rate)
        }
        motion.reset()
        if params.search != nil {
            let goal = search.goal(now: now, pose: pose, lost: lost, limits: params.limits, camera: params.camera, home: params.home)
            switch goal {
            case .hold:
                state = .searching
                target = nil
                return hold(pose: pose, dt: dt)
            case .point(let waypoint, let speed):
                state = .searching
                target = waypoint
                return move(toward: waypoint, from: pose, dt: dt, now: now, speed: speed)
            case .home:
                break
            }
        } else if let seen = lastSeen, now - seen < params.homeAfter {
            state = .holding
            target = nil
            return hold(pose: pose, dt: dt)
        }
        state = .returningHome
        target = params.home
        return move(toward: params.limits.clamp(params.home), from: pose, dt: dt, now: now)
    }

    /// Stays put: the velocity ramps down (velocity commands); no orientation command.
    private mutating func hold(pose: DockOrientation, dt: Double) -> DockCommand? {
        let velocity = AngularVelocity(x: pitch.hold(dt: dt, limits: params.limits.pitch, position: pose.x),
                                       y: yaw.hold(dt: dt, limits: params.limits.yaw, position: pose.y), z: 0)
        return params.commands == .velocity ? .setAngularVelocity(velocity) : nil
    }

    /// The command that heads for `wanted`, no faster than `speed` (rad/s) when given: a
    /// velocity from the axis controllers, or an orientation when one is due.
    private mutating func move(toward wanted: DockOrientation, from pose: DockOrientation, dt: Double, now: Double,
                               speed: Double? = nil, feedforward: DockOrientation = .zero) -> DockCommand? {
        var wanted = wanted
        // A dock that pans without end: the same direction the short way round (after a client
        // turned it 880 degrees, tracking unwound every turn to get back to 34).
        wanted.y = pose.y + params.limits.yaw.turn(from: pose.y, to: wanted.y)
        switch params.commands {
        case .velocity:
            var limits = params.limits
            if let speed {
                limits.pitch.maximumSpeed = min(limits.pitch.maximumSpeed, speed)
                limits.yaw.maximumSpeed = min(limits.yaw.maximumSpeed, speed)
            }
            return .setAngularVelocity(drive(toward: wanted, from: pose, dt: dt, limits: limits, feedforward: feedforward))
        case .orientation:
            guard lastOrientation.map({ now - $0.time >= params.orientationInterval }) ?? true else { return nil }
            var goal = wanted
            if let speed {
                // A slow move as steps, one per command: no farther than `speed` allows till the next.
                let step = speed * params.orientationInterval
                goal.x = pose.x + min(max(wanted.x - pose.x, -step), step)
                goal.y = pose.y + min(max(wanted.y - pose.y, -step), step)
            } else {
                // Like the axis controllers' dead band: a small error at rest is left alone, a
                // target that moved on is followed.
                let away = max(abs(goal.x - pose.x), abs(goal.y - pose.y))
                let moved = lastOrientation.map { max(abs($0.target.x - goal.x), abs($0.target.y - goal.y)) } ?? .infinity
                guard away > params.axis.deadBand || (moved > params.axis.settleBand && away > params.axis.settleBand) else { return nil }
            }
            lastOrientation = (now, goal)
            return .setOrientation(goal, duration: 0, relative: false)
        }
    }

    private mutating func drive(toward wanted: DockOrientation, from pose: DockOrientation, dt: Double, limits: DockLimits,
                                feedforward: DockOrientation) -> AngularVelocity {
        AngularVelocity(x: pitch.update(error: wanted.x - pose.x, dt: dt, limits: limits.pitch, position: pose.x, feedforward: feedforward.x),
                        y: yaw.update(error: wanted.y - pose.y, dt: dt, limits: limits.yaw, position: pose.y, feedforward: feedforward.y), z: 0)
    }
}

/// The stage between tracking and the dock: turns the ranked subjects of each frame into a
/// dock command. ``FramingController`` is DockTrack's; the frame loop takes any.
public protocol Framer {
    /// The pose the dock rests at; a camera that is not on the dock looks from here.
    var home: DockOrientation { get }
    /// Why it moved as it did in the last update.
    var state: FramingController.State { get }
    /// The pose it last aimed for, when it aimed for one.
    var target: DockOrientation? { get }
    /// The point of the picture it brings to its framing target, and that target, for a
    /// picture taken from `pose` (when known).
    func aim(at subjects: [TrackedSubject], seenFrom pose: DockOrientation?) -> (subject: (x: Double, y: Double), target: (x: Double, y: Double))?
    /// Where a point of the picture lies in the world, for a picture taken from `pose`.
    func direction(ofPicturePoint point: (x: Double, y: Double), seenFrom pose: DockOrientation) -> DockOrientation
    /// The command for `now` (`nil`: none this frame) for the subjects of a frame captured at
    /// `captureTime` while the camera looked from `poseAtCapture`; the dock points at `pose`
    /// when the command takes effect.
    mutating func update(subjects: [TrackedSubject], captureTime: Double, poseAtCapture: DockOrientation,
                         pose: DockOrientation, now: Double) -> DockCommand?
}

extension FramingController: Framer {
    public var home: DockOrientation { params.home }
}
