"""The learning-speed probe: its readings on known networks, and a short probe end to end."""

from __future__ import annotations

import json
import math
import sys

import pytest
import torch

from asyncrl.nets import build_model
from asyncrl.run_files.checkpoint import load_checkpoint
from asyncrl.tools.probe import analyse, collect_screens, main, read_network
from tests.conftest import compose


@pytest.fixture(scope="module")
def pong_screens():
    cfg = compose()
    return cfg, collect_screens(cfg, segments=24, t_max=5)


def pong_model(cfg, scale: float):
    from gymnasium.spaces import Box, Discrete

    torch.manual_seed(0)
    cfg.network.policy_init_scale = scale
    return build_model(cfg, Box(0, 255, (4, 84, 84)), Discrete(6), "actor_critic")


def test_screens_are_fixed_segments_of_random_play(pong_screens):
    cfg, screens = pong_screens
    again = collect_screens(cfg, segments=24, t_max=5)
    assert screens.obs.shape == (24, 6, 4, 84, 84)
    assert torch.equal(screens.obs, again.obs)  # the same screens for every probe
    assert (screens.actions >= 0).all() and (screens.actions < 6).all()
    firsts = screens.obs[:, 0].float()
    assert (firsts - firsts.mean(0)).abs().amax() > 0  # the screens differ


def test_a_small_policy_layer_starves_the_torso_of_policy_gradient(pong_screens):
    # the learning-pace issue's first hypothesis, as the probe measures it: the policy's
    # gradient reaches the torso through the policy layer's weights, scaled as they are
    cfg, screens = pong_screens
    small = read_network(pong_model(cfg, 0.01), screens, cfg.algo)
    full = read_network(pong_model(cfg, 1.0), screens, cfg.algo)
    assert small.policy_share["fc.0"] < 0.02
    assert full.policy_share["fc.0"] > 10 * small.policy_share["fc.0"]
    assert full.logit_spread > 20 * small.logit_spread
    assert small.entropy == pytest.approx(math.log(6), abs=1e-3)  # uniform to the eye
    for reading in (small, full):
        assert set(reading.live_units) == {"conv.0", "conv.2", "fc.0"}
        assert all(0 < share <= 1 for share in reading.live_units.values())


def test_dead_units_are_counted_as_dead(pong_screens):
    cfg, screens = pong_screens
    model = pong_model(cfg, 1.0)
    with torch.no_grad():
        model.torso.conv[0].bias.fill_(-1e3)  # no first-layer unit can fire
    reading = read_network(model, screens, cfg.algo)
    assert reading.live_units["conv.0"] == 0
    assert reading.policy_share["conv.0"] != reading.policy_share["conv.0"]  # nan: no gradient


def test_an_lstm_reads_each_screen_from_its_initial_state(pong_screens):
    from gymnasium.spaces import Box, Discrete

    from asyncrl.tools.probe import Screens, screen_outputs

    _, screens = pong_screens
    torch.manual_seed(0)
    model = build_model(compose("network=lstm"), Box(0, 255, (4, 84, 84)), Discrete(6),
                        "actor_critic")
    flipped = Screens(screens.obs.flip(0), screens.actions, screens.rewards, screens.terminals)
    # read as one sequence, the order of the screens would change every reading
    *readings, live = screen_outputs(model, screens)
    *flipped_readings, flipped_live = screen_outputs(model, flipped)
    assert readings == pytest.approx(flipped_readings, rel=1e-5)
    assert live == flipped_live
    # ... and a screen read among the others reads as it does alone
    with torch.no_grad():
        (alone, _), _ = model.step_many(screens.obs[:1, 0], [None])
        (among, _), _ = model.step_many(screens.obs[:, 0], [None] * screens.obs.shape[0])
        (sequence, _, _) = model(screens.obs[:, 0])
    assert torch.allclose(among[0], alone[0], atol=1e-6)
    assert not torch.allclose(sequence[-1], among[-1], atol=1e-6)  # what the fix changed


