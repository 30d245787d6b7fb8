"""The TIA video chip as ALE's 2007-era Stella emulates it: lazy, exact.

What is emulated
----------------
Stella's TIA does not tick per colour clock. It keeps the registers and a
*render frontier* (`last_update`, in colour clocks since the frame started),
and whenever the CPU touches the TIA it first draws everything from the
frontier up to that clock with the registers as they were (`update`), then
changes the register. This module does the same, with the same rules:

* Only the display window is ever drawn: the `Display.Height` lines (210
  unless the game says otherwise, PAL 250) from the game's YStart. Outside
  it nothing happens at all, not even collisions.
* A write takes effect `POKE_DELAY[register]` clocks late (PF0-2 by 4, 5, 2
  or 3 clocks depending on the position in the line); RESPx that lands in a
  copy of the player first draws 11 clocks ahead.
* Object shapes are "masks" (`jaxatari.tia_objects`) fixed when a
  register changes: each player mask depends on its position, NUSIZ and
  whether RESPx asked to skip the first copy; the playfield mask
  (reflected or not) on CTRLPF. At each line end the
  players' skip flag clears and the playfield takes CTRLPF's reflection (a
  line end is processed lazily: a draw ending exactly at the line end leaves
  it *pending* until the next draw).
* Per pixel the six objects give an `enabled` code; collisions OR
  `COLLISION_TABLE[code]` into the 15 latches, and the colour comes from
  Stella's priority encoder. One Stella quirk is kept: when the playfield is
  the only enabled object, score mode colours it even with priority set.
* VBLANK draws black and records no collisions. HMOVE in cycles 0-20 or 75
  blanks the first 8 pixels of the next drawn line start (unless the game's
  properties turn HMOVE blanks off).
* Frames are double buffered: a new frame draws over the buffer of the frame
  before last, so rows a short frame never reaches show that older frame.
* Drawing is as lazy as Stella's: the frontier moves only when the CPU
  writes the TIA, or reads it. A read needs only the collision latches, so
  `collide` computes them without a draw and the frame's last read is drawn
  to when the frame loop stops (`draw_to_last_read`). A frame cut short by
  the instruction cap thus shows nothing past its last TIA access; its rows
  from the scanline reached on are greyed once (`(colour & 0x0F) >> 1`).
* `TIA::reset` (every `System::reset`) clears the registers and both
  buffers and restarts the frontier at the frame's first clock, so rows then
  hold scanlines from 0, not from YStart; it keeps which buffer is drawn and
  whether the frame was greyed (a cut-short frame goes on after a reset).
* NTSC or PAL is what the console tells the TIA at each reset (`pal`,
  data): a PAL TIA ends the frame at a write past scanline 342 (not 290),
  draws 250 rows (not 210; the buffer's row count is static, so a board
  that may run PAL has 250-row buffers), and has colour loss: after a frame
  of an odd number of scanlines every colour register, and every colour
  written during the next frame, gets bit 0 set (odd palette indices);
  after an even one bit 0 is clear.
* The rows drawn are the game's `Display.Height` from YStart on (210 by
  default; Carnival 214, Pooyan 220, Journey Escape 230), raised from 210
  to 250 on a PAL reset (`display_rows`). Only clocks inside that window
  are drawn, so only there do objects collide, as in Stella.

How it is computed
------------------
The facts as tables (delays, motion, object masks, collision pairs, colour
priority) are built in numpy at import, in `jaxatari.tia_tables`.
A draw from the frontier to a clock covers at most: the rest of the current
line (current masks), then whole lines and a partial last line (line-start
masks). Collisions are computed for those at once, with 160-pixel lines as
five 32-bit words per object (AND, then any). Pixels are only computed when
the frame is rendered (`render=True`); then each covered row is written, and
rows strictly inside a long draw are copied from the first such row when the
frame ends (`finish_frame`). The accelerator's lowering of the console's
frame loop draws without pixels and replays the frame's writes with pixels
afterwards (`jaxatari.tia_log`); the CPU's draws them as the writes come,
only for the lines a row takes, and for a console drawn alone only a
window of `PIXEL_WINDOW` pixels where the draw's span fits in one
(`_span_pixels`).

The Cosmic Ark missile bug (Stella's hack, which Journey Escape's starfield
relies on): HMM0 written as 6 while it holds 7, exactly 21 CPU cycles after
an HMOVE, turns on a motion that at every line end moves M0 left by 18,
33, 0 and 17 clocks in turn, drawing it 2 pixels wide on the line after a
33 and not at all after the 0. HMOVE turns it off; NUSIZ0, RESM0 and RESMP0
give M0 its plain mask until the next line end. While it is on, a draw
across several line ends goes line by line (`line_end_due`, which the
console checks before each instruction), since each line's M0 is its own.

Not emulated: audio.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxatari import folds, lowering, tia_objects, tia_rows, updates
from jaxatari.tia_tables import (
    COLUBK, COLUP0, COLUP1, COLUPF, COSMIC_MASKS, COSMIC_MOTION, CTRLPF,
    CXCLR, ENABL, ENAM0, ENAM1, GRP0, GRP1, HBLANK, HEIGHT, HMBL, HMCLR, HMM0,
    HMM1, HMOVE, HMOVE_BLANK_CYCLES, HMP0, HMP1, LINE, M0_PLAIN,
    MAX_SCANLINES, MOTION, NUSIZ0, NUSIZ1, PAL_HEIGHT, PAL_MAX_SCANLINES, PF,
    PF0, PF1, PF2, PF_DELAY, POKE_DELAY, PRIORITY_TABLE, REFLECT, REFP0,
    REFP1, RESBL, RESM0, RESM1, RESMP0, RESMP1, RESP0, RESP1, SCORE, PRIORITY,
    VBLANK, VDELBL,
    VDELP0, VDELP1, VSYNC, WIDTH, WSYNC, _copies)
from jaxatari.tia_objects import enabled_objects

# --------------------------------------------------------------------------
# State.
# --------------------------------------------------------------------------

_REGISTERS = (
    "vsync vblank nusiz0 nusiz1 colup0 colup1 colupf colubk ctrlpf refp0 "
    "refp1 pf grp0 grp1 dgrp0 dgrp1 enam0 enam1 enabl denabl hmp0 hmp1 hmm0 "
    "hmm1 hmbl vdelp0 vdelp1 vdelbl resmp0 resmp1 collision posp0 posp1 "
    "posm0 posm1 posbl cur_grp0 cur_grp1 skip_p0 skip_p1 pf_reflect "
    "hmove_blank last_hmove dump_enabled dump_disabled_cycle frame_start "
    "last_update to_end vsync_finish buffer frame_greyed row_origin "
    "read_clock pal last_lines height cosmic cosmic_count m0_mask").split()
NO_CLOCK = -(1 << 30)  # `read_clock` when the frame has had no TIA read


@struct.dataclass
class TIAState:
    """Registers, object positions, collision latches, clocks and screen.

    Scalars are int32 (flags 0/1). Clocks are colour clocks since the current
    frame's cycle 0; `last_update` is the render frontier and `read_clock`
    the clock of the frame's last TIA read (`NO_CLOCK` if none). `screen` is
    uint8[2, rows, 160], double buffered: `buffer` is the one being drawn;
    `written` marks its rows drawn this frame. `rows` is static (210, or
    250 for a board that may run PAL); `pal` (data) says whether the TIA
    was last reset as PAL, and `last_lines` is the scanline count of the
    last completed frame (PAL colour loss).
    """
    regs: dict
    screen: jax.Array
    written: jax.Array

    def __getattr__(self, name):
        regs = object.__getattribute__(self, "regs")
        if name in regs:
            return regs[name]
        raise AttributeError(name)

    def set(self, **changes) -> "TIAState":
        return self.replace(regs={**self.regs, **changes})


def display_rows(pal: bool | jax.Array, height: int | jax.Array
                 ) -> int | jax.Array:
    """The rows a TIA draws: the game's `Display.Height`, raised from the
    default 210 to 250 for a console reset as PAL (Stella's Console does
    so once it has detected PAL). A Python int for Python inputs."""
    if isinstance(pal, bool) and not isinstance(height, jax.Array):
        return PAL_HEIGHT if pal and height == HEIGHT else int(height)
    return jnp.where(jnp.asarray(pal) & (jnp.asarray(height) == HEIGHT),
                     PAL_HEIGHT, height)


def power_on(rows: int = HEIGHT, pal: bool | jax.Array = False,
             height: int | jax.Array = HEIGHT) -> TIAState:
    """The TIA after `TIA::reset` (all registers and buffers zero).

    Args:
        rows: the screen buffer's rows (static): at least the rows drawn.
        pal: whether the TIA is reset as PAL (data): 342 scanlines before
            a write ends the frame instead of 290, 250 rows drawn instead
            of 210, and colour loss.
        height: the game's `Display.Height` (data; `display_rows`).
    """
    regs = {name: jnp.int32(0) for name in _REGISTERS}
    regs["to_end"] = jnp.int32(LINE)
    regs["vsync_finish"] = jnp.int32(0x7FFFFFFF)
    regs["read_clock"] = jnp.int32(NO_CLOCK)
    regs["pal"] = jnp.asarray(pal).astype(jnp.int32)
    regs["height"] = jnp.asarray(display_rows(pal, height), jnp.int32)
    return TIAState(regs=regs, screen=jnp.zeros((2, rows, WIDTH), jnp.uint8),
                    written=jnp.zeros((rows,), bool))


def reset(tia: TIAState, pal: bool | jax.Array = False,
          rows: int | None = None,
          height: int | jax.Array = HEIGHT) -> TIAState:
    """`TIA::reset` at system cycle 0: registers and both buffers cleared.

    Like Stella's `frameReset`, the frontier and the row origin are the
    frame's first clock (not the display start); `start_frame` moves them.
    Which buffer is drawn and whether this frame was already greyed are
    kept: a frame cut short before the reset goes on after it. `pal` is
    the console's display format from now on (Stella reads it from the
    console at every reset); a PAL TIA needs a buffer of 250 rows. The
    cleared buffers have `rows` rows (default: as before); `height` is the
    game's `Display.Height`, read again at every reset as Stella does.
    """
    fresh = power_on(tia.screen.shape[-2] if rows is None else rows, pal,
                     height)
    return fresh.set(buffer=tia.buffer, frame_greyed=tia.frame_greyed)


def display_height(tia: TIAState) -> jax.Array:
    """The rows the TIA draws (`display_rows` at the last reset)."""
    return tia.height


# --------------------------------------------------------------------------
# Drawing.
# --------------------------------------------------------------------------


def _line_pixels(tia: TIAState, objects: jax.Array) -> jax.Array:
    """uint8[160] colours of one line drawn with `objects` (no VBLANK)."""
    return _pixels_at(objects, jnp.arange(WIDTH), *_line_colours(tia))


def _line_colours(tia: TIAState) -> tuple[jax.Array, ...]:
    """What a line's pixels take besides the objects: the priority mode,
    whether the playfield alone is on in score mode, the four colours
    (background, playfield, P0, P1) and the priority table."""
    mode = (tia.ctrlpf & 0x06) << 5
    only_pf = (enabled_objects(tia) == PF) & ((tia.ctrlpf & 0x02) != 0)
    colours = jnp.stack([tia.colubk, tia.colupf, tia.colup0, tia.colup1])
    return mode, only_pf, colours, jnp.asarray(PRIORITY_TABLE)


def _pixels_at(objects: jax.Array, x: jax.Array, mode: jax.Array,
               only_pf: jax.Array, colours: jax.Array,
               table: jax.Array) -> jax.Array:
    """uint8 colours of a line's pixels `x` (int32[N], each in [0, 160))
    drawn with `objects` (`_line_colours` gives the other arguments)."""
    if PLANES:
        return _planes_pixels(objects, x, mode, only_pf, colours)
    bits = (objects[:, x >> 5] >> (x & 31).astype(jnp.uint32)) & 1
    code = jnp.sum(bits.astype(jnp.int32) << jnp.arange(6)[:, None], axis=0)
    half = (x >= 80).astype(jnp.int32)
    slot = table[half, code | mode]
    slot = jnp.where(only_pf & ((code & PF) != 0), 2 + half, slot)
    return colours[slot].astype(jnp.uint8)


PLANES = True
"""Whether `_pixels_at` resolves colours word by word (`_colour_planes`:
two bits a pixel) rather than from six object bits a pixel and
`PRIORITY_TABLE` (the same bits, `tests/test_tia_planes.py`)."""


def _left_half() -> jax.Array:
    """uint32[5]: the bits of a 160-pixel mask that cover pixels 0 to 79
    (built from an iota, not a constant: `_windowed_pixels` may run under
    a batched cond, which would batch a constant it closes over)."""
    word = jnp.arange(5)
    return jnp.where(word < 2, jnp.uint32(0xFFFFFFFF), jnp.where(
        word == 2, jnp.uint32(0xFFFF), jnp.uint32(0)))


def _colour_planes(objects: jax.Array, mode: jax.Array,
                   only_pf: jax.Array) -> tuple[jax.Array, jax.Array]:
    """`PRIORITY_TABLE` word by word: uint32[5] masks of the pixels whose
    colour slot (0 BK, 1 PF, 2 P0, 3 P1) has bit 1 set, and of those with
    bit 0 set, for a line drawn with `objects` (`_line_colours`' `mode`
    and `only_pf`)."""
    p0, m0, p1, m1, bl, pf = (objects[i] for i in range(6))
    first, second, field = p0 | m0, p1 | m1, bl | pf
    left = _left_half()
    ones = jnp.uint32(0xFFFFFFFF)
    score = jnp.where((mode & SCORE) != 0, ones, jnp.uint32(0))
    scored = pf & score
    # PRIORITY: the playfield and ball, then P0 and M0, then P1 and M1.
    high_prio = ~field & (first | second)
    low_prio = field | (~first & second)
    # No PRIORITY: P0/M0, then P1/M1 (P0's colour over a scored left
    # half), then the playfield (scored: P0's left, P1's right), the ball.
    high = first | second | scored
    low = ~first & ((second & ~(scored & left)) | (~second & (
        (scored & ~left) | (pf & ~score) | (~pf & bl))))
    prio = (mode & PRIORITY) != 0
    high = jnp.where(prio, high_prio, high)
    low = jnp.where(prio, low_prio, low)
    # Stella's quirk: the playfield alone in score mode is scored.
    quirk = jnp.where(only_pf, pf, jnp.uint32(0))
    return high | quirk, (low & ~quirk) | (quirk & ~left)


def _planes_pixels(objects: jax.Array, x: jax.Array, mode: jax.Array,
                   only_pf: jax.Array, colours: jax.Array) -> jax.Array:
    """`_pixels_at` from `_colour_planes`: two bits a pixel, not six and
    a table. An `x` of 160 pixels is the whole line in order (every
    caller's `jnp.arange(WIDTH)`), read word by word without a gather."""
    high, low = _colour_planes(objects, mode, only_pf)
    if x.shape[0] == WIDTH:   # the whole line: each word's 32 bits
        shifts = jnp.arange(32, dtype=jnp.uint32)
        bit = lambda w: ((w[:, None] >> shifts) & 1).reshape(WIDTH)
    else:
        bit = lambda w: (w[x >> 5] >> (x & 31).astype(jnp.uint32)) & 1
    slot = (bit(high) << 1) | bit(low)
    return colours[slot.astype(jnp.int32)].astype(jnp.uint8)


PIXEL_WINDOW = 32
"""The pixels `_span_pixels` computes, in the CPU's lowering, for a draw of
at most as many (two thirds of the pixel-drawing draws of a Pong frame in
play; half are within 16)."""


def _span_pixels(tia: TIAState, objects: jax.Array, x0: jax.Array,
                 x1: jax.Array) -> jax.Array:
    """uint8[160]: a line drawn with `objects`, right on pixels [x0, x1)
    (0 <= x0 < x1 <= 160) and any value elsewhere (the rows a draw writes
    are masked to its span).

    In the CPU's lowering a console's span of up to `PIXEL_WINDOW` pixels
    computes only a window of that many around it (a branch; under vmap,
    where a branch would become both, the whole line). The accelerator's
    lowering computes the whole line."""
    if not lowering.batch_conds():
        return _line_pixels(tia, objects)
    return _windowed_pixels(objects, x0, x1, *_line_colours(tia))


@jax.custom_batching.custom_vmap
def _windowed_pixels(objects: jax.Array, x0: jax.Array, x1: jax.Array,
                     *colours: jax.Array) -> jax.Array:
    """`_span_pixels` in the CPU's lowering; `colours` are
    `_line_colours`' (arguments, not constants of the function, since a
    batched cond around it batches them all)."""
    def window(_):
        start = jnp.clip(x0, 0, WIDTH - PIXEL_WINDOW)
        part = _pixels_at(objects, start + jnp.arange(PIXEL_WINDOW),
                          *colours)
        return jax.lax.dynamic_update_slice(
            jnp.zeros((WIDTH,), jnp.uint8), part, (start,))

    def line(_):
        return _pixels_at(objects, jnp.arange(WIDTH), *colours)
    return jax.lax.cond(x1 - x0 <= PIXEL_WINDOW, window, line, None)


@_windowed_pixels.def_vmap
def _windowed_pixels_batched(axis_size: int, in_batched, objects, x0, x1,
                             *colours):
    """A batch computes each console's whole line (`_span_pixels`)."""
    objects, *colours = updates.broadcast(
        axis_size, (in_batched[0],) + tuple(in_batched[3:]),
        (objects, *colours))
    return jax.vmap(lambda o, *c: _pixels_at(o, jnp.arange(WIDTH), *c))(
        objects, *colours), True


def _segment(tia: TIAState, start, end):
    """Stella's per-line bookkeeping for line clocks [start, end).

    Returns the first and last pixel drawn, whether the HMOVE blank applies
    to this segment, and whether it ends the blank.
    """
    drawn_from = jnp.where(start < HBLANK, jnp.minimum(HBLANK, end), start)
    blank = (tia.hmove_blank != 0) & (drawn_from < HBLANK + 8)
    clears = blank & (end >= HBLANK + 8)
    return drawn_from - HBLANK, end - HBLANK, blank, clears


def fixed(render: bool | jax.Array) -> bool:
    """Whether `render` is a Python bool, fixed while tracing (no
    conditional for it at all)."""
    return isinstance(render, (bool, np.bool_))


def draws_at_once(render: bool | jax.Array) -> bool:
    """Whether the CPU's lowering draws a frame's TIA writes for a whole
    batch at once, masked (a frame fixed as not rendered: a draw without
    pixels is cheap), rather than for the writing consoles one by one
    (`tia_gather._draws_one_by_one`)."""
    return lowering.batch_conds() and fixed(render) and not render


def when_render(render: bool | jax.Array, pixels, nothing, operand):
    """`pixels(operand)` if `render`, else `nothing(operand)`.

    A Python bool chooses while tracing. A traced flag is a `lax.cond` in
    the CPU's lowering, and both computed and selected in the
    accelerator's (`lowering`: no conditional in the instruction loop).
    """
    if fixed(render):
        return pixels(operand) if render else nothing(operand)
    if lowering.batch_conds():
        return jax.lax.cond(render, pixels, nothing, operand)
    return jax.tree.map(lambda a, b: jnp.where(render, a, b),
                        pixels(operand), nothing(operand))


def _write_own_rows(tia: TIAState, writes: tia_rows.RowWrites,
                    render: bool | jax.Array) -> TIAState:
    """`tia_rows.put_rows` on this console's own screen, if `render` (rows that
    are not rendered are out of range, `draw`, so the accelerator's
    lowering writes them unconditionally: nothing lands)."""
    if not (lowering.batch_conds() or fixed(render)):
        render = True
    screen, written = when_render(
        render, lambda sw: tia_rows.put_rows(*sw, writes), lambda sw: sw,
        (tia.screen, tia.written))
    return tia.replace(screen=screen, written=written)


def _line_start_masks(tia: TIAState) -> TIAState:
    """What Stella redoes at each line end: players lose the skip flag, the
    playfield takes CTRLPF's reflection."""
    return tia.set(skip_p0=jnp.int32(0), skip_p1=jnp.int32(0),
                   pf_reflect=tia.ctrlpf & 1)


def _cosmic_motion(tia: TIAState) -> TIAState:
    """The Cosmic Ark motion at a line end, if on: M0 moves and takes its
    mask for the next line. Done as the draw reaches the line end, so a
    write at that very clock (HMOVE turns the motion off) comes after."""
    count = (tia.cosmic_count + 1) & 3
    on = tia.cosmic != 0
    return tia.set(
        cosmic_count=jnp.where(on, count, tia.cosmic_count),
        posm0=jnp.where(on, _wrap(tia.posm0 - jnp.asarray(COSMIC_MOTION)[
            count]), tia.posm0),
        m0_mask=jnp.where(on, jnp.asarray(COSMIC_MASKS)[count], tia.m0_mask))


def _next_line_end(tia: TIAState) -> jax.Array:
    """The clock of the next line end after the frontier."""
    return tia.last_update + jnp.where(tia.to_end == 0, LINE, tia.to_end)


def line_end_due(tia: TIAState, clock: jax.Array,
                 ystart: jax.Array) -> jax.Array:
    """Whether the Cosmic Ark motion is on and a line end of the display
    lies between the frontier and `clock` (`draw_line_end` should come
    first: M0 moves there)."""
    start = tia.frame_start + LINE * ystart
    stop = start + LINE * display_height(tia)
    return (tia.cosmic != 0) & (tia.last_update >= start) & (
        _next_line_end(tia) < jnp.minimum(clock, stop))


def draw_line_end(tia: TIAState, ystart: jax.Array,
                  render: bool | jax.Array,
                  enabled: bool | jax.Array = True) -> TIAState:
    """Draw to the next line end (where the Cosmic Ark motion moves M0)."""
    return update(tia, _next_line_end(tia), ystart, render, enabled)


def _draw_by_lines(tia: TIAState, clock: jax.Array, ystart: jax.Array,
                   render: bool | jax.Array, line_ends: bool) -> TIAState:
    """`update` to `clock`, line end by line end while the Cosmic Ark
    motion is on (no step for a console without it), if `line_ends`."""
    if line_ends:
        tia = jax.lax.while_loop(
            lambda t: line_end_due(t, clock, ystart),
            lambda t: draw_line_end(t, ystart, render), tia)
    return update(tia, clock, ystart, render)


def update(tia: TIAState, clock: jax.Array, ystart: jax.Array,
           render: bool | jax.Array,
           enabled: bool | jax.Array = True) -> TIAState:
    """Draw from the frontier up to `clock` (Stella's `updateFrame`).

    A draw across several line ends draws the lines after the first with
    the same objects (rows strictly inside are filled in by
    `finish_frame`); with the Cosmic Ark motion on, each line's M0 is its
    own, so the console first brings the frontier to within a line of the
    instruction (`line_end_due`, `draw_line_end`).

    Args:
        tia: the TIA state.
        clock: the colour clock to draw up to.
        ystart: the first displayed scanline.
        render: whether to compute pixels (collisions are always computed).
            Must be the same for the whole batch (`when_render`).
        enabled: if false, nothing changes (a masked console in a batch).

    Returns:
        The TIA state drawn up to `clock`.
    """
    drawn, writes = draw(tia, clock, ystart, render, enabled)
    return _write_own_rows(drawn, writes, render)


def draw(tia: TIAState, clock: jax.Array, ystart: jax.Array,
         render: bool | jax.Array, enabled: bool | jax.Array = True,
         rows: int | None = None) -> tuple[TIAState, tia_rows.RowWrites]:
    """`update` without touching the screen: the registers drawn up to
    `clock`, and the rows to write (`tia_rows`). `rows` is the screen
    buffer's row count (default: `tia.screen`'s, which is otherwise
    unused, so a batch can draw a gathered part of its consoles).

    Each line's pixels are computed only if a row takes some
    (`lowering.skipped_unless`): in the CPU's lowering, a console drawn
    alone (`tia_gather.write_one_by_one`) skips them; most draws lie
    within a line, many within its horizontal blank."""
    start = tia.frame_start + LINE * ystart
    stop = start + LINE * display_height(tia)
    target = jnp.minimum(clock, stop)
    active = enabled & (clock >= start) & (tia.last_update < stop) & (
        tia.last_update < target)
    pending = active & (tia.to_end == 0)
    tia = jax.tree.map(lambda a, b: jnp.where(pending, a, b),
                       _line_start_masks(tia).set(to_end=jnp.int32(LINE)), tia)
    total = target - tia.last_update
    first_len = jnp.minimum(total, tia.to_end)
    line_pos = LINE - tia.to_end
    rest = total - first_len
    crosses = rest > 0
    full_lines = jnp.maximum(rest - 1, 0) // LINE
    last_len = rest - LINE * full_lines
    nxt = _cosmic_motion(_line_start_masks(tia))
    a0, a1, blank_a, clears_a = _segment(tia, line_pos, line_pos + first_len)
    blank_after_a = (tia.hmove_blank != 0) & ~clears_a
    b_end = jnp.where(full_lines > 0, LINE, last_len)
    b0, b1, blank_b, clears_b = _segment(
        tia.set(hmove_blank=blank_after_a.astype(jnp.int32)), 0, b_end)
    b0 = jnp.where(crosses, b0, 0)
    b1 = jnp.where(crosses, b1, 0)
    tail = jnp.where(full_lines > 0, WIDTH, jnp.maximum(last_len - HBLANK, 0))
    visible = (tia.vblank & 0x02) == 0
    if draws_at_once(render):   # word by word, along the batch
        objects, span = tia_objects.masks_by_word, tia_objects.span_words
        collisions = tia_objects.collisions_by_word
    else:
        objects, span = tia_objects.masks, tia_objects.span
        collisions = tia_objects.collisions
    now = objects(tia, tia.skip_p0, tia.skip_p1, tia.pf_reflect)
    later = objects(nxt, nxt.skip_p0, nxt.skip_p1, nxt.pf_reflect)
    hits = collisions(now, span(jnp.maximum(a0, 0), jnp.maximum(a1, 0)))
    hits = hits | jnp.where(crosses, collisions(later, span(0, tail)), 0)
    hits = jnp.where(visible, hits, 0)
    hmove_blank = jnp.where(crosses, blank_after_a & ~clears_b,
                            blank_after_a)

    if rows is None:   # no screen: a draw without pixels (any count)
        rows = HEIGHT if tia.screen is None else tia.screen.shape[-2]
    origin_row = (tia.last_update - tia.row_origin) // LINE
    last_px = jnp.clip(last_len - HBLANK, 0, WIDTH)
    # The line after the first is drawn only if a row takes some of it: a
    # draw that crosses a line end only into the next line's horizontal
    # blank (the first write after a WSYNC) takes none.
    line_b_drawn = crosses & ((b1 > b0) | (full_lines >= 2) | (
        (full_lines >= 1) & (last_px > 0)))

    def pixels(_):
        black = jnp.zeros((WIDTH,), jnp.uint8)
        line_a = jnp.where(visible, lowering.skipped_unless(
            active & (a1 > a0), lambda _: _span_pixels(tia, now, a0, a1),
            black), black)
        line_b = jnp.where(visible, lowering.skipped_unless(
            active & line_b_drawn, lambda _: _line_pixels(nxt, later),
            black), black)
        last_row = origin_row + 1 + full_lines
        writes = [tia_rows.row_write(rows, r, pixels, x0, x1, blank, on)
                  for r, pixels, x0, x1, blank, on in (
                      (origin_row, line_a, a0, a1, blank_a, active),
                      (origin_row + 1, line_b, b0, b1, blank_b,
                       active & crosses),
                      (origin_row + 2, line_b, 0, WIDTH, False,
                       active & crosses & (full_lines >= 2)),
                      (last_row, line_b, 0, last_px, False,
                       active & crosses & (full_lines >= 1)))]
        return tuple(jnp.stack(part) for part in zip(*writes))

    def nothing(_):
        return (jnp.full((4,), rows, jnp.int32),
                jnp.zeros((4, WIDTH), jnp.uint8),
                jnp.zeros((4, WIDTH), bool))

    row, row_pixels, mask = when_render(render, pixels, nothing, None)
    writes = tia_rows.RowWrites(buffer=tia.buffer, row=row,
                                pixels=row_pixels, mask=mask)
    new_to_end = jnp.where(crosses, LINE - last_len, tia.to_end - first_len)
    base = {k: jnp.where(crosses, nxt.regs[k], tia.regs[k]) for k in tia.regs}
    drawn = TIAState(regs=base, screen=tia.screen, written=tia.written).set(
        collision=tia.collision | hits, hmove_blank=hmove_blank.astype(
            jnp.int32), last_update=target, to_end=new_to_end)
    moved = _cosmic_motion(drawn)   # reached a line end: its motion now
    drawn = drawn.set(**{k: jnp.where(new_to_end == 0, moved.regs[k],
                                      drawn.regs[k])
                         for k in ("cosmic_count", "posm0", "m0_mask")})
    regs = jax.tree.map(lambda a, b: jnp.where(active, a, b), drawn.regs,
                        tia.regs)
    return tia.replace(regs=regs), writes


# --------------------------------------------------------------------------
# Register writes, reads and the frame.
# --------------------------------------------------------------------------


def _c_div(a: jax.Array, b: int) -> jax.Array:
    """C integer division (truncates towards zero)."""
    q = jnp.abs(a) // b
    return jnp.where(a < 0, -q, q)


def _current_graphics(t: dict) -> dict:
    """Recompute the drawn GRPx from the (delayed) registers and REFPx."""
    for p in "01":
        grp = jnp.where(t[f"vdelp{p}"] != 0, t[f"dgrp{p}"], t[f"grp{p}"])
        t[f"cur_grp{p}"] = jnp.where(t[f"refp{p}"] != 0,
                                     jnp.asarray(REFLECT)[grp], grp)
    return t


def _wrap(pos: jax.Array) -> jax.Array:
    return jnp.where(pos >= WIDTH, pos - WIDTH, jnp.where(pos < 0, pos + WIDTH,
                                                          pos))


def _reset_player(t: dict, p: str, hpos: jax.Array) -> tuple[dict, jax.Array]:
    """RESPx: new position, skip flag, and whether to draw 11 clocks ahead."""
    newx = jnp.where(hpos < HBLANK, 3, ((hpos - HBLANK) + 5) % WIDTH)
    oldx, mode = t[f"posp{p}"], t[f"nusiz{p}"] & 7
    offsets = jnp.asarray(_RESET_OFFSETS)[mode]
    sizes = jnp.asarray(_RESET_SIZES)[mode]
    rel = (newx - oldx) % WIDTH
    in_delay = folds.any_along((rel >= offsets) & (rel < offsets + 4) &
                               (offsets >= 0))
    in_copy = folds.any_along((rel >= offsets + 4) &
                              (rel < offsets + 4 + sizes) & (offsets >= 0))
    when = jnp.where(in_copy, 1, jnp.where(in_delay, -1, 0))
    t[f"posp{p}"] = newx
    t[f"skip_p{p}"] = jnp.where(when == -1, 0, 1)
    return t, when == 1


_RESET_OFFSETS = np.full((8, 3), -1000, np.int32)
_RESET_SIZES = np.full((8,), 8, np.int32)
for _mode in range(8):
    _offs = _copies(_mode)[0]
    _RESET_OFFSETS[_mode, :len(_offs)] = _offs
_RESET_SIZES[5], _RESET_SIZES[7] = 16, 32


def _reset_object(hpos, since_hmove, hacks):
    """RESMx/RESBL position, with Stella's per-game HMOVE-distance hacks."""
    pos = jnp.where(hpos < HBLANK, 2, ((hpos - HBLANK) + 4) % WIDTH)
    for clocks, hposes, value in hacks:
        hit = (since_hmove == clocks) & folds.any_along(
            hpos == jnp.asarray(hposes))
        pos = jnp.where(hit, value, pos)
    return pos


def _apply(t: dict, reg, value, clock, allow_hmove_blanks,
           moved_players: dict) -> dict:
    """The register change of a TIA write (after drawing up to it).

    `moved_players` holds RESP0/RESP1's new position and skip flag, computed
    once by `write` (it also needs them to decide on drawing ahead).
    """
    hpos = (clock - t["frame_start"]) % LINE
    since_hmove = clock - t["last_hmove"]
    new = dict(t)
    set_ = lambda name, v, cond: new.__setitem__(
        name, jnp.where(cond, v, new[name]))
    is_ = lambda r: reg == r
    for r, name in ((VSYNC, "vsync"), (NUSIZ0, "nusiz0"), (NUSIZ1, "nusiz1"),
                    (CTRLPF, "ctrlpf"), (VDELP0, "vdelp0"), (VDELP1, "vdelp1"),
                    (VDELBL, "vdelbl")):
        set_(name, value if r in (VSYNC, NUSIZ0, NUSIZ1, CTRLPF)
             else value & 1, is_(r))
    loss = t["pal"] & t["last_lines"] & 1   # PAL colour loss
    for r, name in ((COLUP0, "colup0"), (COLUP1, "colup1"),
                    (COLUPF, "colupf"), (COLUBK, "colubk")):
        set_(name, (value & 0xFE) | loss, is_(r))
    cosmic = is_(HMM0) & (since_hmove == 21 * 3) & (t["hmm0"] == 7) & (
        (value >> 4) == 6)
    set_("cosmic", 1, cosmic)
    set_("cosmic_count", 0, cosmic)
    set_("m0_mask", M0_PLAIN, is_(NUSIZ0) | is_(RESM0) | (
        is_(RESMP0) & (t["resmp0"] != 0) & ((value & 2) == 0)))
    for r, name in ((HMP0, "hmp0"), (HMP1, "hmp1"), (HMM0, "hmm0"),
                    (HMM1, "hmm1"), (HMBL, "hmbl")):
        set_(name, value >> 4, is_(r))
        set_(name, 0, is_(HMCLR))
    set_("vsync_finish", clock + LINE, is_(VSYNC) & ((value & 2) != 0))
    set_("vsync_finish", 0x7FFFFFFF, is_(VSYNC) & ((value & 2) == 0) &
         (clock >= t["vsync_finish"]))
    # VBLANK and the paddle dump transistors.
    set_("dump_enabled", 1, is_(VBLANK) & ((t["vblank"] & 0x80) == 0) &
         ((value & 0x80) != 0))
    releases = is_(VBLANK) & ((t["vblank"] & 0x80) != 0) & ((value & 0x80) == 0)
    set_("dump_enabled", 0, releases)
    set_("dump_disabled_cycle", _c_div(clock, 3), releases)
    set_("vblank", value, is_(VBLANK))
    set_("skip_p0", 0, is_(NUSIZ0))
    set_("skip_p1", 0, is_(NUSIZ1))
    set_("pf_reflect", value & 1, is_(CTRLPF) & (hpos < HBLANK + 79))
    # Playfield.
    set_("pf", (t["pf"] & 0xFFFF0) | ((value >> 4) & 0x0F), is_(PF0))
    set_("pf", (t["pf"] & 0xFF00F) | (value << 4), is_(PF1))
    set_("pf", (t["pf"] & 0x00FFF) | (value << 12), is_(PF2))
    # Reflection flips the drawn graphics in place.
    for p, r in (("0", REFP0), ("1", REFP1)):
        flip = is_(r) & (((value & 0x08) != 0) != (t[f"refp{p}"] != 0))
        set_(f"cur_grp{p}", jnp.asarray(REFLECT)[t[f"cur_grp{p}"]], flip)
        set_(f"refp{p}", (value >> 3) & 1, is_(r))
    # Graphics and their vertical delay registers.
    set_("grp0", value, is_(GRP0))
    set_("dgrp1", t["grp1"], is_(GRP0))
    set_("grp1", value, is_(GRP1))
    set_("dgrp0", t["grp0"], is_(GRP1))
    set_("denabl", t["enabl"], is_(GRP1))
    set_("enam0", (value >> 1) & 1, is_(ENAM0))
    set_("enam1", (value >> 1) & 1, is_(ENAM1))
    set_("enabl", (value >> 1) & 1, is_(ENABL))
    regraph = is_(GRP0) | is_(GRP1) | is_(VDELP0) | is_(VDELP1)
    graphics = _current_graphics(dict(new))
    for p in "01":
        set_(f"cur_grp{p}", graphics[f"cur_grp{p}"], regraph)
    # Missiles locked to players.
    for p, r in (("0", RESMP0), ("1", RESMP1)):
        mode = t[f"nusiz{p}"] & 7
        middle = jnp.where(mode == 5, 8, jnp.where(mode == 7, 16, 4))
        unlock = is_(r) & (t[f"resmp{p}"] != 0) & ((value & 2) == 0)
        set_(f"posm{p}", (t[f"posp{p}"] + middle) % WIDTH, unlock)
        set_(f"resmp{p}", (value >> 1) & 1, is_(r))
    # Position resets.
    for p, r in (("0", RESP0), ("1", RESP1)):
        set_(f"posp{p}", moved_players[f"posp{p}"], is_(r))
        set_(f"skip_p{p}", moved_players[f"skip_p{p}"], is_(r))
    set_("posm0", _reset_object(hpos, since_hmove, [(60, [69], 8)]),
         is_(RESM0))
    set_("posm1", _reset_object(hpos, since_hmove, [(9, [18], 3)]),
         is_(RESM1))
    set_("posbl", _reset_object(hpos, since_hmove, [
        (54, [60, 69], 10), (9, [18], 3), (21, [30], 6), (18, [27], 5)]),
        is_(RESBL))
    # HMOVE.
    cycle = hpos // 3
    hm = is_(HMOVE)
    set_("hmove_blank", 1, hm & allow_hmove_blanks &
         jnp.asarray(HMOVE_BLANK_CYCLES)[cycle])
    for pos, motion in (("posp0", "hmp0"), ("posp1", "hmp1"),
                        ("posm0", "hmm0"), ("posm1", "hmm1"),
                        ("posbl", "hmbl")):
        set_(pos, _wrap(t[pos] + jnp.asarray(MOTION)[cycle, t[motion]]), hm)
    set_("skip_p0", 0, hm)
    set_("skip_p1", 0, hm)
    set_("last_hmove", clock, hm)
    set_("cosmic", 0, hm)
    set_("m0_mask", M0_PLAIN, hm)
    set_("collision", 0, is_(CXCLR))
    return new


def write(tia: TIAState, address: jax.Array, value: jax.Array,
          cycle: jax.Array, last_access_was_read: jax.Array,
          ystart: jax.Array, allow_hmove_blanks: jax.Array,
          render: bool | jax.Array, enabled: bool | jax.Array = True
          ) -> tuple[TIAState, jax.Array, jax.Array]:
    """A CPU write to the TIA (Stella's `TIA::poke`).

    `write_registers`, then its rows written to the screen.
    """
    tia_after, wait, ends, writes = write_registers(
        tia, address, value, cycle, last_access_was_read, ystart,
        allow_hmove_blanks, render, enabled)
    return _write_own_rows(tia_after, writes, render), wait, ends


def write_registers(tia: TIAState, address: jax.Array, value: jax.Array,
                    cycle: jax.Array, last_access_was_read: jax.Array,
                    ystart: jax.Array, allow_hmove_blanks: jax.Array,
                    render: bool | jax.Array, enabled: bool | jax.Array = True,
                    rows: int | None = None
                    ) -> tuple[TIAState, jax.Array, jax.Array,
                                 tia_rows.RowWrites]:
    """A CPU write to the TIA, the screen left alone (see `draw`).

    Args:
        tia: the TIA state.
        address: the CPU address (the register is `address & 0x3F`).
        value: the byte written.
        cycle: the CPU cycle of the write (since the frame's cycle 0).
        last_access_was_read: whether the CPU's previous access was a read
            (WSYNC only halts the CPU then).
        ystart: the game's first displayed scanline.
        allow_hmove_blanks: the game's HMOVE-blank property.
        render: whether pixels are computed this frame.
        enabled: if false, nothing changes (a masked console in a batch).
        rows: the screen buffer's rows (default: `tia.screen`'s).

    Returns:
        The new state (its screen untouched), the CPU cycles WSYNC adds,
        whether this write ends the frame (VSYNC off, or past the
        290-scanline limit, 342 on PAL), and the rows its draw writes.
    """
    reg = address & 0x3F
    clock = cycle * 3
    tia, writes, moved_players = _draw_before_write(
        tia, reg, cycle, ystart, render, enabled, rows)
    too_long = clock >= frame_limit_clock(tia)
    vsync_end = (reg == VSYNC) & ((value & 2) == 0) & (
        clock >= tia.vsync_finish)
    applied = _apply(dict(tia.regs), reg, value, clock, allow_hmove_blanks,
                     moved_players)
    tia = tia.replace(regs={k: jnp.where(enabled, applied[k], tia.regs[k])
                            for k in tia.regs})
    wait = wsync_wait(tia.frame_start, reg, cycle, last_access_was_read,
                      enabled)
    return tia, wait, enabled & (too_long | vsync_end), writes


def rows_of_write(tia: TIAState, address: jax.Array, cycle: jax.Array,
                  ystart: jax.Array, enabled: bool | jax.Array = True,
                  rows: int | None = None) -> tia_rows.RowWrites:
    """The screen rows a CPU write to the TIA draws before it changes a
    register (`write_registers`' rows, with pixels), and nothing else:
    what a rendered frame needs of the write besides its registers."""
    return _draw_before_write(tia, address & 0x3F, cycle, ystart, True,
                              enabled, rows)[1]


def _draw_before_write(tia: TIAState, reg: jax.Array, cycle: jax.Array,
                       ystart: jax.Array, render: bool | jax.Array,
                       enabled: bool | jax.Array, rows: int | None):
    """The draw up to where a write of register `reg` at `cycle` takes
    effect (`POKE_DELAY`; a RESPx inside a copy of its player 11 clocks
    ahead): the state drawn, its rows, and the players' positions and
    skip flags a RESPx would set."""
    clock = cycle * 3
    x = (clock - tia.frame_start) % LINE
    delay = jnp.asarray(POKE_DELAY)[reg]
    delay = jnp.where(delay < 0, jnp.asarray(PF_DELAY)[(x // 3) & 3], delay)
    ahead = jnp.zeros((), bool)
    moved_players = {}
    for p, r in (("0", RESP0), ("1", RESP1)):
        moved, early = _reset_player(dict(tia.regs), p, x)
        moved_players.update({k: moved[k] for k in (f"posp{p}", f"skip_p{p}")})
        ahead = ahead | ((reg == r) & early)
    drawn, writes = draw(tia, jnp.where(ahead, clock + 11, clock + delay),
                         ystart, render, enabled, rows)
    return drawn, writes, moved_players


def wsync_wait(frame_start: jax.Array, reg: jax.Array, cycle: jax.Array,
               last_access_was_read: jax.Array,
               enabled: bool | jax.Array = True) -> jax.Array:
    """The CPU cycles a write of TIA register `reg` at `cycle` stalls the
    CPU: a WSYNC after a read halts it to the end of its scanline (76
    cycles a line, counted from the frame's `frame_start` clock)."""
    line_cycle = (cycle - _c_div(frame_start, 3)) % 76
    return jnp.where(enabled & (reg == WSYNC) & last_access_was_read
                     & (line_cycle > 0), 76 - line_cycle, 0)


def frame_limit_clock(tia: TIAState) -> jax.Array:
    """The first clock at which any TIA write ends the frame: past the
    290-scanline limit (342 on PAL) of the frame that starts at
    `frame_start`."""
    limit = jnp.where(tia.pal != 0, PAL_MAX_SCANLINES, MAX_SCANLINES)
    return tia.frame_start + (limit + 1) * LINE


def read(tia: TIAState, address: jax.Array, cycle: jax.Array,
         data_bus: jax.Array, inputs: dict) -> jax.Array:
    """A CPU read of the TIA (Stella's `TIA::peek`), drawn up to `cycle`.

    Args:
        tia: the TIA state, already drawn up to this cycle.
        address: the CPU address (the register is `address & 0x0F`).
        cycle: the CPU cycle of the read.
        data_bus: the last byte on the data bus (its low 6 bits are noise).
        inputs: `fire` int32[2] (1 = pressed, left/right INPT4/5) and
            `paddle_needed` int32[4]: for INPT0-3, the cycles after the dump
            is released before the capacitor reads high; -1 for "always high"
            (minimum resistance), -2 for "never" (no paddle).

    Returns:
        The byte read.
    """
    reg = address & 0x0F
    noise = data_bus & 0x3F
    c = tia.collision
    bit = lambda k: (c >> k) & 1
    cx = jnp.stack([bit(0) << 7 | bit(1) << 6, bit(2) << 7 | bit(3) << 6,
                    bit(4) << 7 | bit(5) << 6, bit(6) << 7 | bit(7) << 6,
                    bit(8) << 7 | bit(9) << 6, bit(10) << 7 | bit(11) << 6,
                    bit(12) << 7, bit(13) << 7 | bit(14) << 6])
    needed = inputs["paddle_needed"][reg & 3]
    threshold = tia.dump_disabled_cycle + needed
    charged = (threshold >= 0) & (cycle > threshold)  # uint32 compare
    paddle = jnp.where(needed == -1, True, jnp.where(
        (needed == -2) | (tia.dump_enabled != 0), False, charged))
    fire = inputs["fire"][reg & 1] == 0
    high = jnp.where(reg < 8, 0, jnp.where(reg < 12, paddle, jnp.where(
        reg < 14, fire, False)))
    return jnp.where(reg < 8, cx[reg & 7], 0) | (high.astype(jnp.int32) << 7) \
        | noise


def collide(tia: TIAState, clock: jax.Array, ystart: jax.Array) -> TIAState:
    """The collision latches as a draw up to `clock` leaves them; no draw.

    What a TIA read at `clock` must see. The frontier does not move: the
    latches only accumulate, so the draw the next write makes from the
    frontier sets the same bits again.
    """
    return tia.set(collision=draw(tia, clock, ystart, False)[0].collision)


def note_read(tia: TIAState, clock: jax.Array, on: jax.Array) -> TIAState:
    """Remember a TIA read at `clock` (if `on`) for `draw_to_last_read`."""
    return tia.set(read_clock=jnp.where(on, clock, tia.read_clock))


def draw_to_last_read(tia: TIAState, ystart: jax.Array,
                      render: bool | jax.Array,
                      line_ends: bool = True) -> TIAState:
    """Draw up to the frame's last TIA read, as Stella's `peek` did then.

    Registers only change at writes, which draw first, so drawing this late
    gives the same pixels; it matters only for a frame cut short, whose
    screen shows what was drawn by its last TIA access and no more.
    `line_ends`: whether the draw stops at each line end while the Cosmic
    Ark motion is on (a board's `cosmic_lines`, as the frame loop's own
    line ends; without it the loop is not traced, nor compiled).
    """
    return _draw_by_lines(tia, tia.read_clock, ystart, render, line_ends)


def start_frame(tia: TIAState, cycles: jax.Array, ystart: jax.Array,
                render: bool | jax.Array) -> TIAState:
    """Stella's `startFrame`: swap buffers, rebase clocks to the new frame.

    On PAL (colour loss) the four colour registers get bit 0 set when the
    last completed frame had an odd number of scanlines, cleared otherwise.

    Args:
        tia: the TIA state.
        cycles: the CPU cycle count that becomes the new cycle 0.
        ystart: the first displayed scanline.
        render: whether the new frame computes pixels.
    """
    clocks = (cycles * 3 - tia.frame_start) % LINE
    shift = cycles * 3
    frame_start = -clocks
    start = frame_start + LINE * ystart
    odd = tia.last_lines & 1
    colours = {name: jnp.where(tia.pal != 0, (tia.regs[name] & 0xFE) | odd,
                               tia.regs[name])
               for name in ("colup0", "colup1", "colupf", "colubk")}
    return TIAState(regs={
        **tia.regs, **colours, "frame_start": frame_start,
        "last_update": start,
        "row_origin": start, "to_end": jnp.int32(LINE),
        "vsync_finish": tia.vsync_finish - shift,
        "last_hmove": tia.last_hmove - shift,
        "dump_disabled_cycle": tia.dump_disabled_cycle - cycles,
        "buffer": 1 - tia.buffer, "frame_greyed": jnp.int32(0),
        "read_clock": jnp.int32(NO_CLOCK)},
        screen=tia.screen, written=jnp.zeros_like(tia.written))


def finish_frame(tia: TIAState, cycles: jax.Array, ystart: jax.Array,
                 partial: jax.Array) -> TIAState:
    """After a frame: fill rows inside long draws; grey a partial frame.

    Rows that a single draw spanned beyond its first two rows were not
    written; they equal the row above. A frame cut short by the instruction
    cap greys the rows not yet reached (`(colour & 0x0F) >> 1`), once: the
    flag stays set while the frame is cut short and clears when it ends.
    A frame that ended records its scanline count (`last_lines`).
    """
    buf = tia.buffer
    rows = jnp.arange(tia.screen.shape[-2])
    drawn_to = (tia.last_update - tia.row_origin) // LINE
    source = jax.lax.cummax(jnp.where(tia.written, rows, -1))
    fill = (~tia.written) & (rows < drawn_to) & (source >= 0)
    current = tia.screen[buf]
    current = jnp.where(fill[:, None], current[jnp.maximum(source, 0)],
                        current)
    scanline = (cycles * 3 - tia.frame_start) // LINE
    first = jnp.maximum(scanline, ystart) - ystart
    grey = partial & (tia.frame_greyed == 0) & (rows >= first) & (
        rows < tia.height)
    current = jnp.where(grey[:, None], (current & 0x0F) >> 1, current)
    last_lines = jnp.where(partial, tia.last_lines, scanline)
    return TIAState(regs={**tia.regs, "frame_greyed": partial.astype(
        jnp.int32), "last_lines": last_lines},
        screen=tia.screen.at[buf].set(current),
        written=tia.written | fill)
