"""The warning for a network that no longer reads the screen: the watch's rule, which
networks it reads, its threshold against an untrained network on Pong's screens, and a real
run blinded by a huge lr (a run that learns and is not warned: tests/envs/test_gym_family.py)."""

import math

import pytest
import torch

from asyncrl.run.blindness import (
    BLIND_LIVE,
    BLIND_SPREAD,
    NEAR_UNIFORM,
    BlindnessWatch,
    blindness_watch,
)
from tests.conftest import REPO, compose, run_cli

A3C_SPREADS = ("value_spread", "policy_spread")
BLIND = {"value_spread": BLIND_SPREAD / 10, "policy_spread": BLIND_SPREAD / 10}
SEEING = {"value_spread": BLIND_SPREAD * 10, "policy_spread": BLIND_SPREAD * 10}
WARNING = "stopped reading the screen"  # the warning's words


def test_the_watch_warns_once_after_enough_blind_readings_over_enough_frames():
    watch = BlindnessWatch(A3C_SPREADS, readings=3, frames=25)
    said = [watch.reading(frames, stats) for frames, stats in
            [(10, BLIND), (20, SEEING), (30, BLIND), (40, BLIND), (50, BLIND), (55, BLIND),
             (60, BLIND)]]
    assert said[:4] == [None] * 4  # the reading at T=20 broke the first streak
    assert said[4] is None  # 3 readings, but over 20 frames
    assert said[5] is not None and "4 readings in a row from T=30 to T=55" in said[5]
    assert said[6] is None  # once per run


def test_the_q_methods_watch_reads_their_q_spread():
    watch = BlindnessWatch(("q_spread",), readings=2, frames=0)
    assert watch.reading(10, BLIND) is None  # A3C's spreads are not what it reads
    assert watch.reading(20, {"q_spread": BLIND_SPREAD * 10}) is None
    assert watch.reading(30, {"q_spread": BLIND_SPREAD / 10}) is None
    assert watch.reading(40, {"q_spread": float("nan")}) is None  # nan: not below; a new streak
    assert watch.reading(50, {"q_spread": BLIND_SPREAD / 10}) is None
    said = watch.reading(60, {"q_spread": 0.0})
    assert said is not None and "Q(s, a)" in said and WARNING in said
    assert "asyncrl-probe" not in said  # no hint unless asked: the probe reads A3C alone
    hinted = BlindnessWatch(A3C_SPREADS, readings=1, frames=0, probe_hint=True)
    assert "asyncrl-probe --analyse" in hinted.reading(10, BLIND)


def test_the_watch_warns_when_the_last_conv_falls_silent_under_a_near_uniform_policy():
    """Live units below BLIND_LIVE with the entropy near uniform in every reading over
    live_frames; the spreads may stay as an untrained network's (SEEING) meanwhile."""
    uniform = 2.0
    watch = BlindnessWatch(A3C_SPREADS, uniform_entropy=uniform, live_frames=100)
    silent = {**SEEING, "live_units": BLIND_LIVE / 2, "entropy": uniform * NEAR_UNIFORM}
    said = [watch.reading(frames, stats) for frames, stats in [
        (0, silent), (60, {**silent, "live_units": BLIND_LIVE}),  # a live reading: anew
        (70, silent), (120, {**silent, "entropy": uniform * NEAR_UNIFORM * 0.99}),  # learning
        (130, silent), (200, silent), (229, silent), (230, silent), (400, silent)]]
    assert said[:7] == [None] * 7  # from T=130, 99 frames by T=229
    assert said[7] is not None and "from T=130 to T=230" in said[7] and "last conv" in said[7]
    assert said[8] is None  # once per run
    # without live_units (vectors), or without a uniform entropy to compare with (the
    # Q-methods), that rule is off
    assert BlindnessWatch(A3C_SPREADS, live_frames=0).reading(0, silent) is None
    plain = BlindnessWatch(A3C_SPREADS, uniform_entropy=uniform, live_frames=0)
    assert plain.reading(0, {**SEEING, "entropy": uniform}) is None


def test_an_atari_actor_critic_is_watched_for_silent_units_against_its_action_count():
    from asyncrl.run.launcher import build_shared_state

    cfg = compose("env=atari/breakout", "workers=1", "total_frames=4_000_000")
    watch = blindness_watch(build_shared_state(cfg).model, cfg.total_frames, A3C_SPREADS)
    assert watch.uniform_entropy == pytest.approx(math.log(4))  # Breakout's 4 actions
    assert watch.live_frames == 400_000  # a tenth of the run, under 1M
    cfg = compose("env=atari/breakout", "workers=1", "algo=nstep_q")
    q_watch = blindness_watch(build_shared_state(cfg).model, cfg.total_frames, ("q_spread",))
    assert q_watch.uniform_entropy is None


@pytest.mark.parametrize(("overrides", "spreads"), [
    (["algo=a3c", "algo.t_max=1"], A3C_SPREADS),  # with its bootstrap state: two
    (["algo=nstep_q"], ("q_spread",)),
    (["algo=nstep_q", "algo.t_max=1"], ()),  # one state an update: its spread is always 0
    (["algo=nstep_q", "algo.t_max=1", "envs_per_worker=2"], ("q_spread",)),
    (["algo=one_step_q", "algo.async_update=1", "algo.double_q=true"], ("q_spread",)),
    (["algo=one_step_q", "algo.async_update=1", "algo.replay_capacity=10",
      "algo.replay_ratio=1"], ("q_spread",)),
    (["algo=one_step_sarsa", "algo.async_update=1"], ()),
])
def test_each_algorithm_names_the_spreads_it_is_watched_by(overrides, spreads):
    from asyncrl.algos import algorithm_class
    from asyncrl.run.launcher import build_shared_state

    cfg = compose("env=atari/pong", "workers=1", *overrides)
    assert algorithm_class(cfg.algo.name).blindness_spreads(cfg.algo,
                                                            cfg.envs_per_worker) == spreads
    model = build_shared_state(cfg).model
    assert (blindness_watch(model, cfg.total_frames, spreads) is not None) == bool(spreads)


