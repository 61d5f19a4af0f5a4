"""precision=bf16: the workers' forward passes in bfloat16, weights and updates in float32."""

from __future__ import annotations

import pytest
import torch

from asyncrl.launcher import build_shared_state
from asyncrl.worker import WorkerSpec, build_worker_parts, learning_step
from tests.conftest import compose


def _first_layer_dtypes(precision: str, *overrides: str) -> tuple[set[torch.dtype], object]:
    cfg = compose("env=atari/pong", "workers=1", f"precision={precision}", *overrides)
    shared = build_shared_state(cfg)
    parts = build_worker_parts(WorkerSpec(0), cfg, shared)
    conv = next(m for m in parts.model.modules() if isinstance(m, torch.nn.Conv2d))
    seen: set[torch.dtype] = set()
    conv.register_forward_hook(lambda module, args, out: seen.add(out.dtype))
    before = [p.detach().clone() for p in shared.model.parameters()]
    learning_step(parts, 0)  # acting forwards, then the loss's forward and backward
    parts.actors.close()
    assert all(p.dtype == torch.float32 for p in shared.model.parameters())
    moved = any(not torch.equal(b, p) for b, p in zip(before, shared.model.parameters(),
                                                      strict=True))
    return seen, moved


@pytest.mark.parametrize("overrides", [(), ("envs_per_worker=2",), ("network=lstm",)])
def test_bf16_runs_the_forwards_in_bfloat16_and_steps_float32_weights(overrides):
    seen, moved = _first_layer_dtypes("bf16", *overrides)
    assert seen == {torch.bfloat16}
    assert moved


def test_fp32_is_float32_throughout():
    seen, moved = _first_layer_dtypes("fp32")
    assert seen == {torch.float32}
    assert moved
