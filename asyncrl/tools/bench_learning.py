"""Time to a score: how long the real command takes to reach an Atari score, beside SB3 A2C.

What a user feels is not frames/s but the minutes until the agent plays well. Each setting
runs the CLI as a user would (a fresh process, the main job's lr schedule), polled until the
mean of the last 20 training episodes reaches the target, then stopped with SIGINT; the
minutes count from the command. Stable-Baselines3's A2C, with rl-baselines3-zoo's Atari
settings (the source of issue 23's yardsticks), gets the same game, target and frame cap in
the same bench run, its clock started before its imports; its episodes go to an
``episodes.csv`` that ``asyncrl-report`` reads beside the runs'. The game is Pong unless an
``env=atari/<game>`` override names another.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from asyncrl import exit_codes
from asyncrl.errors import UserError
from asyncrl.report.time_to_score import Reached, first_reached, run_time_to_scores
from asyncrl.run_files.recorder import EPISODE_FIELDS, CsvLog
from asyncrl.run_files.run_status import read_status

SB3_ENVS = 16
SB3_GAME = "PongNoFrameskip-v4"
SB3_FRAME_SKIP = 4  # its AtariWrapper repeats each action for 4 frames, as ours does
# rl-baselines3-zoo's hyperparams/a2c.yml, key atari: where SB3 A2C's published Atari
# scores (279.8 on Breakout at 10M steps, 40M frames) come from; lr, n_steps, gamma and
# max_grad_norm are A2C's defaults there (7e-4, 5, 0.99, 0.5)
SB3_ZOO_A2C: dict[str, Any] = {"ent_coef": 0.01, "vf_coef": 0.25}
SB3_ZOO_OPTIMIZER_EPS = 1e-5  # RMSpropTFLike's eps in the zoo's policy_kwargs
SB3_RUN_NAME = "sb3_a2c"  # the peer's directory under the bench run's, beside the settings'
DEFAULT_GAME = "pong"
# the paper's loop (the defaults before 2026-12-07), and the default, which reaches Pong's +18
# soonest (docs/results.md)
LEARNING_SETTINGS = ("setting=base", "setting=tuned")
POLL_S = 5.0
STOP_TIMEOUT_S = 120.0  # a run's shutdown after SIGINT: workers stop, checkpoint written


@dataclass
class LearningRow:
    setting: str
    reached: list[Reached]
    frames: int  # where the run stopped
    minutes: float  # from the command to the stop
    run_dir: Path | None = None
    interrupted: bool = False  # stopped by the user (a signal), not by its target or cap

    @property
    def ending(self) -> str:
        return "interrupted" if self.interrupted else "stopped"


def _slug(setting: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", setting).strip("_") or "defaults"


def learning_game(overrides: Sequence[str]) -> str:
    """The Atari game the runs play: the config composed as ``run_to_score`` composes it
    (Pong, then the overrides), so ``env=atari/<game>`` and ``env.game=`` both count.
    Anything but an Atari game is refused in one line."""
    from asyncrl.commands.prepare import register_schemas
    from asyncrl.config.compose import compose_config

    register_schemas()
    env = compose_config([f"env=atari/{DEFAULT_GAME}", *overrides]).env
    if env.family != "atari":
        given = [o for o in overrides if o.startswith("env=")]
        raise UserError(f"{given[-1] if given else 'env'}: the learning section times Atari "
                        "games (env=atari/<game>)")
    return str(env.game)


def sb3_env_id(game: str) -> str:
    """Gymnasium's id for ``game`` without frame skip, as rl-zoo trains it and as ale-py
    spells it ('space_invaders' -> 'SpaceInvadersNoFrameskip-v4')."""
    return game.title().replace("_", "") + "NoFrameskip-v4"


def game_title(game: str) -> str:
    """'space_invaders' -> 'Space Invaders', for headings."""
    return game.replace("_", " ").title()


def check_sb3_game(game: str) -> None:
    """Refuse, before any run, a game the peer cannot play: ale-py registers the
    NoFrameskip-v4 ids for the games of its time only (Surround has none)."""
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    if sb3_env_id(game) not in gym.registry:
        raise UserError(f"{game}: SB3 A2C has no {sb3_env_id(game)} to play it on; run "
                        "with --no-learning-peer")


class StopRequests:
    """SIGINT, SIGTERM and SIGHUP while the learning section runs, noted rather than raised,
    so that neither the running setting's checkpoint nor the rows so far are cut short:
    the bench passes the stop on to its run and ends after it."""

    HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.signum: signal.Signals | None = None
        self._previous: dict[signal.Signals, Any] = {}

    def __enter__(self) -> StopRequests:
        for signum in self.HANDLED:
            self._previous[signum] = signal.signal(signum, self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _note(self, signum: int, frame: Any) -> None:
        if self.signum is None:  # a second Ctrl-C changes nothing: the run is stopping
            self.signum = signal.Signals(signum)

    @property
    def for_the_run(self) -> signal.Signals:
        """What the run gets: SIGINT for a Ctrl-C (it exits 130), SIGTERM for SIGTERM or a
        closed terminal's SIGHUP (143)."""
        return signal.SIGINT if self.signum == signal.SIGINT else signal.SIGTERM


