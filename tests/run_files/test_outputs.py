"""What a run writes: CSV rows that survive a resume, the curve, the console's numbers."""

from __future__ import annotations

import csv
import dataclasses
import os

import pytest

from asyncrl.errors import UserError
from asyncrl.run.display import Progress, format_duration
from asyncrl.run_files.checkpoint import (
    Checkpoint,
    keep_copy,
    kept_checkpoint_path,
    load_checkpoint,
    save_checkpoint,
)
from asyncrl.run_files.plots import plot_learning_curve, rolling_mean
from asyncrl.run_files.recorder import Recorder


def test_recorder_appends_to_existing_files_with_one_header(tmp_path):
    first = Recorder(tmp_path, score_window=2, metrics=["loss"])
    first.episode(0, 100, 1.0, -21.0, 800)
    first.close()
    second = Recorder(tmp_path, score_window=2, metrics=["loss"])
    second.episode(1, 200, 2.0, -19.0, 900)
    second.episode(0, 300, 3.0, -17.0, 1000)
    assert second.recent_mean() == pytest.approx(-18.0)  # window of 2
    second.close()
    with (tmp_path / "episodes.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["score"] for r in rows] == ["-21.0", "-19.0", "-17.0"]
    assert (tmp_path / "episodes.csv").read_text().count("worker,frames") == 1


def test_a_run_resumed_by_a_version_with_a_new_metric_keeps_its_files_columns(tmp_path):
    older = Recorder(tmp_path, score_window=2, metrics=["loss", "entropy"])
    older.update(0, 100, 1.0, {"loss": 1.5, "entropy": 1.3})
    older.close()
    newer = Recorder(tmp_path, score_window=2, metrics=["loss", "value_spread", "entropy"],
                     resume_frames=100)
    newer.update(1, 200, 2.0, {"loss": 0.5, "value_spread": 0.2, "entropy": 1.1})
    newer.close()
    lines = (tmp_path / "updates.csv").read_text().splitlines()
    assert lines[0] == "worker,frames,wall_time,updates,loss,entropy"
    rows = list(csv.DictReader(lines))
    assert [(r["loss"], r["entropy"]) for r in rows] == [("1.5", "1.3"), ("0.5", "1.1")]
    assert all(None not in r for r in rows)  # no value without a column


def test_episode_rows_name_the_environment_and_an_older_file_keeps_its_columns(tmp_path):
    (tmp_path / "new").mkdir()
    newer = Recorder(tmp_path / "new", score_window=2, metrics=["loss"])
    newer.episode(1, 100, 1.0, -20.0, 800, environment=3)
    newer.close()
    (row,) = list(csv.DictReader((tmp_path / "new" / "episodes.csv").open()))
    assert (row["worker"], row["environment"]) == ("1", "3")
    # a run from before the column resumes: its rows keep the five columns it has
    older = tmp_path / "old"
    older.mkdir()
    (older / "episodes.csv").write_text(
        "worker,frames,wall_time,score,episode_frames\n0,100,1.0,-21.0,800\n")
    resumed = Recorder(older, score_window=2, metrics=["loss"], resume_frames=100)
    resumed.episode(0, 200, 2.0, -19.0, 900, environment=2)
    resumed.close()
    lines = (older / "episodes.csv").read_text().splitlines()
    assert lines == ["worker,frames,wall_time,score,episode_frames", "0,100,1.0,-21.0,800",
                     "0,200,2.0,-19.0,900"]


def test_evaluation_rows_hold_every_score(tmp_path):
    recorder = Recorder(tmp_path, score_window=5, metrics=["loss"])
    recorder.evaluation(1000, 5.0, [1.0, 2.0, 6.0])
    recorder.close()
    with (tmp_path / "eval.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert float(row["mean_score"]) == 3.0 and row["scores"] == "1 2 6"


def test_rolling_mean_by_hand():
    assert rolling_mean([1, 3, 5, 7], 2) == [1.0, 2.0, 4.0, 6.0]


def test_learning_curve_png_is_drawn_from_episodes(tmp_path):
    recorder = Recorder(tmp_path, score_window=5, metrics=["loss"])
    for i in range(30):
        recorder.episode(i % 2, 1000 * i, float(i), -21.0 + i / 3, 100)
    recorder.close()
    out = plot_learning_curve(tmp_path, "test")
    assert out is not None and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_curve_without_episodes(tmp_path):
    Recorder(tmp_path, score_window=5, metrics=["loss"]).close()
    assert plot_learning_curve(tmp_path, "empty") is None


def test_progress_line_and_eta():
    p = Progress(frames=250, total=1000, frames_per_second=50.0, recent_score=-20.5,
                 episodes=3, last_eval=None, workers_alive=2, workers=2)
    assert p.eta_seconds() == 15.0
    assert "T=250/1,000 (25.0%)" in p.line() and "recent score=-20.50" in p.line()
    assert format_duration(3725) == "1:02:05" and format_duration(None) == "?"


def test_checkpoint_round_trip_and_atomic_replace(tmp_path):
    path = tmp_path / "checkpoints" / "last.pt"
    checkpoint = Checkpoint(model={}, optimizer={}, frames=7, wall_time=1.5, generation=0,
                            config={"lr": 0.1})
    save_checkpoint(path, checkpoint)
    save_checkpoint(path, dataclasses.replace(checkpoint, frames=9))
    assert load_checkpoint(path).frames == 9
    assert [p.name for p in path.parent.iterdir()] == ["last.pt"]  # no temporary files left


@pytest.mark.parametrize("links", [True, False])
def test_a_kept_checkpoint_keeps_its_T_when_the_next_one_replaces_last_pt(
        tmp_path, monkeypatch, links):
    if not links:  # a filesystem that refuses hard links gets a copy
        def refuse(*_):
            raise OSError("links not supported")
        monkeypatch.setattr(os, "link", refuse)
    path = tmp_path / "checkpoints" / "last.pt"
    checkpoint = Checkpoint(model={}, optimizer={}, frames=7, wall_time=1.5, generation=0,
                            config={"lr": 0.1})
    for frames in (7, 2_000_000):
        save_checkpoint(path, dataclasses.replace(checkpoint, frames=frames))
        kept = kept_checkpoint_path(tmp_path, frames)
        keep_copy(path, kept)
        keep_copy(path, kept)  # twice: nothing changes, nothing is left behind
        assert os.path.samefile(path, kept) == links
    save_checkpoint(path, dataclasses.replace(checkpoint, frames=9_000_000))
    names = sorted(p.name for p in path.parent.iterdir())
    # sorted by name is sorted by T, and no temporary is left
    assert names == ["frames_00000000007.pt", "frames_00002000000.pt", "last.pt"]
    assert [load_checkpoint(path.parent / n).frames for n in names] == [7, 2_000_000, 9_000_000]


def test_a_flipped_bit_in_a_weight_is_refused_and_an_older_checkpoint_still_loads(tmp_path):
    import torch

    path = tmp_path / "last.pt"
    weight = torch.full((64,), 0.5)
    payload = {"model": {"w": weight}, "optimizer": {}, "frames": 7, "wall_time": 1.5,
               "generation": 0, "config": {"lr": 0.1}}
    save_checkpoint(path, Checkpoint(**payload))
    data = bytearray(path.read_bytes())
    at = bytes(data).find(weight.numpy().tobytes())  # the tensor's record, stored raw
    assert at > 0
    data[at + 2] ^= 0x01  # 0.5 becomes another number: torch itself would load it
    path.write_bytes(bytes(data))
    with pytest.raises(UserError, match="do not match the SHA-256 written with them"):
        load_checkpoint(path)
    torch.save({"format": 1, **payload}, path)  # as written before checkpoints had a digest
    older = load_checkpoint(path)
    assert torch.equal(older.model["w"], weight)
    assert older.target is None and older.target_epoch == 0  # keys added later: defaults


def test_checkpoint_without_the_expected_keys_is_refused(tmp_path):
    import torch

    path = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, path)
    with pytest.raises(UserError, match="not an asyncrl checkpoint"):
        load_checkpoint(path)


class _Payload:
    """Stands for a class a malicious pickle would name: weights-only loading refuses it."""


def test_a_checkpoint_holding_python_objects_is_refused_without_torchs_advice(tmp_path):
    import torch

    path = tmp_path / "evil.pt"
    torch.save({"format": 1, "model": _Payload()}, path)
    with pytest.raises(UserError) as err:
        load_checkpoint(path)
    assert str(err.value) == (f"{path} is not an asyncrl checkpoint: it holds Python objects "
                              "that a checkpoint never contains, and is not loaded")
    assert "weights_only" not in str(err.value)


def test_garbage_is_a_corrupt_checkpoint_in_one_line_without_torchs_advice(tmp_path):
    path = tmp_path / "bad.pt"
    path.write_bytes(b"\x00garbage")
    with pytest.raises(UserError) as err:
        load_checkpoint(path)
    assert str(err.value).startswith(f"corrupt checkpoint {path}: ")
    assert "weights_only" not in str(err.value) and "\n" not in str(err.value)


def test_on_a_full_disk_the_status_is_overwritten_in_place_and_no_temporary_is_left(
        tmp_path, monkeypatch):
    import errno
    import json
    import os

    from asyncrl.run_files import run_status

    run_status.write_status(tmp_path, "running", frames=0)

    def no_room(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(run_status.os, "replace", no_room)
    run_status.write_status(tmp_path, "failed", reason="No space left on device", frames=12)
    assert json.loads((tmp_path / "status.json").read_text())["status"] == "failed"
    assert sorted(os.listdir(tmp_path)) == ["status.json"]
    monkeypatch.setattr(run_status, "IN_PLACE_BYTES", 10)  # more than the file's first block
    with pytest.raises(OSError, match="No space left"):
        run_status.write_status(tmp_path, "failed", reason="x", frames=13)
    assert json.loads((tmp_path / "status.json").read_text())["frames"] == 12  # untouched


def test_a_checkpoint_of_a_later_format_is_refused_naming_both_formats(tmp_path):
    import torch

    path = tmp_path / "later.pt"
    torch.save({"format": 2, "model": {}, "optimizer": {}, "frames": 7, "wall_time": 1.5,
                "generation": 0, "config": {}}, path)
    with pytest.raises(UserError, match="has format 2, this asyncrl reads 1 to 1"):
        load_checkpoint(path)
