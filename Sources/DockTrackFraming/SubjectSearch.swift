import DockTrackCore
import Foundation

/// Where the dock looks when nobody is in view: after a moment's wait where the subject was lost,
/// where it was heading (or still, where it was), then a sweep of the whole reachable range: rows
/// of tilt that cover it with little overlap, the rows above the current one first (a dock on a
/// desk or a shelf sees people's faces at or above its own height), each panned end to end in a
/// snake, fast enough to cover a 100-degree scene in a few seconds and slow enough that a person
/// stays in view for several detections; after ``Params/giveUpAfter`` seconds with nobody, home.
/// Any subject seen ends the search.
package struct SubjectSearch: Sendable {
    package struct Params: Sendable, Equatable {
        /// Seconds a lost subject is waited for where it was (a face turned away, a missed
        /// detection or two) before the search moves the dock.
        package var holdFirst = 0.5
        /// Seconds after that spent looking where the subject was heading (holding still
        /// when it stood still).
        package var lookAhead = 1.5
        /// How far past the subject's last direction to look, in view widths.
        package var lookAheadDistance = 0.5
        /// The subject was heading somewhere when its direction changed faster than this (rad/s).
        package var headingSpeed = 0.05
        /// Seconds before the first sweep when nobody has been seen yet (detection's first look).
        package var startAfter = 1.0
        /// Sweep speed in view widths per second: a person passes through the view in 1.25 s
        /// at the default, 10 detections when detecting every 4th frame at 30 fps. At 0.4 a
        /// person in the upper corner of a 100-degree scene seen 40 degrees wide was first
        /// framed after 12.8 s (`simulate` on a scene of the sample pictures); at 0.8, with the
        /// upper rows first, after the times the README gives.
        package var sweepSpeed = 0.8
        /// Half the pan sweep around home when the pan has no ends (360° docks), radians.
        package var panSpan = Double.pi
        /// Tilt rows, in view heights apart: 0.8 overlaps them by a fifth of the view, so that a
        /// face cut by one row's edge is whole in the next.
        package var rowSpacing = 0.8
        /// Seconds with nobody in view before giving up and returning home.
        package var giveUpAfter = 30.0
        package init() {}
    }

    /// What the dock should do now.
    package enum Goal: Sendable, Equatable {
        /// Stay where it is.
        case hold
        /// Head for this pose, no faster than `speed` (rad/s; `nil`: as the controller goes).
        case point(DockOrientation, speed: Double?)
        /// The search is over: home.
        case home
    }

    enum Phase: Sendable, Equatable {
        case idle
        case waiting(until: Double)
        case lookingAhead(toward: DockOrientation?, until: Double)
        case sweeping(waypoints: [DockOrientation], index: Int)
        case gaveUp
    }

    package var params: Params
    private(set) var phase = Phase.idle
    private var since: Double?

    package init(params: Params = Params()) {
        self.params = params
    }

    /// Whether the search has given up (the dock went home and stays there).
    package var hasGivenUp: Bool { phase == .gaveUp }

    /// A subject is in view: the search ends.
    package mutating func reset() {
        phase = .idle
        since = nil
    }

    /// The goal at `now`, the dock at `pose`. `lost` is the pose that framed the last subject
    /// and how fast that pose moved in yaw (rad/s), when a subject was seen before.
    package mutating func goal(now: Double, pose: DockOrientation, lost: (target: DockOrientation, yawRate: Double)?,
                              limits: DockLimits, camera: CameraModel, home: DockOrientation) -> Goal {
        if phase == .idle {
            since = now
            if let lost {
                var toward: DockOrientation?
                if abs(lost.yawRate) > params.headingSpeed {
                    var ahead = lost.target
                    ahead.y += (lost.yawRate < 0 ? -1 : 1) * params.lookAheadDistance * camera.horizontalFieldOfView
                    toward = limits.clamp(ahead)
                }
                phase = .lookingAhead(toward: toward, until: now + params.holdFirst + params.lookAhead)
            } else {
                phase = .waiting(until: now + params.startAfter)
            }
        }
        if let since, now - since >= params.giveUpAfter { phase = .gaveUp }
        switch phase {
        case .idle, .gaveUp:
            return .home
        case .waiting(let until):
            if now < until { return .hold }
        case .lookingAhead(let toward, let until):
            if now < until {
                guard let since, now - since >= params.holdFirst else { return .hold }
                return toward.map { .point($0, speed: nil) } ?? .hold
            }
        case .sweeping(let waypoints, var index):
            let speed = params.sweepSpeed * camera.horizontalFieldOfView
            let reached = abs(waypoints[index].x - pose.x) < 0.02 && abs(waypoints[index].y - pose.y) < 0.02
            if reached {
                index = (index + 1) % waypoints.count
                phase = .sweeping(waypoints: waypoints, index: index)
            }
            return .point(waypoints[index], speed: speed)
        }
        let waypoints = Self.sweep(from: pose, limits: limits, camera: camera, home: home, params: params)
        phase = .sweeping(waypoints: waypoints, index: 0)
        return .point(waypoints[0], speed: params.sweepSpeed * camera.horizontalFieldOfView)
    }

    /// The sweep's waypoints from `pose`: rows of tilt ``Params/rowSpacing`` view heights apart
    /// that reach both ends of the tilt range, the top row first, then each row below it down to
    /// the bottom one; each row panned from end to end, the first from the nearer pan end, the
    /// next back the other way.
    package static func sweep(from pose: DockOrientation, limits: DockLimits, camera: CameraModel, home: DockOrientation,
                      params: Params) -> [DockOrientation] {
        let low = max(limits.yaw.range.lowerBound, home.y - params.panSpan)
        let high = min(limits.yaw.range.upperBound, home.y + params.panSpan)
        let ends = abs(pose.y - low) <= abs(pose.y - high) ? [low, high] : [high, low]
        let step = max(params.rowSpacing, 0.1) * camera.verticalFieldOfView
        let pitch = limits.pitch.range
        let current = limits.pitch.clamp(pose.x)
        // Positive pitch tilts down: the rows above have smaller pitch. At most 8 rows each way;
        // the top row first, then down to the current one and below it.
        func rows(toward direction: Double) -> [Double] {
            var found: [Double] = []
            var row = current
            let edge = direction < 0 ? pitch.lowerBound : pitch.upperBound
            // A row within a quarter view of the edge would see little the last one did not: the
            // edge itself is the last row.
            for _ in 0..<8 where abs(edge - row) > 0.25 * camera.verticalFieldOfView {
                let next = row + direction * step
                row = abs(edge - next) < 0.25 * camera.verticalFieldOfView || (edge - next) * direction < 0 ? edge : next
                found.append(row)
            }
            return found
        }
        let rows = rows(toward: -1).reversed() + [current] + rows(toward: 1)
        var waypoints: [DockOrientation] = []
        for (i, row) in rows.enumerated() {
            let order = i % 2 == 0 ? ends : ends.reversed()
            waypoints += order.map { DockOrientation(x: row, y: $0, z: pose.z) }
        }
        return waypoints
    }
}
