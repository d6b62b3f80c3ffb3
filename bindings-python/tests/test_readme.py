"""The Python quickstart in the repository README runs as written."""

import re
import subprocess
import sys

from conftest import ROOT


def quickstart_blocks():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- quickstart:python:start -->(.*?)<!-- quickstart:python:end -->", readme, re.S)
    assert m, "README.md has no python quickstart markers"
    return re.findall(r"```python\n(.*?)```", m.group(1), re.S)


def test_readme_quickstart_runs(tmp_path):
    blocks = quickstart_blocks()
    assert blocks, "the python quickstart has no ```python block"
    for i, code in enumerate(blocks):
        script = tmp_path / f"quickstart_{i}.py"
        script.write_text(code, encoding="utf-8")
        # A separate interpreter in a directory without the source tree, so the
        # example imports the installed package the way a user's script would.
        proc = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, f"block {i} failed:\n{code}\n{proc.stdout}\n{proc.stderr}"
