"""Learning, not just running: each algorithm improves a policy on a cheap task through the
real CLI."""

from __future__ import annotations

import csv

import pytest

from tests.conftest import QUICK, run_cli

# the quick start as a user types it: every setting at CartPole's defaults (150k frames, lr
# 1.5e-3, gamma 0.99, no entropy bonus, tanh MLP torso), only the console quieter
QUICK_START = ["env=classic/cartpole", "workers=2", *QUICK]
# the value-based tests' settings: gamma 0.95 keeps the Q-targets small
CARTPOLE = ["env=classic/cartpole", "workers=2", "lr=3e-3", "algo.gamma=0.95", *QUICK]
ATARI_EPISODES = 50  # the Atari tests' window of training episodes


def scores(run_dir) -> list[float]:
    with (run_dir / "episodes.csv").open() as handle:
        rows = sorted(csv.DictReader(handle), key=lambda r: int(r["frames"]))
    return [float(r["score"]) for r in rows]


def train(workdir, args: list[str], timeout: float) -> list[float]:
    """Run the CLI with ``args``; the scores of its training episodes in frame order."""
    run_dir = workdir / "run"
    result = run_cli([*args, f"hydra.run.dir={run_dir}"], workdir, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return scores(run_dir)


def last_mean(played: list[float]) -> float:
    """The mean of the last ATARI_EPISODES training episodes."""
    last = played[-ATARI_EPISODES:]
    return sum(last) / len(last)


def assert_atari_run_reaches(workdir, settings: list[str], frames: int, threshold: float,
                             timeout: float) -> None:
    """Train 2 workers on ``settings`` for ``frames`` with the lr annealed over the main
    job's 40M frames, then hold the mean of the last training episodes to ``threshold``."""
    played = train(workdir, [*settings, "workers=2", f"total_frames={frames}",
                             "lr_anneal_frames=40000000", "log.tensorboard=false", *QUICK],
                   timeout)
    mean = last_mean(played)
    assert mean >= threshold, f"mean of the last {ATARI_EPISODES} episodes: {mean:.1f}"


def test_a3c_learns_cartpole_with_the_defaults(workdir):
    # measured (docs/notes/): 500 over the last 20 episodes for seeds 1-5, ~45 s
    played = train(workdir, [*QUICK_START, "log.tensorboard=false"], 600)
    first, last = played[:20], played[-20:]
    assert sum(first) / 20 < 40  # a random policy balances ~22 steps
    assert sum(last) / 20 >= 400, f"mean of the last 20 episodes: {sum(last) / 20:.1f}"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3, 4])
def test_a3c_reaches_the_cartpole_limit_with_the_defaults(workdir, seed):
    last = train(workdir, [*QUICK_START, f"seed={seed}"], 1200)[-20:]
    assert sum(last) / 20 >= 475, f"mean of the last 20 episodes: {sum(last) / 20:.1f}"


# The value-based methods on CartPole: epsilon annealed over 20k frames instead of 4M and the
# target network refreshed every 2,000 frames instead of 40,000, both scaled to a task that
# is learnt in tens of thousands of frames rather than tens of millions.
VALUE_BASED = [*CARTPOLE, "algo.epsilon_anneal_frames=20000", "algo.target_update_frames=2000",
               "total_frames=60000", "log.tensorboard=false"]


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["one_step_q", "one_step_sarsa", "nstep_q"])
def test_value_based_method_learns_cartpole(workdir, algo):
    played = train(workdir, [*VALUE_BASED, f"algo={algo}"], 1200)
    first, last = played[:20], played[-20:]
    assert sum(first) / 20 < 40
    # measured at 60k frames: 145 (one-step Q), 108 (Sarsa), 190 (n-step Q); random is ~22
    assert sum(last) / 20 >= 60, f"mean of the last 20 episodes: {sum(last) / 20:.1f}"


