"""One worker's training frames/s and acting time per step, in this process on one core.

``python -m asyncrl.tools.timing.acting K SECONDS``: the worker's own ``learning_step`` on Pong with
k environments, after a 3 s warm-up. To compare two versions of the acting loop, run it with
``PYTHONPATH=TREE`` for each tree in turn, alternating, on an idle machine; it prints which
tree it imported.
docs/notes/ quotes its output for the one acting loop.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

from asyncrl.commands.prepare import register_schemas
from asyncrl.config.compose import compose_config
from asyncrl.learning.worker import WorkerParts, WorkerSpec, build_worker_parts, learning_step
from asyncrl.run.launcher import build_shared_state


def _step(parts: WorkerParts, lap=None) -> int:
    segments, _ = learning_step(parts, 0, lap) if lap else learning_step(parts, 0)
    return parts.actors.frames_played(segments)


def main() -> None:
    k, seconds = int(sys.argv[1]), float(sys.argv[2])
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    register_schemas()
    cfg = compose_config(["env=atari/pong", "workers=1", f"envs_per_worker={k}"],
                         as_object=True)
    parts = build_worker_parts(WorkerSpec(0), cfg, build_shared_state(cfg))
    warm_until = time.perf_counter() + 3.0
    while time.perf_counter() < warm_until:
        _step(parts)
    acting, last = 0.0, time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal acting, last
        now = time.perf_counter()
        if phase == "act":
            acting += now - last
        last = now

    frames, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        last = time.perf_counter()
        frames += _step(parts, lap)
    elapsed = time.perf_counter() - start
    steps = frames / parts.actors.frame_skip
    print(f"k={k}: {frames / elapsed:,.0f} frames/s, acting {acting / elapsed:.0%} of the "
          f"time, {acting / steps * 1e6:.0f} us per environment step "
          f"(asyncrl from {Path(__file__).parents[2]})")
    parts.actors.close()


if __name__ == "__main__":
    main()
