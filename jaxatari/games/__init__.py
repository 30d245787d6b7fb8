"""The game registry: ALE's per-game settings, by ale-py ROM id.

Every ROM that ale-py ships has a `GameRules` here: the reward, game-over
and lives rules read from RAM (ALE's `RomSettings::step`), the minimal
action set, the modes and difficulties and how `setMode` reaches them, the
starting actions, and the display and controller properties ALE's Stella
gives the cartridge. See `jaxatari.games.core` for the conventions; the
rules themselves live in one module per alphabetical range of ROM ids.

    >>> from jaxatari import games
    >>> rules = games.lookup("ALE/SpaceInvaders-v5")
    >>> rules.rom_id, rules.minimal_actions
    ('space_invaders', (0, 1, 3, 4, 11, 12))
"""

from __future__ import annotations

import difflib
import re

from jaxatari.games import (
    a_to_b, c_to_d, e_to_f, g_to_h, i_to_l, m_to_r, s_to_t, u_to_z)
from jaxatari.games.core import (
    ALL_ACTIONS, FULL_ACTION_SET, NUM_VARS, GameRules, ResetOps, StepResult)

__all__ = [
    "ALL_ACTIONS",
    "ATARI_57",
    "DEV_SET",
    "FULL_ACTION_SET",
    "GAMES",
    "GameRules",
    "NOT_IN_ALE",
    "NUM_VARS",
    "ResetOps",
    "StepResult",
    "list_games",
    "lookup",
]

_ALL_RULES = sorted(
    a_to_b.RULES + c_to_d.RULES + e_to_f.RULES + g_to_h.RULES + i_to_l.RULES
    + m_to_r.RULES + s_to_t.RULES + u_to_z.RULES,
    key=lambda rules: rules.rom_id)

GAMES: dict[str, GameRules] = {rules.rom_id: rules for rules in _ALL_RULES}
"""The games jaxatari knows, keyed by ale-py ROM id, in ROM id order."""

DEV_SET: tuple[str, ...] = (
    "asteroids", "beam_rider", "boxing", "breakout", "enduro", "freeway",
    "montezuma_revenge", "ms_pacman", "pitfall", "pong", "qbert",
    "riverraid", "robotank", "seaquest", "space_invaders")
"""The 15 games the console was first brought up on (issue #3)."""

ATARI_57: tuple[str, ...] = (
    "alien", "amidar", "assault", "asterix", "asteroids", "atlantis",
    "bank_heist", "battle_zone", "beam_rider", "berzerk", "bowling",
    "boxing", "breakout", "centipede", "chopper_command", "crazy_climber",
    "defender", "demon_attack", "double_dunk", "enduro", "fishing_derby",
    "freeway", "frostbite", "gopher", "gravitar", "hero", "ice_hockey",
    "jamesbond", "kangaroo", "krull", "kung_fu_master",
    "montezuma_revenge", "ms_pacman", "name_this_game", "phoenix",
    "pitfall", "pong", "private_eye", "qbert", "riverraid", "road_runner",
    "robotank", "seaquest", "skiing", "solaris", "space_invaders",
    "star_gunner", "surround", "tennis", "time_pilot", "tutankham",
    "up_n_down", "venture", "video_pinball", "wizard_of_wor",
    "yars_revenge", "zaxxon")
"""The 57 games of the standard Atari-57 benchmark, by ale-py ROM id."""

NOT_IN_ALE: tuple[str, ...] = ("combat", "joust", "maze_craze", "warlords")
"""ROMs that ale-py ships but cannot play: they are PettingZoo's multi-agent
games, and ale-py 0.12.1 has no `RomSettings` for them, so `loadROM` refuses
them. jaxatari has no rules for them either; `jaxatari.make_from_rom` still
plays them, with reward 0 and no game over."""

_BY_SQUASHED_NAME = {rules.rom_id.replace("_", ""): rules
                     for rules in _ALL_RULES}

