"""Child processes held to one core each, for the benchmarks that time
programs side by side in one sitting (`before_after.py`,
`compile_flags.py`, `kernel_batch.py`): each child gets a core of its
own, and the cores rotate between rounds (`side_by_side`)."""
from __future__ import annotations

import os
import pathlib
import subprocess
from typing import Callable, Iterator, Sequence, TypeVar

T = TypeVar("T")


def cores() -> list[int]:
    """The cores this process may run on (all of them where the OS cannot
    say: then only core 0 is named)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return [0]


def start(command: list[str], env: dict[str, str], core: int,
          cwd: pathlib.Path | None = None) -> subprocess.Popen:
    """`command` on `core` alone (`taskset`, where the OS has affinity),
    its standard output piped as text."""
    if hasattr(os, "sched_setaffinity"):
        command = ["taskset", "-c", str(core)] + command
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                            text=True, cwd=None if cwd is None else str(cwd))


def side_by_side(items: Sequence[T],
                 start_one: Callable[[T, int], subprocess.Popen],
                 round_: int, on: list[int], at_once: int
                 ) -> Iterator[tuple[T, int, int, str]]:
    """Each item's child (`start_one(item, core)`), `at_once` at a time:
    the k-th of a batch on core `on[(k + round_) % len(on)]`, so the cores
    rotate from round to round. Yields (item, core, return code, standard
    output) in the items' order, each batch once all of it has ended."""
    for first in range(0, len(items), at_once):
        running = []
        for k, item in enumerate(items[first:first + at_once]):
            core = on[(k + round_) % len(on)]
            running.append((item, core, start_one(item, core)))
        for item, core, process in running:
            out, _ = process.communicate()
            yield item, core, process.returncode, out
