"""Draws images/icon.png (128x128), the extension's icon: three arrows, as in a
quiver, on a rounded dark square. Standard library only (zlib for the PNG);
4x4 supersampling for smooth edges. Run: python3 tools/make-icon.py"""

import math
import struct
import zlib
from pathlib import Path

SIZE = 128
SS = 4  # samples per pixel along each axis
BG = (30, 42, 68)
COLORS = [(255, 176, 59), (240, 240, 240), (90, 200, 250)]


def rounded_square(x: float, y: float, r: float = 24.0) -> bool:
    cx = min(max(x, r), SIZE - r)
    cy = min(max(y, r), SIZE - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def seg_dist(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def in_triangle(px, py, a, b, c):
    def side(p1, p2):
        return (px - p2[0]) * (p1[1] - p2[1]) - (p1[0] - p2[0]) * (py - p2[1])

    d1, d2, d3 = side(a, b), side(b, c), side(c, a)
    return not ((d1 < 0 or d2 < 0 or d3 < 0) and (d1 > 0 or d2 > 0 or d3 > 0))


def arrows():
    """Each arrow: tail (x, y), tip (x, y), color; all point up and to the right."""
    out = []
    for i, offset in enumerate((-24.0, 0.0, 24.0)):
        # shifted across the arrows' direction (1, -1), i.e. along (1, 1)
        tail = (32 + offset * 0.7, 96 + offset * 0.7)
        tip = (96 + offset * 0.7, 32 + offset * 0.7)
        out.append((tail, tip, COLORS[i]))
    return out


def shade(x: float, y: float):
    if not rounded_square(x, y):
        return None
    for tail, tip, color in arrows():
        ux, uy = tip[0] - tail[0], tip[1] - tail[1]
        n = math.hypot(ux, uy)
        ux, uy = ux / n, uy / n
        vx, vy = -uy, ux
        head = 16.0
        base = (tip[0] - ux * head, tip[1] - uy * head)
        if in_triangle(x, y, tip, (base[0] + vx * 8, base[1] + vy * 8), (base[0] - vx * 8, base[1] - vy * 8)):
            return color
        if seg_dist(x, y, tail[0], tail[1], base[0], base[1]) <= 2.6:
            return color
        for k in (0.0, 7.0):  # fletching: two pairs of short strokes at the tail
            fx, fy = tail[0] + ux * k, tail[1] + uy * k
            for s in (1, -1):
                if seg_dist(x, y, fx, fy, fx - ux * 7 + s * vx * 7, fy - uy * 7 + s * vy * 7) <= 2.0:
                    return color
    return BG


def main() -> None:
    rows = []
    for py in range(SIZE):
        row = bytearray([0])
        for px in range(SIZE):
            acc = [0, 0, 0, 0]
            for sy in range(SS):
                for sx in range(SS):
                    c = shade(px + (sx + 0.5) / SS, py + (sy + 0.5) / SS)
                    if c is not None:
                        acc[0] += c[0]
                        acc[1] += c[1]
                        acc[2] += c[2]
                        acc[3] += 1
            n = acc[3]
            if n == 0:
                row += bytes(4)
            else:
                row += bytes([acc[0] // n, acc[1] // n, acc[2] // n, 255 * n // (SS * SS)])
        rows.append(bytes(row))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
    png += chunk(b"IEND", b"")
    out = Path(__file__).resolve().parent.parent / "images" / "icon.png"
    out.write_bytes(png)
    print(f"{out}: {len(png)} bytes")


if __name__ == "__main__":
    main()