def run_to_score(setting: str, targets: Sequence[float], max_frames: int, out: Path,
                 overrides: Sequence[str] = (), stop: StopRequests | None = None
                 ) -> LearningRow:
    """The CLI with ``setting`` until its mean of 20 reaches ``max(targets)``, T reaches
    ``max_frames``, or ``stop`` is requested."""
    stop = stop or StopRequests()
    run_dir = out / _slug(setting)
    command = [sys.executable, "-m", "asyncrl", f"env=atari/{DEFAULT_GAME}",
               f"total_frames={max_frames}",
               "lr_anneal_frames=40_000_000", "log.progress=false", f"hydra.run.dir={run_dir}",
               *overrides, *setting.split()]
    started = time.monotonic()
    # a session of its own: a terminal's Ctrl-C reaches the bench alone, which passes on
    # exactly one signal (a second SIGINT could cut the run's checkpoint short)
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        while proc.poll() is None and stop.signum is None:
            time.sleep(POLL_S)
            episodes = run_dir / "episodes.csv"
            if episodes.exists() and run_time_to_scores(run_dir, [max(targets)])[0].frames:
                proc.send_signal(signal.SIGINT)  # a checkpoint, as Ctrl-C leaves
                break
        if stop.signum is not None and proc.poll() is None:
            proc.send_signal(stop.for_the_run)
        _, stderr = proc.communicate(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise RuntimeError(f"{setting}: the run did not stop within {STOP_TIMEOUT_S:g} s "
                           "of its signal") from None
    finally:
        if proc.poll() is None:
            proc.kill()
    if proc.returncode not in (exit_codes.OK, *exit_codes.STOPPED_BY_A_SIGNAL):
        said = (stderr or "").strip().splitlines()
        raise RuntimeError(f"{setting}: the run failed (exit {proc.returncode}): "
                           f"{said[-1] if said else 'see ' + str(run_dir / 'asyncrl.log')}")
    minutes = (time.monotonic() - started) / 60
    frames = int((read_status(run_dir) or {}).get("frames", 0))  # T where it stopped, as SB3 counts
    row = LearningRow(setting, run_time_to_scores(run_dir, targets), frames, minutes, run_dir,
                      stop.signum is not None)
    print(f"{setting}: {row.ending} at T={frames:,} after {minutes:.1f} min", flush=True)
    return row


class EpisodeLog:
    """The peer's whole-game episodes in a run's ``episodes.csv``, written by the recorder's
    own ``CsvLog`` with its columns, so ``asyncrl-report`` draws and times the peer as it
    does a run."""

    COLUMNS = tuple(EPISODE_FIELDS)

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._csv = CsvLog(path, EPISODE_FIELDS)  # line-buffered: each game lands at once

    def add(self, frames: int, seconds: float, score: float, episode_frames: int,
            environment: int = 0) -> None:
        self._csv.write({"worker": 0, "frames": frames, "wall_time": round(seconds, 3),
                         "score": score, "episode_frames": episode_frames,
                         "environment": environment})

    def close(self) -> None:
        self._csv.close()


def sb3_a2c_to_score(targets: Sequence[float], max_frames: int, window: int = 20,
                     game: str = DEFAULT_GAME, out: Path | None = None,
                     stop: StopRequests | None = None) -> LearningRow | None:
    """SB3 A2C with rl-zoo's Atari settings and 16 environments until the same target,
    frame cap or ``stop``; None when SB3 is not installed. With ``out`` its episodes go to
    ``out/sb3_a2c/episodes.csv``."""
    requests = stop or StopRequests()
    started = time.monotonic()  # before the imports: they are part of a user's wait
    try:
        import ale_py
        import gymnasium as gym
        from stable_baselines3 import A2C
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.env_util import make_atari_env
        from stable_baselines3.common.sb2_compat.rmsprop_tf_like import RMSpropTFLike
        from stable_baselines3.common.vec_env import VecFrameStack
    except ImportError:
        return None
    gym.register_envs(ale_py)
    frames: list[int] = []
    hours: list[float] = []
    scores: list[float] = []
    goal = max(targets)
    run_dir = out / SB3_RUN_NAME if out is not None else None
    log: EpisodeLog | None = None

    def reached_goal() -> bool:  # the newest window only: every earlier one was checked
        return len(scores) >= window and sum(scores[-window:]) / window >= goal

    class Watch(BaseCallback):  # type: ignore[misc]
        def _on_step(self) -> bool:
            now_frames = self.num_timesteps * SB3_FRAME_SKIP
            ended = False
            for environment, info in enumerate(self.locals["infos"]):
                if "episode" in info:  # its Monitor: a whole game, all lives
                    seconds = time.monotonic() - started
                    frames.append(now_frames)
                    hours.append(seconds / 3600)
                    scores.append(float(info["episode"]["r"]))
                    if log is not None:
                        log.add(now_frames, seconds, scores[-1],
                                # its Monitor counts emulator frames, reset no-ops and
                                # FIRE presses included, so a few dozen more than ours
                                int(info["episode"]["l"]), environment)
                    ended = True
            return (now_frames < max_frames and not (ended and reached_goal())
                    and requests.signum is None)

    env = VecFrameStack(make_atari_env(sb3_env_id(game), n_envs=SB3_ENVS, seed=0), n_stack=4)
    try:
        if run_dir is not None:  # once the game is made: a failed start leaves no file
            log = EpisodeLog(run_dir / "episodes.csv")
        model = A2C("CnnPolicy", env, verbose=0, seed=0, **SB3_ZOO_A2C,
                    policy_kwargs={"optimizer_class": RMSpropTFLike,
                                   "optimizer_kwargs": {"eps": SB3_ZOO_OPTIMIZER_EPS}})
        model.learn(total_timesteps=10**12, callback=Watch())
        stopped = model.num_timesteps * SB3_FRAME_SKIP
    finally:
        env.close()
        if log is not None:
            log.close()
    minutes = (time.monotonic() - started) / 60
    row = LearningRow(f"SB3 A2C, {SB3_ENVS} envs", first_reached(
        np.array(frames), np.array(hours), np.array(scores), targets, window), stopped, minutes,
        run_dir, requests.signum is not None)
    print(f"SB3 A2C: {row.ending} at {stopped:,} frames after {minutes:.1f} min", flush=True)
    return row


def learning_rows(settings: Sequence[str], targets: Sequence[float], max_frames: int,
                  out: Path, game: str, overrides: Sequence[str] = (), peer: bool = True
                  ) -> tuple[list[LearningRow], signal.Signals | None]:
    """Each setting's run, then the peer's, on ``game``: ``learning_game(overrides)``,
    checked by the caller before any section's minutes. A stop (Ctrl-C, SIGTERM, SIGHUP)
    ends the one running with its checkpoint and skips the rest: the rows so far, and the
    signal that stopped them (None: all ran)."""
    out = out / f"{datetime.now():%Y-%m-%d_%H-%M-%S}"  # a second bench run starts fresh
    rows: list[LearningRow] = []
    with StopRequests() as stop:
        for setting in settings:
            if stop.signum is not None:
                break
            rows.append(run_to_score(setting, targets, max_frames, out, overrides, stop))
        if peer and stop.signum is None:
            row = sb3_a2c_to_score(targets, max_frames, game=game, out=out, stop=stop)
            if row is None:
                print("Stable-Baselines3 is not installed: no peer row "
                      "(pip install 'asyncrl[bench]')")
            else:
                rows.append(row)
    return rows, stop.signum


def describe(reached: Reached) -> str:
    if reached.frames is None or reached.minutes is None:
        return "not reached"
    return f"{reached.minutes:.1f} min ({reached.frames / 1e6:.2f}M)"


def table_cells(row: LearningRow) -> list[str]:
    return [f"`{row.setting}`" if not row.setting.startswith("SB3") else row.setting,
            *(describe(r) for r in row.reached),
            f"{row.frames / 1e6:.2f}M, {row.minutes:.1f} min"
            + (" (interrupted)" if row.interrupted else ""),
            f"{row.frames / (row.minutes * 60):,.0f}" if row.minutes > 0 else "-"]


def learning_text(targets: Sequence[float], max_frames: int, peer: bool = True,
                  game: str = DEFAULT_GAME) -> str:
    then = (f"; then SB3 A2C ({SB3_ENVS} environments, `{sb3_env_id(game)}`, rl-baselines3-zoo's "
            "Atari settings: RMSpropTFLike with eps 1e-5, ent_coef 0.01, vf_coef 0.25, "
            "A2C's defaults otherwise) with the same target and frame cap, its episodes in "
            f"`{SB3_RUN_NAME}/episodes.csv` beside the runs'" if peer
            else " (SB3 A2C not run: --no-learning-peer)")
    return (f"The real command, `asyncrl env=atari/{game} lr_anneal_frames=40_000_000 "
            f"total_frames={max_frames:_}` with each setting below, run as a fresh process "
            f"and stopped by SIGINT once the mean of the last 20 training episodes reached "
            f"{max(targets):+g}{then}. Each cell: minutes from the "
            "command (imports included) and frames, at the first mean of 20 at or above the "
            "score. One seed each: on Pong, seeds of one setting differ by millions of "
            "frames (docs/notes/).")
