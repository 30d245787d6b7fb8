"""Kernel launches per loop iteration, read from an optimized HLO dump.

On a GPU, XLA runs a compiled program as a sequence of thunks: each
fusion, copy or library call outside a fusion is a kernel launch, and a
`while` runs its condition and body computations from the host, once per
trip. A program whose kernels are small (the emulator's instruction loop:
a few KB of state per console, thousands of trips per frame) spends its
time on those launches, not on the arithmetic inside them. This module
counts them from the text of `compiled.as_text()` (what
`benchmarks/gpu_session.py` saves from the device as
`profile/hlo/preset_step.txt`), so that a change to the loop's shape can
be judged from the dump of a program, before a GPU measures it.

    python benchmarks/hlo_launches.py DUMP.txt [--scope instruction_loop]

prints one JSON line per while loop, outermost first: its JAX scope (from
the ops' metadata), its trip count where XLA knows it, the launches of
one trip of its own body and condition, and the launches of one trip
with the loops inside it run to their trip counts (`per_trip`).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import gzip
import json
import re
import sys

FREE = frozenset({"parameter", "get-tuple-element", "tuple", "constant",
                  "bitcast"})
"""Ops that launch nothing (views and bookkeeping of the schedule)."""
_HEADER = re.compile(r"^(ENTRY )?%([\w.\-]+) ")
_OPCODE = re.compile(r"= .*? ([a-z][a-z\-]*)\(")
_TRIP = re.compile(r'known_trip_count\W+n\W+(\d+)')
_SCOPE = re.compile(r'op_name="([^"]*)"')


@dataclasses.dataclass
class Loop:
    """One `while` of an optimized HLO module.

    Attributes:
        scope: the JAX name stack of the `while` op (its metadata), or "".
        trip_count: the trip count XLA annotated, or None (dynamic).
        launches: kernel launches of one trip of its body and condition,
            by opcode, its inner loops excluded.
        loops: the loops inside its body.
        condition_launches: the launches of its condition alone (run once
            more than the body).
    """
    scope: str
    trip_count: int | None
    launches: collections.Counter
    loops: list["Loop"] = dataclasses.field(default_factory=list)
    condition_launches: int = 0

    @property
    def per_trip(self) -> int:
        """Launches of one trip with the inner loops run to their trip
        counts (a dynamic inner loop counted as one trip, plus its
        condition's final check)."""
        inner = sum((loop.trip_count or 1) * loop.per_trip
                    + loop.condition_launches for loop in self.loops)
        return sum(self.launches.values()) + inner


def computations(text: str) -> tuple[dict[str, list[str]], str]:
    """The module's computations (name -> instruction lines) and the name
    of its entry computation."""
    found, current, entry = {}, None, ""
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header and line.rstrip().endswith("{"):
            current = header.group(2)
            found[current] = []
            entry = current if header.group(1) else entry
        elif line.startswith("}"):
            current = None
        elif current and line.strip().startswith(("%", "ROOT")):
            found[current].append(line.strip())
    return found, entry


def _opcode(line: str) -> str | None:
    match = _OPCODE.search(line)
    return match.group(1) if match else None


def _launches(lines: list[str]) -> collections.Counter:
    opcodes = (_opcode(line) for line in lines)
    return collections.Counter(op for op in opcodes
                               if op and op not in FREE and op != "while")


def _loops_in(name: str, comps: dict[str, list[str]]) -> list[Loop]:
    loops = []
    for line in comps[name]:
        if _opcode(line) == "call":   # the CPU's outlined loops
            for callee in re.findall(r"to_apply=%([\w.\-]+)", line):
                loops.extend(_loops_in(callee, comps))
        if _opcode(line) != "while":
            continue
        condition = re.search(r"condition=%([\w.\-]+)", line).group(1)
        body = re.search(r"body=%([\w.\-]+)", line).group(1)
        trip, scope = _TRIP.search(line), _SCOPE.search(line)
        condition_launches = _launches(comps[condition])
        loops.append(Loop(
            scope=scope.group(1) if scope else "",
            trip_count=int(trip.group(1)) if trip else None,
            launches=_launches(comps[body]) + condition_launches,
            loops=_loops_in(body, comps),
            condition_launches=sum(condition_launches.values())))
    return loops


def loops(text: str) -> list[Loop]:
    """The while loops of an optimized HLO module's entry computation,
    each with the loops nested in it."""
    comps, entry = computations(text)
    return _loops_in(entry, comps)


def flattened(tree: list[Loop], depth: int = 0):
    """(depth, loop) for every loop of `tree`, outermost first."""
    for loop in tree:
        yield depth, loop
        yield from flattened(loop.loops, depth + 1)


def rows(text: str, scope: str = "") -> list[dict]:
    """One JSON-ready row per loop whose scope ends in `scope` (every
    loop when it is empty)."""
    return [{"depth": depth, "scope": loop.scope[-100:],
             "trip_count": loop.trip_count,
             "own_launches": sum(loop.launches.values()),
             "by_op": dict(loop.launches.most_common(6)),
             "per_trip": loop.per_trip}
            for depth, loop in flattened(loops(text))
            if loop.scope.endswith(scope)]


def per_trip(text: str, scope: str) -> list[int]:
    """The launches of one trip (`Loop.per_trip`) of each loop whose scope
    ends in `scope`, outermost first."""
    return [row["per_trip"] for row in rows(text, scope)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump", help="optimized HLO text (as_text()), "
                        "gzipped or not")
    parser.add_argument("--scope", default="",
                        help="only loops whose JAX scope ends with this, "
                             "e.g. instruction_loop/while")
    args = parser.parse_args()
    opener = gzip.open if args.dump.endswith(".gz") else open
    with opener(args.dump, "rt") as file:
        text = file.read()
    for row in rows(text, args.scope):
        json.dump(row, sys.stdout)
        print()


if __name__ == "__main__":
    main()
