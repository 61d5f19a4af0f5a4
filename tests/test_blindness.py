"""The warning for a network that no longer reads the screen: the watch's rule, which
networks it reads, its threshold against an untrained network on Pong's screens, and a real
run blinded by a huge lr (a run that learns and is not warned: tests/test_gym_family.py)."""

import pytest
import torch

from asyncrl.run.blindness import BLIND_SPREAD, BlindnessWatch, blindness_watch
from tests.conftest import REPO, compose, run_cli

BLIND = {"value_spread": BLIND_SPREAD / 10, "policy_spread": BLIND_SPREAD / 10}
SEEING = {"value_spread": BLIND_SPREAD * 10, "policy_spread": BLIND_SPREAD * 10}
WARNING = "stopped reading the screen"  # the warning's words


def test_the_watch_warns_once_after_enough_blind_readings_over_enough_frames():
    watch = BlindnessWatch(readings=3, frames=25)
    said = [watch.reading(frames, stats) for frames, stats in
            [(10, BLIND), (20, SEEING), (30, BLIND), (40, BLIND), (50, BLIND), (55, BLIND),
             (60, BLIND)]]
    assert said[:4] == [None] * 4  # the reading at T=20 broke the first streak
    assert said[4] is None  # 3 readings, but over 20 frames
    assert said[5] is not None and "4 readings in a row from T=30 to T=55" in said[5]
    assert said[6] is None  # once per run


def test_a_short_run_waits_a_tenth_of_its_frames_at_most():
    from asyncrl.run.blindness import BLIND_FRAMES
    from asyncrl.run.launcher import build_shared_state

    model = build_shared_state(compose("env=atari/pong", "workers=1")).model
    assert blindness_watch(model, 40_000_000).needed_frames == BLIND_FRAMES
    assert blindness_watch(model, 50_000).needed_frames == 5_000


def test_the_watch_needs_both_spreads_below_and_ignores_readings_without_them():
    watch = BlindnessWatch(readings=1, frames=0)
    assert watch.reading(10, {"entropy": 0.0}) is None  # the value-based methods' metrics
    # a value that is the same everywhere is not blindness while the policy reads the state
    assert watch.reading(20, {**BLIND, "policy_spread": BLIND_SPREAD * 10}) is None
    assert watch.reading(30, {**BLIND, "value_spread": BLIND_SPREAD * 10}) is None
    assert watch.reading(40, {**BLIND, "value_spread": float("nan")}) is None  # nan: not below
    assert watch.reading(50, BLIND) is not None


@pytest.mark.parametrize(("network", "env", "watched"), [
    ("network=ff", "env=atari/pong", True),
    ("network=lstm", "env=atari/pong", False),  # the LSTM's state moves V on a blind torso
    ("network=ff", "env=classic/cartpole", False),  # a state vector: no threshold measured
])
def test_the_watch_reads_feed_forward_image_networks_only(network, env, watched):
    from asyncrl.run.launcher import build_shared_state

    cfg = compose(env, network, "workers=1")
    model = build_shared_state(cfg).model
    assert (blindness_watch(model, cfg.total_frames) is not None) == watched


def test_an_untrained_atari_network_on_pongs_screens_is_well_above_the_threshold():
    """Segments of random play on Pong, read as a worker's update reads them (5 states and
    the bootstrap state): the untrained network's spreads, 3.5e-3 or more in the readings
    that set the threshold, stand well clear of it."""
    from asyncrl.algos.a3c import output_spreads
    from asyncrl.commands.probe import collect_screens
    from asyncrl.run.launcher import build_shared_state

    cfg = compose("env=atari/pong", "workers=1")
    model = build_shared_state(cfg).model
    screens = collect_screens(cfg, 8, 5)
    with torch.no_grad():
        readings = [output_spreads([model(segment)[:2]]) for segment in screens.obs]
    for key in ("value_spread", "policy_spread"):
        mean = sum(r[key] for r in readings) / len(readings)
        assert mean > 3 * BLIND_SPREAD, (key, mean)


def test_a_run_blinded_by_its_lr_says_so_in_its_log(workdir):
    """CueImage through the conv network, one worker: lr 1 silences it within a few updates
    (both spreads 0 from then on). The same run at a sound lr, which learns, is the CueImage
    learning test of tests/test_gym_family.py: it must not be warned."""
    out = workdir / "run"
    result = run_cli(["env=gym", "env.id=tests.gym_test_envs:CueImage-v0", "env.frame_stack=1",
                      "algo.gamma=0", "workers=1", "total_frames=1200", "lr=1",
                      "log.progress=false", "log.interval_seconds=0.02", "eval.episodes=0",
                      f"hydra.run.dir={out}"], cwd=workdir, extra_env={"PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-2000:]
    log = (out / "asyncrl.log").read_text()
    assert log.count(WARNING) == 1, log[-2000:]
