"""The built wheel carries the grammar, schema and shipped rules, and works from anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from _helpers import NOTE_EXAMPLES, ROOT

import litmus_rules


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation: nothing may be fetched, and hatchling is a test dependency.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT)],
        check=True,
    )
    (path,) = out.glob("litmus_rules-*.whl")
    return path


def test_wheel_installs_into_a_fresh_venv_and_loads_the_shipped_rules(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    # The runtime dependencies come from this test environment (no network); the package itself
    # is installed from the wheel only.
    Path(site, "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", site, str(wheel)],
        check=True,
    )
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    # The fresh environment sees only the wheel: a PYTHONPATH of the caller's would put a source
    # tree first on sys.path.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = (
        "import litmus_rules, sys; r = litmus_rules.load_rules(); "
        "assert 'site-packages' in litmus_rules.__file__, litmus_rules.__file__; "
        "print(r.name, len(r.rule_names))"
    )
    result = subprocess.run([str(python), "-c", probe], cwd=workdir, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "litmus.validity"
    cli = subprocess.run(
        [str(python), "-m", "litmus_rules", "check", *NOTE_EXAMPLES, "--format", "jsonl"],
        cwd=workdir, capture_output=True, text=True, env=env,
    )
    assert cli.returncode == 1, cli.stderr
    assert len(cli.stdout.splitlines()) == 3


def test_the_package_declares_its_types() -> None:
    assert Path(litmus_rules.__file__).with_name("py.typed").exists()


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="CI installs the package non-editable")
def test_ci_tests_the_installed_package_not_the_source_tree() -> None:
    package = Path(litmus_rules.__file__).resolve()
    assert package.parent != ROOT / "litmus_rules" and "site-packages" in package.parts, package
    assert (package.parent / "_data" / "grammar" / "litmus.lark").exists()
    assert (package.parent / "_data" / "rules" / "validity.litmus").exists()
