"""Forward and forward+backward time of the paper's feed-forward network per batch size.

``python -m asyncrl.tools.timing.net [--batches 1 8 48 96] [--repeats 50]``: the A3C model for Pong,
one thread, uint8 screens held channels-last as the rollout buffers hold them, the median
of ``--repeats`` timings after a warm-up. docs/notes/ quotes its output.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import datetime, timezone

import gymnasium as gym
import numpy as np
import torch

from asyncrl.learning.heap import keep_freed_memory


def _model(*overrides: str) -> torch.nn.Module:
    """The A3C model for Pong's screens, with the config ``overrides`` given."""
    from asyncrl.nets import build_model
    from asyncrl.tools.timing import compose

    cfg = compose("env=atari/pong", *overrides)
    screens = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    return build_model(cfg, screens, gym.spaces.Discrete(6), "actor_critic")


def _screens(batch: int) -> torch.Tensor:
    """Random uint8 screens held channels-last, as the rollout buffers hold them."""
    return torch.randint(0, 256, (batch, 4, 84, 84), dtype=torch.uint8).contiguous(
        memory_format=torch.channels_last)


def _median_ms(step, repeats: int) -> float:
    for _ in range(5):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def _forward(model: torch.nn.Module, obs: torch.Tensor) -> None:
    with torch.inference_mode():
        model(obs, None)


def _forward_backward(model: torch.nn.Module, obs: torch.Tensor) -> None:
    policy, value, _ = model(obs, None)
    loss = policy.logsumexp(-1).sum() + value.sum()
    torch.autograd.grad(loss, list(model.parameters()))


def timings(batches: list[int], repeats: int) -> list[tuple[int, float, float]]:
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    keep_freed_memory()  # as a worker does: without it a large batch is mapped afresh
    model = _model()
    rows = []
    for batch in batches:
        obs = _screens(batch)

        rows.append((batch, _median_ms(lambda o=obs: _forward(model, o), repeats),
                     _median_ms(lambda o=obs: _forward_backward(model, o), repeats)))
    return rows


def main() -> None:
    from asyncrl.tools.bench import machine

    parser = argparse.ArgumentParser(prog="python -m asyncrl.tools.timing.net")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 48, 96])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    rows = timings(args.batches, args.repeats)
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}, one thread")
    print("| batch | forward | forward + backward |\n| ---: | ---: | ---: |")
    for batch, forward, both in rows:
        print(f"| {batch} | {forward:.2f} ms | {both:.2f} ms |")


if __name__ == "__main__":
    main()
