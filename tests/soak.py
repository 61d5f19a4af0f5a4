"""The soak (``nox -s soak``; not in CI): a long Pong run hit by a random kill every few
minutes, then checked.

    python -m tests.soak --minutes 30 --kill-every 3 [--seed 1] [--run-dir DIR]

Each kill is kill -9 of a worker, of the evaluator, or of the launcher (whose run is then
resumed with ``resume=``). At the end the run is stopped with SIGINT and the figures are
printed and written to ``soak.json`` in the run directory: T reached, kills and restarts,
rows logged twice or missing, files whole, and the memory of every process over time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from asyncrl.learning.process_name import EVALUATOR_NAME, WORKER_PREFIX
from tests.run_health import (
    LOGS,
    alive,
    children,
    is_worker_or_evaluator,
    largest_episode_gap,
    log_health,
    named_children,
    rss_mb,
)

WORKERS = 2
SAMPLE_SECONDS = 10.0


def _launch(args: list[str], out: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "asyncrl", *args], stdout=out,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


class Soak:
    def __init__(self, run_dir: Path, minutes: float, kill_every: float, seed: int) -> None:
        self.run_dir = run_dir
        self.seconds = minutes * 60
        self.kill_every = kill_every * 60
        self.rng = random.Random(seed)
        self.kills: list[dict[str, Any]] = []
        self.memory: list[dict[str, Any]] = []
        self.output = (run_dir.parent / f"{run_dir.name}.out").open("ab")
        # restarts unbounded: here each kill is the test, not a worker that keeps crashing
        self.run_args = ["log.progress=false", "max_worker_restarts=100000"]
        self.first_args = ["env=atari/pong", f"workers={WORKERS}", "total_frames=1_000_000_000",
                           "eval.interval_frames=200_000", "eval.episodes=1",
                           "checkpoint.interval_seconds=90", *self.run_args,
                           f"hydra.run.dir={run_dir}"]

    def run(self) -> dict[str, Any]:
        start = time.monotonic()
        proc = _launch(self.first_args, self.output)
        next_kill = start + self._interval()
        next_sample = start
        while time.monotonic() - start < self.seconds:
            now = time.monotonic()
            if now >= next_sample:
                self._sample(proc.pid, now - start)
                next_sample = now + SAMPLE_SECONDS
            if now >= next_kill:
                proc = self._kill(proc, now - start)
                next_kill = time.monotonic() + self._interval()
            if proc.poll() is not None:
                raise SystemExit(f"soak: the run exited by itself (code {proc.returncode}); "
                                 f"see {self.output.name}")
            time.sleep(1.0)
        os.kill(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=300)
        return self._figures(code, time.monotonic() - start)

    def _interval(self) -> float:
        return self.kill_every * self.rng.uniform(0.5, 1.5)

    def _sample(self, launcher: int, elapsed: float) -> None:
        row: dict[str, Any] = {"t": round(elapsed), "launcher": rss_mb(launcher)}
        row["children"] = sorted(m for p in children(launcher) if is_worker_or_evaluator(p)
                                 and (m := rss_mb(p)) is not None)
        self.memory.append(row)

    def _kill(self, proc: subprocess.Popen[bytes], elapsed: float) -> subprocess.Popen[bytes]:
        what = self.rng.choice(["worker", "evaluator", "launcher"])
        kill = {"t": round(elapsed), "what": what}
        if what == "launcher":
            orphans = children(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            deadline = time.monotonic() + 30
            while any(alive(p) for p in orphans) and time.monotonic() < deadline:
                time.sleep(0.2)
            kill["orphans_left"] = sum(alive(p) for p in orphans)
            self.kills.append(kill)
            return _launch([f"resume={self.run_dir}", *self.run_args], self.output)
        found = named_children(proc.pid, EVALUATOR_NAME if what == "evaluator" else WORKER_PREFIX)
        if found:  # none while the evaluator is being restarted, say: no kill this time
            os.kill(self.rng.choice(found), signal.SIGKILL)
            self.kills.append(kill)
        return proc

    def _figures(self, code: int, elapsed: float) -> dict[str, Any]:
        status = json.loads((self.run_dir / "status.json").read_text())
        log = (self.run_dir / "asyncrl.log").read_text()
        health = {name: log_health(self.run_dir / name) for name in LOGS}
        gap, bound = largest_episode_gap(self.run_dir, WORKERS)
        minutes = [m for m in self.memory if m["children"]]
        early, late = minutes[: len(minutes) // 4], minutes[-(len(minutes) // 4):]

        def median_child(rows: list[dict[str, Any]]) -> float:
            return statistics.median(c for r in rows for c in r["children"])

        return {
            "date": datetime.now().isoformat(timespec="seconds"),
            "minutes": round(elapsed / 60, 1),
            "exit_code": code,
            "status": status["status"],
            "frames": status["frames"],
            "frames_per_second": round(status["frames"] / elapsed),
            "episodes": status["episodes"],
            "kills": self.kills,
            "restarts_logged": log.count("restarting it"),
            "resumes": sum(1 for k in self.kills if k["what"] == "launcher"),
            "orphans_left": sum(k.get("orphans_left", 0) for k in self.kills),
            "files_whole": all(h.ends_whole and not h.broken_rows for h in health.values()),
            "rows": {n: h.rows for n, h in health.items()},
            "rows_logged_twice": {n: h.fallbacks for n, h in health.items()},
            "largest_episode_gap": gap,
            "episode_gap_bound": bound,
            "episodes_match_status": health["episodes.csv"].rows == status["episodes"],
            "memory_mb": {
                "worker_median_first_quarter": round(median_child(early), 1),
                "worker_median_last_quarter": round(median_child(late), 1),
                "launcher_first": minutes[0]["launcher"],
                "launcher_last": minutes[-1]["launcher"],
            },
            "memory_samples": self.memory,
        }


def verdict(figures: dict[str, Any]) -> list[str]:
    """What went wrong; empty when the soak passed."""
    memory = figures["memory_mb"]
    problems = [
        f"exit code {figures['exit_code']} (130 expected)" * (figures["exit_code"] != 130),
        "a file ends in a partial line or has broken rows" * (not figures["files_whole"]),
        f"rows logged twice: {figures['rows_logged_twice']}"
        * any(figures["rows_logged_twice"].values()),
        f"episodes missing: a gap of {figures['largest_episode_gap']:,} frames "
        f"(at most {figures['episode_gap_bound']:,})"
        * (figures["largest_episode_gap"] > figures["episode_gap_bound"]),
        "status.json's episodes differ from episodes.csv" * (not figures["episodes_match_status"]),
        f"{figures['orphans_left']} process(es) outlived a killed launcher"
        * (figures["orphans_left"] > 0),
        "worker memory grew by over 20 %" * (memory["worker_median_last_quarter"]
                                             > 1.2 * memory["worker_median_first_quarter"]),
    ]
    return [p for p in problems if p]


def plot_memory(figures: dict[str, Any], path: Path) -> None:
    """Each process's memory over the soak, with the kills marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = figures["memory_samples"]
    minutes = [s["t"] / 60 for s in samples]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(minutes, [s["launcher"] for s in samples], ".", ms=3, label="launcher")
    ax.plot([m for m, s in zip(minutes, samples, strict=True) for _ in s["children"]],
            [c for s in samples for c in s["children"]], ".", ms=3,
            label="workers and evaluator")
    for kill in figures["kills"]:
        ax.axvline(kill["t"] / 60, color={"worker": "tab:gray", "evaluator": "tab:green",
                                          "launcher": "tab:red"}[kill["what"]], lw=0.8)
    ax.set_xlabel("minutes (lines: kill -9 of a worker, the evaluator, the launcher)")
    ax.set_ylabel("resident memory (MB)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower right")
    ax.set_title(f"soak: Pong, {WORKERS} workers, T = {figures['frames']:,} frames")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--kill-every", type=float, default=3.0, help="minutes, on average")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--run-dir", type=Path,
                        default=Path("outputs") / "soak" / datetime.now().strftime("%Y%m%d-%H%M%S"))
    args = parser.parse_args(argv)
    if args.run_dir.exists():
        raise SystemExit(f"soak: {args.run_dir} exists; give another --run-dir")
    args.run_dir.parent.mkdir(parents=True, exist_ok=True)
    figures = Soak(args.run_dir.resolve(), args.minutes, args.kill_every, args.seed).run()
    (args.run_dir / "soak.json").write_text(json.dumps(figures, indent=1))
    plot_memory(figures, args.run_dir / "soak_memory.png")
    shown = {k: v for k, v in figures.items() if k != "memory_samples"}
    print(json.dumps(shown, indent=1))
    problems = verdict(figures)
    print("soak: " + ("passed" if not problems else "FAILED: " + "; ".join(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
