"""The A3C loss and its gradients against hand-computed values."""

import math

import pytest
import torch

from asyncrl.algos.a3c import a3c_loss as loss_from_parts
from asyncrl.nets.distributions import CategoricalPolicy

SOFTMAX = CategoricalPolicy()


def a3c_loss(logits, values, actions, returns, entropy_beta, value_loss_coef):
    """The loss of a softmax policy, from its logits."""
    return loss_from_parts(SOFTMAX.log_prob(logits, actions), SOFTMAX.entropy(logits), values,
                           returns, entropy_beta, value_loss_coef)


def test_loss_terms_on_two_actions():
    logits = torch.tensor([[0.0, 0.0], [math.log(3.0), 0.0]], requires_grad=True)
    values = torch.tensor([0.5, 1.0], requires_grad=True)
    actions = torch.tensor([0, 1])
    returns = torch.tensor([1.5, 0.0])
    loss = a3c_loss(logits, values, actions, returns, entropy_beta=0.1, value_loss_coef=0.5)
    # pi0 = (.5,.5), pi1 = (.75,.25); advantages 1.0 and -1.0
    policy = -(math.log(0.5) * 1.0 + math.log(0.25) * -1.0)
    value = 1.0**2 + 1.0**2
    entropy = math.log(2) - (0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert loss.policy.item() == pytest.approx(policy, abs=1e-6)
    assert loss.value.item() == pytest.approx(value, abs=1e-6)
    assert loss.entropy.item() == pytest.approx(entropy, abs=1e-6)
    assert loss.total.item() == pytest.approx(policy + 0.5 * value - 0.1 * entropy, abs=1e-6)


def test_value_gradient_is_v_minus_r_and_policy_term_does_not_reach_value():
    logits = torch.zeros(1, 3, requires_grad=True)
    values = torch.tensor([2.0], requires_grad=True)
    loss = a3c_loss(logits, values, torch.tensor([1]), torch.tensor([5.0]),
                    entropy_beta=0.0, value_loss_coef=0.5)
    loss.total.backward()
    # d/dV of 0.5 (R - V)^2 = V - R = -3, with nothing added by the policy term
    assert values.grad.item() == pytest.approx(-3.0)
    # policy gradient of -log pi(a) * A with A = 3 and uniform pi: 3 * (pi - onehot)
    assert logits.grad.tolist()[0] == pytest.approx([1.0, -2.0, 1.0])


def test_entropy_bonus_pushes_towards_uniform():
    logits = torch.tensor([[2.0, 0.0]], requires_grad=True)
    loss = a3c_loss(logits, torch.zeros(1), torch.tensor([0]), torch.zeros(1),
                    entropy_beta=1.0, value_loss_coef=0.0)
    loss.total.backward()
    # descending the loss must lower the favoured logit relative to the other
    assert logits.grad[0, 0] > logits.grad[0, 1]
