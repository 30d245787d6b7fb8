"""Atari 2600 cartridges as data: ROM image, bank state and hotspot tables.

The 6507 has 13 address lines, so the cartridge owns the 4 KiB window where
A12 is set ($1000-$1FFF and its mirrors such as $F000-$FFFF). Bank-switched
carts show a bigger ROM image through that window; which part they show is
the bank state.

Model. The window is cut into four 1 KiB segments. The bank state is
``segments: int32[4]``, the byte offset into the ROM image that each segment
shows, so a read of cart address ``a`` returns::

    image[segments[(a >> 10) & 3] + (a & 0x3FF)]

Bank switching is a table lookup. For each of the 4096 window offsets,
``hotspot_mask`` has bit k set when an access (read or write) to that offset
moves segment k, and ``hotspot_offsets`` gives the new offsets. Every scheme
here is one `Cartridge` record of arrays, and one jnp function,
`access`, serves them all, so carts of different schemes can even be vmapped
together.

Schemes (ALE's Stella: ``src/ale/emucore/Cart*.cxx`` at v0.12.1):

* ``2K``: 2 KiB mirrored twice: segments (0, 1K, 0, 1K). No hotspots.
* ``4K``: segments (0, 1K, 2K, 3K). No hotspots.
* ``F8``: two 4 KiB banks. An access to $xFF8 / $xFF9 selects bank 0 / 1.
  Bank 1 after reset.
* ``F6``: four 4 KiB banks, selected by $xFF6-$xFF9. Bank 0 after reset.
* ``E0`` (Parker Brothers): eight 1 KiB slices. $xFE0-$xFE7, $xFE8-$xFEF and
  $xFF0-$xFF7 put slice ``a & 7`` in segment 0, 1 and 2; segment 3 always
  shows slice 7. Slices 4, 5, 6 after reset.
* ``FE`` (Activision, the old Stella model ALE keeps): no state. The cart
  sees the full 16-bit address and shows image[4K:8K] when bit 13 is clear
  ($Dxxx) and image[0:4K] when it is set ($Fxxx). Written here as segments
  (0, 1K, 2K, 3K) plus ``bit13_offset = 4096``, added when bit 13 is clear.

In all of them the switch happens before the byte is read: a read of a
hotspot returns the byte of the new bank. Writes switch exactly like reads.

Carts with more than ROM keep that extra state in `CartChips`, whose
structure is static: a part is None unless the program is built for it
(`make_chips`), so games without such carts compile none of its logic.

* ``F8SC`` / ``F6SC`` (Superchip): F8 / F6 banking plus 128 bytes of RAM
  (`CartChips.ram`). Writes to offsets $000-$07F store into RAM byte
  ``a & $7F``; reads of $080-$0FF return RAM byte ``a & $7F``. A read of
  the write port returns the ROM byte under it and changes nothing; a write
  to the read port does nothing. Stella's constructor leaves the RAM unset
  and every ``System::reset`` refills it with 128 draws of the system
  generator, after the RIOT's timer draw (`system_rng.reset_inputs`). Bank 1
  (F8SC) / 0 (F6SC) after reset.
* ``DPC`` (Pitfall II): F8 banking of the 8 KiB program ROM, bank 1 after
  reset, plus the DPC chip at offsets $000-$07F (`dpc.py`); its 2 KiB
  display ROM follows the program in the image (``image[8192:10240]``).

`detect_scheme` is Stella's ``Cartridge::autodetectType`` (plus the few md5s
that force a type); it names schemes this module cannot run (``F4SC``,
``E7``, ...), and `load_cartridge` refuses those with
`UnsupportedCartridgeError`.

Display format. ALE detects PAL by emulation (`environment.load_rom` does
the same). The screen buffer's height must be known before a program is
compiled, so `Cartridge.display_format` gives the format Stella detects for
the ale-py ROMs (`PAL_MD5S`); `load_rom` checks it.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import os
import pathlib
import re
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxatari import dpc as dpc_chip
from jaxatari import updates

IMAGE_SIZE = 16384  # images are zero-padded to the largest supported ROM
WINDOW = 4096
SEGMENT = 1024
SUPPORTED_SCHEMES = ("2K", "4K", "F8", "F6", "E0", "FE", "F8SC", "F6SC",
                     "DPC")
RAM_SIZE = 128  # Superchip RAM
_BANKING = {"F8SC": "F8", "F6SC": "F6", "DPC": "F8"}  # hotspots as these

# ale-py ROMs that Stella's autodetection (Console.cxx) finds to be PAL, by
# md5 (found with ale-py 0.12.1's log); every other ale-py ROM is NTSC.
PAL_MD5S = {
    "4b27f5397c442d25f0c418ccdacf1926": "adventure",
    "35be55426c1fec32dfb503b4f0651572": "air_raid",
    "0ef64cdbecccb7049752a3de0b7ade14": "combat",
    "6c1f3f2e359dbf55df462ccbcdd2f6bf": "keystone_kapers",
    "0dd4c69b5f9a7ae96a7a08329496779a": "king_kong",
    "eed9eaf1a0b6a2b9bc4c8032cb43e3fb": "klax",
    "8e4cd60d93fcde8065c1a2b972a26377": "laser_gates",
    "aa7bb54d2c189a31bb1fa20099e42859": "mr_do",
    "fc2233fc116faef0d3c31541717ca2db": "pacman",
    "dd0cbe5351551a538414fb9e37fc56e8": "sir_lancelot",
    "b702641d698c60bcdc922dbd8c9dd49c": "space_war",
}

# md5s whose type Stella does not auto-detect. None of them is an ale-py ROM.
# The two "F8 swapped" ones are special-cased in Cartridge::create; the others
# have a Cartridge.Type in DefProps.hxx (the only three of 2676 entries).
_FORCED_SCHEMES = {
    "bc24440b59092559a1ec26055fd1270e": "F8 swapped",
    "75ee371ccfc4f43e7d9b8f24e1266b55": "F8 swapped",
    "52a0003efb3b1c49fcde4dbc2c685d8f": "2K",
    "5bcc83677d68f7ef74c1b4a0697ba2a8": "4K",
    "6dda84fb8e442ecf34241ac0d1d91d69": "F6SC",
}


class NotARomError(ValueError):
    """A file that is not an Atari 2600 ROM image (by its size)."""

    def __init__(self, path: str, size: int):
        self.size = size
        super().__init__(
            f"{path} is not an Atari 2600 ROM image: it has {size:,} bytes, "
            "and 2600 images have 2,048, 4,096, 8,192, 10,240/10,495 (DPC), "
            "12,288, 16,384, 32,768, 65,536 or 131,072 bytes, or a multiple "
            "of 8,448 (Supercharger). Pass the raw .bin/.a26 dump.")


class UnsupportedCartridgeError(ValueError):
    """A ROM whose bank-switching scheme this emulator does not implement.

    Attributes:
      scheme: The scheme `detect_scheme` found, e.g. ``"F8SC"``.
      game: The ROM id or file name that was loaded.
    """

    def __init__(self, scheme: str, game: str):
        self.scheme = scheme
        self.game = game
        super().__init__(
            f"{game}: cartridge scheme {scheme!r} is not supported; "
            f"supported schemes: {', '.join(SUPPORTED_SCHEMES)}. Play this "
            "ROM with ale-py, or add the scheme to jaxatari/cart.py (its "
            "tables, and its extra state in CartChips).")


@dataclasses.dataclass(frozen=True)
class Cartridge:
    """A loaded cartridge: its ROM image and bank-switching tables.

    Attributes:
      scheme: One of `SUPPORTED_SCHEMES`.
      md5: md5 hex digest of the ROM file as loaded.
      image: uint8[IMAGE_SIZE], the ROM image zero-padded.
      reset_segments: int32[4], the segment offsets after ``System::reset``.
      hotspot_mask: int32[4096]; bit k set: an access to that window offset
        moves segment k.
      hotspot_offsets: int32[4096, 4], the new offsets of the moved segments
        (other entries are unused and zero).
      bit13_offset: Added to the image offset when address bit 13 is clear;
        4096 for FE, else 0.
      has_ram: Whether the cart has Superchip RAM (F8SC, F6SC).
      dpc: Whether the cart has the DPC chip.
      display_format: "NTSC" or "PAL": what Stella detects (`PAL_MD5S`).
    """
    scheme: str
    md5: str
    image: np.ndarray
    reset_segments: np.ndarray
    hotspot_mask: np.ndarray
    hotspot_offsets: np.ndarray
    bit13_offset: int
    has_ram: bool = False
    dpc: bool = False
    display_format: str = "NTSC"


class CartArrays(NamedTuple):
    """The jit-side view of a `Cartridge` (a pytree of jnp arrays)."""
    image: jax.Array            # uint8[IMAGE_SIZE]
    hotspot_mask: jax.Array     # int32[4096]
    hotspot_offsets: jax.Array  # int32[4096, 4]
    bit13_offset: jax.Array     # int32 scalar
    has_ram: jax.Array          # bool: Superchip RAM ports are live
    dpc: jax.Array              # bool: the DPC chip is live


@struct.dataclass
class CartChips:
    """A cart's state beyond its banks; parts not built for are None.

    Attributes:
        ram: uint8[128] Superchip RAM, or None.
        dpc: The DPC chip (`dpc.DPCState`), or None.
        dpc_touched: bool, with `dpc`: whether a speculative access (see
            `read`) reached chip data; False between instructions.
    """
    ram: jax.Array | None = None
    dpc: dpc_chip.DPCState | None = None
    dpc_touched: jax.Array | None = None


# --------------------------------------------------------------------------
# ROM files

def _roms_module():
    from ale_py import roms  # imported lazily: only loading needs ale-py
    return roms


def rom_path(game: str) -> pathlib.Path:
    """Returns the path of an ale-py ROM.

    Args:
      game: An ale-py ROM id such as ``"breakout"``; CamelCase
        (``"MontezumaRevenge"``) is accepted too.

    Returns:
      The path of the ``.bin`` file in ale-py's ROM directory.

    Raises:
      ValueError: ``game`` is not an ale-py ROM id; the message lists close
        matches.
    """
    roms = _roms_module()
    ids = roms.get_all_rom_ids()
    name = game.strip()
    if name not in ids:
        name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
        name = name.replace("-", "_").replace(" ", "_")
    if name not in ids:
        close = difflib.get_close_matches(name, ids, n=5, cutoff=0.5)
        hint = (f"; did you mean {', '.join(close)}?" if close else
                f"; {len(ids)} ids, see ale_py.roms.get_all_rom_ids()")
        raise ValueError(f"unknown ale-py ROM id {game!r}{hint}")
    path = roms.get_rom_path(name)
    if path is None:  # the id is listed but its file is missing
        raise ValueError(f"ale-py has no ROM file for {game!r}")
    return pathlib.Path(path)


# --------------------------------------------------------------------------
# Scheme detection (Stella's Cartridge::autodetectType)

def _has_signature(image: bytes, signature: bytes, min_hits: int = 1) -> bool:
    """Stella's ``searchForBytes``, quirks included.

    The scan stops one position short (a signature that ends on the last
    byte is not found), and after a match it resumes ``len + 1`` bytes
    later, so back-to-back copies count once.
    """
    end = len(image) - 1  # find(..., end): a match must end before this
    start, hits = 0, 0
    while hits < min_hits:
        i = image.find(signature, start, end)
        if i < 0:
            return False
        hits += 1
        start = i + len(signature) + 1
    return True


def _any_signature(image: bytes, signatures: tuple[str, ...]) -> bool:
    return any(_has_signature(image, bytes.fromhex(s)) for s in signatures)


def _is_superchip(image: bytes) -> bool:
    # The first 256 bytes of every 4 KiB bank (the RAM window) are constant.
    return all(len(set(image[b:b + 256])) == 1
               for b in range(0, len(image) - len(image) % WINDOW, WINDOW))


def _is_e0(image: bytes) -> bool:
    return _any_signature(image, ("8de01f", "8de05f", "8de9ff", "ade9ff",
                                  "adedff", "adf3bf"))


def _is_3e(image: bytes) -> bool:
    return _has_signature(image, bytes.fromhex("853ea900"))  # STA $3E; LDA #0


def _is_3f(image: bytes) -> bool:
    return _has_signature(image, bytes.fromhex("853f"), min_hits=2)


def _is_ua(image: bytes) -> bool:
    return _has_signature(image, bytes.fromhex("8d4002"))  # STA $240


def _is_cv(image: bytes) -> bool:
    return _any_signature(image, ("9dfff3", "9900f4"))


def _is_fe(image: bytes) -> bool:
    return _any_signature(image, ("2000d0c6c5", "20c3f8a582", "d0fb2073fe",
                                  "2000f084d6"))


def _is_e7(image: bytes) -> bool:
    # $3800-$39FF constant (RAM), and something differs in the 32 bytes on
    # either side of it.
    first = image[0x3800]
    if any(b != first for b in image[0x3800:0x3A00]):
        return False
    around = image[0x3800 - 32:0x3800] + image[0x3A00:0x3A00 + 32]
    return any(b != first for b in around)


def _by_signature(image: bytes, default: str) -> str:
    if _is_3e(image):
        return "3E"
    if _is_3f(image):
        return "3F"
    return default


def detect_scheme(image: bytes) -> str:
    """Names the bank-switching scheme of a ROM image as ALE's Stella does.

    Args:
      image: The ROM file's bytes.

    Returns:
      A Stella type name: ``"2K"``, ``"4K"``, ``"F8"``, ``"F6"``, ``"E0"``,
      ``"FE"``, ``"F8SC"``, ``"F6SC"``, ``"F4"``, ``"F4SC"``, ``"E7"``,
      ``"3E"``, ``"3F"``, ``"UA"``, ``"CV"``, ``"DPC"``, ``"AR"``,
      ``"FASC"``, ``"MB"``, ``"MC"`` or ``"F8 swapped"``; or
      ``"unrecognized"`` for a size Stella cannot place.
    """
    image = bytes(image)
    size = len(image)
    forced = _FORCED_SCHEMES.get(hashlib.md5(image).hexdigest())
    if forced is not None:
        return forced
    if size and size % 8448 == 0:
        return "AR"
    if size == 2048 or (size == 4096 and image[:2048] == image[2048:]):
        return "CV" if _is_cv(image) else "2K"
    if size == 4096:
        return "CV" if _is_cv(image) else "4K"
    if size == 8192:
        if _is_superchip(image):
            return "F8SC"
        if image[:4096] == image[4096:]:
            return "4K"
        for test, name in ((_is_e0, "E0"), (_is_3e, "3E"), (_is_3f, "3F"),
                           (_is_ua, "UA"), (_is_fe, "FE")):
            if test(image):
                return name
        return "F8"
    if size in (10240, 10495, 10496):
        return "DPC"
    if size == 12288:
        return "FASC"
    if size == 16384:
        if _is_superchip(image):
            return "F6SC"
        if _is_e7(image):
            return "E7"
        return _by_signature(image, "F6")
    if size == 32768:
        return "F4SC" if _is_superchip(image) else _by_signature(image, "F4")
    if size == 65536:
        return _by_signature(image, "MB")
    if size == 131072:
        return _by_signature(image, "MC")
    return _by_signature(image, "unrecognized")


# --------------------------------------------------------------------------
# Tables

def _bank_offsets(bank: int) -> list[int]:
    return [bank * WINDOW + k * SEGMENT for k in range(4)]


def _tables(scheme: str) -> tuple[list[int], np.ndarray, np.ndarray, int]:
    """Returns (reset segments, hotspot mask, hotspot offsets, bit13 add)."""
    mask = np.zeros(WINDOW, np.int32)
    offsets = np.zeros((WINDOW, 4), np.int32)
    scheme = _BANKING.get(scheme, scheme)
    if scheme == "2K":
        return [0, SEGMENT, 0, SEGMENT], mask, offsets, 0
    if scheme in ("4K", "FE"):
        bit13 = WINDOW if scheme == "FE" else 0
        return _bank_offsets(0), mask, offsets, bit13
    if scheme in ("F8", "F6"):
        first = 0xFF8 if scheme == "F8" else 0xFF6
        for bank in range(4 if scheme == "F6" else 2):
            mask[first + bank] = 0b1111
            offsets[first + bank] = _bank_offsets(bank)
        return _bank_offsets(1 if scheme == "F8" else 0), mask, offsets, 0
    if scheme == "E0":
        for segment in range(3):
            for slice_ in range(8):
                address = 0xFE0 + 8 * segment + slice_
                mask[address] = 1 << segment
                offsets[address, segment] = slice_ * SEGMENT
        reset = [slice_ * SEGMENT for slice_ in (4, 5, 6, 7)]
        return reset, mask, offsets, 0
    raise ValueError(f"no tables for scheme {scheme!r}")


_SCHEME_SIZE = {"2K": 2048, "4K": 4096, "F8": 8192, "E0": 8192, "FE": 8192,
                "F6": 16384, "F8SC": 8192, "F6SC": 16384,
                "DPC": dpc_chip.DISPLAY_OFFSET + dpc_chip.DISPLAY_SIZE}


def load_cartridge(game_or_path: str | os.PathLike) -> Cartridge:
    """Loads a ROM and builds its bank-switching tables.

    Args:
      game_or_path: An ale-py ROM id (``"breakout"``) or a path to a ROM
        file. A string naming an existing file, or ending in ``.bin``/``.a26``,
        is taken as a path.

    Returns:
      The `Cartridge`.

    Raises:
      NotARomError: The file's size is no 2600 image size.
      UnsupportedCartridgeError: The ROM's scheme is not in
        `SUPPORTED_SCHEMES`.
      ValueError: Unknown ROM id.
    """
    text = os.fspath(game_or_path)
    is_path = (not isinstance(game_or_path, str) or os.path.isfile(text)
               or text.lower().endswith((".bin", ".a26")))
    path = pathlib.Path(text) if is_path else rom_path(text)
    game = path.stem if is_path else text
    data = path.read_bytes()
    scheme = detect_scheme(data)
    if scheme == "unrecognized" or not data:
        raise NotARomError(str(path), len(data))
    if scheme not in SUPPORTED_SCHEMES:
        raise UnsupportedCartridgeError(scheme, game)
    # Stella's cart classes copy the first N bytes of the file (an 8K image
    # detected as 4K, or a 4K one detected as 2K, keeps its first half; DPC
    # keeps 8K of program and 2K of display ROM, not the 255 bytes after).
    rom = np.frombuffer(data, np.uint8)[:_SCHEME_SIZE[scheme]]
    image = np.zeros(IMAGE_SIZE, np.uint8)
    image[:rom.size] = rom
    reset, mask, offsets, bit13 = _tables(scheme)
    reset = np.array(reset, np.int32)
    for a in (image, reset, mask, offsets):
        a.setflags(write=False)
    md5 = hashlib.md5(data).hexdigest()
    return Cartridge(scheme=scheme, md5=md5, image=image,
                     reset_segments=reset,
                     hotspot_mask=mask, hotspot_offsets=offsets,
                     bit13_offset=bit13, has_ram=scheme.endswith("SC"),
                     dpc=scheme == "DPC",
                     display_format="PAL" if md5 in PAL_MD5S else "NTSC")


def cart_arrays(cart: Cartridge) -> CartArrays:
    """Moves a cartridge's tables to the device as a `CartArrays` pytree."""
    return CartArrays(image=jnp.asarray(cart.image, jnp.uint8),
                      hotspot_mask=jnp.asarray(cart.hotspot_mask, jnp.int32),
                      hotspot_offsets=jnp.asarray(cart.hotspot_offsets,
                                                  jnp.int32),
                      bit13_offset=jnp.asarray(cart.bit13_offset, jnp.int32),
                      has_ram=jnp.asarray(cart.has_ram),
                      dpc=jnp.asarray(cart.dpc))


