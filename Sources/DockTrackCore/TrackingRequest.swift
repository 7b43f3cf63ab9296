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
///   `{"type":"selected","identifier":"…"}`, or `noSubjectFound`; with `"view":"overview"` the
///   point is in the overview camera's picture (`track --overview`), the person is followed
///   wherever they go, and a run without an overview answers `notSupported`;
/// - `{"command":"track","observations":[{"type":"humanFace","rect":{…},"confidence":0.9,"identifier":1,"faceYaw":0.1}],"camera":{…}}`:
///   custom tracking (DockKit's `track(_:cameraInformation:)`): with system tracking off, the
///   caller's own observations, 10 to 30 times a second, are tracked and framed; an identifier
///   is the same subject from one call to the next, a face's yaw (radians) says how much it
///   looks at the camera; the camera (``CameraInformation``) is how the observations' picture
///   maps onto angles.
/// System tracking on and off is the dock command `setSystemTracking`.
package enum TrackingRequest: Sendable, Equatable {
    case setFramingMode(FramingMode)
    /// The region with its origin at the upper-left, as on the wire.
    case setRegionOfInterest(upperLeft: UnitRect)
    case selectSubjects([UUID])
    case selectSubject(x: Double, y: Double)
    /// A person the overview camera sees, at this point of its picture (`track --overview`).
    case selectOverviewSubject(x: Double, y: Double)
    case track([Observation], camera: CameraInformation? = nil)

    /// The `origin` a region of interest's rect must name.
    package static let regionOrigin = "upperLeft"
    /// The `view` of a `selectSubject` in the overview camera's picture.
    package static let overviewView = "overview"

    package static let names: Set<String> = ["setFramingMode", "setRegionOfInterest", "selectSubjects", "selectSubject", "track"]

    package var name: String {
        switch self {
        case .setFramingMode: "setFramingMode"
        case .setRegionOfInterest: "setRegionOfInterest"
        case .selectSubjects: "selectSubjects"
        case .selectSubject, .selectOverviewSubject: "selectSubject"
        case .track: "track"
        }
    }

    /// The request line (without an id).
    package var jsonLine: String {
        var line = JSONLine()
        line.add("command", name)
        switch self {
        case .setFramingMode(let mode): line.add("mode", mode.rawValue)
        case .setRegionOfInterest(let rect):
            line.add("rect", object: rect.jsonLine)
            line.add("origin", Self.regionOrigin)
        case .selectSubjects(let ids): line.add("identifiers", strings: ids.map(\.uuidString))
        case .selectSubject(let x, let y), .selectOverviewSubject(let x, let y):
            var point = JSONLine()
            point.add("x", x, digits: 4)
            point.add("y", y, digits: 4)
            line.add("point", object: point)
            if case .selectOverviewSubject = self { line.add("view", Self.overviewView) }
        case .track(let observations, let camera):
            line.add("observations", array: observations.map(\.jsonLine))
            if let camera { line.add("camera", object: camera.jsonLine) }
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
    private enum Keys: String, CodingKey { case command, mode, rect, origin, identifiers, point, view, observations, camera }
    private struct Point: Decodable { var x: Double; var y: Double }

    package init(from decoder: any Decoder) throws {
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
            switch try c.decodeIfPresent(String.self, forKey: .view) {
            case nil, "camera"?: self = .selectSubject(x: point.x, y: point.y)
            case Self.overviewView?: self = .selectOverviewSubject(x: point.x, y: point.y)
            case let other?: throw DockError.invalidRequest("view must be camera (the dock's picture) or overview, not \(other)")
            }
        case "track":
            let observations = try c.decode([Observation].self, forKey: .observations)
            guard observations.count <= Observation.mostInOneFrame else {
                throw DockError.invalidRequest("at most \(Observation.mostInOneFrame) observations a request, not \(observations.count)")
            }
            for o in observations {
                let r = o.rect
                guard [r.x, r.y, r.width, r.height, o.confidence, o.faceYaw ?? 0].allSatisfy(\.isFinite), r.width > 0, r.height > 0 else {
                    throw DockError.invalidRequest("observations need finite rects with a size, a finite confidence and face yaw")
                }
            }
            self = .track(observations, camera: try c.decodeIfPresent(CameraInformation.self, forKey: .camera))
        default:
            throw DockError.invalidRequest("not a tracking request: \(name)")
        }
    }
}

/// The camera whose picture custom observations were made in (DockKit's `CameraInformation`):
/// on the wire `{"fieldOfView":63.5}` (horizontal degrees), or
/// `{"intrinsics":{"fx":1400,"fy":1400,"cx":960,"cy":540},"referenceDimensions":{"width":1920,"height":1080}}`
/// (pixels of that picture), with `"orientation"`: how the picture the observations were made
/// in is turned from the upright picture the dock frames (``CameraOrientation``; `corrected`, the
/// default: it is upright).
public struct CameraInformation: Sendable, Equatable, Decodable {
    public struct Intrinsics: Sendable, Equatable, Decodable {
        public var fx: Double, fy: Double, cx: Double, cy: Double
        public init(fx: Double, fy: Double, cx: Double, cy: Double) { (self.fx, self.fy, self.cx, self.cy) = (fx, fy, cx, cy) }
    }
    public struct Dimensions: Sendable, Equatable, Decodable {
        public var width: Double, height: Double
        public init(width: Double, height: Double) { (self.width, self.height) = (width, height) }
    }
    /// Horizontal, degrees.
    public var fieldOfView: Double?
    public var intrinsics: Intrinsics?
    public var referenceDimensions: Dimensions?
    /// Typed, as DockKit's; nil is `corrected`. A name none is refuses the request as it is read.
    public var orientation: CameraOrientation?

    /// The orientation given, `corrected` when none is.
    public func cameraOrientation() throws(DockError) -> CameraOrientation {
        orientation ?? .corrected
    }

    /// The orientation a name on the wire says; `invalidRequest` for a name none is.
    static func orientation(named name: String) throws(DockError) -> CameraOrientation {
        guard let known = CameraOrientation(rawValue: name) else {
            throw .invalidRequest("camera orientation \(name): one of \(CameraOrientation.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return known
    }

    /// `observation` in the upright picture (lower-left origin), from the picture it was made in.
    public func upright(_ observation: Observation) throws(DockError) -> Observation {
        var turned = observation
        turned.rect = try cameraOrientation().upright(observation.rect)
        return turned
    }

    public init(fieldOfView: Double? = nil, intrinsics: Intrinsics? = nil, referenceDimensions: Dimensions? = nil, orientation: CameraOrientation? = nil) {
        self.fieldOfView = fieldOfView
        self.intrinsics = intrinsics
        self.referenceDimensions = referenceDimensions
        self.orientation = orientation
    }

    private enum Keys: String, CodingKey { case fieldOfView, intrinsics, referenceDimensions, orientation }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(fieldOfView: try c.decodeIfPresent(Double.self, forKey: .fieldOfView),
                  intrinsics: try c.decodeIfPresent(Intrinsics.self, forKey: .intrinsics),
                  referenceDimensions: try c.decodeIfPresent(Dimensions.self, forKey: .referenceDimensions),
                  orientation: try c.decodeIfPresent(String.self, forKey: .orientation).map(Self.orientation(named:)))
        // Checked here, so that a request is refused whole before anything is tracked.
        _ = try cameraModel(aspectOf: .webcam)
    }

    /// The camera model the observations' picture maps through. Without reference dimensions
    /// the vertical field of view keeps `fallback`'s aspect (turned for a portrait picture).
    /// Throws `invalidRequest` for numbers that make no camera.
    public func cameraModel(aspectOf fallback: CameraModel) throws(DockError) -> CameraModel {
        let turn = try cameraOrientation()
        let model = try bufferModel(aspectOf: turn.isQuarterTurn ? fallback.turnedQuarter : fallback)
        return turn.isQuarterTurn ? model.turnedQuarter : model
    }

    /// The camera model of the picture the observations were made in, as it is.
    private func bufferModel(aspectOf fallback: CameraModel) throws(DockError) -> CameraModel {
        func positive(_ values: Double...) -> Bool { values.allSatisfy { $0.isFinite && $0 > 0 } }
        if let d = referenceDimensions, !positive(d.width, d.height) {
            throw .invalidRequest("referenceDimensions need a finite positive width and height")
        }
        if let k = intrinsics {
            guard positive(k.fx, k.fy), k.cx.isFinite, k.cy.isFinite else { throw .invalidRequest("intrinsics need finite positive fx and fy") }
            guard let d = referenceDimensions else {
                throw .invalidRequest("intrinsics are in pixels of the referenceDimensions' picture: send them too")
            }
            return CameraModel(horizontalFieldOfView: 2 * atan(d.width / (2 * k.fx)), verticalFieldOfView: 2 * atan(d.height / (2 * k.fy)))
        }
        if let degrees = fieldOfView {
            guard positive(degrees), degrees < 180 else { throw .invalidRequest("fieldOfView is horizontal degrees, above 0 and below 180") }
            let horizontal = degrees * .pi / 180
            let aspect = referenceDimensions.map { $0.height / $0.width }
                ?? tan(fallback.verticalFieldOfView / 2) / tan(fallback.horizontalFieldOfView / 2)
            return CameraModel(horizontalFieldOfView: horizontal, verticalFieldOfView: 2 * atan(tan(horizontal / 2) * aspect))
        }
        return fallback
    }

    var jsonLine: JSONLine {
        var line = JSONLine()
        if let fieldOfView { line.add("fieldOfView", fieldOfView, digits: 3) }
        // (intrinsics and dimensions are the picture's as made, before any turn)
        if let k = intrinsics {
            var i = JSONLine()
            i.add("fx", k.fx, digits: 3); i.add("fy", k.fy, digits: 3); i.add("cx", k.cx, digits: 3); i.add("cy", k.cy, digits: 3)
            line.add("intrinsics", object: i)
        }
        if let d = referenceDimensions {
            var dims = JSONLine()
            dims.add("width", d.width, digits: 1); dims.add("height", d.height, digits: 1)
            line.add("referenceDimensions", object: dims)
        }
        if let orientation { line.add("orientation", orientation.rawValue) }
        return line
    }
}

/// How the picture custom observations were made in is turned from the upright picture the dock
/// frames (DockKit's camera orientation), as a phone's camera delivers it: `corrected` and
/// `landscapeRight` are upright (the sensor's own landscape); `portrait` is upright once turned a
/// quarter clockwise, `portraitUpsideDown` a quarter counterclockwise, `landscapeLeft` a half turn.
/// `faceUp` and `faceDown` (DockKit's, a device lying flat) and `unknown` say nothing of how the
/// picture is turned: it is taken as it comes, as `corrected`. Observations and the camera's fields of view
/// are turned into the upright picture before anything is tracked.
public enum CameraOrientation: String, Sendable, CaseIterable {
    case corrected, landscapeRight, landscapeLeft, portrait, portraitUpsideDown, faceUp, faceDown, unknown

    /// Whether the picture's width and height swap when it is turned upright.
    public var isQuarterTurn: Bool { self == .portrait || self == .portraitUpsideDown }

    /// A point of the picture (lower-left origin) in the upright picture.
    public func upright(x: Double, y: Double) -> (x: Double, y: Double) {
        switch self {
        case .corrected, .landscapeRight, .faceUp, .faceDown, .unknown: (x, y)
        case .portrait: (y, 1 - x)  // a quarter clockwise: the picture's top row is the upright right column
        case .portraitUpsideDown: (1 - y, x)
        case .landscapeLeft: (1 - x, 1 - y)
        }
    }

    /// A rectangle of the picture (lower-left origin) in the upright picture.
    public func upright(_ rect: UnitRect) -> UnitRect {
        let a = upright(x: rect.minX, y: rect.minY), b = upright(x: rect.maxX, y: rect.maxY)
        return UnitRect(x: min(a.x, b.x), y: min(a.y, b.y), width: abs(b.x - a.x), height: abs(b.y - a.y))
    }
}
