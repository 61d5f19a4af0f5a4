"""Asynchronous advantage actor-critic (paper, Algorithm S3 and Section 4).

policy:  -sum_i log pi(a_i|s_i) (R_i - V(s_i))      (no gradient through the advantage)
value:    value_loss_coef * sum_i (R_i - V(s_i))^2
entropy: -entropy_beta * sum_i H(pi(.|s_i))         (a bonus, so it is subtracted)

Sums, not means: the paper accumulates gradients over the segment's steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from asyncrl.algos.returns import advantages, discounted_returns
from asyncrl.algos.segment import SegmentBatch
from asyncrl.nets import LSTMState


@dataclass
class A3CLoss:
    total: torch.Tensor
    policy: torch.Tensor
    value: torch.Tensor
    entropy: torch.Tensor


def a3c_loss(
    logits: torch.Tensor,
    values: torch.Tensor,
    actions: torch.Tensor,
    returns: torch.Tensor,
    entropy_beta: float,
    value_loss_coef: float,
) -> A3CLoss:
    """Loss whose gradient is the paper's d(theta) + d(theta_v) for one segment."""
    log_probs = F.log_softmax(logits, dim=-1)
    entropy = -(log_probs.exp() * log_probs).sum(-1).sum()
    taken = log_probs.gather(1, actions.unsqueeze(1)).squeeze(1)
    policy_loss = -(taken * advantages(returns, values)).sum()
    value_loss = (returns - values).pow(2).sum()
    total = policy_loss + value_loss_coef * value_loss - entropy_beta * entropy
    return A3CLoss(total=total, policy=policy_loss, value=value_loss, entropy=entropy)


def sample_action(logits: torch.Tensor, generator: torch.Generator) -> int:
    return int(torch.multinomial(logits.softmax(-1)[0], 1, generator=generator))


class A3C:
    """Acts by sampling pi(.|s; theta'), learns from the segment's n-step returns."""

    uses_target = False
    needs_next_action = False
    metrics = ("loss", "policy_loss", "value_loss", "entropy")

    def __init__(self, algo_cfg: Any, generator: torch.Generator) -> None:
        self.cfg = algo_cfg
        self.generator = generator
        self.segment_steps = int(algo_cfg.t_max)

    def describe(self) -> str:
        return f"t_max={self.segment_steps}, entropy_beta={self.cfg.entropy_beta}"

    def act(self, model: Any, obs: torch.Tensor, state: LSTMState | None,
            frames: int) -> tuple[int, LSTMState | None]:
        logits, _, state = model(obs, state)
        return sample_action(logits, self.generator), state

    eval_act = act

    def loss(self, model: Any, target: Any, batch: SegmentBatch
             ) -> tuple[torch.Tensor, dict[str, float]]:
        steps = batch.steps
        # one forward over s_t .. s_{t+n}: the last value is the bootstrap V(s_{t+n})
        logits, values, _ = model(batch.obs[: steps + 1], batch.start_state)
        bootstrap = 0.0 if batch.terminals[-1] else float(values[steps].detach())
        returns = torch.tensor(discounted_returns(batch.rewards, batch.terminals, bootstrap,
                                                  self.cfg.gamma))
        loss = a3c_loss(logits[:steps], values[:steps], batch.actions[:steps], returns,
                        self.cfg.entropy_beta, self.cfg.value_loss_coef)
        return loss.total, {
            "loss": loss.total.item(), "policy_loss": loss.policy.item(),
            "value_loss": loss.value.item(), "entropy": loss.entropy.item() / steps,
        }
