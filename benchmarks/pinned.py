"""Child processes held to one core each, for the benchmarks that time
programs side by side in one sitting (`before_after.py`,
`compile_flags.py`): each child gets a core of its own, and the callers
swap the cores between rounds."""
from __future__ import annotations

import os
import pathlib
import subprocess


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
