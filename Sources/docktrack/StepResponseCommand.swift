import ArgumentParser
import DockTrack
import Foundation

struct StepResponseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "step-response",
        abstract: "Measure the framing controller on a simulated dock: a person steps to the side.",
        discussion: """
            Runs on the simulated clock (30 frames a second, --latency from capture to command): \
            the person stands centred, then at 0.5 s is --step degrees to the side. Prints one JSON \
            line: settle time (s, until the pan stays within 1.7° of its final angle), overshoot \
            (degrees), final error (degrees), peak pan speed (degrees/s), commands per second.
            """
    )

    @Option(help: "Degrees the person moves (positive: to the right).")
    var step = 23.0

    @Option(help: "Seconds from frame capture to the command reaching the dock.")
    var latency = 0.05

    @OptionGroup var framing: FramingOptions

    func validate() throws {
        guard step.isFinite, abs(step) <= 180 else { throw ValidationError("--step must be a number of degrees from -180 to 180") }
        guard latency.isFinite, (0...10).contains(latency) else { throw ValidationError("--latency must be between 0 and 10 seconds") }
    }

    func run() throws {
        let degree = Double.pi / 180
        let r = StepResponse.measure(step: step * degree, params: framing.params(for: ImageSize(width: 4, height: 3)), latency: latency)
        var line = JSONLine()
        line.add("stepDegrees", step, digits: 2)
        line.add("settleSeconds", r.settleTime, digits: 3)
        line.add("overshootDegrees", r.overshoot / degree, digits: 3)
        line.add("finalErrorDegrees", r.finalError / degree, digits: 3)
        line.add("peakSpeedDegreesPerSecond", r.peakSpeed / degree, digits: 1)
        line.add("commandsPerSecond", r.commandRate, digits: 1)
        try reportingErrors { try printLine(line.text) }
    }
}
