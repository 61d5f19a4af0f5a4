"""The Python API: ``asyncrl.train`` runs a job as the CLI does, ``asyncrl.load`` gives an
agent that acts in a gymnasium loop of one's own as ``asyncrl-eval`` acts."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

import asyncrl
from tests.conftest import QUICK, cli_env


def test_train_then_load_plays_what_asyncrl_eval_scores(tmp_path):
    # an LSTM, so that the state handed from step to step is part of what is compared
    result = asyncrl.train(["env=classic/cartpole", "network=lstm", "workers=1",
                            "total_frames=3000", *QUICK], run_dir=tmp_path / "run")
    assert result.status == "finished" and result.exit_code == 0
    status = json.loads((result.run_dir / "status.json").read_text())
    assert math.isclose(result.score, status["recent_score"])
    assert "checkpoint" in (result.run_dir / "asyncrl.log").read_text()  # the run's own log
    with pytest.raises(asyncrl.UserError, match="choose another run_dir"):
        asyncrl.train(["env=classic/cartpole"], run_dir=result.run_dir)

    agent = asyncrl.load(result.run_dir)
    env = agent.make_env()
    obs, _ = env.reset(seed=0)
    state = agent.reset_state()
    assert state is not None  # an LSTM's (h, c)
    score, done = 0.0, False
    while not done:
        action, state = agent.act(obs, state)
        obs, reward, terminated, truncated, _ = env.step(action)
        score += float(reward)
        done = terminated or truncated
    env.close()

    played = subprocess.run([sys.executable, "-m", "asyncrl.commands.evaluate",
                             str(result.run_dir), "--episodes", "1", "--seed", "0"],
                            env=cli_env(), capture_output=True, text=True, timeout=120)
    assert played.returncode == 0, played.stderr
    scored = json.loads((result.run_dir / "evaluation.json").read_text())["scores"]
    assert scored == [score]


def test_a_mistake_raises_the_clis_message_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(asyncrl.UserError, match="workers=0: need at least 1 worker"):
        asyncrl.train(["env=classic/cartpole", "workers=0"])
    with pytest.raises(asyncrl.UserError, match="unknown env option 'atari/nope'"):
        asyncrl.train(["env=atari/nope"], run_dir=tmp_path / "run")
    with pytest.raises(asyncrl.UserError, match="config keys only"):
        asyncrl.train(["hydra.run.dir=x"])
    with pytest.raises(asyncrl.UserError, match="no run directory or checkpoint"):
        asyncrl.load(tmp_path / "missing")
    assert list(tmp_path.iterdir()) == []


def test_importing_asyncrl_stays_light():
    probe = ("import sys, asyncrl\n"
             "light = 'torch' not in sys.modules\n"
             "asyncrl.train, asyncrl.load\n"
             "print(light, 'torch' in sys.modules or 'asyncrl.api' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], env=cli_env(), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]
