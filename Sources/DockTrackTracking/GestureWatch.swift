import DockTrackCore
import DockTrackDetection
import DockTrackMedia
import Foundation

/// Watches tracked people's raised hands for the "follow me" palm (``GestureEvent``).
///
/// Hands are looked for only around people's heads and upper bodies, never over the whole
/// picture: a search (MediaPipe's palm detector over the region above a person's shoulders,
/// about 7.5 ms on one core) a third of a second apart, one person a search in turn; a palm it
/// finds raised and upright is read (the hand landmark model, about 4 ms) and, when it is an
/// open palm with spread fingers (``HandShape``), followed by readings a tenth of a second
/// apart. Seen held (or waved about its place) for 0.4 s of readings, it is the gesture. Never by accident: a person moving
/// faster than half a body width a second is not watched (a passer-by's swinging arm), the hand
/// must be above the chin (or the top of the body) and of a size the person's face allows (a
/// hand on a poster behind them), within half a palm width of where it was between readings (a
/// hand swung past), its fingers straight and
/// apart (a hand at the ear, a scratch of the head, a fist, counting); after a gesture the same
/// person's next one counts only once the hand has come down. Time is the frames' own.
package final class GestureWatch {
    package struct Params: Sendable, Equatable {
        /// Seconds between two searches for raised palms.
        package var searchInterval = 1.0 / 3
        /// Seconds between two readings of a palm being held.
        package var holdInterval = 0.1
        /// How long a spread palm is seen held still before it counts (seconds, from the first
        /// reading that sees it to the one that makes the gesture).
        package var hold = 0.4
        /// How far the hand's middle may move between two readings, in palm widths.
        package var stillness = 0.5
        /// The fastest a watched person moves (body widths a second, smoothed; a walker makes
        /// 1.5 to 2, a close-up's box jitters by half of one as its arm moves).
        package var mostSpeed = 1.0
        /// The smallest hand read (pixels: a face's height, or a seventh of a body's).
        package var smallestHand = 16.0
        /// Seconds after a gesture before the same person's next one can count.
        package var rest = 1.0
        /// Readings in a row without the spread palm (a blur, fingers misread, the hand gone)
        /// that a hold outlasts; the gesture counts on a reading that sees it.
        package var mostMisses = 2
        package init() {}
    }

    /// What is known of one person.
    private struct Watched {
        var rect: UnitRect
        var seenAt: Double
        /// Body widths a second, smoothed.
        var speed = 0.0
        var hold: Hold?
        /// Whether a gesture can count: false from a gesture until a look finds no spread palm.
        var armed = true
        /// After a gesture, the hand read until it is no longer a spread palm (then armed).
        var lowering: (square: PixelRect, readAt: Double)?
        var lastGesture: Double?
    }

    /// A spread palm being held.
    private struct Hold {
        /// Seconds the palm was seen spread (from one reading that sees it to the next; the
        /// time of readings that miss it does not count).
        var heldFor = 0.0
        var readAt: Double
        var square: PixelRect
        /// The hand's points' box, at the last reading that saw it.
        var hand: PixelRect
        var centre: PixelPoint
        var palmWidth: Double
        var misses = 0
    }

    package let params: Params
    private let palms: PalmDetector
    private let landmarks: HandLandmarker
    private var watched: [UUID: Watched] = [:]
    private var lastSearch = -Double.infinity
    /// The person searched last (people are searched in turn).
    private var searchedLast: UUID?
    /// CPU seconds spent (the bench), searches and readings made (tests).
    package private(set) var seconds = 0.0
    package var searches: Int { palms.looks }
    package var readings: Int { landmarks.reads }

    package init(models: ModelStore, params: Params = Params()) throws(DetectorError) {
        self.params = params
        palms = try PalmDetector(models: models)
        landmarks = try HandLandmarker(models: models)
    }

    /// Looks at the hands of `subjects` (this frame's, tracked in `image`) at `time`; the
    /// gestures recognized now.
    package func look(in image: Image, at time: Double, subjects: [TrackedSubject]) throws(DetectorError) -> [GestureEvent] {
        guard time.isFinite else { return [] }
        let started = ThreadCPUClock.now()
        defer { seconds += ThreadCPUClock.now() - started }
        let size = image.size
        let people = subjects.filter { $0.kind == .person }
        note(people, at: time)
        var events: [GestureEvent] = []
        // The palms being held, read again.
        for person in people {
            guard let hold = watched[person.id]?.hold, time - hold.readAt >= params.holdInterval - Self.slack else { continue }
            let reading = try landmarks.read(in: image, square: hold.square)
            let shape = Self.shape(of: reading)
            var held = hold
            held.readAt = time
            if let reading, let shape, isRaised(shape, of: person, in: size),
               Self.distance(shape.centre, hold.centre) <= params.stillness * hold.palmWidth {
                // The hand is there, raised and still: followed, whatever its shape this time.
                held.square = reading.nextSquare
                held.hand = reading.extent
                held.centre = shape.centre
                held.palmWidth = shape.palmWidth
                held.misses = shape.isSpreadPalm ? 0 : shape.isClosed ? params.mostMisses + 1 : hold.misses + 1
                // Time since the last reading counts when this one sees the spread palm (a hand
                // waved about its place passes some readings and misses others: it adds up).
                if shape.isSpreadPalm { held.heldFor += min(time - hold.readAt, 1.5 * params.holdInterval) }
            } else {
                held.misses += 1
            }
            if held.misses > params.mostMisses {
                watched[person.id]?.hold = nil
                if shape?.isSpreadPalm != true { watched[person.id]?.armed = true }
            } else if held.misses == 0, held.heldFor >= params.hold - Self.slack {
                watched[person.id]?.hold = nil
                if watched[person.id]?.armed == true, watched[person.id]?.lastGesture.map({ time - $0 >= params.rest }) ?? true {
                    watched[person.id]?.armed = false
                    watched[person.id]?.lastGesture = time
                    watched[person.id]?.lowering = (held.square, time)
                    events.append(GestureEvent(kind: .followMe, subject: person.id, time: time, hand: UnitRect(held.hand, in: size)))
                }
            } else {
                watched[person.id]?.hold = held
            }
        }
        // Hands that made a gesture, read until they come down.
        for person in people {
            guard let lowering = watched[person.id]?.lowering, time - lowering.readAt >= params.holdInterval - Self.slack else { continue }
            let reading = try landmarks.read(in: image, square: lowering.square)
            if let reading, let shape = Self.shape(of: reading), shape.isSpreadPalm,
               time - (watched[person.id]?.lastGesture ?? time) <= Self.longestLowering {
                watched[person.id]?.lowering = (reading.nextSquare, time)
            } else {
                watched[person.id]?.lowering = nil
                watched[person.id]?.armed = true
            }
        }
        // A search around the next person in turn.
        if time - lastSearch >= params.searchInterval - Self.slack, let person = nextToSearch(people, in: size) {
            lastSearch = time
            searchedLast = person.id
            try search(person, in: image, at: time)
        }
        return events
    }

    /// Keeps each person's place and speed; forgets those gone for two seconds.
    private func note(_ people: [TrackedSubject], at time: Double) {
        for person in people {
            let body = person.bodyRect ?? person.rect
            guard var known = watched[person.id] else {
                watched[person.id] = Watched(rect: body, seenAt: time)
                continue
            }
            let elapsed = time - known.seenAt
            if elapsed > 0, body.width > 0 {
                let moved = hypot(body.midX - known.rect.midX, body.midY - known.rect.midY) / body.width / elapsed
                let weight = min(1, elapsed / 0.5)
                known.speed += weight * ((moved.isFinite ? moved : known.speed) - known.speed)
            }
            known.rect = body
            known.seenAt = time
            watched[person.id] = known
        }
        watched = watched.filter { time - $0.value.seenAt <= 2 }
    }

    /// The person to search next: people facing the dock (a face tracked) or close to it (a
    /// body over 60% of the picture's height: a hand near the lens hides the face), still
    /// enough, with hands big enough to read, not holding a palm already, in turn after the one
    /// searched last. (A walker seen from behind or from the side does not ask the dock anything.)
    private func nextToSearch(_ people: [TrackedSubject], in size: ImageSize) -> TrackedSubject? {
        let candidates = people.filter { person in
            guard let known = watched[person.id], known.hold == nil, known.lowering == nil, known.speed <= params.mostSpeed,
                  person.faceRect != nil || (person.bodyRect ?? person.rect).height >= Self.closeBody else { return false }
            return handSize(of: person, in: size) >= params.smallestHand
        }
        guard !candidates.isEmpty else { return nil }
        if let last = searchedLast, let index = candidates.firstIndex(where: { $0.id == last }) {
            return candidates[(index + 1) % candidates.count]
        }
        return candidates.first
    }

    /// Palms in the region above `person`'s shoulders; a raised, upright, spread one starts a hold.
    private func search(_ person: TrackedSubject, in image: Image, at time: Double) throws(DetectorError) {
        let size = image.size
        var spread = false
        for palm in try palms.palms(in: image, region: searchRegion(of: person, in: size)).prefix(2) {
            let toward = palm.fingerward
            guard HandShape.angle((toward.x, toward.y), (0, -1)) <= 50 else { continue }
            let reading = try landmarks.read(in: image, square: palm.handSquare)
            guard let reading, let shape = Self.shape(of: reading), shape.isSpreadPalm else { continue }
            spread = true
            guard isRaised(shape, of: person, in: size), watched[person.id]?.armed == true else { continue }
            watched[person.id]?.hold = Hold(readAt: time, square: reading.nextSquare, hand: reading.extent, centre: shape.centre,
                                            palmWidth: shape.palmWidth)
            return
        }
        if !spread { watched[person.id]?.armed = true }
    }

    /// Where a raised hand of `person` can be (pixels): a square over the head five and a half
    /// faces wide, or over the top of the body.
    func searchRegion(of person: TrackedSubject, in size: ImageSize) -> PixelRect {
        if let face = person.faceRect?.pixelRect(in: size), face.width > 0 {
            let side = 5.5 * max(face.width, face.height)
            return PixelRect(x: face.midX - side / 2, y: face.midY - 0.4 * face.height - side / 2, width: side, height: side)
        }
        let body = (person.bodyRect ?? person.rect).pixelRect(in: size)
        let side = max(1.5 * body.width, 0.45 * body.height)
        return PixelRect(x: body.midX - side / 2, y: body.y + 0.35 * side - side / 2, width: side, height: side)
    }

    /// About how tall `person`'s hand is (pixels): their face's height, or a seventh of their body's.
    func handSize(of person: TrackedSubject, in size: ImageSize) -> Double {
        if let face = person.faceRect?.pixelRect(in: size), face.height > 0 { return face.height }
        return (person.bodyRect ?? person.rect).pixelRect(in: size).height / 7
    }

    /// Whether the hand is raised: its middle above the chin and beside the head, of a size a
    /// hand of that face has; without a face, in the top part of the body.
    func isRaised(_ hand: HandShape, of person: TrackedSubject, in size: ImageSize) -> Bool {
        if let face = person.faceRect?.pixelRect(in: size), face.width > 0 {
            let width = hand.palmWidth / face.width
            return hand.centre.y <= face.y + face.height && abs(hand.centre.x - face.midX) <= 4 * face.width
                && width >= 0.3 && width <= 2.5
        }
        let body = (person.bodyRect ?? person.rect).pixelRect(in: size)
        return hand.centre.y <= body.y + 0.45 * body.height && abs(hand.centre.x - body.midX) <= body.width
    }

    static func distance(_ a: PixelPoint, _ b: PixelPoint) -> Double { hypot(a.x - b.x, a.y - b.y) }

    /// The hand's shape, when the landmark model is sure a hand is there (presence 0.5 or more).
    static func shape(of reading: HandReading?) -> HandShape? {
        guard let reading, reading.presence >= 0.5 else { return nil }
        return HandShape(reading.landmarks)
    }

    /// Seconds an interval may fall short by and still be over (frame times are sums of
    /// 1/30 s that land a hair before the whole interval).
    static let slack = 1e-3
    /// Seconds a hand kept up after its gesture is read for, at most (then the next search decides).
    static let longestLowering = 5.0
    /// A body this tall (share of the picture) is close enough to the dock to ask it without a face.
    static let closeBody = 0.6
}
