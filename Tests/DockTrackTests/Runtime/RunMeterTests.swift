import DockTrack
import Foundation
import Testing

/// The run's speed as the control page shows it.
@Suite(.onTestThreads) struct RunMeterTests {
    @Test func theRateIsOverTheLastTwoSecondsAndTheLatenciesOverTheLastFrames() throws {
        var meter = RunMeter()
        // 10 s at 30 frames a second, each frame 4 ms late, one in a hundred 40 ms.
        for k in 0..<300 { meter.record(latency: k % 100 == 99 ? 0.040 : 0.004, at: Double(k) / 30) }
        // Then 3 s at 10 a second.
        for k in 0..<30 { meter.record(latency: 0.004, at: 10 + Double(k) / 10) }
        let now = 10 + 2.9
        #expect(abs(meter.framesPerSecond(at: now) - 10) < 0.6, "\(meter.framesPerSecond(at: now))")
        let line = meter.jsonLine(at: now)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(json["type"] as? String == "runSpeed" && json["frames"] as? Int == 330, "\(line)")
        #expect(abs((json["latencyP50"] as? Double ?? 0) - 0.004) < 1e-6 && abs((json["latencyP99"] as? Double ?? 0) - 0.040) < 1e-6, "\(line)")
        // Long after, nothing in the window: no rate.
        #expect(meter.framesPerSecond(at: 100) == 0)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, -1, 1e300])
    func aLatencyThatIsNoneIsNotCounted(latency: Double) throws {
        var meter = RunMeter()
        meter.record(latency: 0.01, at: 0)
        meter.record(latency: latency, at: 0.1)
        let line = meter.jsonLine(at: 0.1)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        let p99 = try #require(json["latencyP99"] as? Double, "\(line)")
        #expect(p99.isFinite && p99 >= 0, "\(line)")
        #expect(json["frames"] as? Int == 2)
    }
}
