"""Shared helpers: composing configs and running the real CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch

from asyncrl.algos import algorithm_class
from asyncrl.commands.prepare import register_schemas
from asyncrl.config.compose import compose_config

REPO = Path(__file__).resolve().parent.parent
CONF = REPO / "conf"

register_schemas()
# The tests that run torch in this process run small ops, which a second OpenMP thread does
# not speed up; on 2 cores busy with another run, its barriers made one 30-update test take
# 70-170 s where one thread takes 4 s. The CLI's processes set their own threads.
torch.set_num_threads(1)

# every algorithm conf/algo offers, A3C first, then the value-based ones (a Q head): read
# from the configs, so that a new algorithm joins each test that loops over them
ALGOS = tuple(sorted((p.stem for p in (CONF / "algo").glob("*.yaml") if p.stem[0] != "_"),
                     key=lambda name: (name != "a3c", name)))
VALUE_BASED = tuple(name for name in ALGOS if algorithm_class(name).head == "q")

# small, fast settings for end-to-end runs: no console panel, frequent flushes
QUICK = ["log.progress=false", "log.interval_seconds=0.5", "eval.episodes=0"]


def compose(*overrides: str):
    """The composed config as typed dataclasses."""
    return compose_config(list(overrides), as_object=True)


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("HYDRA_FULL_ERROR", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_cli(args: Sequence[str], cwd: Path, timeout: float = 300,
            module: str = "asyncrl",
            extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m asyncrl ARGS`` in ``cwd``, as a user types it."""
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd,
                          env={**cli_env(), **(extra_env or {})},
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path


def actions_the_simulator_receives(env) -> list:
    """A list that collects a copy of each action the innermost environment's step gets,
    past every wrapper (the clip among them)."""
    received: list = []
    simulator = env.unwrapped
    step = simulator.step

    def recording_step(action):
        received.append(np.array(action))
        return step(action)

    simulator.step = recording_step
    return received
