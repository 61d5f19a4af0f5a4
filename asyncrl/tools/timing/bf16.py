"""fp32 against bf16 autocast for the Atari network's forward and forward+backward.

``python -m asyncrl.tools.timing.bf16``: the A3C model for Pong (float32 screens), one thread, for
batches of 1, 6, 16 and 96 (acting and learning at k = 1 and k = 16); each figure is the
best of 3 means over 200 calls (40 for the two larger batches), in ms. docs/notes/
("bfloat16 for the forward passes") quotes its output; asyncrl itself has no bf16 option.
"""

from __future__ import annotations

import time

import torch

from asyncrl.commands.prepare import register_schemas
from asyncrl.config.compose import compose_config
from asyncrl.run.launcher import build_shared_state


def _mean_ms(step, x: torch.Tensor, bf16: bool, n: int) -> float:
    step(x, bf16)
    start = time.perf_counter()
    for _ in range(n):
        step(x, bf16)
    return (time.perf_counter() - start) / n * 1e3


def main() -> None:
    torch.set_num_threads(1)
    register_schemas()
    model = build_shared_state(compose_config(["workers=1", "eval.episodes=0"],
                                              as_object=True)).model

    def forward(x: torch.Tensor, bf16: bool) -> None:
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            model(x, None)

    def backward(x: torch.Tensor, bf16: bool) -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(x, None)
            loss = out[0].float().sum() + out[1].float().sum()
        loss.backward()

    for batch in (1, 6, 16, 96):
        x = torch.rand(batch, 4, 84, 84)
        n = 200 if batch < 16 else 40
        times = {f"{name}{' bf16' if bf16 else ''}": min(_mean_ms(step, x, bf16, n)
                                                        for _ in range(3))
                 for name, step in (("fwd", forward), ("fwd+bwd", backward))
                 for bf16 in (False, True)}
        print(batch, {k: round(v, 3) for k, v in times.items()}, flush=True)


if __name__ == "__main__":
    main()
