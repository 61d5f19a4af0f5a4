"""Which term of A3C's loss pushes the fc layer's units, at T = 0 and at a checkpoint.

``python -m asyncrl.tools.fc_push_reading CHECKPOINT [SEGMENTS]``: on the probe's random-play
segments (``asyncrl-probe``'s screens, 200 unless given), for each of the policy, value and
entropy terms of ``a3c_loss``, the gradient into ``torso.fc.0.weight`` summed over the
segments, and for each unit the mean over its inputs of the descent step. Those inputs are
ReLU outputs, never negative, so a unit whose weights all lose together goes dark; the
"consistency" says how far a unit's push keeps its sign from segment to segment (1: always,
near 0: it cancels), which is what RMSProp's per-element steps then add up. It also prints
V(s) and the n-step returns on the segments. docs/notes/ ("The t_max 20 preset on
Breakout, ...") quotes its output; asyncrl itself does not run it.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import torch

from asyncrl.run_files.checkpoint import checkpoint_source, load_checkpoint
from asyncrl.tools.probe import _reader, segment_losses


def read_pushes(model, screens, algo) -> None:
    weight = model.torso.fc[0].weight
    pushes: dict[str, list[torch.Tensor]] = {"policy": [], "value": [], "entropy": []}
    total = {name: torch.zeros_like(weight) for name in pushes}
    values_seen, returns_seen = [], []
    for loss, values, returns in segment_losses(model, screens, algo):
        terms = {"policy": loss.policy, "value": algo.value_loss_coef * loss.value,
                 "entropy": -algo.entropy_beta * loss.entropy}
        for name, term in terms.items():
            (grad,) = torch.autograd.grad(term, [weight], retain_graph=True)
            total[name] += grad
            pushes[name].append(-grad.mean(dim=1))  # the descent step's mean per unit
        values_seen += values.detach().flatten().tolist()
        returns_seen += returns.tolist()
    for name, per_segment in pushes.items():
        stacked = torch.stack(per_segment)  # (segments, units)
        consistency = (stacked.sum(0).abs() / stacked.abs().sum(0).clamp_min(1e-30)).mean()
        summed = -total[name].mean(dim=1)
        print(f"  {name:8s} gradient norm summed over segments {float(total[name].norm()):.4g}; "
              f"units pushed down {float((summed < 0).float().mean()):.2f}; "
              f"consistency {float(consistency):.2f}")
    print(f"  V mean {np.mean(values_seen):+.3f} (sd {np.std(values_seen):.3f}); "
          f"return mean {np.mean(returns_seen):+.3f} (sd {np.std(returns_seen):.3f})")


def main(argv: list[str]) -> None:
    source = Path(argv[0])
    path, _ = checkpoint_source(source)
    saved = load_checkpoint(path)
    reader = _reader(saved, source, int(argv[1]) if len(argv) > 1 else 200)
    print("T=0")
    read_pushes(reader.model, reader.screens, reader.cfg.algo)
    trained = copy.deepcopy(reader.model)
    trained.load_state_dict(saved.model)
    print(f"T={saved.frames:,}")
    read_pushes(trained, reader.screens, reader.cfg.algo)


if __name__ == "__main__":
    main(sys.argv[1:])
