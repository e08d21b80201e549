// SPDX-License-Identifier: Apache-2.0
// An owned 8-bit grayscale image with packed rows, for rendering off the loop thread.

/// An 8-bit luma image, rows packed (`bytesPerRow == width`), top row first.
public struct GrayImage: Sendable, Hashable {
    public let width: Int
    public let height: Int
    public var pixels: [UInt8]

    /// A `width`×`height` image filled with `value`.
    public init(width: Int, height: Int, value: UInt8 = 0) {
        precondition(width > 0 && height > 0, "image dimensions must be positive")
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: value, count: width * height)
    }

    public subscript(x: Int, y: Int) -> UInt8 {
        get { pixels[y * width + x] }
        set { pixels[y * width + x] = newValue }
    }

    /// Fills a rectangle, clipped to the image.
    public mutating func fill(x: Int, y: Int, width w: Int, height h: Int, value: UInt8) {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(width, x + w), y1 = min(height, y + h)
        guard x0 < x1, y0 < y1 else { return }
        for yy in y0..<y1 {
            for xx in x0..<x1 { pixels[yy * width + xx] = value }
        }
    }

    /// Copies a packed `w`×`h` luma buffer with its top-left at (`x`, `y`), clipped.
    public mutating func blit(_ src: UnsafeBufferPointer<UInt8>, width w: Int, height h: Int, x: Int, y: Int) {
        precondition(src.count >= w * h, "source smaller than its size")
        for yy in 0..<h where y + yy >= 0 && y + yy < height {
            for xx in 0..<w where x + xx >= 0 && x + xx < width {
                pixels[(y + yy) * width + x + xx] = src[yy * w + xx]
            }
        }
    }
}
