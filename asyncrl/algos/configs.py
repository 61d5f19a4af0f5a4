"""The config schema of each algorithm, and the facts about it that a config check needs.

Kept apart from the algorithms' code, which needs torch: checking a config, or printing
``--help``, must not load it. Each algorithm class names its schema (``A3C.config``); this
module's ``ALGORITHM_CONFIGS`` is the one list of algorithm names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from omegaconf import MISSING


@dataclass
class A3CConfig:
    """Advantage actor-critic (paper, Algorithm S3)."""

    value_based: ClassVar[bool] = False  # learns a policy, acts by sampling it
    # what A3C does where other algorithms have a key (not keys: refused when given)
    target_update_frames: ClassVar[int] = 0  # no target network
    replay_capacity: ClassVar[int] = 0       # no replay
    replay_ratio: ClassVar[int] = 0

    name: str = "a3c"
    gamma: float = MISSING
    t_max: int = MISSING
    # conf/algo/a3c.yaml gives every value; these three it takes from the environment
    entropy_beta: float = MISSING
    episode_updates: bool = MISSING
    default_lr: float = MISSING
    value_loss_coef: float = MISSING
    max_grad_norm: float = MISSING
    gae_lambda: float = MISSING  # 1: the paper's n-step advantage; below 1: GAE(λ)

    # keys of other algorithms that A3C does not take, and why (said when one is given)
    refused: ClassVar[dict[str, str]] = {
        "double_q": "A3C learns no Q-values for a target action to be chosen from",
        "replay_capacity": "A3C learns on-policy: replayed segments come from older policies "
                           "and would need an importance-weight correction (ACER), which "
                           "asyncrl does not have",
        "lambda_return": "A3C's λ is algo.gae_lambda",
        "epsilon_per_environment": "A3C explores by sampling its policy, not ε-greedily",
        "epsilon_redraw": "A3C explores by sampling its policy, not ε-greedily",
    }


@dataclass
class ValueBasedConfig:
    """What the three value-based methods share (paper, Supp. 8 "Experimental Setup")."""

    value_based: ClassVar[bool] = True  # one Q-value per discrete action, acts ε-greedily

    name: str = MISSING
    gamma: float = MISSING
    max_grad_norm: float = MISSING
    target_update_frames: int = MISSING
    epsilon_finals: list[float] = MISSING
    epsilon_probabilities: list[float] = MISSING
    epsilon_anneal_frames: int = MISSING
    # true: each of a worker's environments draws its own final epsilon (envs_per_worker > 1)
    epsilon_per_environment: bool = MISSING
    # true: each environment draws its final epsilon again as each of its episodes begins
    # (the paper's "periodically sampled"); implies a draw per environment
    epsilon_redraw: bool = MISSING
    eval_epsilon: float = MISSING
    default_lr: float = MISSING

    refused: ClassVar[dict[str, str]] = {
        "gae_lambda": "GAE weighs A3C's advantages; n-step Q's λ is algo.lambda_return",
        "lambda_return": "a one-step target is one step long; λ-returns are algo=nstep_q's",
    }


@dataclass
class OffPolicyConfig(ValueBasedConfig):
    """What the two Q-learning methods add: options beyond the paper, off by default."""

    double_q: bool = MISSING     # the target's action chosen by theta, valued by theta^-
    replay_capacity: int = MISSING   # segments each worker keeps for replay; 0: no replay
    replay_ratio: int = MISSING      # replayed segments learned from per on-policy segment


@dataclass
class OneStepQConfig(OffPolicyConfig):
    """One-step Q-learning (paper, Algorithm 1)."""

    name: str = "one_step_q"
    async_update: int = MISSING


@dataclass
class OneStepSarsaConfig(ValueBasedConfig):
    """One-step Sarsa: Algorithm 1 with the target r + gamma Q(s', a'; theta^-)."""

    name: str = "one_step_sarsa"
    async_update: int = MISSING
    # what Sarsa does where Q-learning has a key (not keys: refused when given)
    double_q: ClassVar[bool] = False
    replay_capacity: ClassVar[int] = 0
    replay_ratio: ClassVar[int] = 0

    refused: ClassVar[dict[str, str]] = {
        **ValueBasedConfig.refused,
        "double_q": "Sarsa's target takes the action actually taken next, not a max, so "
                    "there is no choice of action for theta to make",
        "replay_capacity": "Sarsa learns the value of the policy that acted: a replayed "
                           "segment's next action comes from an older policy",
    }


@dataclass
class NStepQConfig(OffPolicyConfig):
    """n-step Q-learning (paper, Algorithm S2)."""

    name: str = "nstep_q"
    t_max: int = MISSING
    lambda_return: float = MISSING  # 1: the paper's longest n-step return; below 1: λ-returns


ALGORITHM_CONFIGS: dict[str, type] = {
    schema.name: schema  # type: ignore[misc]  # the dataclass field's default
    for schema in (A3CConfig, OneStepQConfig, OneStepSarsaConfig, NStepQConfig)
}


def is_value_based(name: str) -> bool:
    """Whether algorithm ``name`` learns Q-values (and so needs discrete actions)."""
    return bool(ALGORITHM_CONFIGS[name].value_based)  # type: ignore[attr-defined]


def epsilon_problem(finals: Sequence[float], probabilities: Sequence[float],
                    eval_epsilon: float = 0.0) -> str | None:
    """What is wrong with these exploration settings, or None: the one check that the
    config's validation and the worker's draw both ask."""
    finals, probabilities = list(finals), list(probabilities)
    if not finals or len(finals) != len(probabilities):
        return (f"algo.epsilon_finals {finals} and algo.epsilon_probabilities "
                f"{probabilities} must be non-empty and of the same length")
    if any(not 0 <= e <= 1 for e in [*finals, eval_epsilon]):
        return "algo.epsilon_finals and algo.eval_epsilon must lie in [0, 1]"
    if any(not 0 <= p <= 1 for p in probabilities) or abs(sum(probabilities) - 1.0) > 1e-6:
        return (f"algo.epsilon_probabilities {probabilities} must be non-negative "
                "and sum to 1")
    return None
