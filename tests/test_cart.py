"""Cartridges: scheme detection, bank switching, reset state, errors.

Oracles: the Atari-57 table in shared/reference/atari57-carts.md (hardcoded
below), ALE itself (the cart class named in its serialized state, and tiny
hand-assembled ROMs whose RAM and cart state after ``loadROM`` show what the
banks held), and a plain-Python model of each scheme written from Stella's
``Cart*.cxx``. Superchip RAM is checked here too (its RNG draws against
ALE's); the DPC chip has its own tests in tests/console/test_dpc.py.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import struct

import ale_py
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import cart as cartlib

# game: (size, scheme, md5), from atari57-carts.md
ATARI57 = {
    "alien": (4096, "4K", "f1a0a23e6464d954e3a9579c4ccd01c8"),
    "amidar": (4096, "4K", "acb7750b4d0c4bd34969802a7deb2990"),
    "assault": (4096, "4K", "de78b3a064d374390ac0710f95edde92"),
    "asterix": (8192, "F8", "89a68746eff7f266bbf08de2483abe55"),
    "asteroids": (8192, "F8", "ccbd36746ed4525821a8083b0d6d2c2c"),
    "atlantis": (4096, "4K", "9ad36e699ef6f45d9eb6c4cf90475c9f"),
    "bank_heist": (4096, "4K", "00ce0bdd43aed84a983bef38fe7f5ee3"),
    "battle_zone": (8192, "F8", "41f252a66c6301f1e8ab3612c19bc5d4"),
    "beam_rider": (8192, "F8", "79ab4123a83dc11d468fb2108ea09e2e"),
    "berzerk": (4096, "4K", "136f75c4dd02c29283752b7e5799f978"),
    "bowling": (2048, "2K", "c9b7afad3bfd922e006a6bfc1d4f3fe7"),
    "boxing": (2048, "2K", "c3ef5c4653212088eda54dc91d787870"),
    "breakout": (2048, "2K", "f34f08e5eb96e500e851a80be3277a56"),
    "centipede": (8192, "F8", "91c2098e88a6b13f977af8c003e0bca5"),
    "chopper_command": (4096, "4K", "c1cb228470a87beb5f36e90ac745da26"),
    "crazy_climber": (8192, "F8", "55ef7b65066428367844342ed59f956c"),
    "defender": (4096, "4K", "0f643c34e40e3f1daafd9c524d3ffe64"),
    "demon_attack": (4096, "4K", "f0e0addc07971561ab80d9abe1b8d333"),
    "double_dunk": (16384, "F6", "368d88a6c071caba60b4f778615aae94"),
    "enduro": (4096, "4K", "94b92a882f6dbaa6993a46e2dcc58402"),
    "fishing_derby": (2048, "2K", "b8865f05676e64f3bec72b9defdacfa7"),
    "freeway": (2048, "2K", "8e0ab801b1705a740b476b7f588c6d16"),
    "frostbite": (4096, "4K", "4ca73eb959299471788f0b685c3ba0b5"),
    "gopher": (4096, "4K", "c16c79aad6272baffb8aae9a7fff0864"),
    "gravitar": (8192, "F8", "8ac18076d01a6b63acf6e2cab4968940"),
    "hero": (8192, "F8", "fca4a5be1251927027f2c24774a02160"),
    "ice_hockey": (4096, "4K", "a4c08c4994eb9d24fb78be1793e82e26"),
    "jamesbond": (8192, "E0", "e51030251e440cffaab1ac63438b44ae"),
    "kangaroo": (8192, "F8", "4326edb70ff20d0ee5ba58fa5cb09d60"),
    "krull": (8192, "F8", "4baada22435320d185c95b7dd2bcdb24"),
    "kung_fu_master": (8192, "F8", "5b92a93b23523ff16e2789b820e2a4c5"),
    "montezuma_revenge": (8192, "E0", "3347a6dd59049b15a38394aa2dafa585"),
    "ms_pacman": (8192, "F8", "87e79cd41ce136fd4f72cc6e2c161bee"),
    "name_this_game": (4096, "4K", "36306070f0c90a72461551a7a4f3a209"),
    "phoenix": (8192, "F8", "7e52a95074a66640fcfde124fffd491a"),
    "pitfall": (4096, "4K", "3e90cf23106f2e08b2781e41299de556"),
    "pong": (2048, "2K", "60e0ea3cbe0913d39803477945e9e5ec"),
    "private_eye": (8192, "F8", "ef3a4f64b6494ba770862768caf04b86"),
    "qbert": (4096, "4K", "484b0076816a104875e00467d431c2d2"),
    "riverraid": (4096, "4K", "393948436d1f4cc3192410bb918f9724"),
    "road_runner": (16384, "F6", "ce5cc62608be2cd3ed8abd844efb8919"),
    "robotank": (8192, "FE", "4f618c2429138e0280969193ed6c107e"),
    "seaquest": (4096, "4K", "240bfbac5163af4df5ae713985386f92"),
    "skiing": (2048, "2K", "b76fbadc8ffb1f83e2ca08b6fb4d6c9f"),
    "solaris": (16384, "F6", "e72eb8d4410152bdcb69e7fba327b420"),
    "space_invaders": (4096, "4K", "72ffbef6504b75e69ee1045af9075f66"),
    "star_gunner": (4096, "4K", "a3c1c70024d7aabb41381adbfb6d3b25"),
    "surround": (2048, "2K", "4d7517ae69f95cfbc053be01312b7dba"),
    "tennis": (2048, "2K", "42cdd6a9e42a3639e190722b8ea3fc51"),
    "time_pilot": (8192, "F8", "fc2104dd2dadf9a6176c1c1c8f87ced9"),
    "tutankham": (8192, "E0", "085322bae40d904f53bdcc56df0593fc"),
    "up_n_down": (8192, "F8", "a499d720e7ee35c62424de882a3351b6"),
    "venture": (4096, "4K", "3e899eba0ca8cd2972da1ae5479b4f0d"),
    "video_pinball": (4096, "4K", "107cc025334211e6d29da0b6be46aec7"),
    "wizard_of_wor": (4096, "4K", "7e8aa18bc9502eb57daaf5e7c1e94da7"),
    "yars_revenge": (4096, "4K", "c5930d0e8cdae3e037349bfa08e871be"),
    "zaxxon": (8192, "F8", "eea0da9b987d661264cce69a7c13c3bd"),
}
# ROMs that ale-py ships but ALE 0.12.1 refuses to load (no RomSettings; ALE
# calls exit(1)), so only our own detection speaks for them.
ALE_REFUSES = {"combat": "2K", "joust": "F8", "maze_craze": "4K",
               "warlords": "4K"}
# One real ROM per scheme, for the random-access comparison.
SAMPLES = {"2K": "breakout", "4K": "pitfall", "F8": "ms_pacman",
           "F6": "road_runner", "E0": "montezuma_revenge", "FE": "robotank",
           "F8SC": "elevator_action", "F6SC": "klax", "DPC": "pitfall2"}

ALE = ale_py.ALEInterface
ALE.setLoggerMode(ale_py.LoggerMode.Error)


@functools.cache
def _rom(game: str) -> bytes:
    return cartlib.rom_path(game).read_bytes()


def _ale_load(path) -> ale_py.ALEInterface:
    ale = ALE()
    ale.setInt("random_seed", 0)
    ale.loadROM(str(path))
    return ale


def _ale_cart(ale: ale_py.ALEInterface, num_ints: int) -> tuple[str, list]:
    """The cart class name in ALE's serialized state and the ints after it.

    Stella strings are a 4-byte length and the bytes; the cart writes its
    name, then F8/F6: the bank; E0: 4 and the four slices; 2K/4K/FE: nothing.
    """
    data = ale.cloneState().serialize()
    at = data.index(b"Cartridge")
    (length,) = struct.unpack_from("<i", data, at - 4)
    name = data[at:at + length].decode()
    return name, list(struct.unpack_from(f"<{num_ints}i", data, at + length))


# ---------------------------------------------------------------- detection

def test_atari57_schemes_and_md5s():
    for game, (size, scheme, md5) in ATARI57.items():
        data = _rom(game)
        assert (len(data), hashlib.md5(data).hexdigest()) == (size, md5), game
        assert cartlib.detect_scheme(data) == scheme, game
        cart = cartlib.load_cartridge(game)
        assert (cart.scheme, cart.md5) == (scheme, md5), game


def test_every_ale_py_rom_detected_like_ale():
    """Other ROMs: ALE's own choice, read from its serialized cart name."""
    detected = {}
    for game in ale_py.roms.get_all_rom_ids():
        path = cartlib.rom_path(game)
        scheme = cartlib.detect_scheme(path.read_bytes())
        detected[game] = scheme
        if scheme in cartlib.SUPPORTED_SCHEMES:
            assert cartlib.load_cartridge(game).scheme == scheme
        else:
            with pytest.raises(cartlib.UnsupportedCartridgeError) as info:
                cartlib.load_cartridge(game)
            assert scheme in str(info.value) and game in str(info.value)
        if game in ATARI57:
            continue  # checked against the table, and ALE runs are slow
        if not ALE.isSupportedROM(str(path)):  # loadROM would exit(1)
            assert scheme == ALE_REFUSES[game], game
            continue
        name, _ = _ale_cart(_ale_load(path), 0)
        assert name == "Cartridge" + scheme, game
    # ale-py ships no ROM of a scheme jaxatari refuses; these four are the
    # ones beyond the Atari-57's schemes.
    assert not {g: s for g, s in detected.items()
                if s not in cartlib.SUPPORTED_SCHEMES}
    assert {g: detected[g] for g in ("darkchambers", "klax",
                                     "elevator_action", "pitfall2")} == {
        "darkchambers": "F6SC", "klax": "F6SC", "elevator_action": "F8SC",
        "pitfall2": "DPC"}


