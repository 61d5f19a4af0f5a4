"""Throughput benchmark: training frames/s of each algorithm against the raw environment's,
A3C with k environments per worker, the other domains, and the seconds from the
command to the first frame; ``--sections learning`` adds the minutes to an Atari score
(Pong unless an ``env=atari/<game>`` override names another game).

    python -m asyncrl.commands.bench --workers 1 2 --seconds 30      (what ``nox -s bench`` runs)

Both are measured in the same run, on the same machine, with the same number of processes,
so their ratio means something on a shared, noisy machine where absolute numbers do not.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import platform
import queue
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

from asyncrl import exit_codes
from asyncrl.algos import algorithm_classes
from asyncrl.commands import run_tool
from asyncrl.commands.prepare import register_schemas
from asyncrl.config.compose import compose_config
from asyncrl.envs import frames_per_step, make_env
from asyncrl.errors import UserError
from asyncrl.learning.worker import WorkerSpec, build_worker_parts, learning_step
from asyncrl.run.launcher import build_shared_state
from asyncrl.run.pool import ProcessPool
from asyncrl.run.start_method import START_METHOD
from asyncrl.run_files.atomic import write_text_atomically
from asyncrl.run_files.startup import first_frame_phases
from asyncrl.tools.bench_learning import (
    DEFAULT_GAME,
    LEARNING_SETTINGS,
    SB3_ENVS,
    SB3_FRAME_SKIP,
    check_sb3_game,
    game_title,
    learning_game,
    learning_rows,
    learning_text,
    sb3_env_id,
    table_cells,
)

PROG = "python -m asyncrl.commands.bench"
WARMUP_S = 5.0


def _random_play(env: Any, frames_per_step: int, seconds: float, seed: int, out: Any) -> None:
    """Random actions on ``env`` for ``seconds``, as fast as it goes: its frames/s into
    ``out``."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    steps, deadline = 0, time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps += 1
        if terminated or truncated:
            env.reset()
    out.put(steps * frames_per_step / (time.perf_counter() - start))
    env.close()


def _raw_env_loop(env_cfg: Any, seconds: float, seed: int, out: Any) -> None:
    """Random actions through the full preprocessing, as fast as the emulator goes."""
    _random_play(make_env(env_cfg), frames_per_step(env_cfg), seconds, seed, out)


def _gym_env_loop(game: str, seconds: float, seed: int, out: Any) -> None:
    """Random actions through a plain gymnasium Atari loop, what a user would write:
    ``gym.make`` of the game without frame skip, gymnasium's ``AtariPreprocessing`` (no-op
    starts, frame skip 4 with a max over the last two, 84x84 grey) and a 4-frame stack."""
    import ale_py
    import gymnasium as gym
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gym.register_envs(ale_py)
    env = FrameStackObservation(AtariPreprocessing(gym.make(sb3_env_id(game)), noop_max=30,
                                                   frame_skip=4, screen_size=84), 4)
    _random_play(env, 4, seconds, seed, out)


