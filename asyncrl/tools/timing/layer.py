"""Where the t_max 20 preset's network time goes, layer by layer, and what a learner that
reused the acting forward's activations would save.

``python -m asyncrl.tools.timing.layer``: the preset's A3C network for Pong (torso started
orthogonal, each screen's background subtracted), one thread, the heap kept as a worker
keeps it, uint8 screens held channels-last as the rollout buffers hold them; the median of
25 timings after a warm-up, in ms.

- For the acting batch (16) and the learner's (336): the input's preparation (scaling and
  the background), each layer's forward, conv 1 written as a 2 x 2 convolution over
  4 x 4 blocks of pixels (space-to-depth, the same products; checked against conv 1) with
  the blocks' rearrangement timed apart, and the whole forward.
- At 336: the usual forward and backward, against a backward that takes each layer's
  output from the acting forward instead of computing it again (each ReLU layer's weight
  gradient needs only its input, its output and the gradient from above), with the largest
  relative difference between the two sets of gradients.

- One frame stack (4 x 84 x 84, as the environment returns it) into a row of a
  channels-last segment buffer: torch's strided copy against ``cv2.merge``'s interleave,
  which ``Actors._store`` uses, in microseconds.

docs/notes/ ("What is left in the preset's update", "One pass for the input, one
interleave for each screen") quotes its output; nothing in asyncrl uses the second form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.grad import conv2d_input, conv2d_weight

from asyncrl.learning.heap import keep_freed_memory
from asyncrl.tools.timing.net import _median_ms, _model, _screens

LEARNER_BATCH = 336  # 16 environments x (20 steps + the bootstrap state)


class ConvReLUFromOutput(torch.autograd.Function):
    """``relu(conv(x))`` handed in already computed; the backward is the layer's."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                out: torch.Tensor, stride: int, input_grad: bool) -> torch.Tensor:
        ctx.save_for_backward(x, weight, out)
        ctx.stride, ctx.input_grad = stride, input_grad
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        x, weight, out = ctx.saved_tensors
        grad = grad * (out > 0)
        grad_x = conv2d_input(x.shape, weight, grad, ctx.stride) if ctx.input_grad else None
        return (grad_x, conv2d_weight(x, weight.shape, grad, ctx.stride),
                grad.sum((0, 2, 3)), None, None, None)


