"""The Python examples of the repository README and of docs/PYTHON.md, and the
package README's examples, run as written."""

import re
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT


def quickstart_blocks(page, marker):
    readme = (ROOT / page).read_text(encoding="utf-8")
    m = re.search(rf"<!-- {marker}:start -->(.*?)<!-- {marker}:end -->", readme, re.S)
    assert m, f"{page} has no {marker} markers"
    return re.findall(r"```python\n(.*?)```", m.group(1), re.S)


@pytest.mark.parametrize(
    ("page", "marker"),
    [
        ("README.md", "quickstart:python"),
        ("docs/PYTHON.md", "guide:python"),
        ("docs/PYTHON.md", "public-ids:python"),
    ],
)
def test_readme_quickstart_runs(tmp_path, page, marker):
    blocks = quickstart_blocks(page, marker)
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


def test_package_readme_examples_run(tmp_path):
    # The package README's examples (indented in its list too), with the lease
    # store's directory moved under this test's temporary directory.
    readme = (ROOT / "bindings-python" / "README.md").read_text(encoding="utf-8")
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)^ *```", readme, re.S | re.M)]
    assert len(blocks) >= 2 and any("lease=" in b for b in blocks)
    for i, code in enumerate(blocks):
        code = code.replace("file:/tmp/snowmint-ids", f"file:{tmp_path / 'ids'}")
        if not code.startswith("import snowmint"):
            code = "import snowmint\n" + code
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, f"block {i} failed:\n{code}\n{proc.stdout}\n{proc.stderr}"
    assert (tmp_path / "ids").is_dir()
