"""Time of one update's loss and backward per algorithm, on Pong-shaped segments.

``python -m asyncrl.tools.timing.loss [--repeats 300] [KEY=VALUE ...]``: a t_max = 5 segment of
random 4x84x84 screens, the feed-forward network, one thread; the median of ``--repeats``
timings of ``loss_many`` + ``torch.autograd.grad`` after a warm-up, for A3C and n-step Q.
Run at the defaults on two commits, it shows what the options cost when off
(docs/options.md).
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np
import torch


def _segment(steps: int = 5):
    from asyncrl.algos import SegmentBatch

    obs = torch.randint(0, 255, (steps + 1, 4, 84, 84), dtype=torch.uint8)
    return SegmentBatch(obs=obs.contiguous(memory_format=torch.channels_last),
                        actions=torch.randint(0, 6, (steps,)), rewards=[0.0, 1.0, 0.0, 0.0, -1.0],
                        terminals=[False] * steps)


def median_ms(algo: str, overrides: list[str], repeats: int) -> float:
    from asyncrl.algos import build_algorithm
    from asyncrl.nets import build_model
    from asyncrl.tools.timing import compose

    cfg = compose("env=atari/pong", f"algo={algo}", *overrides)
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(0))
    screens = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    model = build_model(cfg, screens, gym.spaces.Discrete(6), algorithm.head)
    target = build_model(cfg, screens, gym.spaces.Discrete(6), algorithm.head)
    params = list(model.parameters())
    batch = _segment()
    times = []
    for i in range(repeats + 20):
        start = time.perf_counter()
        loss, _ = algorithm.loss_many(model, target, [batch])
        torch.autograd.grad(loss, params)
        if i >= 20:  # the first ones warm the allocator and oneDNN's kernels
            times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for algo in ("a3c", "nstep_q"):
        print(f"{algo}: {median_ms(algo, args.overrides, args.repeats):.2f} ms per update")


if __name__ == "__main__":
    main()
