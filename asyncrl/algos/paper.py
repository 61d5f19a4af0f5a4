"""The paper's updates for one segment, written as its pseudocode: the reference the batched
losses (``a3c.py``, ``value_based.py``) are tested against (tests/algos/test_paper_update.py).

Each function walks one segment as a thread of the paper does: the states are read one at a
time, the recurrent state carried from ``batch.start_state``, and the return built backwards
from the last state. Each returns the loss whose gradient is what the pseudocode accumulates
(dθ, negated for descent). The batched losses compute the same numbers for k segments from
one forward each, with the options beyond the paper (GAE, λ-returns, double Q, a value
weight other than 1) as layers that are off at the paper's values.

Algorithm S3 (A3C)::

    R = 0 if s_t is terminal, else V(s_t; θ'_v)
    for i in t-1 .. t_start:
        R <- r_i + γ R
        dθ'   += ∇θ' log π(a_i|s_i; θ') (R - V(s_i; θ'_v)) + β ∇θ' H(π(s_i; θ'))
        dθ'_v += ∂(R - V(s_i; θ'_v))² / ∂θ'_v

Algorithm S2 (n-step Q)::

    R = 0 if s_t is terminal, else max_a Q(s_t, a; θ⁻)
    for i in t-1 .. t_start:
        R <- r_i + γ R
        dθ' += ∂(R - Q(s_i, a_i; θ'))² / ∂θ'

Algorithm 1 (one-step Q), and one-step Sarsa, over the steps of one update::

    y = r                              for a terminal s'
        r + γ max_a' Q(s', a'; θ⁻)     (one-step Q)
        r + γ Q(s', a'; θ⁻)            (Sarsa: a' the action taken in s')
    dθ += ∂(y - Q(s, a; θ))² / ∂θ
"""

from __future__ import annotations

from typing import Any

import torch

from asyncrl.algos.segment import SegmentBatch


def _one_at_a_time(model: Any, batch: SegmentBatch, states: int) -> list[tuple[Any, ...]]:
    """The model's outputs for ``s_t_start .. s_{t_start + states - 1}``, each state read
    alone with the recurrent state the previous one left."""
    state = batch.start_state
    outputs = []
    for i in range(states):
        *out, state = model(batch.obs[i : i + 1], state)
        outputs.append(tuple(out))
    return outputs


def a3c_segment_loss(model: Any, batch: SegmentBatch, gamma: float, entropy_beta: float,
                     value_loss_coef: float = 1.0) -> torch.Tensor:
    """Algorithm S3 for one segment (``value_loss_coef`` 1: the paper's dθ'_v)."""
    steps = batch.steps
    outputs = _one_at_a_time(model, batch, steps + 1)
    distribution = model.distribution
    R = 0.0 if batch.terminals[-1] else float(outputs[steps][1].detach())  # noqa: N806
    loss = torch.zeros(())
    for i in reversed(range(steps)):
        R = batch.rewards[i] + gamma * R  # noqa: N806
        policy, value = outputs[i]
        log_pi = distribution.log_prob(policy, batch.actions[i : i + 1]).sum()
        entropy = distribution.entropy(policy).sum()
        advantage = R - value.sum()
        loss = loss - log_pi * advantage.detach() - entropy_beta * entropy
        loss = loss + value_loss_coef * advantage.pow(2)
    return loss


def nstep_q_segment_loss(model: Any, target: Any, batch: SegmentBatch,
                         gamma: float) -> torch.Tensor:
    """Algorithm S2 for one segment."""
    steps = batch.steps
    outputs = _one_at_a_time(model, batch, steps)
    if batch.terminals[-1]:
        R = 0.0  # noqa: N806
    else:
        with torch.no_grad():
            R = float(_one_at_a_time(target, batch, steps + 1)[steps][0].max())  # noqa: N806
    loss = torch.zeros(())
    for i in reversed(range(steps)):
        R = batch.rewards[i] + gamma * R  # noqa: N806
        (q,) = outputs[i]
        loss = loss + (R - q[0, batch.actions[i]]).pow(2)
    return loss


def one_step_segment_loss(model: Any, target: Any, batch: SegmentBatch, gamma: float,
                          sarsa: bool = False) -> torch.Tensor:
    """Algorithm 1 (or one-step Sarsa) over the steps of one segment: each step's own
    one-step target, from θ⁻ at the state after it."""
    steps = batch.steps
    outputs = _one_at_a_time(model, batch, steps)
    with torch.no_grad():
        after = [q for (q,) in _one_at_a_time(target, batch, steps + 1)]
    loss = torch.zeros(())
    for i in range(steps):
        if batch.terminals[i]:
            y = batch.rewards[i]
        elif sarsa:  # a': the action taken next (the next segment's first, after the last)
            following = batch.next_action if i == steps - 1 else int(batch.actions[i + 1])
            y = batch.rewards[i] + gamma * float(after[i + 1][0, following])
        else:
            y = batch.rewards[i] + gamma * float(after[i + 1].max())
        (q,) = outputs[i]
        loss = loss + (y - q[0, batch.actions[i]]).pow(2)
    return loss
