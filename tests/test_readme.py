"""The README's Python example runs and prints what it says."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).parent.parent / "README.md"


def test_readme_cpu_example_runs():
    text = README.read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().startswith("[50 50 50 50] [250 250 250 250]")


def test_readme_quickstart_has_exactly_two_commands():
    text = README.read_text()
    quickstart = text.split("## Quickstart")[1].split("## ")[0]
    commands = re.findall(r"```bash\n(.*?)\n```", quickstart, re.S)
    assert commands == ['pip install -e . && jaxatari train '
                        'gymnax:Breakout-MinAtar --algo ppo --num-envs 64 '
                        '--frames 20000000 --out runs/minatar-breakout',
                        'pip install -e ".[test]" && python -m pytest']

