import DockTrackCore
import Foundation

/// How a fixed overview camera's picture and the dock's directions correspond: a point of the
/// overview (unit coordinates, lower-left origin) to the dock orientation that points the
/// camera on the dock at it, and back. Each way is a quadratic in its two inputs, fitted by
/// least squares to what calibration saw (``OverviewCalibration``): a camera elsewhere in the
/// room, of another field of view, tilted, maps onto the dock's angles without a model of either.
package struct OverviewMapping: Sendable, Equatable {
    /// Six coefficients for each output (`1, a, b, a², ab, b²`): overview (x, y) to (pitch, yaw).
    package var toDock: [[Double]]
    /// Dock (pitch, yaw) to overview (x, y).
    package var toOverview: [[Double]]
    /// Degrees between where the mapping sends the dock and where it pointed, on the poses
    /// calibration checked and did not fit: the mean and the largest.
    package var checkedErrorDegrees: (mean: Double, largest: Double)

    package init(toDock: [[Double]], toOverview: [[Double]], checkedErrorDegrees: (mean: Double, largest: Double)) {
        self.toDock = toDock
        self.toOverview = toOverview
        self.checkedErrorDegrees = checkedErrorDegrees
    }

    package static func == (a: OverviewMapping, b: OverviewMapping) -> Bool {
        a.toDock == b.toDock && a.toOverview == b.toOverview && a.checkedErrorDegrees == b.checkedErrorDegrees
    }

    /// The dock orientation that points the dock's camera at `point` of the overview.
    package func orientation(toward point: (x: Double, y: Double)) -> DockOrientation {
        let terms = Self.terms(point.x, point.y)
        return DockOrientation(x: Self.dot(toDock[0], terms), y: Self.dot(toDock[1], terms), z: 0)
    }

    /// Where in the overview (unit coordinates, lower-left origin) the direction `orientation` is.
    package func overviewPoint(at orientation: DockOrientation) -> (x: Double, y: Double) {
        let terms = Self.terms(orientation.x, orientation.y)
        return (Self.dot(toOverview[0], terms), Self.dot(toOverview[1], terms))
    }

    static func terms(_ a: Double, _ b: Double) -> [Double] { [1, a, b, a * a, a * b, b * b] }
    static func dot(_ u: [Double], _ v: [Double]) -> Double { zip(u, v).reduce(0) { $0 + $1.0 * $1.1 } }

    /// The six coefficients that best give `outputs` from `inputs` (least squares, through the
    /// normal equations); `nil` when the inputs do not spread enough to fix them.
    package static func fit(_ inputs: [(Double, Double)], _ outputs: [Double]) -> [Double]? {
        guard inputs.count >= 6, inputs.count == outputs.count else { return nil }
        var normal = [[Double]](repeating: [Double](repeating: 0, count: 7), count: 6)
        for (input, output) in zip(inputs, outputs) {
            let t = terms(input.0, input.1)
            for i in 0..<6 {
                for j in 0..<6 { normal[i][j] += t[i] * t[j] }
                normal[i][6] += t[i] * output
            }
        }
        // Gaussian elimination with partial pivoting.
        for column in 0..<6 {
            guard let pivot = (column..<6).max(by: { abs(normal[$0][column]) < abs(normal[$1][column]) }),
                  abs(normal[pivot][column]) > 1e-12 else { return nil }
            normal.swapAt(column, pivot)
            for row in 0..<6 where row != column {
                let factor = normal[row][column] / normal[column][column]
                for k in column..<7 { normal[row][k] -= factor * normal[column][k] }
            }
        }
        let solution = (0..<6).map { normal[$0][6] / normal[$0][$0] }
        return solution.allSatisfy(\.isFinite) ? solution : nil
    }
}
