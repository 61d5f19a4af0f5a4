"""Each option beyond the paper switched on in a short run of the real CLI, and a wrong
combination refused by it in one line."""

from __future__ import annotations

import pytest
import torch

from tests.conftest import QUICK, REPO, run_cli

CARTPOLE = ["env=classic/cartpole", "total_frames=400", "serial=true", "workers=1", *QUICK]
TINY_IMAGE = ["env=gym", "env.id=tests.gym_test_envs:TinyImage-v0", "total_frames=300",
              "serial=true", "workers=1", *QUICK]


def _train(workdir, args):
    out = workdir / "run"
    result = run_cli([*args, f"hydra.run.dir={out}"], workdir,
                     extra_env={"PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-2000:]
    model = torch.load(out / "checkpoints" / "last.pt", weights_only=True)["model"]
    return model, (out / "asyncrl.log").read_text()


def test_a3c_with_gae(workdir):
    _, log = _train(workdir, [*CARTPOLE, "algo.gae_lambda=0.95"])
    assert "GAE lambda=0.95" in log


@pytest.mark.parametrize("network", ["ff", "lstm"])
def test_nstep_q_with_every_q_option_at_once(workdir, network):
    model, log = _train(workdir, [*CARTPOLE, "algo=nstep_q", f"network={network}",
                                  "algo.lambda_return=0.8", "algo.double_q=true",
                                  "network.dueling=true", "algo.replay_capacity=50",
                                  "algo.replay_ratio=2"])
    assert "q.advantage.weight" in model and "q.value.weight" in model
    assert "replay: the last 50 segments, 2 replayed per new one" in log
    assert "double Q, lambda-returns 0.8" in log


def test_one_step_q_with_double_q_and_replay(workdir):
    _, log = _train(workdir, [*CARTPOLE, "algo=one_step_q", "algo.double_q=true",
                              "algo.replay_capacity=10", "algo.replay_ratio=1"])
    assert "replay: the last 10 segments" in log and "double Q" in log


@pytest.mark.parametrize(("network", "algo"), [("ff", "a3c"), ("lstm", "nstep_q")])
def test_spatial_softmax_on_images(workdir, network, algo):
    model, _ = _train(workdir, [*TINY_IMAGE, f"network={network}", f"algo={algo}",
                                "network.spatial_softmax=true"])
    assert model["torso.fc.0.weight"].shape[1] == 2 * 32  # x and y of each last-conv map


def test_the_nature_convs_on_images(workdir):
    model, _ = _train(workdir, [*TINY_IMAGE, "network.conv=nature"])
    # 84 -> (84 - 8) / 4 + 1 = 20 -> (20 - 4) / 2 + 1 = 9 -> 9 - 3 + 1 = 7
    assert model["torso.conv.4.weight"].shape == (64, 64, 3, 3)
    assert model["torso.fc.0.weight"].shape[1] == 64 * 7 * 7


@pytest.mark.parametrize(("args", "fragment"), [
    (["algo.double_q=true"], "algo.double_q is not a key of algo=a3c"),
    (["algo=nstep_q", "algo.replay_capacity=50"], "replay needs both"),
    (["env=classic/cartpole", "network.spatial_softmax=true"], "observations are vectors"),
])
def test_the_cli_refuses_an_impossible_option_in_one_line(workdir, args, fragment):
    result = run_cli([*args, f"hydra.run.dir={workdir / 'run'}"], workdir)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not (workdir / "run").exists()
