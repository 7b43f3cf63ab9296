import DockTrackCore
import DockTrackSystem
import DockTrackMedia
import Foundation

/// People boxes drawn on the frames of a video, in MOTChallenge's ground-truth text format, one
/// box per line: `frame,id,left,top,width,height,considered,class,visibility` (frame from 1,
/// pixels from the top-left; `considered` 0 marks a box that counts neither as missed nor as
/// false when found, as MOTChallenge does; class and visibility are read past). Lines starting
/// with `#` are comments. Frames without a line have nobody in them, up to `frames` (the clip's
/// length, which the evaluation knows).
package struct LabelledVideo: Sendable, Equatable {
    /// The boxes of each frame (index from 0), and the ones that count neither way.
    package var people: [Int: [PixelRect]]
    package var ignored: [Int: [PixelRect]]
    /// The labelled identifier of each box in `people`, in the same order.
    package var identities: [Int: [Int]]

    package init(people: [Int: [PixelRect]], ignored: [Int: [PixelRect]] = [:], identities: [Int: [Int]] = [:]) {
        self.people = people
        self.ignored = ignored
        self.identities = identities
    }

    /// The largest labels file read (vtest's 300 frames are 120 KB).
    package static let largestLabels = 64 * 1024 * 1024

    /// The boxes of a MOTChallenge text file.
    package static func read(mot path: String) throws(FrameSourceError) -> LabelledVideo {
        let text: String
        do { text = try SmallTextFile.read(path, largest: largestLabels) } catch {
            if error.reason == "no such file" { throw .fileNotFound(path: path) }
            throw .unreadable(path: path, reason: error.reason)
        }
        return try parse(mot: text, path: path)
    }

    static func parse(mot text: String, path: String) throws(FrameSourceError) -> LabelledVideo {
        var labelled = LabelledVideo(people: [:])
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard fields.count >= 6, fields.prefix(6).allSatisfy({ $0?.isFinite ?? false }),
                  let frame = fields[0], frame >= 1, frame == frame.rounded(), frame < 10_000_000, abs(fields[1]!) < 1e9,
                  fields[4]! > 0, fields[5]! > 0 else {
                throw .unreadable(path: path, reason: "line \(number + 1) is not frame,id,left,top,width,height[,considered,...] with frame >= 1 and a size: '\(trimmed.prefix(80))'")
            }
            let box = PixelRect(x: fields[2]!, y: fields[3]!, width: fields[4]!, height: fields[5]!)
            let considered = fields.count < 7 || (fields[6] ?? 1) != 0
            let index = Int(frame) - 1
            if considered {
                labelled.people[index, default: []].append(box)
                labelled.identities[index, default: []].append(Int(fields[1] ?? -1))
            } else {
                labelled.ignored[index, default: []].append(box)
            }
        }
        return labelled
    }
}