def _in_processes(loop: Any, first: Any, processes: int, seconds: float) -> float:
    """Total frames/s of ``loop(first, seconds, seed, out)`` run in ``processes`` processes
    at once."""
    ctx: Any = multiprocessing.get_context(START_METHOD)
    out = ctx.Queue()
    procs = [ctx.Process(target=loop, args=(first, seconds, i, out))
             for i in range(processes)]
    for p in procs:
        p.start()
    rates = [out.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join()
    return float(sum(rates))


def raw_env_fps(cfg: Any, processes: int, seconds: float) -> float:
    """Total frames/s of ``processes`` of ``cfg``'s environments stepping in parallel."""
    return _in_processes(_raw_env_loop, cfg.env, processes, seconds)


def gym_env_fps(game: str, processes: int, seconds: float) -> float:
    """Total frames/s of ``processes`` plain gymnasium loops of the Atari ``game``."""
    return _in_processes(_gym_env_loop, game, processes, seconds)


def training_fps(cfg: Any, seconds: float) -> float:
    """Frames/s of T while ``cfg.workers`` workers of ``cfg.algo`` train one shared model,
    started and stopped by the pool a run uses."""
    shared = build_shared_state(cfg)
    pool = ProcessPool(cfg, shared)
    pool.start_workers()

    def drain(timeout: float) -> None:
        with contextlib.suppress(queue.Empty):
            pool.queue.get(timeout=timeout)

    def drain_until(deadline: float) -> None:
        while time.monotonic() < deadline:
            drain(0.1)

    try:
        while shared.total_frames() == 0:
            if pool.alive() == 0:
                raise RuntimeError("every worker died before its first update "
                                   f"(exit codes {[s.exitcode for s in pool.seen().values()]})")
            drain_until(time.monotonic() + 0.2)
        drain_until(time.monotonic() + WARMUP_S)
        frames0, t0 = shared.total_frames(), time.monotonic()
        drain_until(t0 + seconds)
        return (shared.total_frames() - frames0) / (time.monotonic() - t0)
    finally:
        pool.stop(drain, timeout=10.0)


class TimedEnv(gym.Wrapper):
    """Counts the seconds spent inside ``step`` and ``reset`` of the wrapped environment."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.seconds = 0.0

    def step(self, action: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.env.step(action)
        finally:
            self.seconds += time.perf_counter() - start

    def reset(self, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.env.reset(**kwargs)
        finally:
            self.seconds += time.perf_counter() - start


PHASES = ("sync", "act", "env", "loss+backward", "clip", "optimizer")


def phase_split(cfg: Any, seconds: float) -> dict[str, float]:
    """Where one worker's time goes: the worker's own ``learning_step``, timed phase by phase
    in this process, with the environments' share taken out of acting."""
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    parts = build_worker_parts(WorkerSpec(0), cfg, build_shared_state(cfg))
    timed = []
    for actor in parts.actors.members:
        actor.env = TimedEnv(actor.env)
        timed.append(actor.env)
    spent = dict.fromkeys(PHASES, 0.0)
    clock = time.perf_counter
    last = clock()

    def lap(phase: str) -> None:
        nonlocal last
        now = clock()
        spent[phase] += now - last
        last = now

    def env_seconds() -> float:
        return sum(env.seconds for env in timed)

    # the warm-up keeps one-off costs (numba loading the optimizer's kernel, first-touch of
    # buffers) out of the split, as training_fps keeps them out of its rate
    start = clock() + WARMUP_S
    while clock() - start < seconds:
        if clock() < start:
            spent = dict.fromkeys(spent, 0.0)
        env_before = env_seconds()
        last = clock()
        learning_step(parts, 0, lap)  # the worker's own path, episodes' resets included
        acting_env = env_seconds() - env_before
        spent["act"] -= acting_env
        spent["env"] += acting_env
    elapsed = clock() - start
    parts.actors.close()
    return {name: value / elapsed for name, value in spent.items()}


def sb3_a2c_fps(seconds: float, envs: int = SB3_ENVS, game: str = DEFAULT_GAME
                ) -> float | None:
    """Frames/s of Stable-Baselines3's A2C on ``game`` with its own Atari wrappers and defaults,
    ``envs`` environments in this process: what a user would run instead. None when SB3 is
    not installed (``pip install 'asyncrl[bench]'``)."""
    try:
        import ale_py
        from stable_baselines3 import A2C
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.env_util import make_atari_env
        from stable_baselines3.common.vec_env import VecFrameStack
    except ImportError:
        return None
    gym.register_envs(ale_py)
    marks: dict[str, tuple[float, int]] = {}

    class Stopwatch(BaseCallback):  # type: ignore[misc]
        def _on_step(self) -> bool:
            now = time.monotonic()
            first = marks.setdefault("start", (now, self.num_timesteps))
            if now - first[0] >= WARMUP_S and "warm" not in marks:
                marks["warm"] = (now, self.num_timesteps)
            marks["last"] = (now, self.num_timesteps)
            return "warm" not in marks or now - marks["warm"][0] < seconds

    env = VecFrameStack(make_atari_env(sb3_env_id(game), n_envs=envs, seed=0), n_stack=4)
    try:
        A2C("CnnPolicy", env, verbose=0, seed=0).learn(total_timesteps=10**12,
                                                         callback=Stopwatch())
    finally:
        env.close()
    (t0, steps0), (t1, steps1) = marks["warm"], marks["last"]
    return (steps1 - steps0) * SB3_FRAME_SKIP / (t1 - t0)


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {multiprocessing.cpu_count()} cores, Python {platform.python_version()}, "
            f"torch {torch.__version__}")


DEFAULT_ROW = "a3c, the default setting"


