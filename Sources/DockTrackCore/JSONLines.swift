import Foundation

/// Builds one line of JSON by hand, so that key order and number formatting stay exactly as
/// documented in the README (JSONEncoder sorts keys alphabetically or not at all).
public struct JSONLine: Sendable {
    private var parts: [String] = []

    public init() {}

    public mutating func add(_ key: String, _ value: Int) { parts.append("\(Self.quoted(key)):\(value)") }
    public mutating func add(_ key: String, _ value: String) { parts.append("\(Self.quoted(key)):\(Self.quoted(value))") }
    public mutating func add(_ key: String, _ value: Double, digits: Int) {
        parts.append("\(Self.quoted(key)):\(Self.number(value, digits: digits))")
    }
    /// A number, or `null` when there is none.
    public mutating func add(_ key: String, _ value: Double?, digits: Int) {
        parts.append("\(Self.quoted(key)):\(value.map { Self.number($0, digits: digits) } ?? "null")")
    }
    public mutating func add(_ key: String, _ value: String?) { parts.append("\(Self.quoted(key)):\(value.map(Self.quoted) ?? "null")") }
    public mutating func add(_ key: String, _ value: Int?) { parts.append("\(Self.quoted(key)):\(value.map(String.init) ?? "null")") }
    public mutating func add(_ key: String, strings: [String]) {
        parts.append("\(Self.quoted(key)):[\(strings.map(Self.quoted).joined(separator: ","))]")
    }
    public mutating func add(_ key: String, numbers: [Double], digits: Int) {
        parts.append("\(Self.quoted(key)):[\(numbers.map { Self.number($0, digits: digits) }.joined(separator: ","))]")
    }
    public mutating func add(_ key: String, integers: [Int]) {
        parts.append("\(Self.quoted(key)):[\(integers.map(String.init).joined(separator: ","))]")
    }
    public mutating func add(_ key: String, _ value: Bool) { parts.append("\(Self.quoted(key)):\(value)") }
    public mutating func add(_ key: String, object: JSONLine) { parts.append("\(Self.quoted(key)):\(object.text)") }
    public mutating func add(_ key: String, array: [JSONLine]) {
        parts.append("\(Self.quoted(key)):[\(array.map(\.text).joined(separator: ","))]")
    }

    /// The object as one line of text, without a newline.
    public var text: String { "{\(parts.joined(separator: ","))}" }

    /// A finite number rounded to `digits` decimals, always with a decimal point ("0.0").
    public static func number(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return "null" }
        // Beyond 1e15 fixed notation only adds digits that mean nothing (a time of 1e300 s);
        // Swift's shortest form reads back as the same number (15 digits rounded the largest
        // double up past the largest, which a JSON reader rejects).
        if abs(value) >= 1e15 { return "\(value)" }
        var text = String(format: "%.\(digits)f", value)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text += "0" }
        }
        if text == "-0.0" { text = "0.0" }
        return text
    }

    public static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let s where s.value < 0x20: out += String(format: "\\u%04x", s.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension UnitRect {
    /// `{"x":…,"y":…,"width":…,"height":…}`, four decimals.
    package var jsonLine: JSONLine {
        var line = JSONLine()
        line.add("x", x, digits: 4)
        line.add("y", y, digits: 4)
        line.add("width", width, digits: 4)
        line.add("height", height, digits: 4)
        return line
    }
}

/// The observations of one frame: one line of `docktrack detect`'s output.
package struct DetectionRecord: Sendable, Equatable {
    package var frame: Int
    package var time: Double
    package var size: ImageSize
    package var observations: [Observation]

    package init(frame: Int, time: Double, size: ImageSize, observations: [Observation]) {
        self.frame = frame
        self.time = time
        self.size = size
        self.observations = observations
    }

    /// `{"frame":0,"time":0.0,"width":768,"height":576,"observations":[{"type":"humanFace","rect":{…},"confidence":0.97}]}`
    package var jsonLine: String {
        var line = JSONLine()
        line.add("frame", frame)
        line.add("time", time, digits: 3)
        line.add("width", size.width)
        line.add("height", size.height)
        line.add("observations", array: observations.map(\.jsonLine))
        return line.text
    }
}

extension Observation: Decodable {
    private enum Keys: String, CodingKey { case type, rect, confidence, identifier, faceYaw }

    /// `{"type":"humanFace","rect":{…},"confidence":0.97}`, with custom tracking's optional
    /// `"identifier":7` and `"faceYaw":0.2` (radians).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(type: try c.decode(ObservationType.self, forKey: .type), rect: try c.decode(UnitRect.self, forKey: .rect),
                  confidence: try c.decode(Double.self, forKey: .confidence),
                  identifier: try c.decodeIfPresent(Int.self, forKey: .identifier), faceYaw: try c.decodeIfPresent(Double.self, forKey: .faceYaw))
    }

    /// `{"type":"humanFace","rect":{…},"confidence":0.97}` (and the identifier and face yaw
    /// when there are).
    package var jsonLine: JSONLine {
        var item = JSONLine()
        item.add("type", type.rawValue)
        item.add("rect", object: rect.jsonLine)
        item.add("confidence", confidence, digits: 3)
        if let identifier { item.add("identifier", identifier) }
        if let faceYaw { item.add("faceYaw", faceYaw, digits: 4) }
        return item
    }
}

extension DetectionRecord: Decodable {
    private enum Keys: String, CodingKey { case frame, time, width, height, observations }

    /// Reads a line in the format of ``jsonLine``, e.g. observations fed by a caller.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        frame = try c.decode(Int.self, forKey: .frame)
        time = try c.decode(Double.self, forKey: .time)
        size = ImageSize(width: try c.decode(Int.self, forKey: .width), height: try c.decode(Int.self, forKey: .height))
        observations = try c.decode([Observation].self, forKey: .observations)
        guard observations.count <= Observation.mostInOneFrame else {
            throw DecodingError.dataCorruptedError(forKey: .observations, in: c,
                                                   debugDescription: "at most \(Observation.mostInOneFrame) observations a frame, not \(observations.count)")
        }
    }
}

/// What went wrong decoding a JSON line, in a few words.
package enum JSONDecoding {
    /// A decoding error in a few words (`missing time`, `bad velocity.y`), for error replies.
    package static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing \(key.stringValue)"
        case DecodingError.dataCorrupted(let c) where c.codingPath.isEmpty: return "not JSON"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c), DecodingError.dataCorrupted(let c):
            return c.debugDescription.isEmpty ? "bad \(c.codingPath.map(\.stringValue).joined(separator: "."))" : c.debugDescription
        default: return "\(error)"
        }
    }
}
