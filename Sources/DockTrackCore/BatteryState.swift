/// One of the dock's batteries, as DockKit reports them: a name, a level, and whether it is
/// charging, not charging, or not chargeable at all. Drains while the motors run (faster when
/// they move); a chargeable one charges while the dock is on a charger.
public struct BatteryState: Sendable, Equatable {
    /// DockKit's charge states.
    public enum ChargeState: String, Sendable, CaseIterable { case charging, notCharging, notChargeable }
    public var name: String
    public var level: Double
    public var chargeState: ChargeState
    /// Low, as the dock says (its own flag, read off its line), else under a fifth.
    public var lowBattery: Bool { reportedLow ?? (level < 0.2) }
    /// The dock's own low-battery flag, when its line carried one (a client's reading).
    public var reportedLow: Bool?
    /// Whether the dock sits on a charger: a chargeable battery charges there, and once full
    /// stays full (`notCharging`) instead of draining.
    public private(set) var onCharger: Bool

    public init(name: String = "internal", level: Double = 0.8, charging: Bool = false, chargeable: Bool = true) {
        self.name = name
        self.level = level
        onCharger = charging
        chargeState = !chargeable ? .notChargeable : charging ? .charging : .notCharging
    }

    /// A battery as docksim's `--other-battery` gives it: `NAME:LEVEL`, or
    /// `NAME:LEVEL:notChargeable`; `nil` for anything else.
    public init?(spec: String) {
        let parts = spec.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (2...3).contains(parts.count), !parts[0].isEmpty, let level = Double(parts[1]), (0...1).contains(level),
              parts.count == 2 || parts[2] == "notChargeable" else { return nil }
        self.init(name: parts[0], level: level, chargeable: parts.count == 2)
    }

    /// On a charger (`true`) or off it; a battery that is not chargeable does not care.
    package mutating func setCharging(_ on: Bool) {
        onCharger = on
        guard chargeState != .notChargeable else { return }
        chargeState = on && level < 1 ? .charging : .notCharging
    }

    /// Moves the level on by `dt` seconds with the motors turning at `speed` rad/s.
    package mutating func advance(by dt: Double, speed: Double) {
        switch chargeState {
        case .charging:
            level = min(1, level + dt / 3600)
            if level >= 1 { chargeState = .notCharging }  // full
        case .notCharging where onCharger:
            break  // full, on the charger
        case .notCharging, .notChargeable:
            level = max(0, level - dt * (1.0 / 14400 + speed / 2000))
        }
    }

    /// Whether a client told of `earlier` should be told of this state: the level moved to
    /// another whole percent (as a percent is shown, rounded: a battery at 0.8 is not news as it
    /// starts to drain), the battery went low or came back, or it began or stopped charging.
    public func isNews(after earlier: BatteryState) -> Bool {
        Int((level * 100).rounded()) != Int((earlier.level * 100).rounded())
            || lowBattery != earlier.lowBattery || chargeState != earlier.chargeState
    }

    /// `{"type":"battery","name":…,"level":…,"chargeState":…,"lowBattery":…}`
    public var jsonLine: String {
        var line = JSONLine()
        line.add("type", "battery")
        line.add("name", name)
        line.add("level", level, digits: 4)
        line.add("chargeState", chargeState.rawValue)
        line.add("lowBattery", lowBattery)
        return line.text
    }
}