def run(workers: list[int], algos: list[str], seconds: float, overrides: list[str],
        envs_per_worker: list[int] | None = None, game: str = DEFAULT_GAME
        ) -> tuple[list[dict[str, Any]], dict[str, float], float | None]:
    """Rows of training against raw frames/s: every algorithm with one environment per
    worker and A3C with each k of ``envs_per_worker`` (the paper's loop otherwise), then A3C
    at the default setting, each beside its own raw environment and a plain gymnasium loop
    of ``game``; the phase split; SB3 A2C's rate on the same ``game``."""
    register_schemas()
    rows: list[dict[str, Any]] = []
    batched = [k for k in envs_per_worker or [] if k != 1]
    for n in workers:
        # setting=base: the rows are the paper's loop at each k, as the bench's tables have
        # always been (the default Atari setting is k = 16 with t_max 20 over it)
        common = [f"workers={n}", "eval.episodes=0", "log.tensorboard=false",
                  "total_frames=1_000_000_000"]
        base = [*common, "setting=base", *overrides]
        raw = raw_env_fps(compose_config(base, as_object=True), n, seconds)
        gym_raw = gym_env_fps(game, n, seconds)
        print(f"workers={n}: raw env {raw:,.0f} frames/s, plain gymnasium {gym_raw:,.0f}",
              flush=True)
        runs = [(algo, 1) for algo in algos]
        runs += [("a3c", k) for k in batched if "a3c" in algos]
        for algo, k in runs:
            # the row's own settings last: an override cannot make a row say what it is not
            cfg = compose_config([*base, f"algo={algo}", f"envs_per_worker={k}"],
                                 as_object=True)
            train = training_fps(cfg, seconds)
            rows.append({"algo": algo, "workers": n, "envs": k, "raw": raw, "train": train,
                         "ratio": train / raw, "gym_raw": gym_raw})
            print(f"workers={n}, envs_per_worker={k}: {algo} training {train:,.0f} frames/s, "
                  f"ratio {train / raw:.3f}", flush=True)
        if "a3c" in algos:  # what `asyncrl` runs: the ratio a user feels
            cfg = compose_config([*common, *overrides, "algo=a3c"], as_object=True)
            train = training_fps(cfg, seconds)
            rows.append({"algo": DEFAULT_ROW, "workers": n, "envs": cfg.envs_per_worker,
                         "raw": raw, "train": train, "ratio": train / raw, "gym_raw": gym_raw})
            print(f"workers={n}, the default setting: a3c training {train:,.0f} frames/s, "
                  f"ratio {train / raw:.3f}", flush=True)
    peer = sb3_a2c_fps(seconds, game=game)
    if peer is None:
        print("Stable-Baselines3 is not installed: no peer row (pip install 'asyncrl[bench]')")
    else:
        print(f"SB3 A2C, {SB3_ENVS} environments: {peer:,.0f} frames/s", flush=True)
    cfg = compose_config(["workers=1", *overrides], as_object=True)
    phases = phase_split(cfg, seconds)
    print("one A3C worker's time: " + ", ".join(f"{k} {v:.0%}" for k, v in phases.items()))
    return rows, phases, peer


MAZE_LEVELS = ("small", "medium", "large")
MUJOCO_TASKS = ("inverted_pendulum", "hopper")
TORCS_SETTINGS = ("slow_car", "fast_car_bots")
SECTIONS = ("atari", "maze", "mujoco", "torcs", "startup", "learning")
DEFAULT_SECTIONS = ("atari", "maze", "mujoco", "torcs", "startup")  # learning takes an hour
STARTUP_RUNS = 3


def startup_times(overrides: list[str], runs: int = STARTUP_RUNS) -> list[dict[str, float]]:
    """The first-frame line of ``runs`` short runs of the CLI, each in a fresh process as a
    user's command is (so the interpreter, the imports and spawning the workers count)."""
    found = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp) / "run"
            subprocess.run([sys.executable, "-m", "asyncrl", "total_frames=20_000",
                            "log.progress=false", f"hydra.run.dir={run_dir}", *overrides],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            phases = first_frame_phases((run_dir / "asyncrl.log").read_text())
        if phases is None:
            raise RuntimeError("the run's log has no first-frame line (is /proc readable?)")
        found.append(phases)
        print(f"first frame {phases['total']:.1f} s after the command", flush=True)
    return found


def startup_markdown(found: list[dict[str, float]], overrides: list[str], command: str) -> str:
    phases = [name for name in found[0] if name != "total"]
    shown = " ".join(["asyncrl", *overrides]) if overrides else "asyncrl"
    return "\n".join(_table_section(
        "Startup: seconds from the command to the first frame",
        f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}. "
        f"Command: {command}. `{shown}` started {len(found)} times as a fresh process "
        "(`total_frames=20_000`, the launcher's own clock against the process's start "
        "time from the kernel). Phases: Python, the imports and composing the config; "
        "building the shared model and optimizer; the run directory with its T = 0 "
        "checkpoint; starting the workers until T moves (forked from a forkserver that "
        "imported torch beside the launcher, they make their environments in parallel, "
        "beside the evaluator's own start).",
        ["run", "first frame (s)", *phases],
        [[str(i + 1), f"{row['total']:.1f}", *(f"{row[p]:.1f}" for p in phases)]
         for i, row in enumerate(found)]))