@pytest.mark.slow
def test_a3c_gaussian_learns_inverted_pendulum(workdir):
    # measured (docs/notes/): the mean episode passes 400 by 125k frames, 1000 by 200k
    played = train(workdir, ["env=mujoco/inverted_pendulum", "workers=2", "total_frames=150000",
                             "log.tensorboard=false", *QUICK], 1200)
    first, last = played[:20], played[-20:]
    assert sum(first) / 20 < 60  # a random Gaussian policy balances ~10-40 steps
    assert sum(last) / 20 >= 200, f"mean of the last 20 episodes: {sum(last) / 20:.1f}"


# Measured (docs/results.md, "Pong: time to +18"): the main job's setting (the tuned Atari
# A3C layer since 2026-12-07) reached a mean of 20 at +18 by 2.84-7.30M frames in 29 runs of
# 29; the paper's loop (setting=base, the main job before) left it more slowly, its
# episodes between 4M and 5M averaging -12.2 in the first run measured.
PONG_FRAMES, PONG_THRESHOLD = 5_000_000, -18.0


@pytest.mark.slow
@pytest.mark.timeout(3900)  # ~8 minutes on 2 idle cores (setting=base: ~30)
def test_a3c_ff_leaves_the_flat_start_on_pong(workdir):
    # the first 5M frames of the main job, `asyncrl env=atari/pong workers=2`: its lr is
    # annealed over its 40M frames
    assert_atari_run_reaches(workdir, ["env=atari/pong"], PONG_FRAMES, PONG_THRESHOLD, 3600)


# Measured (docs/notes/, "k = 16 with RMSProp ε 1e-3 and lr 1e-3"; the presets' old names
# there: a3c_batched, nstep_q_batched, ...): with a3c_k16,
# the last 50 training episodes before 6M frames averaged -2.6, +4.5 and -13.5 in seeds 1, 2
# and 3; a network that never leaves the flat start (the bf16 run there) stays at -20.3.
# Measured ("n-step Q with 16 environments per worker and RMSProp's square average started at
# 0.1" and the section after it): with nstep_q_k16 the last 50 training episodes before
# 5M frames averaged +6.4, -5.6, -13.7, -9.3, -12.7 and -7.9 (seeds 1-6; their greedy
# policies scored 21.0, 18.05, 20.85, 12.75, 20.4 and -1.0 at 10M), where the same command
# with the square average started at 0 went blind and averaged -20.7; this test's first run
# read -8.2
BATCHED_PONG = [("a3c_k16", 6_000_000, -17.0),      # ~12 minutes on 2 idle cores
                ("nstep_q_k16", 5_000_000, -17.0)]  # ~8 minutes


@pytest.mark.slow
@pytest.mark.timeout(3000)
@pytest.mark.parametrize(("preset", "frames", "threshold"), BATCHED_PONG)
def test_the_batched_presets_leave_pongs_flat_start(workdir, preset, frames, threshold):
    assert_atari_run_reaches(workdir, [f"+experiment={preset}", "env=atari/pong"], frames,
                             threshold, 2700)


# Measured (docs/notes/, "t_max = 20"): with a3c_k16_t20 the last 50 training
# episodes before 5M frames averaged -5.4, -2.9, +7.0, +3.5 and +6.8 in seeds 1 to 5 (each
# reached +18 by 8.8M); with t_max 5 and the rest the same, -8.9, -7.9 and -12.7 in seeds 1-3.
# Measured ("Pong's own lr in the preset"): with a3c_tuned_keys at Pong's lr, 3e-3,
# the last 50 before 4M frames averaged +17.8, +14.6, +16.9, +16.5, +16.2 and +3.3 in the six
# runs that went that far (the last the slowest of eight to reach +18, at 7.30M); the preset
# at 2e-3 averaged +17.0, -3.8 and +16.0 (seeds 1 to 3 on the same CPU)
T20_PONG = [("a3c_k16_t20", 5_000_000, -10.0),    # ~9 minutes on 2 idle cores
            ("a3c_tuned_keys", 4_000_000, -5.0)]  # ~7 minutes


@pytest.mark.slow
@pytest.mark.timeout(3000)
@pytest.mark.parametrize(("preset", "frames", "threshold"), T20_PONG)
def test_the_20_step_presets_leave_pongs_flat_start(workdir, preset, frames, threshold):
    assert_atari_run_reaches(workdir, [f"+experiment={preset}", "env=atari/pong"], frames,
                             threshold, 2700)


