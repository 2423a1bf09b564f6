#!/usr/bin/env python3
"""Draws Porthole's icon (a brass-rimmed porthole with a glint) as RGBA PNGs, with no
dependencies beyond the standard library. Run it to regenerate icons/*.png."""
import math, struct, zlib, os

def png(path, size):
    rows = []
    c = (size - 1) / 2
    for y in range(size):
        row = bytearray([0])
        for x in range(size):
            # 4x supersampling for smooth edges
            acc = [0.0, 0.0, 0.0, 0.0]
            for sy in range(4):
                for sx in range(4):
                    px = x + (sx + 0.5) / 4 - 0.5 - c
                    py = y + (sy + 0.5) / 4 - 0.5 - c
                    r = math.hypot(px, py) / (size / 2)
                    if r <= 0.62:
                        # glass: deep blue to teal, with a glint at the upper left
                        t = (py / (size / 2) + 1) / 2
                        col = (int(40 + 30 * t), int(110 + 60 * t), int(190 + 30 * t))
                        gx, gy = px / (size / 2) + 0.25, py / (size / 2) + 0.25
                        if math.hypot(gx, gy) < 0.16:
                            col = (230, 245, 255)
                        a = 255
                    elif r <= 0.96:
                        # brass rim with bolts
                        ang = math.atan2(py, px)
                        bolt = min(abs(((ang / (2 * math.pi) * 8) % 1) - 0.5), 1) < 0.08 and 0.74 < r < 0.84
                        col = (120, 80, 20) if bolt else (196, 148, 54)
                        a = 255
                    else:
                        col, a = (0, 0, 0), 0
                    for i, v in enumerate(col):
                        acc[i] += v * a / 255
                    acc[3] += a
            alpha = acc[3] / 16
            if alpha > 0:
                row += bytes(int(min(255, acc[i] / 16 * 255 / alpha)) for i in range(3)) + bytes([int(alpha)])
            else:
                row += bytes(4)
        rows.append(bytes(row))
    raw = b"".join(rows)
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0))
    data += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)

here = os.path.dirname(os.path.abspath(__file__))
for name, size in [("32x32.png", 32), ("128x128.png", 128), ("icon.png", 512)]:
    png(os.path.join(here, name), size)