def other_domains(workers: list[int], seconds: float,
                  sections: tuple[str, ...] = ("maze", "mujoco", "torcs"),
                  ) -> dict[str, list[dict[str, Any]]]:
    """Maze steps/s per process with rendering; MuJoCo and TORCS A3C training against the
    raw task (TORCS only where `asyncrl-torcs install` has run)."""
    register_schemas()
    base = ["eval.episodes=0", "log.tensorboard=false", "total_frames=1_000_000_000"]
    maze: list[dict[str, Any]] = []
    mujoco: list[dict[str, Any]] = []
    torcs: list[dict[str, Any]] = []
    if "torcs" in sections:
        from asyncrl.envs.torcs.paths import require_torcs

        try:
            require_torcs()
        except UserError as exc:
            print(f"TORCS not measured: {exc}", flush=True)
            sections = tuple(s for s in sections if s != "torcs")
    for n in workers:
        for setting in TORCS_SETTINGS if "torcs" in sections else ():
            cfg = compose_config([f"env=torcs/{setting}", f"workers={n}", *base],
                                 as_object=True)
            per_step = frames_per_step(cfg.env)
            raw = raw_env_fps(cfg, n, seconds) / per_step
            train = training_fps(cfg, seconds) / per_step
            torcs.append({"setting": setting, "workers": n, "raw": raw, "train": train})
            print(f"torcs/{setting}, {n} workers: training {train:,.0f} steps/s, raw {raw:,.0f}",
                  flush=True)
        for level in MAZE_LEVELS if "maze" in sections else ():
            cfg = compose_config([f"env=maze/{level}", f"workers={n}", *base], as_object=True)
            steps = raw_env_fps(cfg, n, seconds) / frames_per_step(cfg.env)
            maze.append({"level": level, "workers": n, "steps": steps})
            print(f"maze/{level}, {n} processes: {steps / n:,.0f} steps/s per process", flush=True)
        for task in MUJOCO_TASKS if "mujoco" in sections else ():
            cfg = compose_config([f"env=mujoco/{task}", f"workers={n}", *base], as_object=True)
            raw = raw_env_fps(cfg, n, seconds)
            train = training_fps(cfg, seconds)
            mujoco.append({"task": task, "workers": n, "raw": raw, "train": train})
            print(f"mujoco/{task}, {n} workers: training {train:,.0f} steps/s, raw {raw:,.0f}",
                  flush=True)
    return {"maze": maze, "mujoco": mujoco, "torcs": torcs}


def _table_section(title: str, text: str, columns: list[str], rows: list[list[str]]
                   ) -> list[str]:
    """A ``## `` section: one paragraph, then a table with its first column left-aligned."""
    return [f"## {title}", "", text, "", "| " + " | ".join(columns) + " |",
            "| --- | " + " | ".join("---:" for _ in columns[1:]) + " |",
            *("| " + " | ".join(row) + " |" for row in rows), ""]


def command_line(args: list[str]) -> str:
    """How the run that writes a section was started, as a reader would type it again."""
    text = " ".join(["python -m asyncrl.commands.bench", shlex.join(args)]).rstrip()
    return f"`{text}` (what `nox -s bench` runs)" if not args else f"`{text}`"


