import DockTrack
import DockTrackTestKit
import Testing

/// Pacing on a manual clock: exact, and as fast as the test can run.
@Suite(.onTestThreads) struct RealTimePacerTests {
    @Test func aRecordingIsPlayedInRealTimeFromItsFirstTimeAndALateTimeGoesAtOnce() {
        let clock = ManualClock(at: 100)
        var pacer = RealTimePacer(clock: clock.sleeping)
        #expect(pacer.wait(for: 5.0) == 100, "the first time starts the clock")
        #expect(pacer.wait(for: 5.5) == 100.5)
        clock.advance(by: 2)  // work took two seconds: the next time is late
        #expect(pacer.wait(for: 6.0) == 102.5, "late: at once, at the clock's time")
        #expect(pacer.wait(for: 8.0) == 103, "back on the schedule")
        #expect(clock.now() == 103)
    }

    @Test func aGivenStartIsWhereTheFirstTimeIsDue() {
        let clock = ManualClock(at: 10)
        var pacer = RealTimePacer(clock: clock.sleeping, startingAt: 12)
        #expect(pacer.wait(for: 0) == 12)
        #expect(pacer.wait(for: 1.25) == 13.25)
    }
}
