/// A plane-to-plane mapping of pixels (x right, y down): a 3x3 matrix, row by row, as OpenCV's
/// `findHomography` gives it.
public struct Homography: Sendable, Equatable {
    public var matrix: [Double]

    /// `matrix`: 9 numbers, row by row.
    public init(matrix: [Double]) {
        precondition(matrix.count == 9, "a homography has 9 numbers")
        self.matrix = matrix
    }

    /// Where `point` goes; `nil` when it goes to infinity (or the matrix is not finite).
    public func apply(_ point: (x: Double, y: Double)) -> (x: Double, y: Double)? {
        let m = matrix
        let w = m[6] * point.x + m[7] * point.y + m[8]
        guard abs(w) > 1e-12 else { return nil }
        let x = (m[0] * point.x + m[1] * point.y + m[2]) / w, y = (m[3] * point.x + m[4] * point.y + m[5]) / w
        return x.isFinite && y.isFinite ? (x, y) : nil
    }
}