def test_probe_trains_through_the_cli_then_reads_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["probe"])
    main(["--frames", "3000", "--workers", "1", "--segments", "4", "--out", str(tmp_path),
          "--name", "p", "env.max_episode_frames=800", "log.interval_seconds=0.2",
          "envs_per_worker=1",  # whole episodes in 3,000 frames
          "checkpoint.keep=true", "checkpoint.interval_frames=1000"])
    printed = capsys.readouterr().out
    assert "| entropy (uniform 1.792) |" in printed and "live units after conv.0" in printed
    report = json.loads((tmp_path / "p" / "probe.json").read_text())
    assert report["frames"] >= 3000 and report["episodes"] >= 1
    # the run's own model at T=0 is rebuilt from its seed, so training changed it
    assert report["init"]["entropy"] != report["trained"]["entropy"]
    again = analyse(tmp_path / "p", segments=4)
    assert again.trained.entropy == pytest.approx(report["trained"]["entropy"])
    # the user's checkpoint interval wins over the probe's own (one checkpoint at the end)
    saved = load_checkpoint(tmp_path / "p" / "checkpoints" / "last.pt")
    assert saved.config["checkpoint"]["interval_frames"] == 1000
    # checkpoint.keep: one file per checkpoint, T = 0 and the last among them (how many
    # periodic ones fall between depends on how often the launcher gets the CPU)
    kept = sorted((tmp_path / "p" / "checkpoints").glob("frames_*.pt"))
    assert kept[0].name == "frames_00000000000.pt"
    assert kept[-1].name == f"frames_{report['frames']:011d}.pt"
    # the probe of a kept file reads the run as it stood at that T: at T = 0, the untrained
    # network and none of the run's episodes or updates
    main(["--analyse", str(kept[0]), "--segments", "4"])
    at_zero = json.loads(kept[0].with_suffix(".probe.json").read_text())
    assert at_zero["frames"] == 0 and at_zero["episodes"] == 0
    assert at_zero["training_entropy"] == []
    assert at_zero["trained"]["entropy"] == pytest.approx(at_zero["init"]["entropy"])
    assert at_zero["trained"]["entropy"] != report["trained"]["entropy"]
    # the timeline: a row per kept checkpoint, in the order of T
    capsys.readouterr()
    main(["--analyse", str(tmp_path / "p"), "--timeline", "--segments", "4"])
    printed = capsys.readouterr().out
    rows = json.loads((tmp_path / "p" / "timeline.json").read_text())
    assert [row["frames"] for row in rows] == [int(p.stem.split("_")[1]) for p in kept]
    assert f"{len(kept)} kept checkpoints" in printed and "| g > eps, conv.0 |" in printed
    assert rows[0]["entropy"] == pytest.approx(at_zero["trained"]["entropy"])
    assert rows[-1]["entropy"] == pytest.approx(report["trained"]["entropy"])
    # at T = 0 RMSProp's g is where the tuned Atari setting starts it, 0.1: every element
    # above its eps, 1e-3
    assert set(rows[0]["above_eps"].values()) == {1.0}


def test_share_above_eps_counts_every_element_of_each_parameter_and_skips_momentum():
    from types import SimpleNamespace

    from asyncrl.tools.probe import share_above_eps

    opt = SimpleNamespace(name="rmsprop", eps=1e-3)
    # per-worker statistics: a slot per worker, each of the parameter's shape
    stats = [torch.tensor([[0.0, 2e-3], [1e-2, 1e-4]]), torch.tensor([[5e-4], [1.0]])]
    assert share_above_eps(opt, ["w", "b"], stats) == {"w": 0.5, "b": 0.5}
    assert share_above_eps(SimpleNamespace(name="momentum_sgd"), ["w"], stats[:1]) is None


def test_a_timeline_that_cannot_be_read_is_refused_in_one_line(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    assert_refused(["--analyse", str(tmp_path), "--timeline"], "kept no checkpoints")
    one_file = tmp_path / "checkpoints" / "frames_00000000000.pt"
    one_file.write_bytes(b"")
    assert_refused(["--analyse", str(one_file), "--timeline"],
                   f"not one file: give the run directory ({tmp_path} ")
    assert_refused(["--analyse", str(tmp_path / "elsewhere"), "--timeline"],
                   "no run directory at")
    # refused before any training: a timeline needs the checkpoints the run keeps
    out = tmp_path / "out"
    out.mkdir()
    assert_refused(["--timeline", "checkpoint.keep=false", "--out", str(out)],
                   "drop checkpoint.keep=false")
    assert not any(out.iterdir())


def test_probe_refuses_a_network_it_cannot_read(tmp_path):
    from asyncrl.run.launcher import config_container
    from asyncrl.run_files.checkpoint import Checkpoint, save_checkpoint

    cfg = compose("algo=nstep_q")
    save_checkpoint(tmp_path / "checkpoints" / "last.pt", Checkpoint(
        model={}, optimizer={}, frames=0, wall_time=0.0, generation=0,
        config=config_container(cfg)))
    assert_refused(["--analyse", str(tmp_path)], "the probe reads A3C")


def assert_refused(argv, message):
    import io
    from contextlib import redirect_stderr

    err = io.StringIO()
    with pytest.raises(SystemExit) as stop, redirect_stderr(err):
        main(argv)
    assert stop.value.code == 2
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("asyncrl-probe: error: "), lines
    assert message in lines[0]


@pytest.mark.parametrize(("argv", "message"), [
    (["--frames", "0"], "--frames, --horizon, --workers and --segments must be positive"),
    (["--segments", "1"], "--segments at least 2"),
    (["algo.t_max=0"], "algo.t_max=0: must be at least 1"),
    (["env=atari/pongg"], "unknown env option 'atari/pongg'"),
])
def test_a_mistake_on_the_probes_command_line_is_one_line_and_exit_2(tmp_path, argv, message):
    assert_refused([*argv, "--out", str(tmp_path)], message)
    assert not any(tmp_path.iterdir())  # no run started

