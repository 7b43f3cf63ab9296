import Foundation

/// Where the subject goes in the picture (DockKit's framing modes).
public enum FramingMode: String, Sendable, CaseIterable, Codable {
    /// The primary subject, and the other salient people with it when they fit (a group shot).
    case automatic
    /// The primary subject in the middle.
    case center
    /// The primary subject on the left third.
    case left
    /// The primary subject on the right third.
    case right
}

/// A request to the tracker rather than to the motors (DockKit's system-tracking calls),
/// served by `docktrack track --serve`; a dock alone (docksim) answers them `notCapable`.
///
/// On the wire (`{"command":…}` lines of the dock protocol, with an optional `"id"`):
/// - `{"command":"setFramingMode","mode":"left"}`: automatic, center, left or right;
/// - `{"command":"setRegionOfInterest","rect":{"x":0.5,"y":0,"width":0.5,"height":1},"origin":"upperLeft"}`:
///   unit coordinates, origin at the upper-left as DockKit's region of interest (observations stay
///   lower-left, as Vision's); the `origin` must say so: a rect without it (the lower-left form of
///   earlier versions) is refused;
/// - `{"command":"selectSubjects","identifiers":["…UUID…"]}`: these subjects first, in this
///   order, while they are in view; an empty list is back to automatic ranking;
/// - `{"command":"selectSubject","point":{"x":0.3,"y":0.4}}`: the subject at this point (unit
///   coordinates, origin at the upper-left, as a tap on the picture), answered
///   `{"type":"selected","identifier":"…"}`, or `noSubjectFound`;
/// - `{"command":"track","observations":[{"type":"humanFace","rect":{…},"confidence":0.9}]}`:
///   custom tracking (DockKit's `track(_:)`): with system tracking off, the caller's own
///   observations, 10 to 30 times a second, are tracked and framed.
/// System tracking on and off is the dock command `setSystemTracking`.
public enum TrackingRequest: Sendable, Equatable {
    case setFramingMode(FramingMode)
    /// The region with its origin at the upper-left, as on the wire.
    case setRegionOfInterest(upperLeft: UnitRect)
    case selectSubjects([UUID])
    case selectSubject(x: Double, y: Double)
    case track([Observation])

    /// The `origin` a region of interest's rect must name.
    public static let regionOrigin = "upperLeft"

    public static let names: Set<String> = ["setFramingMode", "setRegionOfInterest", "selectSubjects", "selectSubject", "track"]

    public var name: String {
        switch self {
        case .setFramingMode: "setFramingMode"
        case .setRegionOfInterest: "setRegionOfInterest"
        case .selectSubjects: "selectSubjects"
        case .selectSubject: "selectSubject"
        case .track: "track"
        }
    }

    /// The request line (without an id).
    public var jsonLine: String {
        var line = JSONLine()
        line.add("command", name)
        switch self {
        case .setFramingMode(let mode): line.add("mode", mode.rawValue)
        case .setRegionOfInterest(let rect):
            line.add("rect", object: rect.jsonLine)
            line.add("origin", Self.regionOrigin)
        case .selectSubjects(let ids): line.add("identifiers", strings: ids.map(\.uuidString))
        case .selectSubject(let x, let y):
            var point = JSONLine()
            point.add("x", x, digits: 4)
            point.add("y", y, digits: 4)
            line.add("point", object: point)
        case .track(let observations):
            line.add("observations", array: observations.map(\.jsonLine))
        }
        return line.text
    }
}

/// A tracker's answers to its getters: `{"type":"systemTracking","enabled":true}`,
/// `{"type":"framingMode","mode":"center"}`, `{"type":"regionOfInterest","rect":{…},"origin":"upperLeft"}`
/// (the rect as `setRegionOfInterest` takes it).
public enum TrackerSetting: Sendable, Equatable {
    case systemTracking(Bool)
    case framingMode(FramingMode)
    /// Origin at the upper-left.
    case regionOfInterest(upperLeft: UnitRect)

    public var jsonLine: String {
        var line = JSONLine()
        switch self {
        case .systemTracking(let on):
            line.add("type", "systemTracking")
            line.add("enabled", on)
        case .framingMode(let mode):
            line.add("type", "framingMode")
            line.add("mode", mode.rawValue)
        case .regionOfInterest(let rect):
            line.add("type", "regionOfInterest")
            line.add("rect", object: rect.jsonLine)
            line.add("origin", TrackingRequest.regionOrigin)
        }
        return line.text
    }
}

extension TrackingRequest: Decodable {
    private enum Keys: String, CodingKey { case command, mode, rect, origin, identifiers, point, observations }
    private struct Point: Decodable { var x: Double; var y: Double }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let name = try c.decode(String.self, forKey: .command)
        switch name {
        case "setFramingMode":
            let text = try c.decode(String.self, forKey: .mode)
            guard let mode = FramingMode(rawValue: text) else {
                throw DockError.invalidRequest("mode must be one of \(FramingMode.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)")
            }
            self = .setFramingMode(mode)
        case "setRegionOfInterest":
            let rect = try c.decode(UnitRect.self, forKey: .rect)
            let origin = try c.decodeIfPresent(String.self, forKey: .origin)
            guard origin == Self.regionOrigin else {
                throw DockError.invalidRequest("""
                    the region of interest's rect has its origin at the upper-left, as DockKit's: send "origin":"upperLeft" \
                    with it (\(origin.map { "not \"\($0)\"" } ?? "the lower-left rect of earlier versions, without an origin, is not taken"))
                    """)
            }
            guard rect.isRegionOfPicture else {
                throw DockError.invalidRequest("rect must lie within the unit square and have a size")
            }
            self = .setRegionOfInterest(upperLeft: rect)
        case "selectSubjects":
            let texts = try c.decode([String].self, forKey: .identifiers)
            var ids: [UUID] = []
            for text in texts {
                guard let id = UUID(uuidString: text) else { throw DockError.invalidRequest("not an identifier: \(text)") }
                ids.append(id)
            }
            self = .selectSubjects(ids)
        case "selectSubject":
            let point = try c.decode(Point.self, forKey: .point)
            guard point.x.isFinite, point.y.isFinite, (0...1).contains(point.x), (0...1).contains(point.y) else {
                throw DockError.invalidRequest("point must be in 0...1")
            }
            self = .selectSubject(x: point.x, y: point.y)
        case "track":
            let observations = try c.decode([Observation].self, forKey: .observations)
            for o in observations {
                let r = o.rect
                guard [r.x, r.y, r.width, r.height, o.confidence].allSatisfy(\.isFinite), r.width > 0, r.height > 0 else {
                    throw DockError.invalidRequest("observations need finite rects with a size and a finite confidence")
                }
            }
            self = .track(observations)
        default:
            throw DockError.invalidRequest("not a tracking request: \(name)")
        }
    }
}