def _padded(pieces: dict[int, bytes], size: int) -> bytes:
    image = bytearray(size)
    for at, data in pieces.items():
        image[at:at + len(data)] = data
    return bytes(image)


def test_detection_order_and_signature_quirks():
    code = {0: b"\x01\x02", 4096: b"\x03\x04"}  # not Superchip, halves differ
    e0 = bytes.fromhex("8de01f")
    assert cartlib.detect_scheme(_padded(code, 8192)) == "F8"
    assert cartlib.detect_scheme(_padded({**code, 100: e0}, 8192)) == "E0"
    # E0 beats FE when both signatures are present.
    fe = bytes.fromhex("2000d0c6c5")
    assert cartlib.detect_scheme(_padded({**code, 200: fe}, 8192)) == "FE"
    assert cartlib.detect_scheme(
        _padded({**code, 100: e0, 200: fe}, 8192)) == "E0"
    # Stella never tests the last possible start of a signature.
    assert cartlib.detect_scheme(_padded({**code, 8189: e0}, 8192)) == "F8"
    assert cartlib.detect_scheme(_padded({**code, 8188: e0}, 8192)) == "E0"
    # 3F needs two STA $3F, and after a hit the scan skips len + 1 bytes.
    sta3f = bytes.fromhex("853f")
    assert cartlib.detect_scheme(
        _padded({**code, 300: sta3f * 2}, 8192)) == "F8"
    assert cartlib.detect_scheme(
        _padded({**code, 300: sta3f + b"\0" + sta3f}, 8192)) == "3F"
    # Constant first 256 bytes in every bank: Superchip; equal halves: 4K.
    assert cartlib.detect_scheme(bytes(8192)) == "F8SC"
    assert cartlib.detect_scheme(_padded({1: b"\1", 4097: b"\1"},
                                         8192)) == "4K"
    assert cartlib.detect_scheme(_padded({1: b"\1", 2049: b"\1"},
                                         4096)) == "2K"
    assert cartlib.detect_scheme(_padded({0: b"\1", 4096: b"\2"},
                                         16384)) == "F6"
    assert cartlib.detect_scheme(bytes(10495)) == "DPC"


