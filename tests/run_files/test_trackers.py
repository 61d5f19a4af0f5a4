"""Trackers: every scalar goes to each of them alike; W&B (``asyncrl[wandb]``) in offline
mode gets what TensorBoard gets; without wandb, log.wandb=true is refused in one line."""

from __future__ import annotations

import importlib.util

import pytest

from asyncrl.run_files.recorder import Recorder
from tests.conftest import QUICK, run_cli


class Remembers:
    def __init__(self) -> None:
        self.points: list[tuple[dict[str, float], int]] = []
        self.closed = False

    def log(self, values: dict[str, float], frames: int) -> None:
        self.points.append((dict(values), frames))

    def close(self) -> None:
        self.closed = True


def test_every_tracker_gets_the_same_points(tmp_path):
    first, second = Remembers(), Remembers()
    recorder = Recorder(tmp_path, 5, ["loss"], trackers=[first, second])
    recorder.episode(0, 100, 1.0, 12.0, 40)
    recorder.update(1, 150, 1.5, {"loss": 0.5})
    recorder.evaluation(200, 2.0, [3.0, 5.0])
    recorder.speed(200, 900.0)
    recorder.close()
    assert first.points == second.points == [
        ({"episode/score": 12.0, "episode/frames": 40}, 100),
        ({"train/loss": 0.5}, 150),
        ({"eval/mean_score": 4.0}, 200),
        ({"train/frames_per_second": 900.0}, 200)]
    assert first.closed and second.closed


def test_without_wandb_log_wandb_is_one_line_naming_the_extra(tmp_path):
    # sys.modules["wandb"] = None makes wandb absent to this interpreter, installed or not
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['wandb'] = None\n")
    result = run_cli(["env=classic/cartpole", "log.wandb=true"], tmp_path,
                     extra_env={"PYTHONPATH": str(hide)}, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "asyncrl: error: log.wandb=true needs the wandb package: pip install 'asyncrl[wandb]'"]
    assert not (tmp_path / "outputs").exists()


@pytest.mark.skipif(importlib.util.find_spec("wandb") is None,
                    reason="wandb is not installed (pip install '.[wandb]'); nox -s tests has it")
def test_wandb_offline_gets_the_scalars_tensorboard_gets(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = tmp_path / "run"
    result = run_cli(["env=classic/cartpole", "workers=1", "total_frames=3000", "log.wandb=true",
                      *QUICK, f"hydra.run.dir={run_dir}"], tmp_path, timeout=240,
                     extra_env={"WANDB_MODE": "offline", "WANDB_SILENT": "true",
                                "WANDB_CONFIG_DIR": str(tmp_path / "wandb_config"),
                                "WANDB_CACHE_DIR": str(tmp_path / "wandb_cache")})
    assert result.returncode == 0, result.stderr[-2000:]
    events = EventAccumulator(str(run_dir / "tb"))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert {"episode/score", "train/policy_loss", "train/frames_per_second"} <= set(tags)
    logs = list((run_dir / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(logs) == 1
    recorded = logs[0].read_bytes()
    assert [tag for tag in tags if tag.encode() not in recorded] == []
    assert b"CartPole-v1" in recorded  # the run's config goes along
