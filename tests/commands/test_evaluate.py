"""asyncrl-eval: a saved checkpoint played for K episodes, optionally recorded."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import asyncrl
from asyncrl.run_files.checkpoint import load_checkpoint, save_checkpoint
from tests.conftest import QUICK, run_cli

SHORT_PONG = ["env=atari/pong", "env.max_episode_frames=800", "workers=1", "total_frames=2000",
              *QUICK]


def test_evaluate_a_checkpoint_and_record_a_video(workdir):
    run_dir = workdir / "run"
    assert run_cli([*SHORT_PONG, f"hydra.run.dir={run_dir}"], workdir).returncode == 0
    video = workdir / "episode.gif"
    result = run_cli([str(run_dir), "--episodes", "2", "--video", str(video)], workdir,
                     module="asyncrl.commands.evaluate")
    assert result.returncode == 0, result.stderr
    assert "mean score over 2 episodes" in result.stdout
    report = json.loads((run_dir / "evaluation.json").read_text())
    assert len(report["scores"]) == 2 and report["frames"] >= 2000
    assert all(-21 <= s <= 0 for s in report["scores"])  # an untrained agent does not win
    # env.max_episode_frames=800 cuts an untrained agent's game (thousands of frames long)
    # so each lasts 800 frames less its no-op start (up to 30 frames), counted by the agent's
    # steps of 4 frames
    lengths = report["episode_frames"]
    assert len(lengths) == 2 and all(770 <= f <= 800 and f % 4 == 0 for f in lengths)
    for i, f in enumerate(lengths, 1):
        assert f"episode {i}/2: score" in result.stdout and f"{f:,} frames" in result.stdout
    assert video.stat().st_size > 10_000


def test_evaluate_refuses_a_missing_or_corrupt_checkpoint(workdir):
    missing = run_cli([str(workdir / "nothing")], workdir, module="asyncrl.commands.evaluate")
    assert missing.returncode == 2 and "no run directory or checkpoint" in missing.stderr
    bad = workdir / "bad.pt"
    bad.write_bytes(b"\x00garbage")
    corrupt = run_cli([str(bad)], workdir, module="asyncrl.commands.evaluate")
    assert corrupt.returncode == 2 and "corrupt checkpoint" in corrupt.stderr
    assert "Traceback" not in corrupt.stderr


CARTPOLE = ["env=classic/cartpole", "workers=1", "total_frames=2000", *QUICK]


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("eval")
    run_dir = workdir / "run"
    assert run_cli([*CARTPOLE, f"hydra.run.dir={run_dir}"], workdir).returncode == 0
    return run_dir


def _refused_before_playing(result) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "episode 1/" not in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("asyncrl-eval: error:")
    return lines[0]


@pytest.mark.parametrize(("args", "fragment"), [
    (["--video", "run.avi"], "--video run.avi: write a .gif or .mp4 or .webm file"),
    (["--output", "run/config.yaml/scores.json"], "cannot write into run/config.yaml"),
    (["--output", "."], "is a directory"),
])
def test_eval_refuses_unwritable_outputs_before_playing(cartpole_run, args, fragment):
    result = run_cli([str(cartpole_run), "--episodes", "1", *args], cartpole_run.parent,
                     module="asyncrl.commands.evaluate")
    assert fragment in _refused_before_playing(result)


def test_a_bare_video_name_goes_into_the_run_directory(tmp_path):
    run_dir = tmp_path / "run"
    assert run_cli([*SHORT_PONG, "total_frames=400", f"hydra.run.dir={run_dir}"],
                   tmp_path).returncode == 0
    result = run_cli([str(run_dir), "--episodes", "1", "--video", "pong.gif"], tmp_path,
                     module="asyncrl.commands.evaluate")
    assert result.returncode == 0, result.stderr
    assert (run_dir / "pong.gif").stat().st_size > 1000
    assert not (tmp_path / "pong.gif").exists()


@pytest.mark.parametrize(("video", "module", "fragment"), [
    ("x.mp4", "imageio_ffmpeg", "pip install imageio-ffmpeg"),  # checked by suffix
    ("cartpole.gif", "pygame", "pygame is not installed"),     # CartPole's renderer, tried
])
def test_a_video_that_cannot_be_made_here_is_refused_before_playing(cartpole_run, video,
                                                                   module, fragment):
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    result = run_cli([str(cartpole_run), "--video", video], cartpole_run.parent,
                     module="asyncrl.commands.evaluate")
    assert fragment in _refused_before_playing(result)


def test_a_checkpoint_that_does_not_fit_its_config_is_refused_in_one_line(cartpole_run,
                                                                          tmp_path):
    saved = load_checkpoint(cartpole_run / "checkpoints" / "last.pt")
    saved.config["network"]["hidden"] = 128  # the weights say 256
    run_dir = tmp_path / "mismatched"
    save_checkpoint(run_dir / "checkpoints" / "last.pt", saved)
    played = run_cli([str(run_dir)], tmp_path, module="asyncrl.commands.evaluate")
    assert "does not fit the network its config builds" in _refused_before_playing(played)
    resumed = run_cli([f"resume={run_dir}", "total_frames=4000"], tmp_path)
    assert resumed.returncode == 2 and "Traceback" not in resumed.stderr
    assert resumed.stderr.strip().splitlines()[-1].startswith("asyncrl: error: checkpoint")
    assert "does not fit the network its config builds" in resumed.stderr


def test_a_checkpoint_file_is_scored_beside_itself(cartpole_run, tmp_path):
    import shutil

    kept = cartpole_run / "checkpoints" / "frames_00000002000.pt"
    shutil.copyfile(cartpole_run / "checkpoints" / "last.pt", kept)
    alone = tmp_path / "elsewhere" / "policy.pt"
    alone.parent.mkdir()
    shutil.copyfile(kept, alone)
    for source in (kept, alone):
        played = run_cli([str(source), "--episodes", "1"], tmp_path,
                         module="asyncrl.commands.evaluate")
        assert played.returncode == 0, played.stderr
        assert len(json.loads(source.with_suffix(".evaluation.json").read_text())["scores"]) == 1


def test_a_checkpoint_source_names_the_file_and_the_folder_of_its_runs_files(tmp_path):
    from asyncrl.errors import UserError
    from asyncrl.run_files.checkpoint import checkpoint_source

    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    kept = run / "checkpoints" / "frames_00000001000.pt"
    alone = tmp_path / "policy.pt"
    kept.touch()
    alone.touch()
    assert checkpoint_source(run) == (run / "checkpoints" / "last.pt", run)
    assert checkpoint_source(kept) == (kept, run)
    assert checkpoint_source(alone) == (alone, tmp_path)  # not the folder above it
    with pytest.raises(UserError, match="no run directory or checkpoint at"):
        checkpoint_source(tmp_path / "missing.pt")


def test_a_value_based_run_is_evaluated_at_the_epsilon_asked_for(tmp_path, cartpole_run):
    run_dir = tmp_path / "nq"
    assert run_cli([*CARTPOLE, "algo=nstep_q", f"hydra.run.dir={run_dir}"],
                   tmp_path).returncode == 0
    scores = {}
    for epsilon in ("0", "1"):
        out = tmp_path / f"eps{epsilon}.json"
        played = run_cli([str(run_dir), "--episodes", "4", "--epsilon", epsilon,
                          "--output", str(out)], tmp_path, module="asyncrl.commands.evaluate")
        assert played.returncode == 0, played.stderr
        assert f"epsilon {epsilon})" in played.stdout
        report = json.loads(out.read_text())
        assert report["epsilon"] == float(epsilon)
        scores[epsilon] = report["scores"]
    # the same seeds: greedy and uniformly random play all but never score alike in four
    assert scores["0"] != scores["1"]
    assert _first_episode_of(asyncrl.load(run_dir, epsilon=1.0)) == scores["1"][0]
    assert asyncrl.load(run_dir).epsilon == 0.05
    default = run_cli([str(run_dir), "--episodes", "1"], tmp_path,
                      module="asyncrl.commands.evaluate")
    assert default.returncode == 0, default.stderr
    assert "epsilon 0.05)" in default.stdout  # the run's own algo.eval_epsilon
    a3c = run_cli([str(cartpole_run), "--epsilon", "0.05"], tmp_path,
                  module="asyncrl.commands.evaluate")
    assert "samples its policy; an epsilon is for the value-based ones" in \
        _refused_before_playing(a3c)
    with pytest.raises(asyncrl.UserError, match="epsilon=0.05: this run's algorithm, a3c"):
        asyncrl.load(cartpole_run, epsilon=0.05)
    for wrong in ("0.1", True):
        with pytest.raises(asyncrl.UserError, match="give a number in"):
            asyncrl.load(run_dir, epsilon=wrong)
    out_of_range = run_cli([str(run_dir), "--epsilon", "1.5"], tmp_path,
                           module="asyncrl.commands.evaluate")
    assert "--epsilon 1.5: must lie in [0, 1]" in _refused_before_playing(out_of_range)


def _first_episode_of(agent) -> float:
    """The score of one episode of ``agent`` from a reset seeded 0, as asyncrl-eval's first."""
    env = agent.make_env()
    obs, _ = env.reset(seed=0)
    state, score, done = agent.reset_state(), 0.0, False
    while not done:
        action, state = agent.act(obs, state)
        obs, reward, terminated, truncated, _ = env.step(action)
        score, done = score + float(reward), terminated or truncated
    env.close()
    return score
