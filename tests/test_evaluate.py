"""asyncrl-eval: a saved checkpoint played for K episodes, optionally recorded."""

from __future__ import annotations

import json

from tests.conftest import QUICK, run_cli

SHORT_PONG = ["env=atari/pong", "env.max_episode_frames=800", "workers=1", "total_frames=2000",
              *QUICK]


def test_evaluate_a_checkpoint_and_record_a_video(workdir):
    run_dir = workdir / "run"
    assert run_cli([*SHORT_PONG, f"hydra.run.dir={run_dir}"], workdir).returncode == 0
    video = workdir / "episode.gif"
    result = run_cli([str(run_dir), "--episodes", "2", "--video", str(video)], workdir,
                     module="asyncrl.evaluate")
    assert result.returncode == 0, result.stderr
    assert "mean score over 2 episodes" in result.stdout
    report = json.loads((run_dir / "evaluation.json").read_text())
    assert len(report["scores"]) == 2 and report["frames"] >= 2000
    assert all(-21 <= s <= 0 for s in report["scores"])  # an untrained agent does not win
    assert video.stat().st_size > 10_000


def test_evaluate_refuses_a_missing_or_corrupt_checkpoint(workdir):
    missing = run_cli([str(workdir / "nothing")], workdir, module="asyncrl.evaluate")
    assert missing.returncode == 2 and "no run directory or checkpoint" in missing.stderr
    bad = workdir / "bad.pt"
    bad.write_bytes(b"\x00garbage")
    corrupt = run_cli([str(bad)], workdir, module="asyncrl.evaluate")
    assert corrupt.returncode == 2 and "corrupt checkpoint" in corrupt.stderr
    assert "Traceback" not in corrupt.stderr