class LinearReLUFromOutput(torch.autograd.Function):
    """``relu(linear(x))`` handed in already computed; the backward is the layer's."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                out: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x, weight, out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        x, weight, out = ctx.saved_tensors
        grad = grad * (out > 0)
        return grad @ weight, grad.t() @ x, grad.sum(0), None


def layer_row(model: Any, batch: int) -> dict[str, float]:
    torso = model.torso
    conv1, conv2, fc = torso.conv[0], torso.conv[2], torso.fc[0]
    obs = _screens(batch)
    with torch.inference_mode():
        x = torso.prepared(obs)
        h1 = F.relu(conv1(x))
        flat = F.relu(conv2(h1)).flatten(1)
        # w[o, c, 4a + i, 4b + j] -> w[o, 16c + 4i + j, a, b]: the same sums, as 2 x 2 over
        # 4 x 4 blocks
        blocked_weight = conv1.weight.view(16, 4, 2, 4, 2, 4).permute(0, 1, 3, 5, 2, 4)
        blocked_weight = blocked_weight.reshape(16, 64, 2, 2)

        def rearranged() -> torch.Tensor:  # channels-last, as conv 1's own input is held
            blocks = x.view(batch, 4, 21, 4, 21, 4).permute(0, 1, 3, 5, 2, 4)
            return blocks.reshape(batch, 64, 21, 21).contiguous(
                memory_format=torch.channels_last)

        blocks = rearranged()
        if not torch.allclose(F.conv2d(blocks, blocked_weight, conv1.bias), conv1(x),
                              atol=1e-5):
            raise AssertionError("the space-to-depth form does not compute conv 1")
        steps: dict[str, Callable[[], Any]] = {
            "preparation": lambda: torso.prepared(obs), "conv 1": lambda: conv1(x),
            "conv 1 as space-to-depth": lambda: F.conv2d(blocks, blocked_weight, conv1.bias),
            "its rearrangement": rearranged, "conv 2": lambda: conv2(h1),
            "fc": lambda: fc(flat), "whole forward": lambda: model(obs, None)}
        return {name: _median_ms(step, 25) for name, step in steps.items()}


def reuse_row(model: Any) -> tuple[float, float, float]:
    """(usual forward + backward, backward from the saved outputs, largest relative
    difference between their gradients) at the learner's batch."""
    torso = model.torso
    conv1, conv2, fc = torso.conv[0], torso.conv[2], torso.fc[0]
    params = list(model.parameters())
    obs = _screens(LEARNER_BATCH)
    with torch.no_grad():  # what the acting forwards computed, step by step
        h1 = F.relu(conv1(torso.prepared(obs)))
        h2 = F.relu(conv2(h1))
        h3 = F.relu(fc(h2.flatten(1)))

    def usual() -> tuple[torch.Tensor, ...]:
        policy, value, _ = model(obs, None)
        return torch.autograd.grad(policy.logsumexp(-1).sum() + value.sum(), params)

    def reused() -> tuple[torch.Tensor, ...]:
        a1 = ConvReLUFromOutput.apply(torso.prepared(obs), conv1.weight, conv1.bias, h1, 4, False)
        a2 = ConvReLUFromOutput.apply(a1, conv2.weight, conv2.bias, h2, 2, True)
        features = LinearReLUFromOutput.apply(a2.flatten(1), fc.weight, fc.bias, h3)
        policy, value = model.policy(features), model.value(features).squeeze(-1)
        return torch.autograd.grad(policy.logsumexp(-1).sum() + value.sum(), params)

    difference = max(float((a - b).abs().max() / b.abs().max())
                     for a, b in zip(reused(), usual(), strict=True))
    return _median_ms(usual, 25), _median_ms(reused, 25), difference


def row_copy_us() -> tuple[float, float]:
    """One frame stack into a buffer row: torch's copy, then cv2.merge's, in us."""
    frames = np.random.default_rng(0).integers(0, 256, (4, 84, 84), dtype=np.uint8)
    row = _screens(21)[5]  # a row of a segment buffer (t_max 20 and the bootstrap state)
    in_memory = row.permute(1, 2, 0).numpy()
    copied = _median_ms(lambda: row.copy_(torch.from_numpy(frames)), 2000)
    merged = _median_ms(lambda: cv2.merge(list(frames), dst=in_memory), 2000)
    assert torch.equal(row, torch.from_numpy(frames))
    return 1e3 * copied, 1e3 * merged


def main() -> None:
    from datetime import datetime, timezone

    from asyncrl.tools.bench import machine

    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    keep_freed_memory()
    model = _model("+experiment=a3c_tuned_keys")
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}, one thread")
    rows = {batch: layer_row(model, batch) for batch in (16, LEARNER_BATCH)}
    print("| ms | " + " | ".join(rows[16]) + " |")
    print("| --- |" + " ---: |" * len(rows[16]))
    for batch, row in rows.items():
        print(f"| batch {batch} | " + " | ".join(f"{v:.2f}" for v in row.values()) + " |")
    usual, reused, difference = reuse_row(model)
    print(f"batch {LEARNER_BATCH}: forward + backward {usual:.1f} ms; the backward from the "
          f"acting forward's outputs {reused:.1f} ms (gradients within {difference:.1e})")
    copied, merged = row_copy_us()
    print(f"a frame stack into its buffer row: torch's copy {copied:.1f} us, cv2.merge "
          f"{merged:.1f} us")


if __name__ == "__main__":
    main()
