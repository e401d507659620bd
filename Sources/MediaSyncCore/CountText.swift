/// A count with its noun, as English reads it: "1 movie", "2 movies", "0 series".
public enum CountText {
    /// `count` and the noun in the number it takes: `singular` for exactly one, `plural` otherwise (zero included,
    /// as in "0 files"). `plural` defaults to the singular with an "s".
    public static func of(_ count: Int, _ singular: String, plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
    }
}
