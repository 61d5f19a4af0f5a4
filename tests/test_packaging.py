"""A non-editable install carries the config tree, the data files and every package."""

from __future__ import annotations

import importlib
import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import tomllib

from tests.conftest import CONF, REPO


def test_wheel_ships_every_config_file(tmp_path):
    # from a copy without build/: setuptools packs whatever an earlier build left there
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        "build", ".git", ".nox", ".venv", "outputs", "multirun", "*.egg-info", "__pycache__",
        ".*_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path), str(source)], check=True, timeout=300)
    wheel = next(tmp_path.glob("asyncrl-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"asyncrl/conf/{p.relative_to(CONF).as_posix()}" for p in CONF.rglob("*.yaml")}
    assert expected and expected <= names
    assert {"asyncrl/commands/cli.py", "asyncrl/config/schemas.py", "asyncrl/run/launcher.py",
            "asyncrl/learning/worker.py", "asyncrl/run_files/checkpoint.py"} <= names
    # the bench and the probe, and the thin commands that start them
    assert {"asyncrl/tools/bench.py", "asyncrl/tools/probe.py", "asyncrl/commands/bench.py",
            "asyncrl/commands/probe.py"} <= names
    # the report's reference data, the TORCS driver's source (built after install) and
    # the sweeper Hydra loads by its plugin package name
    assert {"asyncrl/data/atari_reference.csv", "asyncrl/data/paper_table_s3.csv",
            "hydra_plugins/asyncrl_sweeper/__init__.py", "asyncrl/envs/maze/raycast.py",
            "asyncrl/report/metrics.py", "asyncrl/data/torcs_reference.csv",
            "asyncrl/envs/torcs/env.py", "asyncrl/envs/torcs/driver/asyncrl.cpp"} <= names
    # every module of the source tree: a package missing from pyproject's list would
    # install without it, which only a fresh machine shows
    package = REPO / "asyncrl"
    modules = {f"asyncrl/{p.relative_to(package).as_posix()}" for p in package.rglob("*.py")
               if "__pycache__" not in p.parts}
    assert modules - names == set()


def _documented_module_runs() -> set[str]:
    """Every ``python -m asyncrl...`` the README, docs/, the noxfile and CI tell a user to run."""
    texts = [REPO / "README.md", REPO / "noxfile.py", REPO / ".ci" / "run",
             *(REPO / "docs").glob("*.md")]
    found: set[str] = set()
    for path in texts:
        found |= set(re.findall(r"python3? -m (asyncrl[\w.]*)", path.read_text()))
    return found


def test_every_documented_entry_point_imports():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert {"asyncrl", "asyncrl-eval", "asyncrl-report", "asyncrl-probe"} <= set(scripts)
    for script, target in scripts.items():
        module, _, function = target.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), script
    modules = _documented_module_runs()
    assert {"asyncrl", "asyncrl.commands.bench"} <= modules
    for name in modules:
        spec = importlib.util.find_spec(f"{name}.__main__" if name == "asyncrl" else name)
        assert spec is not None and spec.origin, name
        if name != "asyncrl":  # run as a script: it must act when run, not only define
            assert 'if __name__ == "__main__":' in Path(spec.origin).read_text(), name
    import asyncrl
    from hydra_plugins.asyncrl_sweeper import LogUniformSweeper

    assert callable(asyncrl.train) and callable(asyncrl.load) and LogUniformSweeper
