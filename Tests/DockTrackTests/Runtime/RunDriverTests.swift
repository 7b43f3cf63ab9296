import DockTrack
import DockTrackTestKit
import Foundation
import Synchronization
import Testing

/// The run driver on the test kit: a dummy dock, scripted subjects and an injected clock (no
/// sleeping, no wall clock).
@Suite(.onTestThreads) struct RunDriverTests {
    /// A clock that moves only when slept on: each sleep advances it by exactly that long.
    final class SteppedClock: Sendable {
        let time = Mutex(100.0)
        let sleeps = Mutex<[Double]>([])
        var clock: SleepingClock {
            SleepingClock(now: { self.time.withLock { $0 } }, sleep: { seconds in
                self.sleeps.withLock { $0.append(seconds) }
                self.time.withLock { $0 += seconds }
            })
        }
    }

    /// A file played before a live dock: each frame waits for its time on the run's clock, and
    /// is captured then; the dock is told where to point once a frame, at the capture time.
    @Test func pacedFramesAreCapturedWhenTheirTimeComes() throws {
        let clock = SteppedClock()
        var driver = RunDriver(loop: try FrameLoop(controller: FramingController(), dock: DummyDock(time: 100), cameraOnDock: true),
                               pacer: RealTimePacer(clock: clock.clock))
        var captures: [Double] = []
        for k in 0..<5 {
            _ = try driver.step(recordedAt: Double(k) / 10) { captured, pose in
                captures.append(captured)
                return FrameLoopTests.person(at: DockOrientation(x: 0, y: 0.3, z: 0), seenFrom: pose)
            }
        }
        #expect(captures.map { ($0 - 100) * 10 }.map { $0.rounded() } == [0, 1, 2, 3, 4], "\(captures)")
        #expect(clock.sleeps.withLock { $0.count } == 4, "four waits of a tenth of a second")
        #expect(driver.loop.dock.commands.map(\.time) == captures, "one command a frame, at its capture")
        #expect(driver.lastCaptured == captures.last)
    }

    /// Unpaced, a frame is captured at its own time whatever the clock says (a recorded file
    /// before a simulated dock).
    @Test func unpacedFramesKeepTheirOwnTimes() throws {
        var driver = RunDriver(loop: try FrameLoop(controller: FramingController(), dock: DummyDock(), cameraOnDock: false))
        var captures: [Double] = []
        for time in [0.0, 0.5, 0.25, 3] {
            _ = try driver.step(recordedAt: time) { captured, _ in
                captures.append(captured)
                return []
            }
        }
        #expect(captures == [0.0, 0.5, 0.25, 3])
    }

    /// However a run ends, the dock is told to stop at the last frame's time, then the outputs
    /// close, then the parts stop in the reverse order of their start; ending again does nothing.
    @Test func theEndStopsTheDockThenClosesThenStopsThePartsInReverse() throws {
        var driver = RunDriver(loop: try FrameLoop(controller: FramingController(), dock: DummyDock(), cameraOnDock: true))
        let order = Mutex<[String]>([])
        driver.own("camera") { order.withLock { $0.append("camera") } }
        driver.own("detection thread") { order.withLock { $0.append("detection thread") } }
        driver.own("control server") { order.withLock { $0.append("control server") } }
        for k in 0..<10 {
            _ = try driver.step(recordedAt: Double(k) / 30) { _, pose in
                FrameLoopTests.person(at: DockOrientation(x: 0, y: 0.4, z: 0), seenFrom: pose)
            }
        }
        #expect(driver.loop.dock.velocity.y != 0, "the dock was turning toward the person")
        driver.end { order.withLock { $0.append("outputs") } }
        #expect(driver.loop.dock.velocity == .zero, "the dock was stopped")
        #expect(order.withLock { $0 } == ["outputs", "control server", "detection thread", "camera"])
        let last = try #require(driver.loop.dock.commands.last)
        #expect(last.command == .setAngularVelocity(.zero) && abs(last.time - 9.0 / 30) < 1e-9, "the stop at the last frame's time: \(last)")
        driver.end { order.withLock { $0.append("outputs again") } }
        #expect(order.withLock { $0.count } == 4, "a second end does nothing")
        #expect(driver.ended)
    }

    /// A live dock's last stop goes at the dock's present time, not at the last frame's.
    @Test func aLiveDocksStopIsSentAtItsPresentTime() throws {
        var driver = RunDriver(loop: try FrameLoop(controller: FramingController(), dock: DummyDock(), cameraOnDock: true),
                               dockClock: { 42 })
        _ = try driver.step(recordedAt: 1) { _, _ in [] }
        driver.end()
        #expect(driver.loop.dock.commands.last?.time == 42)
    }
}
