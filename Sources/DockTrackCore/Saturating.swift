/// The one conversion from a measured Double to a device's integer: rounded, and clamped to the
/// integer's range instead of trapping ("Double value cannot be converted") on a huge, infinite
/// or NaN value. NaN gives 0.
extension FixedWidthInteger {
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Self.max) {
            self = .max
        } else if value <= Double(Self.min) {
            self = .min
        } else {
            self = Self(value.rounded())
        }
    }
}
