"""A game's board: the cartridge and display properties that are fixed
for a game, as the frame program takes them (`console.frame`).

A `Board` is data (the cart's arrays, the first displayed line, HMOVE
blanks, the game's height) plus `Features`, static: what a compiled
program carries beyond a plain-ROM console (Superchip RAM, the DPC chip,
screen rows, Cosmic Ark's line ends). Boards of different games stack
into one batch when their features are equal (`widen_board`).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from jaxatari import cart as cartridge
from jaxatari import tia


class Features(NamedTuple):
    """What a compiled program carries beyond a plain-ROM console (static).

    Attributes:
        cart_ram: Superchip RAM (F8SC, F6SC).
        dpc: The DPC chip (Pitfall II).
        rows: Screen buffer rows: the rows the game draws (210, a game's
            own `Display.Height` up to 230, or 250 where PAL may run).
        cosmic_lines: Before each instruction, draw line by line while
            the Cosmic Ark motion is on and the frontier lags by a line end
            or more (`_cosmic_lines`). Games that keep the motion on and
            leave the TIA alone for a whole displayed line need it; it
            costs every instruction a batch-wide check (about 15% on
            Seaquest at batch 16), so only boards that ask for it have it.
    """
    cart_ram: bool = False
    dpc: bool = False
    rows: int = tia.HEIGHT
    cosmic_lines: bool = False


@struct.dataclass
class Board:
    """What is fixed for a game: the cartridge and the display properties.

    `features` is static (pytree structure, not data): boards stack or
    vmap together only when their features are equal (`widen_board`).
    """
    cart: cartridge.CartArrays
    reset_segments: jax.Array   # int32[4]: the cart's banks after a reset
    ystart: jax.Array
    hmove_blanks: jax.Array
    height: jax.Array           # the game's `Display.Height` (210 default)
    features: Features = struct.field(pytree_node=False,
                                      default=Features())


def cart_features(cart: cartridge.Cartridge, height: int = tia.HEIGHT
                  ) -> Features:
    """The features a cartridge needs (rows from its display format and
    the game's `Display.Height`)."""
    pal = cart.display_format == "PAL"
    return Features(cart_ram=cart.has_ram, dpc=cart.dpc,
                    rows=tia.display_rows(pal, height))


def make_board(cart: cartridge.Cartridge, ystart: int,
               hmove_blanks: bool, features: Features | None = None,
               height: int = tia.HEIGHT, cosmic_lines: bool = False
               ) -> Board:
    """The jit-side description of a game's hardware.

    Args:
        cart: the cartridge.
        ystart: the first displayed scanline (`Display.YStart`).
        hmove_blanks: the game's `Emulation.HmoveBlanks`.
        features: what the program carries; default `cart_features`.
        height: the game's `Display.Height` property (210 unless the game
            sets it; not the 250 that a PAL console raises 210 to).
        cosmic_lines: whether the program draws the Cosmic Ark motion line
            by line (`Features.cosmic_lines`).

    Raises:
        ValueError: `features` lack something the cart needs.
    """
    needed = cart_features(cart, height)._replace(cosmic_lines=cosmic_lines)
    features = needed if features is None else features
    if union_features([features, needed]) != features:
        raise ValueError(f"{cart.scheme}/{cart.display_format} cart needs "
                         f"{needed}, got {features}")
    return Board(cart=cartridge.cart_arrays(cart),
                 reset_segments=jnp.asarray(cart.reset_segments, jnp.int32),
                 ystart=jnp.int32(ystart),
                 hmove_blanks=jnp.asarray(hmove_blanks),
                 height=jnp.int32(height), features=features)


def union_features(features: list[Features]) -> Features:
    """The features a program needs to run all of `features`' boards."""
    return Features(cart_ram=any(f.cart_ram for f in features),
                    dpc=any(f.dpc for f in features),
                    rows=max(f.rows for f in features),
                    cosmic_lines=any(f.cosmic_lines for f in features))


def display_format(board: Board) -> str:
    """"PAL" for a board of 250 screen rows, else "NTSC"."""
    return "PAL" if board.features.rows >= tia.PAL_HEIGHT else "NTSC"


def board_for_format(board: Board, pal: bool) -> Board:
    """`board` with the screen rows of the format ALE detected (itself if
    they already fit)."""
    rows = tia.display_rows(pal, int(board.height))
    if board.features.rows == rows:
        return board
    return board.replace(features=board.features._replace(rows=rows))


def widen_board(board: Board, features: Features) -> Board:
    """`board` in a program with (at least its own) `features`, so that
    boards of different games stack into one batch."""
    if union_features([board.features, features]) != features:
        raise ValueError(f"cannot narrow {board.features} to {features}")
    return board.replace(features=features)