def test_a_short_run_waits_a_tenth_of_its_frames_at_most():
    from asyncrl.run.blindness import BLIND_FRAMES
    from asyncrl.run.launcher import build_shared_state

    model = build_shared_state(compose("env=atari/pong", "workers=1")).model
    assert blindness_watch(model, 40_000_000, A3C_SPREADS).needed_frames == BLIND_FRAMES
    assert blindness_watch(model, 50_000, A3C_SPREADS).needed_frames == 5_000


def test_the_watch_needs_both_spreads_below_and_ignores_readings_without_them():
    watch = BlindnessWatch(A3C_SPREADS, readings=1, frames=0)
    assert watch.reading(10, {"entropy": 0.0}) is None  # a reading without the spreads
    # a value that is the same everywhere is not blindness while the policy reads the state
    assert watch.reading(20, {**BLIND, "policy_spread": BLIND_SPREAD * 10}) is None
    assert watch.reading(30, {**BLIND, "value_spread": BLIND_SPREAD * 10}) is None
    assert watch.reading(40, {**BLIND, "value_spread": float("nan")}) is None  # nan: not below
    assert watch.reading(50, BLIND) is not None


@pytest.mark.parametrize(("network", "env", "watched"), [
    ("network=ff", "env=atari/pong", True),
    ("network=ff algo=nstep_q", "env=atari/pong", True),
    ("network=ff algo=one_step_sarsa", "env=atari/pong", True),
    ("network=lstm", "env=atari/pong", False),  # the LSTM's state moves V on a blind torso
    ("network=ff", "env=classic/cartpole", False),  # a state vector: no threshold measured
])
def test_the_watch_reads_feed_forward_image_networks_only(network, env, watched):
    from asyncrl.algos import algorithm_class
    from asyncrl.run.launcher import build_shared_state

    cfg = compose(env, *network.split(), "workers=1")
    model = build_shared_state(cfg).model
    spreads = algorithm_class(cfg.algo.name).blindness_spreads(cfg.algo, cfg.envs_per_worker)
    assert (blindness_watch(model, cfg.total_frames, spreads) is not None) == watched


def test_an_untrained_atari_network_on_pongs_screens_is_well_above_the_threshold():
    """Segments of random play on Pong, read as a worker's update reads them (5 states and
    the bootstrap state): the untrained network's spreads, 3.5e-3 or more in the readings
    that set the threshold, stand well clear of it."""
    from asyncrl.algos.a3c import output_spreads
    from asyncrl.run.launcher import build_shared_state
    from asyncrl.tools.probe import collect_screens

    cfg = compose("env=atari/pong", "workers=1")
    model = build_shared_state(cfg).model
    screens = collect_screens(cfg, 8, 5)
    with torch.no_grad():
        readings = [output_spreads([model(segment)[:2]]) for segment in screens.obs]
    for key in ("value_spread", "policy_spread"):
        mean = sum(r[key] for r in readings) / len(readings)
        assert mean > 3 * BLIND_SPREAD, (key, mean)


@pytest.mark.parametrize("algo", ["a3c", "nstep_q"])
def test_a_run_blinded_by_its_lr_says_so_in_its_log(workdir, algo):
    """CueImage through the conv network, one worker: lr 1 silences it within a few updates
    (its spreads 0 from then on), for A3C and for n-step Q. The same runs at a sound lr, which
    learn, are the CueImage learning tests of tests/envs/test_gym_family.py: they must not be
    warned."""
    out = workdir / "run"
    result = run_cli(["env=gym", "env.id=tests.gym_test_envs:CueImage-v0", "env.frame_stack=1",
                      f"algo={algo}", "algo.gamma=0", "workers=1", "total_frames=1200", "lr=1",
                      "log.progress=false", "log.interval_seconds=0.02", "eval.episodes=0",
                      f"hydra.run.dir={out}"], cwd=workdir, extra_env={"PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-2000:]
    log = (out / "asyncrl.log").read_text()
    assert log.count(WARNING) == 1, log[-2000:]


def test_an_untrained_q_network_on_pongs_screens_is_well_above_the_threshold():
    """The same segments through n-step Q's network, each read as its update reads them (the
    5 states it acted in): 4.4e-3 on average in the readings that checked the threshold for
    the Q-methods (asyncrl/run/blindness.py)."""
    from asyncrl.algos.value_based import q_spread
    from asyncrl.run.launcher import build_shared_state
    from asyncrl.tools.probe import collect_screens

    cfg = compose("env=atari/pong", "algo=nstep_q", "workers=1")
    model = build_shared_state(cfg).model
    screens = collect_screens(cfg, 8, 5)
    with torch.no_grad():
        readings = [q_spread([(model(segment[:5], None)[0],)])["q_spread"]
                    for segment in screens.obs]
    assert sum(readings) / len(readings) > 3 * BLIND_SPREAD, readings
