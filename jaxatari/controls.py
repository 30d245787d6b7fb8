"""A game's controllers and console switches: ALE's actions as the
console's input lines (`console.Inputs`), frame by frame.

* An action is an index into the env's action set; `to_ale_action` gives
  its ALE id (NOOP for an index out of range, as ALE plays an illegal
  one), and `sticky_actions` ALE's sticky rule over a step's frames.
* Joystick games see the action on SWCHA (directions pull pins low) and
  INPT4 (fire), or SWCHA's low nibble and INPT5 with the ports swapped.
* Paddle games (Pong, Breakout) move paddle 0 by 23,000 ohms a frame,
  within the game's range (`move_paddle`), and read its button on SWCHA;
  a paddle's resistance becomes the cycles its INPT line takes to read
  high after the dump is released (`paddle_cycles`).
* SWCHB carries the difficulty switches and RESET / SELECT (`switches`).

The controller type is data (`Controls`), so consoles of different games
share one compiled program. Nothing here knows of the emulator's state
beyond `console.Inputs`.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxatari import console, games

PADDLE_MIN, PADDLE_MAX = games.core.PADDLE_MIN, games.core.PADDLE_MAX
PADDLE_DELTA = 23000
PADDLE_CENTRE = (PADDLE_MIN + PADDLE_MAX) // 2
RIGHT_ACTIONS = (3, 6, 8, 11, 14, 16)
LEFT_ACTIONS = (4, 7, 9, 12, 15, 17)
UP_ACTIONS = (2, 6, 7, 10, 14, 15)
DOWN_ACTIONS = (5, 8, 9, 13, 16, 17)
FIRE_ACTIONS = (1, 10, 11, 12, 13, 14, 15, 16, 17)


def to_ale_action(action_set: tuple[int, ...],
                  action: jax.Array) -> jax.Array:
    """The ALE action id of an index into `action_set`.

    An index out of range becomes NOOP (0), as ALE plays an illegal action
    (`StellaEnvironment::act`); inside `jit` nothing can raise.
    """
    action = jnp.asarray(action, jnp.int32)
    table = jnp.asarray(action_set, jnp.int32)
    legal = (action >= 0) & (action < len(action_set))
    return jnp.where(legal, table[jnp.clip(action, 0, len(action_set) - 1)],
                     0)


def sticky_actions(key: jax.Array, previous: jax.Array, action: jax.Array,
                   repeat_action_probability: float | jax.Array,
                   frameskip: int) -> jax.Array:
    """The action each of `frameskip` frames gets, with ALE's sticky rule.

    Before every emulated frame, with probability
    `repeat_action_probability` the previous frame's action is kept,
    otherwise the agent's `action` is taken (ALE's `act`, frame by frame).

    Returns:
        int32[frameskip] ALE action ids.
    """
    draws = jax.random.uniform(key, (frameskip,))
    applied, current = [], jnp.asarray(previous, jnp.int32)
    for i in range(frameskip):
        current = jnp.where(draws[i] >= repeat_action_probability,
                            jnp.asarray(action, jnp.int32), current)
        applied.append(current)
    return jnp.stack(applied)


def _in(action: jax.Array, group: tuple[int, ...]) -> jax.Array:
    return jnp.any(action == jnp.asarray(group))


def paddle_cycles(resistance: jax.Array) -> jax.Array:
    """Cycles after the dump release until INPT reads high (ALE's paddles).

    Stella computes `(uint32)(1.6 * r * 0.01e-6 * 1.19e6)` in double
    precision; that equals `r * 1904 // 100000` for every resistance ALE's
    discrete paddle moves reach (tested in tests/test_environment.py).
    """
    return (resistance * 1904) // 100000


def controller_inputs(paddle_game: jax.Array | bool,
                      swap_paddles: jax.Array | bool, action: jax.Array,
                      paddles: jax.Array, swchb: jax.Array,
                      swap_ports: jax.Array | bool = False) -> console.Inputs:
    """The console's input lines for one frame of `action` (player B idle).

    The controller type is data (`paddle_game`, `swap_paddles`,
    `swap_ports`), so consoles of different games can share one compiled
    program. With the ports swapped (Stella's `Console.SwapPorts`: Surround,
    Wizard of Wor) player A's joystick is plugged into the right port: its
    directions pull SWCHA's low nibble and its button is INPT5.
    """
    fire = _in(action, FIRE_ACTIONS)
    # Paddles: paddle 0's button is pin Four (0x80), or pin Three if swapped.
    pin_zero = jnp.where(swap_paddles, 0x40, 0x80)
    left, right = paddle_cycles(paddles[0]), paddle_cycles(paddles[1])
    far = jnp.where(swap_paddles, -1, -2)   # Pong has paddles on both ports
    paddle_needed = jnp.stack([jnp.where(swap_paddles, right, left),
                               jnp.where(swap_paddles, left, right), far, far])
    # Joystick: directions pull SWCHA pins low, fire is INPT4.
    pressed = (jnp.where(_in(action, UP_ACTIONS), 0x10, 0)
               | jnp.where(_in(action, DOWN_ACTIONS), 0x20, 0)
               | jnp.where(_in(action, LEFT_ACTIONS), 0x40, 0)
               | jnp.where(_in(action, RIGHT_ACTIONS), 0x80, 0))
    pressed = jnp.where(swap_ports, pressed >> 4, pressed)
    swcha = jnp.where(paddle_game, 0xFF & ~jnp.where(fire, pin_zero, 0),
                      0xFF & ~pressed)
    buttons = jnp.where(swap_ports, jnp.stack([False, fire]),
                        jnp.stack([fire, False]))
    return console.Inputs(
        swcha=swcha.astype(jnp.int32), swchb=jnp.asarray(swchb, jnp.int32),
        fire=jnp.where(paddle_game, 0, buttons).astype(jnp.int32),
        paddle_needed=jnp.where(paddle_game, paddle_needed, -2
                                ).astype(jnp.int32))


def move_paddle(controls: "Controls", action: jax.Array,
                paddles: jax.Array) -> jax.Array:
    """ALE's per-frame paddle move for player A's action (data-driven),
    clipped to the game's paddle range."""
    delta = jnp.where(_in(action, RIGHT_ACTIONS), -PADDLE_DELTA,
                      jnp.where(_in(action, LEFT_ACTIONS), PADDLE_DELTA, 0))
    delta = jnp.where(controls.paddle_game, delta, 0)
    return paddles.at[0].set(jnp.clip(paddles[0] + delta,
                                      controls.paddle_min,
                                      controls.paddle_max))


class Controls(NamedTuple):
    """A game's controller and switches, as data (Python or array values).

    `paddle_min`/`paddle_max` are the game's paddle range; ALE centres the
    paddles between them at every reset (`paddle_centre`).
    """
    paddle_game: jax.Array | bool
    swap_paddles: jax.Array | bool
    difficulty: jax.Array | int
    paddle_min: jax.Array | int = PADDLE_MIN
    paddle_max: jax.Array | int = PADDLE_MAX
    swap_ports: jax.Array | bool = False


def paddle_centre(controls: Controls) -> jax.Array:
    """Both paddles' resistance after a reset: the middle of the range."""
    centre = (jnp.asarray(controls.paddle_min, jnp.int32)
              + jnp.asarray(controls.paddle_max, jnp.int32)) // 2
    return jnp.stack([centre, centre])


def switches(difficulty: int, reset: jax.Array | bool = False,
             select: jax.Array | bool = False) -> jax.Array:
    """SWCHB: colour on, difficulty bits from ALE's mode value, buttons."""
    value = 0x3F | ((difficulty & 1) << 6) | (((difficulty >> 1) & 1) << 7)
    return (value & ~jnp.where(reset, 1, 0) & ~jnp.where(select, 2, 0)
            ).astype(jnp.int32)
