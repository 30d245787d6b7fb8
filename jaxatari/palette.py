"""ALE's palettes, and the RGB and grayscale screens built from them.

Facts from ALE 0.12.1 (`common/Palettes.hpp`, `common/ColourPalette.cpp`):
ALE picks the palette of the console's display format (`setPalette(
"standard", format)`: NTSC, or PAL for the ROMs Stella detects as PAL).
Each palette has 256 packed entries: an even index holds one of the 128
colours, the odd index after it that colour's gray,
`round(0.2989 R + 0.5870 G + 0.1140 B)` on all three channels.

* `getScreenRGB` is entry `i` itself, so an odd index (the TIA writes them
  only on a PAL console with colour loss, after an odd-length frame) shows
  the gray of the colour below it.
* `getScreenGrayscale` is the low byte of entry `i + 1`: the gray for an
  even index, and for an odd one the blue channel of the next colour (entry
  256, past the table, is taken as 0, as the table after it starts with 0).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np


def _colours(text: str) -> tuple[int, ...]:
    """The 128 colours of a palette, from 24-bit hex words."""
    colours = tuple(int(word, 16) for word in text.split())
    if len(colours) != 128:
        raise ValueError(f"a palette has 128 colours, not {len(colours)}")
    return colours


NTSC_RGB_HEX = _colours("""
    000000 4a4a4a 6f6f6f 8e8e8e aaaaaa c0c0c0 d6d6d6 ececec
    484800 69690f 86861d a2a22a bbbb35 d2d240 e8e84a fcfc54
    7c2c00 904811 a26221 b47a30 c3903d d2a44a dfb755 ecc860
    901c00 a33915 b55328 c66c3a d5824a e39759 f0aa67 fcbc74
    940000 a71a1a b83232 c84848 d65c5c e46f6f f08080 fc9090
    840064 97197a a8308f b846a2 c659b3 d46cc3 e07cd2 ec8ce0
    500084 68199a 7d30ad 9246c0 a459d0 b56ce0 c57cee d48cfc
    140090 331aa3 4e32b5 6848c6 7f5cd5 956fe3 a980f0 bc90fc
    000094 181aa7 2d32b8 4248c8 545cd6 656fe4 7580f0 8490fc
    001c88 183b9d 2d57b0 4272c2 548ad2 65a0e1 75b5ef 84c8fc
    003064 185080 2d6d98 4288b0 54a0c5 65b7d9 75cceb 84e0fc
    004030 18624e 2d8169 429e82 54b899 65d1ae 75e7c2 84fcd4
    004400 1a661a 328432 48a048 5cba5c 6fd26f 80e880 90fc90
    143c00 355f18 527e2d 6e9c42 87b754 9ed065 b4e775 c8fc84
    303800 505916 6d762b 88923e a0ab4f b7c25f ccd86e e0ec7c
    482c00 694d14 866a26 a28638 bb9f47 d2b656 e8cc63 fce070
""")

PAL_RGB_HEX = _colours("""
    000000 2b2b2b 525252 767676 979797 b6b6b6 d2d2d2 ececec
    000000 2b2b2b 525252 767676 979797 b6b6b6 d2d2d2 ececec
    805800 96711a ab8732 be9c48 cfaf5c dfc06f eed180 fce090
    445c00 5e791a 769332 8cac48 a0c25c b3d76f c4ea80 d4fc90
    703400 89511a a06b32 b68448 c99a5c dcaf6f ecc280 fcd490
    006414 1a8035 329852 48b06e 5cc587 6fd99e 80ebb4 90fcc8
    700014 891a35 a03252 b6486e c95c87 dc6f9e ec80b4 fc90c8
    005c5c 1a7676 328e8e 48a4a4 5cb8b8 6fcbcb 80dcdc 90ecec
    70005c 841a74 963289 a8489e b75cb0 c66fc1 d380d1 e090e0
    003c70 195a89 2f75a0 448eb6 57a5c9 68badc 79ceec 88e0fc
    580070 6e1a89 8332a0 9648b6 a75cc9 b76fdc c680ec d490fc
    002070 193f89 2f5aa0 4474b6 578bc9 68a1dc 79b5ec 88c8fc
    340080 4a1a96 5f32ab 7248be 835ccf 936fdf a280ee b090fc
    000088 1a1a9d 3232b0 4848c2 5c5cd2 6f6fe1 8080ef 9090fc
    000000 2b2b2b 525252 767676 979797 b6b6b6 d2d2d2 ececec
    000000 2b2b2b 525252 767676 979797 b6b6b6 d2d2d2 ececec
""")

FORMATS = ("NTSC", "PAL")


def _gray(colour: int) -> int:
    """ALE's `convertGrayscale` luminance (C `round`: halves away from 0)."""
    r, g, b = (colour >> 16) & 0xFF, (colour >> 8) & 0xFF, colour & 0xFF
    return math.floor(r * 0.2989 + g * 0.5870 + b * 0.1140 + 0.5)


def _packed(colours: tuple[int, ...]) -> np.ndarray:
    """The 256 packed entries: colour, then its gray, for each colour."""
    table = np.zeros(257, np.int64)   # entry 256: what follows the table
    for k, colour in enumerate(colours):
        table[2 * k] = colour
        table[2 * k + 1] = _gray(colour) * 0x010101
    return table


def _rgb_table(packed: np.ndarray) -> np.ndarray:
    entries = packed[:256]
    return np.stack([(entries >> 16) & 0xFF, (entries >> 8) & 0xFF,
                     entries & 0xFF], axis=-1).astype(np.uint8)


_PACKED = {"NTSC": _packed(NTSC_RGB_HEX), "PAL": _packed(PAL_RGB_HEX)}
RGB_TABLES = {name: _rgb_table(p) for name, p in _PACKED.items()}
GRAY_TABLES = {name: (p[1:] & 0xFF).astype(np.uint8)
               for name, p in _PACKED.items()}
RGB = RGB_TABLES["NTSC"]                # uint8[256, 3]
GRAY = GRAY_TABLES["NTSC"]              # uint8[256]


def _check_format(display_format: str) -> None:
    if display_format not in FORMATS:
        raise ValueError(f"display format {display_format!r}: expected one "
                         f"of {FORMATS}")


def to_rgb(screen: jax.Array, display_format: str = "NTSC") -> jax.Array:
    """uint8[..., H, 160] palette indices -> uint8[..., H, 160, 3].

    Args:
        screen: palette indices, as `getScreen` returns them.
        display_format: "NTSC" or "PAL", the console's format.
    """
    _check_format(display_format)
    return jnp.asarray(RGB_TABLES[display_format])[screen]


def to_grayscale(screen: jax.Array,
                 display_format: str = "NTSC") -> jax.Array:
    """uint8[..., H, 160] palette indices -> uint8[..., H, 160] grays.

    Args:
        screen: palette indices, as `getScreen` returns them.
        display_format: "NTSC" or "PAL", the console's format.
    """
    _check_format(display_format)
    return jnp.asarray(GRAY_TABLES[display_format])[screen]