def other_domains_markdown(found: dict[str, list[dict[str, Any]]], seconds: float,
                           command: str = "`python -m asyncrl.commands.bench`") -> str:
    when = (f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}. "
            f"Command: {command}.")
    lines: list[str] = []
    if found["maze"]:
        lines += _table_section(
            "Maze: environment steps/s with rendering",
            f"{when} Random actions, each step = 4 game frames of movement and collision, "
            "then one 84x84 RGB raycast frame; one environment per process (target: 3,000 "
            f"per core). {seconds:g} s per measurement.",
            ["level", "processes", "steps/s in total", "steps/s per process"],
            [[r["level"], str(r["workers"]), f"{r['steps']:,.0f}",
              f"{r['steps'] / r['workers']:,.0f}"] for r in found["maze"]])
    if found["mujoco"]:
        lines += _table_section(
            "MuJoCo: A3C training steps/s (network=gaussian, whole-episode updates)",
            f"{when} Raw: the same task with random actions, as many processes as workers. "
            "MuJoCo tasks count one frame per agent step.",
            ["task", "workers", "raw steps/s", "training steps/s", "ratio"],
            [[r["task"], str(r["workers"]), f"{r['raw']:,.0f}", f"{r['train']:,.0f}",
              f"{r['train'] / r['raw']:.3f}"] for r in found["mujoco"]])
    if found["torcs"]:
        lines += _table_section(
            "TORCS: agent steps/s per worker (A3C, network=lstm)",
            f"{when} Raw: random actions through the whole environment (one TORCS process "
            "per environment, a new one each episode, the 84x84 view drawn every step), as "
            "many processes as workers. An agent step holds its action for 5 of TORCS's "
            f"50 Hz driver calls. {seconds:g} s per measurement.",
            ["setting", "workers", "raw steps/s per process", "training steps/s per worker",
             "ratio"],
            [[r["setting"], str(r["workers"]), f"{r['raw'] / r['workers']:,.0f}",
              f"{r['train'] / r['workers']:,.0f}", f"{r['train'] / r['raw']:.3f}"]
             for r in found["torcs"]])
    return "\n".join(lines)


def merge_sections(old: str, new: str) -> str:
    """``old`` with each ``## `` section that ``new`` also has replaced by new's version,
    and new's other sections appended: a partial run keeps what it did not measure."""
    def split(text: str) -> tuple[str, dict[str, str]]:
        head, *parts = text.split("\n## ")
        return head, {part.split("\n", 1)[0]: "## " + part.rstrip() + "\n" for part in parts}

    head, sections = split(old)
    _, fresh = split(new)
    sections.update(fresh)
    return head.rstrip() + "\n\n" + "\n".join(sections.values())