# Measured (docs/notes/, "A3C-LSTM with the t_max 20 preset"): the episodes between 4M
# and 5M frames averaged -6.85, -8.20 and +3.79 in seeds 1 to 3 (each reached +18 by 8.4M);
# every LSTM setting at k > 1 with t_max 5 stayed at -20.3
LSTM_T20_FRAMES, LSTM_T20_THRESHOLD = 5_000_000, -12.0


@pytest.mark.slow
@pytest.mark.timeout(3000)  # ~14 minutes on 2 idle cores
def test_a3c_lstm_with_the_20_step_preset_is_past_minus_12_on_pong_by_5m_frames(workdir):
    assert_atari_run_reaches(workdir, ["network=lstm", "+experiment=a3c_k16_t20",
                                       "env=atari/pong"],
                             LSTM_T20_FRAMES, LSTM_T20_THRESHOLD, 2700)


# Measured (docs/notes/, "Pong, n-step Q with replay"): with each worker's last 200
# segments replayed, one per new one, the last 50 training episodes before 5M frames averaged
# +13.6 (seed 1) and -3.4 (seed 1 before its final epsilons were drawn per slot, one worker
# at 0.5); without replay the episodes between 4M and 5M averaged -18.2
NSTEP_Q_REPLAY = ["algo=nstep_q", "lr=1e-3", "optimizer.eps=0.01", "algo.replay_capacity=200",
                  "algo.replay_ratio=1"]
NSTEP_Q_FRAMES, NSTEP_Q_THRESHOLD = 5_000_000, -12.0


@pytest.mark.slow
@pytest.mark.timeout(3900)  # ~23 minutes on 2 idle cores
def test_nstep_q_with_replay_leaves_the_flat_start_on_pong(workdir):
    assert_atari_run_reaches(workdir, [*NSTEP_Q_REPLAY, "env=atari/pong"], NSTEP_Q_FRAMES,
                             NSTEP_Q_THRESHOLD, 3600)


# Measured (docs/notes/, the preset on Q*bert): the mean of the last 50 training episodes
# before 5M frames read 497 in the run that went on to 8,618 at 40M (past SB3 A2C's 3,882)
# and 355 in this test's first run (a 5M-frame run read 379 over its last 20); the first 50
# episodes, near random play's 164, read 181.5, and a mean of 50 has a standard error of ~19
QBERT_FRAMES, QBERT_THRESHOLD = 5_000_000, 260.0


@pytest.mark.slow
@pytest.mark.timeout(3000)  # ~10 minutes on 2 idle cores
def test_the_batched_preset_learns_qbert(workdir):
    assert_atari_run_reaches(workdir, ["+experiment=a3c_k16", "env=atari/qbert"],
                             QBERT_FRAMES, QBERT_THRESHOLD, 2700)


# Measured (docs/notes/, first section): with the torso orthogonal and Breakout's black
# background left at 0, the episodes between 4M and 5M frames averaged 19.5 (seed 1, run with
# network.centre_input=false, which on Breakout's screens is the background input exactly),
# where a3c_k16's averaged 3.11 and random play scores 1.7. With t_max 20 as well
# ("t_max 20 with the background keys") the last 50 before 5M frames averaged 23.1 (seed 1),
# where the t_max 20 preset without the two keys stayed at random play's 1.35 at lr 1e-3 and
# went blind at its own 2e-3
BREAKOUT_BG_FRAMES = 5_000_000


@pytest.mark.slow
@pytest.mark.timeout(3000)  # ~10-13 minutes on 2 idle cores
@pytest.mark.parametrize(("preset", "threshold"), [("a3c_k16_orthogonal_bg", 8.0),
                                                   ("a3c_tuned_keys", 12.0)])
def test_the_background_presets_leave_breakouts_flat_start_by_5m_frames(workdir, preset,
                                                                          threshold):
    assert_atari_run_reaches(workdir, [f"+experiment={preset}", "env=atari/breakout"],
                             BREAKOUT_BG_FRAMES, threshold, 2700)