def make_chips(ram: bool, with_dpc: bool) -> CartChips:
    """The power-on extra state of a program built for Superchip RAM
    and/or the DPC chip (the RAM is unset until the first reset fills it).
    """
    return CartChips(
        ram=jnp.zeros((RAM_SIZE,), jnp.uint8) if ram else None,
        dpc=dpc_chip.power_on() if with_dpc else None,
        dpc_touched=jnp.asarray(False) if with_dpc else None)


def reset_chips(chips: CartChips, ram: jax.Array | None) -> CartChips:
    """The cart's part of ``System::reset``: Superchip RAM gets `ram` (the
    reset's 128 generator draws); the DPC restarts its music clock."""
    if chips.ram is not None:
        if ram is None:
            raise TypeError("a program with Superchip RAM needs the reset's "
                            "RAM draws: pass system_rng.reset_inputs(...)")
        chips = chips.replace(ram=jnp.asarray(ram, jnp.uint8))
    if chips.dpc is not None:
        chips = chips.replace(dpc=dpc_chip.reset(chips.dpc))
    return chips


# --------------------------------------------------------------------------
# The jit side

def access(arrays: CartArrays, segments: jax.Array, address: jax.Array,
           enabled: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One bus access (read or write) to the cartridge.

    Pure jnp; vmap over any of the arguments.

    Args:
      arrays: The cartridge, from `cart_arrays`.
      segments: int32[4], the bank state.
      address: The full 16-bit CPU address (FE looks at bit 13).
      enabled: bool; False makes the access a no-op on the bank state (for
        masked-out accesses of a branch-free CPU).

    Returns:
      ``(byte, new_segments)``: the uint8 the cart drives, read through the
      mapping *after* any switch (as Stella's ``peek`` returns it), and the
      new bank state. Hotspots act only when ``enabled`` and A12 is set; for
      A12 clear the byte is meaningless (the bus takes it from TIA/RIOT).
    """
    address = jnp.asarray(address, jnp.int32)
    offset = address & 0xFFF
    hit = jnp.logical_and(enabled, (address & 0x1000) != 0)
    bits = (arrays.hotspot_mask[offset] >> jnp.arange(4, dtype=jnp.int32)) & 1
    moved = jnp.logical_and(bits != 0, hit)
    new_segments = jnp.where(moved, arrays.hotspot_offsets[offset],
                             jnp.asarray(segments, jnp.int32))
    base = new_segments[offset >> 10]
    extra = jnp.where((address & 0x2000) == 0, arrays.bit13_offset, 0)
    byte = arrays.image[base + (offset & 0x3FF) + extra]
    return byte, new_segments


def read(arrays: CartArrays, segments: jax.Array, chips: CartChips,
         address: jax.Array, cycle: jax.Array, enabled: jax.Array,
         speculate: bool = False
         ) -> tuple[jax.Array, jax.Array, CartChips]:
    """A CPU read of the cartridge: banks, Superchip RAM and DPC chip.

    Args:
      arrays: The cartridge, from `cart_arrays`.
      segments: int32[4], the bank state.
      chips: The extra state; its None parts are not compiled in.
      address: The full 16-bit CPU address.
      cycle: The CPU cycle of the access (the DPC's music clock).
      enabled: bool; False leaves all state unchanged.
      speculate: static; True does only the DPC chip's cheap part and sets
        `chips.dpc_touched` if the read needed the chip's data (the byte
        is then wrong and the access must be redone exactly).

    Returns:
      ``(byte, segments, chips)``: the int32 byte the cart drives (see
      `access`) and the new state.
    """
    byte, segments = access(arrays, segments, address, enabled)
    byte = byte.astype(jnp.int32)
    offset = jnp.asarray(address, jnp.int32) & 0xFFF
    hit = enabled & ((address & 0x1000) != 0)
    if chips.ram is not None:
        port = hit & arrays.has_ram & ((offset & 0xF80) == 0x080)
        byte = jnp.where(port, chips.ram[offset & 0x7F].astype(jnp.int32),
                         byte)
    if chips.dpc is not None and speculate:
        touched, state = dpc_chip.note_read(chips.dpc, offset,
                                            hit & arrays.dpc)
        chips = chips.replace(dpc=state,
                              dpc_touched=chips.dpc_touched | touched)
    elif chips.dpc is not None:
        driven, value, state = dpc_chip.read(chips.dpc, arrays.image, offset,
                                             cycle, hit & arrays.dpc)
        byte = jnp.where(driven, value, byte)
        chips = chips.replace(dpc=state)
    return byte, segments, chips


def write(arrays: CartArrays, segments: jax.Array, chips: CartChips,
          address: jax.Array, value: jax.Array, enabled: jax.Array,
          speculate: bool = False) -> tuple[jax.Array, CartChips]:
    """A CPU write to the cartridge: hotspots, Superchip RAM, DPC chip.

    `speculate` as for `read`: a write to a DPC register is only noted.

    Returns:
      ``(segments, chips)``, the new state (unchanged unless `enabled` and
      A12 is set).
    """
    _, segments = access(arrays, segments, address, enabled)
    offset = jnp.asarray(address, jnp.int32) & 0xFFF
    hit = enabled & ((address & 0x1000) != 0)
    if chips.ram is not None:
        port = hit & arrays.has_ram & ((offset & 0xF80) == 0)
        old = chips.ram[offset & 0x7F]
        chips = chips.replace(ram=updates.set_item(
            chips.ram, offset & 0x7F, jnp.where(port, value, old)))
    if chips.dpc is not None and speculate:
        touched, state = dpc_chip.note_write(chips.dpc, offset,
                                             hit & arrays.dpc)
        chips = chips.replace(dpc=state,
                              dpc_touched=chips.dpc_touched | touched)
    elif chips.dpc is not None:
        chips = chips.replace(dpc=dpc_chip.write(
            chips.dpc, offset, value, hit & arrays.dpc))
    return segments, chips


def opcode_byte(arrays: CartArrays, segments: jax.Array, chips: CartChips,
                address: jax.Array) -> jax.Array:
    """The byte at a cart address, read without side effects (for looking
    at the next opcode; Superchip RAM included, DPC chip data not)."""
    address = jnp.asarray(address, jnp.int32)
    offset = address & 0xFFF
    extra = jnp.where((address & 0x2000) == 0, arrays.bit13_offset, 0)
    byte = arrays.image[segments[offset >> 10] + (offset & 0x3FF) + extra]
    byte = byte.astype(jnp.int32)
    if chips.ram is not None:
        port = arrays.has_ram & ((offset & 0xF80) == 0x080)
        byte = jnp.where(port, chips.ram[offset & 0x7F].astype(jnp.int32),
                         byte)
    return byte