def markdown(rows: list[dict[str, Any]], phases: dict[str, float], seconds: float,
             command: str, peer: float | None = None, game: str = DEFAULT_GAME) -> str:
    lines = [
        f"## Training throughput on Atari {game_title(game)}, feed-forward network",
        "",
        f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}.",
        # the command carries the overrides
        f"Command: {command}. {seconds:g} s per measurement after a {WARMUP_S:g} s warm-up.",
        "",
        "Raw env: the same preprocessing (max of two frames, grey 84x84, 4-stack, action "
        "repeat 4) with random actions, one environment per process, as many processes as "
        "workers. Ratio: training frames/s over raw frames/s, measured in the same run. "
        "envs/worker: `envs_per_worker`, the environments each worker acts for in one batch "
        "(1 is the paper's loop). The rows run the paper's loop (`setting=base`) at each k "
        f"but \"{DEFAULT_ROW}\": what `asyncrl` runs, k = 16 and t_max 20 over it. "
        "Plain gymnasium: as many processes of the loop a user would write, "
        f"`gym.make('{sb3_env_id(game)}')` with gymnasium's `AtariPreprocessing` (no-op "
        "starts, frame skip 4, 84x84 grey) and a 4-frame stack, random actions; the last "
        "ratio is training over it.",
    ]
    columns = ["algo", "workers", "envs/worker", "raw env frames/s", "training frames/s",
               "training frames/s per worker", "ratio", "plain gymnasium frames/s",
               "ratio to plain gymnasium"]
    if peer is not None:
        lines += ["", f"Peer: Stable-Baselines3 A2C (`CnnPolicy`, its defaults, "
                  f"`make_atari_env('{sb3_env_id(game)}', n_envs={SB3_ENVS})` with a "
                  "4-frame stack, "
                  f"torch's default threads) made **{peer:,.0f} frames/s** in this run; "
                  "the last column is each row over it."]
        columns.append("× SB3 A2C")
    lines += ["", "| " + " | ".join(columns) + " |",
              "| --- | " + " | ".join("---:" for _ in columns[1:]) + " |"]
    for r in rows:
        cells = [r["algo"], f"{r['workers']:.0f}", f"{r.get('envs', 1):.0f}", f"{r['raw']:,.0f}",
                 f"{r['train']:,.0f}", f"{r['train'] / r['workers']:,.0f}", f"{r['ratio']:.3f}",
                 f"{r['gym_raw']:,.0f}", f"{r['train'] / r['gym_raw']:.3f}"]
        if peer is not None:
            cells.append(f"{r['train'] / peer:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Where one A3C worker's time goes (the worker's own `learning_step` timed phase by "
        f"phase in one process, one environment, {seconds:g} s; fractions of wall time):",
        "",
        "| " + " | ".join(phases) + " |",
        "| " + " | ".join("---:" for _ in phases) + " |",
        "| " + " | ".join(f"{v:.0%}" for v in phases.values()) + " |",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    # Ctrl-C outside the learning section (which handles its own stops) writes nothing:
    # exit 130, as every console command
    sys.exit(run_tool(PROG, lambda: measure(argv)))


def measure(argv: list[str] | None) -> int:
    """The sections asked for, written to ``--output``; the exit code, 130 or 143 when a
    signal cut the learning section short (its rows so far written, the last marked)."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    names = list(algorithm_classes())
    parser.add_argument("--algos", nargs="+", default=names, choices=names)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--envs-per-worker", type=int, nargs="+", default=[1, 4, 8, 16],
                        help="A3C rows with each number of environments per worker")
    parser.add_argument("--output", type=Path, default=Path("docs/benchmarks.md"))
    parser.add_argument("--sections", nargs="+", default=list(DEFAULT_SECTIONS),
                        choices=SECTIONS, help="what to measure; the output file keeps the "
                        "sections not measured (learning: time to an Atari score, Pong unless "
                        "env=atari/<game>, about an hour); overrides go before the options")
    parser.add_argument("--learning-settings", nargs="*", default=list(LEARNING_SETTINGS),
                        help="the learning section's settings, each one quoted string of "
                             "overrides; none: the SB3 peer alone")
    parser.add_argument("--learning-targets", type=float, nargs="+", default=[-10.0, 0.0, 18.0],
                        help="scores to time; runs stop at the highest")
    parser.add_argument("--learning-frames", type=int, default=10_000_000,
                        help="the learning section's frame cap per run")
    parser.add_argument("--learning-out", type=Path, default=Path("outputs/bench_learning"),
                        help="where the learning runs' directories go")
    parser.add_argument("--learning-peer", action=argparse.BooleanOptionalAction, default=True,
                        help="also time SB3 A2C to the same score (at ~4,000 frames/s here, "
                             "10M frames take about 45 minutes)")
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. env=atari/breakout")
    args = parser.parse_args(argv)
    try:  # before any section's minutes: a wrong env for the peer's game fails now
        game = DEFAULT_GAME
        if "atari" in args.sections or "learning" in args.sections:
            game = learning_game(args.overrides)
            if args.learning_peer or "atari" in args.sections:
                check_sb3_game(game)
    except UserError as error:
        parser.error(str(error))
    # the command as given, not a guess: `nox -s bench -- --sections maze` must not say
    # `nox -s bench`
    command = command_line(sys.argv[1:] if argv is None else list(argv))
    text = "# Benchmarks\n\n"
    if "atari" in args.sections:
        rows, phases, peer = run(args.workers, args.algos, args.seconds, args.overrides,
                                 args.envs_per_worker, game)
        text += markdown(rows, phases, args.seconds, command, peer, game) + "\n"
    if "startup" in args.sections:
        text += startup_markdown(startup_times(args.overrides), args.overrides, command) + "\n"
    stopped_by = None
    if "learning" in args.sections:
        learned, stopped_by = learning_rows(
            args.learning_settings, args.learning_targets, args.learning_frames,
            args.learning_out, game, args.overrides, args.learning_peer)
        text += "\n".join(_table_section(
            f"Time to a score: {game_title(game)}, from the command",
            f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}. "
            f"Command: {command}. "
            + learning_text(args.learning_targets, args.learning_frames, args.learning_peer,
                            game),
            ["setting", *(f"{t:+g}" for t in args.learning_targets), "stopped at",
             "frames/s"],
            [table_cells(row) for row in learned])) + "\n"
    others = tuple(s for s in args.sections if s not in ("atari", "startup", "learning"))
    if others and stopped_by is None:
        text += other_domains_markdown(other_domains(args.workers, args.seconds, others),
                                       args.seconds, command)
    if args.output.exists():
        text = merge_sections(args.output.read_text(), text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(args.output, text)
    print(f"wrote {args.output}")
    if stopped_by is None:
        return exit_codes.OK
    print(f"{PROG}: stopped by {stopped_by.name}; {args.output} has the rows measured before "
          "it", file=sys.stderr)
    return exit_codes.INTERRUPTED if stopped_by == signal.SIGINT else exit_codes.TERMINATED


if __name__ == "__main__":
    main()
