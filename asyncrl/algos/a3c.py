"""The A3C objective for one segment (paper, Algorithm S3 and Section 4).

policy:  -sum_i log pi(a_i|s_i) (R_i - V(s_i))      (no gradient through the advantage)
value:    value_loss_coef * sum_i (R_i - V(s_i))^2
entropy: -entropy_beta * sum_i H(pi(.|s_i))         (a bonus, so it is subtracted)

Sums, not means: the paper accumulates gradients over the segment's steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from asyncrl.algos.returns import advantages


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