# ------------------------------------------------------ reference model

class RefCart:
    """Stella's carts as plain Python: banks in a dict, one switch rule."""

    def __init__(self, scheme: str, rom: bytes):
        self.scheme, self.rom = scheme, rom
        self.banks = {b: rom[b * 4096:(b + 1) * 4096]
                      for b in range(len(rom) // 4096)}
        self.slices = {s: rom[s * 1024:(s + 1) * 1024] for s in range(8)}
        self.banking = {"F8SC": "F8", "DPC": "F8", "F6SC": "F6"}.get(
            scheme, scheme)
        self.bank = 1 if self.banking == "F8" else 0
        self.slice_of = [4, 5, 6, 7]
        self.ram = [0] * 128 if scheme.endswith("SC") else None

    def access(self, address: int, enabled: bool) -> int | None:
        """Switches, then returns the ROM byte (None when A12 is clear)."""
        if not address & 0x1000:
            return None
        a = address & 0xFFF
        if enabled and self.banking == "F8" and a in (0xFF8, 0xFF9):
            self.bank = a - 0xFF8
        if enabled and self.banking == "F6" and 0xFF6 <= a <= 0xFF9:
            self.bank = a - 0xFF6
        if enabled and self.scheme == "E0" and 0xFE0 <= a <= 0xFF7:
            self.slice_of[(a - 0xFE0) // 8] = a & 7
        if self.scheme == "2K":
            return self.rom[a & 0x7FF]
        if self.scheme == "4K":
            return self.rom[a]
        if self.scheme == "FE":
            return self.rom[a + (0 if address & 0x2000 else 4096)]
        if self.scheme == "E0":
            return self.slices[self.slice_of[a >> 10]][a & 0x3FF]
        return self.banks[self.bank][a]

    def segments(self) -> list[int]:
        if self.scheme == "2K":
            return [0, 1024, 0, 1024]
        if self.scheme == "E0":
            return [s * 1024 for s in self.slice_of]
        bank = self.bank if self.banking in ("F8", "F6") else 0
        return [bank * 4096 + k * 1024 for k in range(4)]

    def read(self, address: int) -> int | None:
        """A read with Superchip RAM: the read port shows the RAM."""
        byte = self.access(address, True)
        if self.ram is not None and address & 0x1F80 == 0x1080:
            return self.ram[address & 0x7F]
        return byte

    def write(self, address: int, value: int) -> None:
        """A write: hotspots, and the Superchip write port."""
        self.access(address, True)
        if self.ram is not None and address & 0x1F80 == 0x1000:
            self.ram[address & 0x7F] = value


@jax.jit
def _run(arrays, segments, addresses, enabled):
    def step(segments, x):
        byte, segments = cartlib.access(arrays, segments, *x)
        return segments, (byte, segments)
    return jax.lax.scan(step, segments, (addresses, enabled))


def _addresses(rng: np.random.Generator, n: int):
    hot = (rng.integers(0, 16, n) << 12) | (0xFE0 + rng.integers(0, 32, n))
    anywhere = rng.integers(0, 0x10000, n)
    in_cart = anywhere | 0x1000
    pick = rng.integers(0, 3, n)
    addresses = np.choose(pick, [hot, anywhere, in_cart]).astype(np.int32)
    return addresses, rng.random(n) < 0.9


@pytest.mark.parametrize("random_image", [False, True])
@pytest.mark.parametrize("scheme", sorted(SAMPLES))
def test_access_matches_reference_model(scheme, random_image):
    """Real ROMs, and random images (real ROMs often repeat the hotspot
    bytes in every bank, which would hide reads from the old bank)."""
    game = SAMPLES[scheme]
    cart = cartlib.load_cartridge(game)
    rng = np.random.default_rng(len(game) + random_image)
    rom = _rom(game)
    if random_image:
        rom = rng.integers(0, 256, len(rom), np.uint8).tobytes()
        image = np.zeros_like(cart.image)
        image[:len(rom)] = np.frombuffer(rom, np.uint8)
        cart = dataclasses.replace(cart, image=image)
    ref = RefCart(scheme, rom)
    assert cart.reset_segments.tolist() == ref.segments()
    addresses, enabled = _addresses(rng, 3000)
    final, (bytes_, segs) = _run(cartlib.cart_arrays(cart),
                                 jnp.asarray(cart.reset_segments),
                                 jnp.asarray(addresses), jnp.asarray(enabled))
    bytes_, segs = np.asarray(bytes_), np.asarray(segs)
    for i, (address, on) in enumerate(zip(addresses.tolist(),
                                          enabled.tolist())):
        expected = ref.access(address, on)
        if expected is not None:
            assert bytes_[i] == expected, (i, hex(address), on)
        assert segs[i].tolist() == ref.segments(), (i, hex(address), on)
    assert np.asarray(final).tolist() == ref.segments()


def test_vmap_over_carts_states_and_addresses():
    carts = [cartlib.load_cartridge(SAMPLES[s]) for s in sorted(SAMPLES)]
    arrays = jax.tree.map(lambda *xs: jnp.stack(xs),
                          *[cartlib.cart_arrays(c) for c in carts])
    rng = np.random.default_rng(7)
    n = len(carts)
    segments = jnp.asarray(np.stack([c.reset_segments for c in carts]))
    for _ in range(20):
        addresses, enabled = _addresses(rng, n)
        batch = jax.jit(jax.vmap(cartlib.access))(
            arrays, segments, jnp.asarray(addresses), jnp.asarray(enabled))
        for i in range(n):
            one = cartlib.access(jax.tree.map(lambda x: x[i], arrays),
                                 segments[i], addresses[i], enabled[i])
            assert int(batch[0][i]) == int(one[0])
            assert batch[1][i].tolist() == one[1].tolist()
        segments = batch[1]
        assert batch[0].dtype == jnp.uint8 and segments.dtype == jnp.int32


@jax.jit
def _run_chips(arrays, segments, chips, addresses, values, writes):
    """Reads and writes through `cart.read` / `cart.write` (a scan)."""
    def step(carry, x):
        segments, chips = carry
        address, value, is_write = x
        byte, seg_r, chips_r = cartlib.read(arrays, segments, chips,
                                            address, 0, ~is_write)
        seg_w, chips_w = cartlib.write(arrays, seg_r, chips_r, address,
                                       value, is_write)
        return (seg_w, chips_w), byte
    return jax.lax.scan(step, (segments, chips), (addresses, values, writes))


def _superchip_accesses(rng: np.random.Generator, n: int):
    ports = 0x1000 | rng.integers(0, 0x100, n)     # write and read ports
    hot = 0x1FF0 | rng.integers(0, 16, n)
    anywhere = rng.integers(0, 0x10000, n)
    pick = rng.integers(0, 3, n)
    mirror = rng.integers(0, 8, n) << 13           # $1xxx, $3xxx ... $Fxxx
    addresses = np.choose(pick, [ports | mirror, hot | mirror, anywhere])
    return (addresses.astype(np.int32), rng.integers(0, 256, n, np.int32),
            rng.random(n) < 0.5)


@pytest.mark.parametrize("scheme", ["F8SC", "F6SC"])
def test_superchip_ram_matches_reference_model(scheme):
    """Random reads and writes of the RAM ports, hotspots and the rest."""
    cart = cartlib.load_cartridge(SAMPLES[scheme])
    ref = RefCart(scheme, _rom(SAMPLES[scheme]))
    rng = np.random.default_rng(3)
    ref.ram = rng.integers(0, 256, 128).tolist()
    chips = cartlib.make_chips(True, False).replace(
        ram=jnp.asarray(ref.ram, jnp.uint8))
    addresses, values, writes = _superchip_accesses(rng, 3000)
    (segments, chips), bytes_ = _run_chips(
        cartlib.cart_arrays(cart), jnp.asarray(cart.reset_segments), chips,
        jnp.asarray(addresses), jnp.asarray(values), jnp.asarray(writes))
    bytes_ = np.asarray(bytes_)
    for i, (address, value, write) in enumerate(zip(
            addresses.tolist(), values.tolist(), writes.tolist())):
        if write:
            ref.write(address, value)
        else:
            expected = ref.read(address)
            if expected is not None:
                assert bytes_[i] == expected, (i, hex(address))
    assert np.asarray(chips.ram).tolist() == ref.ram
    assert np.asarray(segments).tolist() == ref.segments()


def test_superchip_ram_is_off_for_other_carts_in_its_program():
    """A plain F8 cart in a program with Superchip RAM compiled in (a mixed
    batch) neither reads nor writes it."""
    cart = cartlib.load_cartridge("ms_pacman")
    chips = cartlib.make_chips(True, False).replace(
        ram=jnp.full((128,), 7, jnp.uint8))
    arrays = cartlib.cart_arrays(cart)
    segments = jnp.asarray(cart.reset_segments)
    _, chips = cartlib.write(arrays, segments, chips, 0xF005, 0x99, True)
    byte, _, _ = cartlib.read(arrays, segments, chips, 0xF085, 0, True)
    assert np.asarray(chips.ram).tolist() == [7] * 128
    assert int(byte) == cart.image[4096 + 0x85]


def test_chips_are_compiled_in_only_when_asked():
    plain = cartlib.make_chips(False, False)
    assert jax.tree.leaves(plain) == []
    both = cartlib.make_chips(True, True)
    assert both.ram.shape == (128,) and both.dpc is not None
    with pytest.raises(TypeError, match="reset_inputs"):
        cartlib.reset_chips(both, None)


# ------------------------------------------------------------ ALE oracle
#
# Hand-assembled ROMs, saved under a real game's file name so that ALE loads
# them (it takes the RomSettings by file name when the md5 is unknown). The
# code runs once after every System::reset and stores what it read into
# RAM; ALE's loadROM resets several times and ends on a reset, so the RAM
# shows the banks as reset left them, and the cart state shows the banks at
# the end of the code.

LDA, STA_ZP, STA, LDA_IMM, JMP = 0xAD, 0x85, 0x8D, 0xA9, 0x4C


def _program(origin: int, ops: list[tuple]) -> bytes:
    """Assembles (opcode, operand) pairs and ends with ``JMP *``."""
    code = bytearray()
    for op, arg in ops:
        code.append(op)
        code += bytes([arg]) if op in (STA_ZP, LDA_IMM) else arg.to_bytes(
            2, "little")
    here = origin + len(code)
    return bytes(code) + bytes([JMP]) + here.to_bytes(2, "little")


def _read_and_store(reads: list[int]) -> list[tuple]:
    ops = []
    for i, address in enumerate(reads):
        ops += [(LDA, address), (STA_ZP, 0x80 + i)]
    return ops


def _vectors(at: int) -> dict[int, bytes]:
    return {at: bytes([0x00, 0xF0, 0x00, 0xF0])}  # RESET and IRQ -> $F000


def _model_reads(cart, ops):
    """Runs the program's data accesses through `access`: stored bytes."""
    arrays = cartlib.cart_arrays(cart)
    segments = jnp.asarray(cart.reset_segments)
    stored, a = [], None
    for op, arg in ops:
        if op == LDA_IMM:
            a = arg
        elif op in (LDA, STA):
            byte, segments = cartlib.access(arrays, segments, arg, True)
            a = int(byte) if op == LDA else a
        elif op == STA_ZP:
            stored.append(a)
    return stored, np.asarray(segments).tolist()


def _crafted(scheme):
    """(ROM bytes, program ops, expected RAM) for one scheme."""
    if scheme == "F8":  # two banks, same code, different tags
        ops = [(LDA, 0xF100), (STA_ZP, 0x80),
               (LDA, 0xFFF8), (STA_ZP, 0x81),   # -> bank 0, read from it
               (STA, 0xFFF9),                   # -> bank 1 by a write
               (LDA, 0xF100), (STA_ZP, 0x82),
               (LDA, 0x0FF8),                   # A12 clear: not the cart
               (LDA, 0xF100), (STA_ZP, 0x83)]
        pieces = {}
        for b in range(2):
            pieces |= {b * 4096: _program(0xF000, ops),
                       b * 4096 + 0x100: bytes([0xC0 + b]),
                       b * 4096 + 0xFF8: bytes([0xB0 + b] * 2),
                       **_vectors(b * 4096 + 0xFFC)}
        return _padded(pieces, 8192), ops, [0xC1, 0xB0, 0xC1, 0xC1]
    if scheme == "F6":
        ops = [(LDA, 0xF100), (STA_ZP, 0x80),
               (LDA, 0xFFF7), (STA_ZP, 0x81),   # -> bank 1
               (STA, 0xFFF9),                   # -> bank 3
               (LDA, 0xF100), (STA_ZP, 0x82),
               (LDA, 0x5FF6), (STA_ZP, 0x83),   # A12 set at $5xxx: bank 0
               (LDA, 0xFFF8)]                   # -> bank 2
        pieces = {}
        for b in range(4):
            pieces |= {b * 4096: _program(0xF000, ops),
                       b * 4096 + 0x100: bytes([0xC0 + b]),
                       b * 4096 + 0xFF6: bytes([0xB0 + b] * 4),
                       **_vectors(b * 4096 + 0xFFC)}
        return _padded(pieces, 16384), ops, [0xC0, 0xB1, 0xC3, 0xB0]
    if scheme == "E0":  # code in slice 7 (segment 3, $FC00)
        ops = _read_and_store([0xF200, 0xF600, 0xFA00, 0xFFE2, 0xF200])
        ops += [(STA, 0xFFEB)] + _read_and_store([0xF600])  # seg 1 <- 3
        ops += [(STA, 0x1FE0)] + _read_and_store([0xF200])  # seg 0 <- 0
        ops += _read_and_store([0xFFF7, 0xFA00])            # seg 2 <- 7
        zp = iter(range(0x80, 0x100))
        ops = [(op, next(zp) if op == STA_ZP else arg) for op, arg in ops]
        pieces = {0x1C00: _program(0xFC00, ops),
                  0x1FE2: b"\x5A", 0x1FF7: b"\xA5",
                  **{s * 1024 + 0x200: bytes([0xE0 + s]) for s in range(8)},
                  **{s * 1024: bytes([0xE0 + s]) for s in range(7)},
                  0x1FFC: bytes([0x00, 0xFC, 0x00, 0xFC])}
        return _padded(pieces, 8192), ops, [0xE4, 0xE5, 0xE6, 0x5A, 0xE2,
                                            0xE3, 0xE0, 0xA5, 0xE7]
    if scheme == "FE":
        ops = _read_and_store([0xD100, 0xF100, 0x1100, 0x3100])
        pieces = {0: _program(0xF000, ops), 0x100: b"\xAA", 0x1100: b"\xBB",
                  0x300: bytes.fromhex("2000d0c6c5"), **_vectors(0xFFC)}
        return _padded(pieces, 8192), ops, [0xBB, 0xAA, 0xBB, 0xAA]
    if scheme == "2K":
        ops = _read_and_store([0xF100, 0xF900, 0x1100])
        pieces = {0: _program(0xF000, ops), 0x100: b"\xAA", **_vectors(0x7FC)}
        return _padded(pieces, 2048), ops, [0xAA] * 3
    raise AssertionError(scheme)


@pytest.mark.parametrize("scheme", ["F8", "F6", "E0", "FE", "2K"])
def test_crafted_rom_in_ale(scheme, tmp_path):
    rom, ops, expected = _crafted(scheme)
    assert cartlib.detect_scheme(rom) == scheme
    path = tmp_path / "montezuma_revenge.bin"
    path.write_bytes(rom)
    cart = cartlib.load_cartridge(path)
    stored, final = _model_reads(cart, ops)
    assert stored == expected
    ale = _ale_load(path)
    ram = ale.getRAM().tolist()
    assert ram[:len(stored)] == stored
    num_ints = {"F8": 1, "F6": 1, "E0": 5}.get(scheme, 0)
    name, ints = _ale_cart(ale, num_ints)
    assert name == "Cartridge" + scheme
    if scheme in ("F8", "F6"):
        assert final == [ints[0] * 4096 + k * 1024 for k in range(4)]
    if scheme == "E0":
        assert ints[0] == 4 and final == [s * 1024 for s in ints[1:]]


def _superchip_rom(scheme: str) -> tuple[bytes, list[tuple], list]:
    """A Superchip ROM (code at $F100 in every bank, the first 256 bytes
    of bank b all 0x50 + b) exercising the RAM ports, and its expected
    stores; None stands for a byte the reset drew."""
    banks = 2 if scheme == "F8SC" else 4
    first_hot = 0xFF8 if scheme == "F8SC" else 0xFF6
    ops = [(LDA_IMM, 0xA5), (STA, 0xF005),       # RAM[5] = $A5
           (LDA, 0xF085), (STA_ZP, 0x80),        # read port: $A5
           (LDA, 0xF005), (STA_ZP, 0x81),        # write port: ROM byte
           (LDA_IMM, 0x3C), (STA, 0xF090),       # read port: ignored
           (LDA, 0xF090), (STA_ZP, 0x82),        # RAM[$10], drawn
           (LDA, 0xFFF8), (STA_ZP, 0x83),        # -> bank 0 (F8) / 2 (F6)
           (LDA, 0xF005), (STA_ZP, 0x84),
           (LDA, 0xF085), (STA_ZP, 0x85),        # RAM outlives the switch
           (LDA, 0x3085), (STA_ZP, 0x86),        # a mirror of the port
           (STA, 0xFFF9),                        # -> bank 1 (F8) / 3 (F6)
           (LDA, 0xF0FF), (STA_ZP, 0x87)]        # RAM[$7F], drawn
    pieces = {}
    for b in range(banks):
        pieces |= {b * 4096: bytes([0x50 + b] * 256),
                   b * 4096 + 0x100: _program(0xF100, ops),
                   b * 4096 + first_hot: bytes(
                       [0xB0 + b] * (0x1000 - first_hot - 4)),
                   b * 4096 + 0xFFC: bytes([0x00, 0xF1, 0x00, 0xF1])}
    reset_bank, switched = (1, 0) if scheme == "F8SC" else (0, 2)
    expected = [0xA5, 0x50 + reset_bank, None, 0xB0 + switched,
                0x50 + switched, 0xA5, 0xA5, None]
    return _padded(pieces, banks * 4096), ops, expected


def _superchip_model(cart, ops, ram):
    """The program's data accesses through `cart.read` / `cart.write`,
    from a reset with Superchip RAM `ram`: (stores, RAM, segments)."""
    arrays = cartlib.cart_arrays(cart)
    segments = jnp.asarray(cart.reset_segments)
    chips = cartlib.make_chips(True, False).replace(ram=ram)
    stored, a = [], None
    for op, arg in ops:
        if op == LDA_IMM:
            a = arg
        elif op == LDA:
            byte, segments, chips = cartlib.read(arrays, segments, chips,
                                                 arg, 0, True)
            a = int(byte)
        elif op == STA:
            segments, chips = cartlib.write(arrays, segments, chips, arg, a,
                                            True)
        else:
            stored.append(a)
    return stored, np.asarray(chips.ram).tolist(), segments


@pytest.mark.parametrize("scheme", ["F8SC", "F6SC"])
def test_superchip_rom_in_ale(scheme, tmp_path):
    """ALE's RAM and serialized cart RAM after loadROM and a reset_game:
    the ports, and the 128 draws each System::reset takes (the fourth and
    fifth resets since construction: `system_rng.reset_inputs`)."""
    from jaxatari import system_rng
    rom, ops, expected = _superchip_rom(scheme)
    assert cartlib.detect_scheme(rom) == scheme
    path = tmp_path / "montezuma_revenge.bin"
    path.write_bytes(rom)
    cart = cartlib.load_cartridge(path)
    assert cart.has_ram and not cart.dpc
    ale = _ale_load(path)
    for resets in (3, 4):   # loadROM's last reset, then reset_game's
        if resets == 4:
            ale.reset_game()
        draws = system_rng.reset_inputs(resets, cart_ram=True).cart_ram
        stored, ram, segments = _superchip_model(cart, ops, draws)
        assert [e if e is not None else s for e, s in zip(expected, stored)
                ] == stored
        assert stored[2] == int(draws[0x10]) and stored[7] == int(draws[0x7F])
        assert ale.getRAM().tolist()[:len(stored)] == stored
        name, ints = _ale_cart(ale, 2 + 128)
        assert name == "Cartridge" + scheme and ints[1] == 128
        assert [v & 0xFF for v in ints[2:]] == ram
        assert np.asarray(segments).tolist() == [
            ints[0] * 4096 + k * 1024 for k in range(4)]


def test_reset_segments_of_real_roms():
    """The reset mapping Stella documents, and what ALE shows after load.

    After loadROM the game code has run for 60+ frames, so ALE's bank is
    where the game left it, not the reset bank; the crafted ROMs above are
    the reset oracle. Here: the tables, and that the reset vector read
    through the reset mapping points into the cart.
    """
    f8 = cartlib.load_cartridge("ms_pacman")
    assert f8.reset_segments.tolist() == [4096, 5120, 6144, 7168]
    e0 = cartlib.load_cartridge("montezuma_revenge")
    assert e0.reset_segments.tolist() == [4096, 5120, 6144, 7168]
    f6 = cartlib.load_cartridge("road_runner")
    assert f6.reset_segments.tolist() == [0, 1024, 2048, 3072]
    for game, bank in (("elevator_action", 1), ("klax", 0), ("pitfall2", 1)):
        cart = cartlib.load_cartridge(game)
        assert cart.reset_segments.tolist() == [
            bank * 4096 + k * 1024 for k in range(4)], game
    for game in ("ms_pacman", "asteroids", "montezuma_revenge"):
        cart = cartlib.load_cartridge(game)
        arrays = cartlib.cart_arrays(cart)
        seg = jnp.asarray(cart.reset_segments)
        lo, _ = cartlib.access(arrays, seg, 0xFFFC, True)
        hi, _ = cartlib.access(arrays, seg, 0xFFFD, True)
        assert (int(hi) << 8 | int(lo)) & 0x1000, game


# ----------------------------------------------------------------- errors

def test_unknown_game_names_close_matches():
    with pytest.raises(ValueError, match="breakout"):
        cartlib.rom_path("breakoutt")
    with pytest.raises(ValueError, match="unknown"):
        cartlib.load_cartridge("no_such_game_xyz")
    assert cartlib.rom_path("MontezumaRevenge").stem == "montezuma_revenge"


def _unsupported_image(scheme: str) -> bytes:
    """A ROM image Stella detects as `scheme` (none ships with ale-py)."""
    code = {0: b"\x01\x02", 4096: b"\x03\x04"}
    if scheme == "F4":
        return _padded(code, 32768)
    if scheme == "F4SC":
        return bytes(32768)
    if scheme == "E7":
        return _padded({**code, 0x3800 - 1: b"\x07"}, 16384)
    if scheme == "3F":
        return _padded({**code, 300: bytes.fromhex("853f00853f")}, 8192)
    if scheme == "FASC":
        return bytes(12288)
    raise AssertionError(scheme)


@pytest.mark.parametrize("scheme", ["F4", "F4SC", "E7", "3F", "FASC"])
def test_unsupported_scheme_error(scheme, tmp_path):
    path = tmp_path / f"my_{scheme.lower()}.bin"
    path.write_bytes(_unsupported_image(scheme))
    assert cartlib.detect_scheme(path.read_bytes()) == scheme
    with pytest.raises(cartlib.UnsupportedCartridgeError) as info:
        cartlib.load_cartridge(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.scheme, err.game) == (scheme, path.stem)
    message = str(err)
    assert scheme in message and path.stem in message
    assert all(s in message for s in cartlib.SUPPORTED_SCHEMES)
    assert "ale-py" in message   # what to do instead


def test_display_format_of_ale_py_roms():
    """`PAL_MD5S` is what ALE's autodetection finds: 250-row screens."""
    for game in ("klax", "pacman", "mr_do", "air_raid"):
        cart = cartlib.load_cartridge(game)
        assert cart.display_format == "PAL" and cart.md5 in cartlib.PAL_MD5S
        screen = _ale_load(cartlib.rom_path(game)).getScreen()
        assert screen.shape == (250, 160), game
    for game in ("elevator_action", "darkchambers", "pitfall2", "pong"):
        assert cartlib.load_cartridge(game).display_format == "NTSC"
        assert _ale_load(cartlib.rom_path(game)).getScreen().shape == (
            210, 160)
    ids = set(ale_py.roms.get_all_rom_ids())
    assert set(cartlib.PAL_MD5S.values()) <= ids
