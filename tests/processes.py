"""Killing a training process part-way, as a crash would (the resume
tests of `jaxatari train` and `jaxatari sweep`)."""
from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import time


def kill_at_checkpoint(command: list[str], checkpoint: pathlib.Path,
                       timeout: float = 300) -> None:
    """Starts `command` and SIGKILLs it as soon as `checkpoint` (a
    checkpoint step's directory) exists; fails if it ends first or the
    checkpoint takes over `timeout` seconds."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while not checkpoint.exists():
        assert process.poll() is None, "it ended before its kill"
        assert time.monotonic() < deadline, f"no {checkpoint} in time"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
