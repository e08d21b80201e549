// SPDX-License-Identifier: Apache-2.0
// A 3×5 pixel font for the time scale's labels: digits, signs, point, "m" and "s".

/// Draws short labels into 8-bit images with a built-in 3×5 bitmap font, scaled by an
/// integer factor. Unknown characters are drawn as blanks.
public enum BitmapFont {
    /// Glyph cell, font pixels, including one column of spacing.
    public static let advance = 4
    public static let glyphHeight = 5

    /// Rows of a glyph, top first; bit 2 is the left pixel.
    static func rows(_ c: Character) -> (UInt8, UInt8, UInt8, UInt8, UInt8) {
        switch c {
        case "0": return (0b111, 0b101, 0b101, 0b101, 0b111)
        case "1": return (0b010, 0b110, 0b010, 0b010, 0b111)
        case "2": return (0b111, 0b001, 0b111, 0b100, 0b111)
        case "3": return (0b111, 0b001, 0b111, 0b001, 0b111)
        case "4": return (0b101, 0b101, 0b111, 0b001, 0b001)
        case "5": return (0b111, 0b100, 0b111, 0b001, 0b111)
        case "6": return (0b111, 0b100, 0b111, 0b101, 0b111)
        case "7": return (0b111, 0b001, 0b010, 0b010, 0b010)
        case "8": return (0b111, 0b101, 0b111, 0b101, 0b111)
        case "9": return (0b111, 0b101, 0b111, 0b001, 0b111)
        case "-": return (0b000, 0b000, 0b111, 0b000, 0b000)
        case "+": return (0b000, 0b010, 0b111, 0b010, 0b000)
        case ".": return (0b000, 0b000, 0b000, 0b000, 0b010)
        case ":": return (0b000, 0b010, 0b000, 0b010, 0b000)
        case "m": return (0b000, 0b000, 0b111, 0b111, 0b101)
        case "s": return (0b000, 0b011, 0b010, 0b001, 0b011)
        default: return (0, 0, 0, 0, 0)
        }
    }

    /// Width in image pixels of `text` at `scale`.
    public static func width(_ text: String, scale: Int) -> Int {
        max(0, text.count * advance - 1) * scale
    }

    /// Draws `text` with its top-left corner at (`x`, `y`) in `value`, clipped to the image.
    public static func draw(_ text: String, x: Int, y: Int, scale: Int, value: UInt8, into image: inout GrayImage) {
        var cx = x
        for c in text {
            let r = rows(c)
            let glyph = [r.0, r.1, r.2, r.3, r.4]
            for (gy, bits) in glyph.enumerated() {
                for gx in 0..<3 where bits & (0b100 >> UInt8(gx)) != 0 {
                    image.fill(x: cx + gx * scale, y: y + gy * scale, width: scale, height: scale, value: value)
                }
            }
            cx += advance * scale
        }
    }
}
