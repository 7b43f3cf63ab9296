/// Optimal assignment (the Hungarian method, Kuhn-Munkres with potentials, O(n²m)).
package enum Assignment {
    /// The pairs (row, column) with the least total cost, each row and column used at most
    /// once. Pairs whose cost is above `maximumCost` (or not finite) are left out: such a row
    /// and column stay unmatched.
    package static func minimumCost(_ cost: [[Double]], maximumCost: Double = .infinity) -> [(row: Int, column: Int)] {
        let rows = cost.count
        guard rows > 0, let columns = cost.first?.count, columns > 0 else { return [] }
        // Forbidden pairs get a cost larger than any sum of allowed ones.
        let allowed = cost.flatMap { $0 }.filter { $0.isFinite && $0 <= maximumCost }
        let big = (allowed.map(abs).max() ?? 1) * Double(rows + columns + 1) + 1
        let transpose = rows > columns  // the method needs rows <= columns
        let n = transpose ? columns : rows, m = transpose ? rows : columns
        func c(_ i: Int, _ j: Int) -> Double {
            let value = transpose ? cost[j][i] : cost[i][j]
            return value.isFinite && value <= maximumCost ? value : big
        }
        var u = [Double](repeating: 0, count: n + 1), v = [Double](repeating: 0, count: m + 1)
        var match = [Int](repeating: 0, count: m + 1)  // match[j] = row (1-based) of column j
        var way = [Int](repeating: 0, count: m + 1)
        for i in 1...n {
            match[0] = i
            var j0 = 0
            var minv = [Double](repeating: .infinity, count: m + 1)
            var used = [Bool](repeating: false, count: m + 1)
            repeat {
                used[j0] = true
                let i0 = match[j0]
                var delta = Double.infinity, j1 = 0
                for j in 1...m where !used[j] {
                    let current = c(i0 - 1, j - 1) - u[i0] - v[j]
                    if current < minv[j] { minv[j] = current; way[j] = j0 }
                    if minv[j] < delta { delta = minv[j]; j1 = j }
                }
                for j in 0...m {
                    if used[j] { u[match[j]] += delta; v[j] -= delta } else { minv[j] -= delta }
                }
                j0 = j1
            } while match[j0] != 0
            repeat {
                let j1 = way[j0]
                match[j0] = match[j1]
                j0 = j1
            } while j0 != 0
        }
        var pairs: [(row: Int, column: Int)] = []
        for j in 1...m where match[j] != 0 {
            let (r, col) = transpose ? (j - 1, match[j] - 1) : (match[j] - 1, j - 1)
            let value = cost[r][col]
            if value.isFinite && value <= maximumCost { pairs.append((r, col)) }
        }
        return pairs.sorted { $0.row < $1.row }
    }
}