# "ALE/SpaceInvaders-v5", "SpaceInvadersNoFrameskip-v4", "Pong-ram-v0", ...
_GYM_ID = re.compile(
    r"^(?:ALE/)?(?P<stem>[A-Za-z0-9_]+?)"
    r"(?:-ram)?(?:NoFrameskip|Deterministic)?(?:-ram)?(?:-v\d+)?$")


def list_games() -> list[str]:
    """Returns the ale-py ROM ids jaxatari has rules for, sorted.

    That is every ROM ale-py ships and can play: all but `NOT_IN_ALE`.
    """
    return list(GAMES)


def lookup(game: str) -> GameRules:
    """Finds a game's rules by ROM id, Gymnasium id or Gymnasium name stem.

    Accepted forms, for example: "space_invaders", "SpaceInvaders",
    "ALE/SpaceInvaders-v5", "SpaceInvadersNoFrameskip-v4", "SpaceInvaders-v0".

    Args:
        game: the name to look up; case and underscores do not matter.

    Returns:
        The game's `GameRules`.

    Raises:
        ValueError: for a name that is not one of the known games.
    """
    match = _GYM_ID.match(game.strip())
    if match:
        squashed = match.group("stem").replace("_", "").lower()
        if squashed in _BY_SQUASHED_NAME:
            return _BY_SQUASHED_NAME[squashed]
        multi_agent = {g.replace("_", ""): g for g in NOT_IN_ALE}
        if squashed in multi_agent:
            raise ValueError(
                f"{game!r}: ale-py ships the ROM {multi_agent[squashed]!r} "
                "but cannot play it (a multi-agent game without ALE "
                "settings), so jaxatari has no rules for it. To emulate it "
                "anyway, without rewards: jaxatari.make_from_rom("
                f"jaxatari.cart.rom_path({multi_agent[squashed]!r})).")
    suggestions = close_names(game)
    hint = (f" Did you mean {' or '.join(map(repr, suggestions))}?"
            if suggestions else "")
    known = ", ".join(sorted(GAMES))
    raise ValueError(
        f"unknown game {game!r}.{hint} jaxatari has rules for: {known}. "
        "Pass one of these ale-py ROM ids, or a Gymnasium id such as "
        "'ALE/SpaceInvaders-v5' or 'SpaceInvadersNoFrameskip-v4'. To play "
        "a ROM file of your own without rules, use "
        "jaxatari.make_from_rom(path).")


def close_names(game: str, count: int = 3) -> list[str]:
    """The known names nearest to a misspelt one, best first, one a game.

    The name's stem (without "ALE/", "NoFrameskip", "-v5", ...) is
    compared, without case, by `difflib.get_close_matches` with the ROM
    ids (`list_games()`) and the Gymnasium stems ("SpaceInvaders"). Each
    suggestion keeps the name's form: "ALE/Breakot-v5" gives
    "ALE/Breakout-v5", "breakot" gives "breakout", "Breakot" "Breakout".

    Args:
        game: the name `lookup` did not know.
        count: at most this many names.

    Returns:
        Up to `count` names that `lookup` accepts.
    """
    game = game.strip()
    match = _GYM_ID.match(game)
    start, end = match.span("stem") if match else (0, len(game))
    stem = game[start:end]
    by_name: dict[str, GameRules] = {}
    for rules in _ALL_RULES:
        by_name.setdefault(rules.rom_id.lower(), rules)
        by_name.setdefault(rules.ale_name.lower(), rules)
    gym_style = stem != game or stem != stem.lower()
    suggestions: list[str] = []
    for name in difflib.get_close_matches(stem.lower(), list(by_name),
                                          n=3 * count, cutoff=0.6):
        rules = by_name[name]
        found = rules.ale_name if gym_style else rules.rom_id
        suggestion = game[:start] + found + game[end:]
        if suggestion not in suggestions:
            suggestions.append(suggestion)
    return suggestions[:count]
