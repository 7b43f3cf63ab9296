// DockKit's code samples (the reference's sections, in its order), each written against
// DockTrack's client API: what a DockKit app does, how a DockTrack client does the same. Run
// against a dock (docksim --socket) or a tracker in front of one (docktrack track --serve);
// each sample prints what it did, or why it is not possible there (a dock alone does not track:
// notCapable), and the run goes on. docs/dockkit-mapping.md maps every DockKit call.
//
//   swift run dockkit-samples SOCKET              every sample
//   swift run dockkit-samples SOCKET battery …    the named ones
import DockTrackClient
import Foundation

@main
struct DockKitSamples {
    typealias Sample = (name: String, run: @Sendable (DockAccessoryManager) async throws -> Void)

    static let samples: [Sample] = [
        ("discover", discover), ("system-tracking", systemTracking), ("select", selectSubjects),
        ("custom-tracking", customTracking), ("framing", framing), ("region", regionOfInterest),
        ("velocity", angularVelocity), ("orientation", setOrientation), ("motion-states", motionStates),
        ("limits", limits), ("animate", animate), ("tracking-states", trackingStates), ("events", accessoryEvents),
        ("battery", battery), ("mistakes", commonMistakes), ("discover-two-readers", discoverWithTwoReaders),
        ("roll-refused", rollRefused),
    ]

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let socket = arguments.first, !socket.hasPrefix("-") else {
            print("usage: dockkit-samples SOCKET [SAMPLE...]   samples: \(samples.map(\.name).joined(separator: " "))")
            exit(2)
        }
        let wanted = arguments.count > 1 ? Set(arguments.dropFirst()) : Set(samples.map(\.name))
        if let unknown = wanted.first(where: { name in !samples.contains { $0.name == name } }) {
            print("dockkit-samples: no sample \(unknown)")
            exit(2)
        }
        let dock: DockAccessoryManager
        do {
            dock = try await DockAccessoryManager.connect(to: socket)
        } catch {
            print("dockkit-samples: \(socket): \(error)")
            exit(1)
        }
        defer { dock.disconnect() }
        for sample in samples where wanted.contains(sample.name) {
            print("== \(sample.name)")
            do {
                try await sample.run(dock)
                print("\(sample.name): ok")
            } catch let error as DockError {
                print("\(sample.name): not possible here: \(error.code) (\(error))")
            } catch {
                print("\(sample.name): failed: \(error)")
            }
        }
    }

    /// "Discovering Accessories": the state changes, docked with the accessory's identity.
    static func discover(_ dock: DockAccessoryManager) async throws {
        for await change in dock.stateChanges {
            switch change {
            case .docked(let accessory):
                print("docked: \(accessory.name), category \(accessory.category), id \(accessory.identifier), tracking button \(accessory.trackingButtonEnabled ? "enabled" : "disabled")")
                return
            case .undocked:
                print("undocked: the phone is off the dock")
            case .disconnected:
                throw DockError.notConnected
            }
        }
    }

    /// "Discovering Accessories" with two readers of the accessory state changes (two loops of
    /// an app, as DockKit's `accessoryStateChanges` allows): a watcher of a folder of docks (one
    /// made here, the dock's socket hard-linked into it), each loop told of this dock.
    static func discoverWithTwoReaders(_ dock: DockAccessoryManager) async throws {
        let folder = NSTemporaryDirectory() + "dockkit-samples-\(getpid())"
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let socket = folder + "/dock.sock"
        // A hard link: the watcher takes only sockets (not links to them) for docks.
        guard link(dock.socketPath, socket) == 0 else {
            throw DockError.invalidRequest("cannot link the dock's socket into \(folder): \(String(cString: strerror(errno)))")
        }
        let watcher = try DockFolderWatcher(folder: folder)
        defer { watcher.stop() }
        @Sendable func sees(_ changes: AsyncStream<DockFolderChange>) async -> Bool {
            for await change in changes {
                if case .appeared(let found) = change, found.socketPath == socket { return true }
            }
            return false
        }
        async let first = sees(watcher.changes), second = sees(watcher.changes)
        let timeout = Task { try await Task.sleep(for: .seconds(10)); watcher.stop() }
        let (one, two) = await (first, second)
        timeout.cancel()
        guard one && two else { throw DockError.invalidRequest("a reader was not told of the dock (first \(one), second \(two))") }
        print("both readers were told of the dock at \((dock.socketPath as NSString).lastPathComponent)")
    }

    /// A roll on a dock that has none: refused (`notCapable`), never done without the roll.
    static func rollRefused(_ dock: DockAccessoryManager) async throws {
        let accessory = try await dock.accessory()
        guard !accessory.capabilities.contains("roll") else {
            print("this dock can roll: nothing to refuse")
            return
        }
        let wasOn = try? await dock.isSystemTrackingEnabled()
        if wasOn == true { try await dock.setSystemTracking(false) }
        defer { if wasOn == true { Task { try? await dock.setSystemTracking(true) } } }
        do {
            _ = try await dock.setOrientation(DockOrientation(x: 0, y: 0.1, z: 0.2), duration: 0.5)
            throw DockError.invalidRequest("a roll was taken by a dock without roll")
        } catch DockError.notCapable {
            print("a roll is refused: notCapable")
        }
    }

    /// "System Tracking": on, off, and read back.
    static func systemTracking(_ dock: DockAccessoryManager) async throws {
        try await dock.setSystemTracking(true)
        try await dock.setSystemTracking(false)
        print("system tracking enabled: \(try await dock.isSystemTrackingEnabled())")
        try await dock.setSystemTracking(true)
        print("system tracking enabled: \(try await dock.isSystemTrackingEnabled())")
    }

    /// "Tap to Select Subject": a tap at the middle, then a subject by identifier, then automatic.
    static func selectSubjects(_ dock: DockAccessoryManager) async throws {
        guard await tracks(dock) else { throw DockError.notCapable("selection: a dock alone does not track") }
        guard let person = await firstPerson(dock) else { throw DockError.noSubjectFound }
        // A tap: unit coordinates with the origin at the upper-left (DockKit's CGPoint).
        let tapped = try await dock.selectSubject(atX: person.rect.midX, y: 1 - person.rect.midY)
        print("tapped \(tapped)")
        try await dock.selectSubjects([tapped])
        print("selected [\(tapped)]")
        try await dock.selectSubjects([])
        print("selected [] (automatic)")
    }

    /// "Providing Observations": system tracking off, 20 observations a second with the camera's
    /// information, for a second; then system tracking on again.
    static func customTracking(_ dock: DockAccessoryManager) async throws {
        try await dock.setSystemTracking(false)
        let camera = CameraInformation(fieldOfView: 68, referenceDimensions: .init(width: 1920, height: 1080), orientation: .corrected)
        var refused = 0
        for k in 0..<20 {
            // A face a little right of centre, drifting; lower-left origin, as Vision's.
            let face = Observation(identifier: 0, type: .humanFace, rect: UnitRect(x: 0.55 + Double(k) * 0.005, y: 0.5, width: 0.1, height: 0.15))
            do {
                try await dock.track([face], camera: camera)
            } catch DockError.rateTooLow {
                refused += 1  // a busy machine may space a call out
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        // A busy machine may space a few calls out; most must be taken.
        guard refused <= 5 else { throw SampleFailure("\(refused) of 20 observations refused as too slow") }
        print("tracked 20 observations at 20 a second (\(refused) refused as too slow)")
        try await dock.setSystemTracking(true)
    }

    /// "Framing Modes": center, read back.
    static func framing(_ dock: DockAccessoryManager) async throws {
        try await dock.setFramingMode(.center)
        print("framing mode: \(try await dock.framingMode())")
    }

    /// "Region of Interest": the middle half (upper-left origin, as DockKit's), read back.
    static func regionOfInterest(_ dock: DockAccessoryManager) async throws {
        try await dock.setRegionOfInterest(UnitRect(x: 0.25, y: 0, width: 0.5, height: 1))
        let region = try await dock.regionOfInterest()
        print("region of interest: x \(region.x), y \(region.y), width \(region.width), height \(region.height)")
        try await dock.setRegionOfInterest(UnitRect(x: 0, y: 0, width: 1, height: 1))
    }

    /// "Angular Velocity": system tracking off first, turn, stop.
    static func angularVelocity(_ dock: DockAccessoryManager) async throws {
        try? await dock.setSystemTracking(false)  // a dock alone has no tracker to switch off
        try await dock.setAngularVelocity(AngularVelocity(x: 0.1, y: 0.2, z: 0))
        try await Task.sleep(for: .milliseconds(300))
        try await dock.setAngularVelocity(.zero)
        let state = try await dock.motionState()
        print(String(format: "turned, stopped: pan %.3f, tilt %.3f rad", state.position.y, state.position.x))
    }

    /// "Set Orientation": yaw 0.5 rad over 2 s, its progress to the end; the same as a quaternion.
    static func setOrientation(_ dock: DockAccessoryManager) async throws {
        try? await dock.setSystemTracking(false)
        let progress = try await dock.setOrientation(DockOrientation(x: 0, y: 0.5, z: 0), duration: 2, relative: false)
        let end = try await progress.completion()
        print(String(format: "at yaw %.3f rad (target %.3f), %.0f%% done", end.position.y, progress.target.y, progress.fractionCompleted * 100))
        // Rotation3D: a quarter turn back about the vertical axis, relative, as fast as the
        // limits allow (DockKit's default duration, 0).
        let back = try await dock.setOrientation(quaternionX: 0, y: -sin(Double.pi / 8), z: 0, w: cos(Double.pi / 8), relative: true)
        let there = try await back.completion()
        print(String(format: "a quaternion of -45 degrees of yaw: at %.3f rad", there.position.y))
    }

    /// "Motion State": positions, velocities, time, error.
    static func motionStates(_ dock: DockAccessoryManager) async throws {
        var count = 0
        for await state in try dock.motionStates {
            print(String(format: "t %.2f: pan %.3f tilt %.3f rad, speeds %.3f %.3f rad/s%@", state.time, state.position.y, state.position.x,
                          state.velocity.y, state.velocity.x, state.error.map { ", motor error \($0.code)" } ?? ""))
            count += 1
            if count == 3 { break }
        }
        // Each `for await` is a stream of its own: two readers at once both get every state, and
        // a reader that comes a second late starts from the dock's motion now, not from history.
        let (one, two) = (try dock.motionStates, try dock.motionStates)
        async let first = times(of: one, count: 3)
        async let second = times(of: two, count: 3)
        let (a, b) = await (first, second)
        print("two readers: \(a.count) and \(b.count) states, the same times: \(a == b)")
        let last = await times(of: try dock.motionStates, count: 1)
        try await Task.sleep(for: .seconds(1))
        let late = await times(of: try dock.motionStates, count: 1)
        print(String(format: "a reader a second late starts %.2f s after the last state read before", (late.first ?? 0) - (last.first ?? 0)))
    }

    /// The times of the first `count` states of `stream`.
    static func times(of stream: AsyncStream<MotionState>, count: Int) async -> [Double] {
        var times: [Double] = []
        for await state in stream {
            times.append(state.time)
            if times.count == count { break }
        }
        return times
    }

    /// "Setting Limits": yaw within -1..1 rad at 0.5 rad/s at most, the others as they are.
    static func limits(_ dock: DockAccessoryManager) async throws {
        // As DockKit's Limit, a range with nothing in it is refused as it is made.
        switch Result(catching: { () throws(DockError) in try AxisLimits(positionRange: 1.0..<1.0, maximumSpeed: 0.5) }) {
        case .success: throw SampleFailure("an empty position range was taken")
        case .failure(let refusal): print("an empty position range is refused: \(refusal.code)")
        }
        let yaw = try AxisLimits(positionRange: -1.0..<1.0, maximumSpeed: 0.5)
        let held = try await dock.setLimits(DockAccessory.Limits(yaw: yaw, pitch: nil, roll: nil))
        guard let heldYaw = held.yaw else { throw DockError.unknown("the dock holds no yaw limits") }
        print(String(format: "yaw limits now %.2f...%.2f rad, at most %.2f rad/s", heldYaw.range.lowerBound, heldYaw.range.upperBound, heldYaw.maximumSpeed))
        let own = try await dock.dockLimits()
        print(String(format: "the dock's own yaw speed: at most %.2f rad/s", own.yaw?.maximumSpeed ?? 0))
        // An axis the dock lacks reads nil, as DockKit's (docksim and most stands have no roll).
        print("roll: \(own.roll.map { "\($0.range)" } ?? "none (nil)")")
    }

    /// "Animations": tracking off, kapow, wait until finished or cancelled, tracking on again.
    static func animate(_ dock: DockAccessoryManager) async throws {
        try? await dock.setSystemTracking(false)
        let progress = try await dock.animate(.kapow)
        while !progress.isFinished && !progress.isCancelled {
            try await Task.sleep(for: .milliseconds(100))
        }
        print("kapow played")
        try? await dock.setSystemTracking(true)
    }

    /// "Tracking State and Subject Selection": the subjects of a few states, people and objects.
    static func trackingStates(_ dock: DockAccessoryManager) async throws {
        // A dock alone (docksim) tracks nothing: the getter throws notCapable (DockKit's
        // notSupportedByDevice) rather than giving a stream that never says anything.
        var count = 0
        for await state in try dock.trackingStates {
            for subject in state.subjects {
                switch subject.kind {
                case .person:
                    let face = subject.dockKitRect  // DockKit's rect: the face, upper-left origin
                    print(String(format: "frame %d: person at %.2f,%.2f (face box, upper-left origin), ", state.frame, face.midX, face.midY)
                          + "rank \(subject.saliencyRank ?? 0), speaking \(subject.speakingConfidence.map { String(format: "%.2f", $0) } ?? "-"), looking \(subject.lookingAtCameraConfidence.map { String(format: "%.2f", $0) } ?? "-")")
                case .object:
                    print("frame \(state.frame): object rank \(subject.saliencyRank ?? 0)")
                }
            }
            count += 1
            if count == 3 { return }
        }
    }

    /// "Accessory Events": the dock's buttons, until two have come (or 10 s have passed).
    static func accessoryEvents(_ dock: DockAccessoryManager) async throws {
        let stream = try dock.accessoryEvents
        let events = Task { () -> Int in
            var heard = 0
            for await event in stream {
                switch event {
                case .cameraShutter: print("event: shutter")
                case .cameraFlip: print("event: flip")
                case .cameraZoom(let factor): print("event: zoom \(factor)")
                case .button(let id, let pressed): print("event: button \(id) \(pressed ? "pressed" : "released")")
                case .gesture(let kind, let subject, _): print("event: gesture \(kind) by \(subject?.uuidString ?? "someone")")
                case .unknown(let name): print("event: \(name) (unknown to this client)")
                }
                heard += 1
                if heard == 2 { break }
            }
            return heard
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(10))
            events.cancel()
        }
        defer { timeout.cancel() }
        print("heard \(await events.value) events")
    }

    /// "Battery Monitoring": the dock's batteries as they are now.
    static func battery(_ dock: DockAccessoryManager) async throws {
        dock.query("getBattery")
        let stream = try dock.batteryStates
        let first = Task { () -> BatteryState? in
            for await battery in stream { return battery }
            return nil
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(3))
            first.cancel()
        }
        defer { timeout.cancel() }
        guard let battery = await first.value else { throw DockError.notCapable("no battery state within 3 s") }
        print(String(format: "battery %@: %.0f%%, %@%@", battery.name, battery.level * 100, battery.chargeState.rawValue, battery.lowBattery ? ", low" : ""))
    }

    /// "Common Mistakes", done right: motors only with system tracking off (with it on they are
    /// refused); tracking state set again when the app comes back; observations at 10 to 30 a
    /// second (one a second is refused); tracking restored after an animation.
    static func commonMistakes(_ dock: DockAccessoryManager) async throws {
        guard await tracks(dock) else { throw DockError.notCapable("the mistakes concern a tracker") }
        try await dock.setSystemTracking(true)
        do {
            try await dock.setAngularVelocity(AngularVelocity(x: 0, y: 0.2, z: 0))
            throw SampleFailure("a motor command was taken while tracking")
        } catch DockError.invalidRequest {
            print("a motor command while tracking is refused: invalidRequest")
        }
        // Back in the foreground: the tracking state is set again, not assumed.
        try await dock.setSystemTracking(false)
        let face = Observation(type: .humanFace, rect: UnitRect(x: 0.5, y: 0.5, width: 0.1, height: 0.15), confidence: 0.9)
        try await dock.track([face])
        try await Task.sleep(for: .seconds(1.1))
        do {
            try await dock.track([face])
            throw SampleFailure("an observation a second after the last was taken")
        } catch DockError.rateTooLow {
            print("an observation a second after the last is refused: rateTooLow")
        }
        let progress = try await dock.animate(.yes)
        _ = try await progress.completion()
        try await dock.setSystemTracking(true)
        print("after the animation system tracking is on again: \(try await dock.isSystemTrackingEnabled())")
    }

    /// The first tracked person in the tracking states (a few seconds at most).
    static func firstPerson(_ dock: DockAccessoryManager) async -> TrackedSubject? {
        guard let states = try? dock.trackingStates else { return nil }
        let search = Task { () -> TrackedSubject? in
            for await state in states {
                if let person = state.subjects.first(where: { $0.kind == .person }) { return person }
            }
            return nil
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(10))
            search.cancel()
        }
        defer { timeout.cancel() }
        guard await tracks(dock) else {
            search.cancel()
            return nil
        }
        return await search.value
    }

    /// Whether a tracker serves this socket (`track --serve`: framing and tracking states), not a dock alone.
    static func tracks(_ dock: DockAccessoryManager) async -> Bool {
        (try? await dock.accessory().capabilities.contains(DockCapability.trackingStates.rawValue)) == true
    }
}

/// A sample that saw the dock do what DockKit's would not: it fails (the samples' caller sees
/// "failed: ..."), rather than printing a warning and saying ok.
struct SampleFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
