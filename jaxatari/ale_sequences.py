"""ALE's host-side sequences: `loadROM()` and `reset_game()`, frame by frame.

`ConsoleDriver` is what they drive: one console, with the primitives a
sequence needs (frames with an action and the console switches, a system
reset, the game's RAM). `AtariEnv`'s boot drives its own compiled frame
(`environment._EnvDriver`), the lock-step parity driver its batch
(`lockstep.Handle`); `GameRules.set_mode` sees the driver as its
`games.ResetOps`.
"""
from __future__ import annotations

import numpy as np

from jaxatari import games

NUM_RESET_FRAMES = 4
"""Frames ALE's `softReset` holds the RESET switch for."""


class ConsoleDriver:
    """Drives one console through ALE's host-side sequences (`load_rom`,
    `reset_game`); it is the `games.ResetOps` that `setMode` uses.

    Subclasses provide the primitives: `frames` (emulate frames with an
    action and RESET/SELECT held, running `RomSettings::step` after each
    frame except SELECT frames), `system_reset`, `begin_episode`, `ram`
    and `scanlines`.
    """

    counted_frames = 0
    """Reset frames ALE counts in the episode frame number: one per
    `pressSelect` call and one per `act` (setMode's), none for the rest."""

    random_seed = 0
    """ALE's `random_seed`: the seed of its environment RNG (an mt19937,
    which sticky actions and Adventure's setMode draw from)."""
    _environment_rng: np.random.RandomState | None = None

    def environment_rng_next(self) -> int:
        """The next 32-bit output of ALE's environment RNG (`Random::next`),
        seeded with `random_seed` when first used."""
        if self._environment_rng is None:
            self._environment_rng = np.random.RandomState(
                self.random_seed % 2**32)
        return int(self._environment_rng.randint(0, 2**32, dtype=np.uint32))

    def frames(self, action: int, buttons: int, count: int) -> None:
        """`count` frames of `action`; `buttons` 0, 1 (RESET) or 2 (SELECT)."""
        raise NotImplementedError

    def system_reset(self, resets: int, pal: bool | None = None) -> None:
        """`System::reset`, the console's `resets`-th since construction
        (with that reset's system-generator draws: `system_rng.reset_inputs`);
        `pal` sets the display format, None keeps it. Paddles centred,
        episode frame count zeroed (`StellaEnvironment::reset`)."""
        raise NotImplementedError

    def scanlines(self) -> int:
        """The scanline count of the last frame (`console.scanlines`)."""
        raise NotImplementedError

    def begin_episode(self) -> None:
        """`RomSettings::reset`: the game's carried variables start over."""
        raise NotImplementedError

    def ram(self) -> np.ndarray:
        """The 128 RAM bytes now."""
        raise NotImplementedError

    def press_select(self, n: int = 1) -> None:
        """ALE's `pressSelect(n)`: SELECT for `n` frames, then a NOOP frame."""
        self.counted_frames += 1
        self.frames(0, 2, n)
        self.frames(0, 0, 1)

    def soft_reset(self) -> None:
        """ALE's `softReset`: the RESET switch held for 4 frames."""
        self.frames(0, 1, NUM_RESET_FRAMES)

    def act(self, action: int) -> None:
        """One frame of an agent action, as `setMode` uses it: ALE's `act`
        draws twice from the environment RNG first (the sticky-action tests
        of players A and B)."""
        self.environment_rng_next()
        self.environment_rng_next()
        self.counted_frames += 1
        self.frames(action, 0, 1)


def load_rom(driver: ConsoleDriver) -> None:
    """ALE's `loadROM` up to its closing `reset_game()`: a system reset, the
    60 frames of display autodetection run as NTSC, and another system
    reset to the format found (the console's first and second;
    construction was the zeroth). As Stella's `Console`: PAL if at least
    15 of frames 30-59 ran over 285 scanlines."""
    driver.system_reset(1, pal=False)
    tall = 0
    for k in range(60):
        driver.frames(0, 0, 1)
        tall += k >= 30 and driver.scanlines() > 285
    driver.system_reset(2, pal=tall >= 15)


def reset_game(rules: games.GameRules, mode: int, driver: ConsoleDriver,
               resets: int) -> None:
    """`StellaEnvironment::reset` (ale-facts §1.3) as the `resets`-th
    `reset_game()`: system reset, 60 NOOP frames, RESET, the game's
    `setMode`, RESET again, then its starting actions."""
    driver.system_reset(3 + resets)
    driver.counted_frames = 0
    driver.frames(0, 0, 60)
    driver.soft_reset()
    driver.begin_episode()
    rules.set_mode(driver, mode)
    driver.soft_reset()
    for action in rules.starting_actions:
        if action == games.core.RESET:   # the RESET switch, joystick idle
            driver.frames(0, 1, 1)
        else:
            driver.frames(action, 0, 1)
