import DockTrackCore
import DockTrackMedia
import Foundation

/// What calibration looks through: the camera on the dock and the overview camera.
package protocol CalibrationRig {
    /// Points the dock at `pose` and gives what its camera and the overview camera see once it
    /// is there.
    mutating func look(at pose: DockOrientation) throws -> (dockView: Image, overview: Image)
}

/// Finds the ``OverviewMapping`` of a rig: the dock is pointed at a grid of poses over its
/// ranges; at each, what its camera sees is found in the overview by their features (ORB
/// features matched and a homography fitted with RANSAC, OpenCV's own: ``Image/homography(to:)``);
/// points of the dock's picture then have both a direction (the pose plus their angle in the
/// dock's camera) and a place in the overview, and the mapping is fitted to them. Poses between
/// the grid's, left out of the fit, check it.
package enum OverviewCalibration {
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// What one pose gave: where the dock's picture lay in the overview, if it was found.
    package struct Look: Sendable {
        package var pose: DockOrientation
        /// From the dock's picture's pixels to the overview's.
        package var homography: Homography?
        package var inliers: Int
        package var dockSize: ImageSize
        package var overviewSize: ImageSize

        /// Where the point `unit` of the dock's picture (unit coordinates, lower-left origin)
        /// lies in the overview; `nil` when the picture was not found there.
        package func overviewPoint(of unit: (x: Double, y: Double)) -> (x: Double, y: Double)? {
            guard let homography,
                  let pixel = homography.apply((unit.x * Double(dockSize.width), (1 - unit.y) * Double(dockSize.height))) else { return nil }
            return (pixel.x / Double(overviewSize.width), 1 - pixel.y / Double(overviewSize.height))
        }
    }

    /// Degrees a checked pose may be missed by at most for the calibration to be kept.
    package static let maximumCheckedError = 3.0

    /// The fewest feature matches agreeing with a homography for a pose to count.
    package static let minimumInliers = 15

    /// More poses to fit when too few of the first 9 were found (a 5 x 5 grid over 90% of the
    /// ranges, those not tried yet): a scene with little texture (a plain wall, a projector
    /// screen, slides with a speaker in a corner) shows the dock's picture in the overview at
    /// only some poses.
    package static func morePoses(within limits: DockLimits, tried: [DockOrientation]) -> [DockOrientation] {
        func spread(_ range: ClosedRange<Double>) -> [Double] {
            let middle = (range.lowerBound + range.upperBound) / 2, half = (range.upperBound - range.lowerBound) / 2 * 0.9
            return (0..<5).map { middle - half + Double($0) * half / 2 }
        }
        let grid = spread(limits.pitch.range).flatMap { pitch in spread(limits.yaw.range).map { DockOrientation(x: pitch, y: $0, z: 0) } }
        return grid.filter { pose in !tried.contains { abs($0.x - pose.x) < 1e-9 && abs($0.y - pose.y) < 1e-9 } }
    }

    /// The poses to fit (a 3 x 3 grid over 80% of the ranges) and to check (4 between them).
    package static func poses(within limits: DockLimits) -> (fit: [DockOrientation], check: [DockOrientation]) {
        func spread(_ range: ClosedRange<Double>, _ share: Double) -> [Double] {
            let middle = (range.lowerBound + range.upperBound) / 2, half = (range.upperBound - range.lowerBound) / 2 * share
            return [middle - half, middle, middle + half]
        }
        let pitches = spread(limits.pitch.range, 0.8), yaws = spread(limits.yaw.range, 0.8)
        let fit = pitches.flatMap { pitch in yaws.map { DockOrientation(x: pitch, y: $0, z: 0) } }
        let checkPitches = spread(limits.pitch.range, 0.4), checkYaws = spread(limits.yaw.range, 0.4)
        let check = [checkPitches[0], checkPitches[2]].flatMap { pitch in [checkYaws[0], checkYaws[2]].map { DockOrientation(x: pitch, y: $0, z: 0) } }
        return (fit, check)
    }

    /// Calibrates through `rig`, whose dock camera is `camera`, within `limits`; `looked` is
    /// told each pose's result as it comes.
    package static func calibrate(rig: inout some CalibrationRig, camera: CameraModel, limits: DockLimits,
                                  looked: (Look) -> Void = { _ in }) throws -> OverviewMapping {
        let (fitPoses, checkPoses) = poses(within: limits)
        var inputs: [(Double, Double)] = [], pitches: [Double] = [], yaws: [Double] = []
        var overviewXs: [Double] = [], overviewYs: [Double] = []
        var fitted = 0, tried = 0
        func fit(at pose: DockOrientation) throws {
            tried += 1
            let (look, pairs) = try self.look(rig: &rig, at: pose, camera: camera)
            looked(look)
            guard !pairs.isEmpty else { return }
            fitted += 1
            for (direction, point) in pairs {
                inputs.append((point.x, point.y))
                pitches.append(direction.x)
                yaws.append(direction.y)
                overviewXs.append(point.x)
                overviewYs.append(point.y)
            }
        }
        for pose in fitPoses { try fit(at: pose) }
        // Too few found: the denser grid, all of it (every pose found sharpens the fit).
        if fitted < 5 {
            for pose in morePoses(within: limits, tried: fitPoses) { try fit(at: pose) }
        }
        guard fitted >= 5 else {
            throw Failure(description: "the dock's picture was found in the overview at \(fitted) of \(tried) poses (5 are needed). "
                          + "It is found by the texture both cameras see: let the overview see the part of the room the dock turns over, "
                          + "give the dock's camera a wider view (a larger --zoom in simulate), or light the room; a plain wall or a "
                          + "projector screen alone shows too little")
        }
        let directions = zip(pitches, yaws).map { ($0, $1) }
        guard let toPitch = OverviewMapping.fit(inputs, pitches), let toYaw = OverviewMapping.fit(inputs, yaws),
              let toX = OverviewMapping.fit(directions, overviewXs), let toY = OverviewMapping.fit(directions, overviewYs) else {
            throw Failure(description: "the poses seen do not spread enough to fit a mapping")
        }
        var mapping = OverviewMapping(toDock: [toPitch, toYaw], toOverview: [toX, toY], checkedErrorDegrees: (0, 0))
        var errors: [Double] = []
        for pose in checkPoses {
            let (look, _) = try self.look(rig: &rig, at: pose, camera: camera)
            looked(look)
            guard let centre = look.overviewPoint(of: (0.5, 0.5)) else { continue }
            let sent = mapping.orientation(toward: centre)
            errors.append(hypot(sent.x - pose.x, sent.y - pose.y) * 180 / .pi)
        }
        guard errors.count >= 2 else {
            throw Failure(description: "the dock's picture was found in the overview at \(errors.count) of \(checkPoses.count) check poses (2 are needed)")
        }
        mapping.checkedErrorDegrees = (errors.reduce(0, +) / Double(errors.count), errors.max()!)
        guard mapping.checkedErrorDegrees.largest <= maximumCheckedError else {
            throw Failure(description: String(
                format: "the mapping sends the dock %.1f° wide of the poses it was checked on (%.1f° is the most taken): does the dock's camera turn with the dock, and does the overview stand still?",
                mapping.checkedErrorDegrees.largest, maximumCheckedError))
        }
        return mapping
    }

    /// The dock pointed at `pose`: the look, and for a 5 x 5 grid of points of the dock's
    /// picture, each point's direction and its place in the overview (none when the picture
    /// was not found there).
    private static func look(rig: inout some CalibrationRig, at pose: DockOrientation, camera: CameraModel) throws
        -> (Look, [(direction: DockOrientation, point: (x: Double, y: Double))]) {
        let (dockView, overview) = try rig.look(at: pose)
        let found = try dockView.homography(to: overview)
        let usable = found.flatMap { $0.inliers >= minimumInliers ? $0 : nil }
        let look = Look(pose: pose, homography: usable?.homography, inliers: found?.inliers ?? 0,
                        dockSize: dockView.size, overviewSize: overview.size)
        var pairs: [(direction: DockOrientation, point: (x: Double, y: Double))] = []
        for row in 0..<5 {
            for column in 0..<5 {
                let unit = (x: 0.1 + 0.2 * Double(column), y: 0.1 + 0.2 * Double(row))
                guard let point = look.overviewPoint(of: unit), (-0.2...1.2).contains(point.x), (-0.2...1.2).contains(point.y) else { continue }
                pairs.append((pose + camera.angles(toward: unit.x, unit.y), point))
            }
        }
        return (look, pairs)
    }
}
