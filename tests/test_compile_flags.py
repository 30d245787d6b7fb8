"""`benchmarks/compile_flags.py`: each flag set in a child process of its
own (one XLA device, the cache off), XLA's defaults first, the children
two at a time with their cores swapped each round."""
import json

import pytest

from benchmarks import compile_flags


class _Child:
    def __init__(self, flags, core, returncode=0):
        self.flags, self.core, self.returncode = flags, core, returncode

    def communicate(self):
        return json.dumps({"compile_s": 1.0, "step_s": 0.5,
                           "core": self.core}) + "\n", None


def test_a_childs_flags_hold_one_device_and_no_cache(monkeypatch):
    monkeypatch.delenv("JAXATARI_LOWERING", raising=False)
    env = compile_flags._child_environment("--xla_backend_optimization_level=1")
    assert env["XLA_FLAGS"].split() == [
        "--xla_force_host_platform_device_count=1",
        "--xla_backend_optimization_level=1"]
    assert env["JAX_ENABLE_COMPILATION_CACHE"] == "false"
    assert env["JAXATARI_LOWERING"] == "cpu"
    assert compile_flags._child_environment("")["XLA_FLAGS"] == (
        "--xla_force_host_platform_device_count=1")


def test_defaults_run_first_and_rounds_swap_cores(monkeypatch, capsys):
    monkeypatch.setattr(compile_flags.pinned, "cores", lambda: [0, 1])
    monkeypatch.setattr(compile_flags, "_start",
                        lambda flags, core, args: _Child(flags, core))
    compile_flags.main(["--game", "breakout", "--envs", "2", "--rounds", "2",
                        "--flag=--a", "--flag=--b"])
    rows = [json.loads(line) for line in capsys.readouterr().out.split("\n")
            if line]
    assert [(r["round"], r["flags"], r["core"]) for r in rows] == [
        (0, "", 0), (0, "--a", 1), (0, "--b", 0),
        (1, "", 1), (1, "--a", 0), (1, "--b", 1)]
    assert all(r["game"] == "breakout" and r["envs"] == 2 for r in rows)


def test_a_failed_child_stops_the_run(monkeypatch):
    monkeypatch.setattr(compile_flags, "_start",
                        lambda flags, core, args: _Child(flags, core, 1))
    with pytest.raises(SystemExit, match="child for '' failed"):
        compile_flags.main(["--rounds", "1"])


def test_a_childs_command_holds_the_run_and_its_flags(monkeypatch):
    commands = []

    class Popen:
        def __init__(self, command, env, **_):
            commands.append((command, env["XLA_FLAGS"]))

    monkeypatch.setattr(compile_flags.pinned.subprocess, "Popen", Popen)
    args = compile_flags.argparse.Namespace(game="pong", envs=4, steps=7)
    compile_flags._start("--xla_a", 1, args)
    (command, xla), = commands
    # the child times as many steps as the parent was told, of that game
    assert command[command.index("--steps") + 1] == "7"
    assert command[command.index("--game") + 1] == "pong"
    assert command[command.index("--envs") + 1] == "4"
    assert "--child" in command and xla.endswith("--xla_a")