/// How the people a tracker reported compare with the people labelled, frame by frame: the
/// errors that cost a dock user most. A subject is on a labelled person when most of it lies
/// inside their box (a face-only subject is inside its person's box), or they overlap by 0.3;
/// each labelled person takes one subject. A subject on nobody is a false person.
package struct PeopleScore: Sendable, Equatable {
    package private(set) var frames = 0
    package private(set) var labelledPeople = 0
    package private(set) var foundPeople = 0
    package private(set) var falsePeople = 0
    /// Frames with a subject ranked 1, and of those, the frames where it is on a labelled person.
    package private(set) var framesWithRankOne = 0
    package private(set) var rankOneOnPeople = 0
    /// Subjects in all frames.
    package private(set) var subjects = 0
    /// Labelled people at least `tallEnough` pixels tall, and of those, the ones found: the
    /// people a tracker is expected to find (50 px is a pedestrian far down a street).
    package private(set) var tallPeople = 0
    package private(set) var tallPeopleFound = 0
    package static let tallEnough = 50.0
    /// Frames where more subjects show a face than there are people (labelled or ignored): a
    /// ghost still holding a face, or one face reported twice.
    package private(set) var framesWithExtraFaces = 0
    /// Frames whose subject ranked 1 covers more than an eighth of the picture and more than
    /// twice the person it is on (or is on nobody): the dock aimed at a box stretched over the
    /// clutter beside someone.
    package private(set) var framesWithOversizedRankOne = 0
    /// For each labelled identity, how many of the frames it was found in each subject was the one.
    private var subjectsOfIdentity: [Int: [UUID: Int]] = [:]

    package init() {}

    /// Adds a frame: the people `reported` (subjects of kind person, ranked) against the boxes
    /// `labelled` and `ignored` (pixels of a frame of `size`).
    /// `identities`, when given, are the labelled identifiers of `labelled`, in order.
    package mutating func add(reported: [TrackedSubject], labelled: [PixelRect], ignored: [PixelRect] = [], identities: [Int] = [], size: ImageSize) {
        frames += 1
        let people = reported.filter { $0.kind == .person }
        subjects += people.count
        labelledPeople += labelled.count
        let truth = labelled.map { UnitRect($0, in: size) }
        let skipped = ignored.map { UnitRect($0, in: size) }
        func fit(_ subject: UnitRect, _ person: UnitRect) -> Double {
            let inside = subject.intersectionArea(with: person) / max(subject.area, 1e-12)
            return max(inside >= 0.5 ? inside : 0, subject.intersectionOverUnion(person) >= 0.3 ? 1 : 0)
        }
        // Greedy: the best-fitting pairs first.
        var pairs: [(subject: Int, person: Int, fit: Double)] = []
        for (s, subject) in people.enumerated() {
            for (p, person) in truth.enumerated() {
                let f = fit(subject.rect, person)
                if f > 0 { pairs.append((s, p, f)) }
            }
        }
        pairs.sort { $0.fit > $1.fit }
        var matchedSubjects = Set<Int>(), matchedPeople = Set<Int>()
        for pair in pairs where !matchedSubjects.contains(pair.subject) && !matchedPeople.contains(pair.person) {
            matchedSubjects.insert(pair.subject)
            matchedPeople.insert(pair.person)
            if identities.count == labelled.count {
                subjectsOfIdentity[identities[pair.person], default: [:]][people[pair.subject].id, default: 0] += 1
            }
        }
        if people.filter({ $0.faceRect != nil }).count > labelled.count + ignored.count { framesWithExtraFaces += 1 }
        foundPeople += matchedPeople.count
        for (p, box) in labelled.enumerated() where box.height >= Self.tallEnough {
            tallPeople += 1
            if matchedPeople.contains(p) { tallPeopleFound += 1 }
        }
        // A subject on no labelled person but on an ignored box, or on a labelled person another
        // subject took (a face and a body reported apart), is not counted false.
        for (s, subject) in people.enumerated() where !matchedSubjects.contains(s) {
            let onSomeone = truth.contains { fit(subject.rect, $0) > 0 } || skipped.contains { fit(subject.rect, $0) > 0 }
            if !onSomeone { falsePeople += 1 }
        }
        if let first = people.firstIndex(where: { $0.saliencyRank == 1 }) {
            framesWithRankOne += 1
            let rect = people[first].rect
            let onPeople = truth.filter { fit(rect, $0) > 0 }
            if !onPeople.isEmpty { rankOneOnPeople += 1 }
            if rect.area > 1.0 / 8, !(onPeople + skipped.filter { fit(rect, $0) > 0 }).contains(where: { rect.area <= 2 * $0.area }) {
                framesWithOversizedRankOne += 1
            }
        }
    }

    package var falsePeoplePerFrame: Double { Double(falsePeople) / Double(max(frames, 1)) }
    package var subjectsPerFrame: Double { Double(subjects) / Double(max(frames, 1)) }
    /// Of the labelled people, those found; nil (`null`) when nobody is labelled (a clip of no
    /// one scores false people only: a recall of 1 there said nothing).
    package var recall: Double? { labelledPeople == 0 ? nil : Double(foundPeople) / Double(labelledPeople) }
    package var recallOfTallPeople: Double? { tallPeople == 0 ? nil : Double(tallPeopleFound) / Double(tallPeople) }
    /// Of the frames with a subject ranked 1, those where it is on a person; nil without any.
    package var rankOneOnPerson: Double? { framesWithRankOne == 0 ? nil : Double(rankOneOnPeople) / Double(framesWithRankOne) }

    /// Of the frames each labelled identity was found in, the share where it was found as the
    /// subject it was found as most often (1: one identifier for each person throughout); nil
    /// without identities.
    package var identityKept: Double? {
        let found = subjectsOfIdentity.values.map { $0.values.reduce(0, +) }.reduce(0, +)
        guard found > 0 else { return nil }
        return Double(subjectsOfIdentity.values.map { $0.values.max() ?? 0 }.reduce(0, +)) / Double(found)
    }

    /// The totals as one JSON object.
    package var jsonLine: String {
        func ratio(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "null" }
        return String(format: "{\"frames\":%d,\"labelledPeople\":%d,\"found\":%d,\"recall\":%@,\"peopleFrom50px\":%d,\"recallFrom50px\":%@,\"falsePeople\":%d,\"falsePeoplePerFrame\":%.3f,\"subjectsPerFrame\":%.3f,\"framesWithRankOne\":%d,\"rankOneOnPerson\":%@,\"framesWithExtraFaces\":%d,\"framesWithOversizedRankOne\":%d,\"identityKept\":%@}",
                      frames, labelledPeople, foundPeople, ratio(recall), tallPeople, ratio(recallOfTallPeople), falsePeople,
                      falsePeoplePerFrame, subjectsPerFrame, framesWithRankOne, ratio(rankOneOnPerson), framesWithExtraFaces,
                      framesWithOversizedRankOne, ratio(identityKept))
    }
}
