"""The options beyond the paper on hand-worked numbers: double Q-learning's target, n-step
Q's λ-returns and A3C's GAE(λ), through the algorithm classes as a worker calls them."""

import math

import pytest
import torch

from asyncrl.algos import A3C, NStepQ, OneStepQ, SegmentBatch
from asyncrl.algos.q_targets import state_values
from tests.algos.test_a3c_loss import TableActorCritic
from tests.algos.test_q_targets import TARGET, TableQ
from tests.conftest import compose

# theta' of test_q_targets with s_3's preference turned round, so that in every state after
# a step the online network's choice differs from the target network's own max
ONLINE = [[0.5, 0.25], [1.5, 0.0], [0.0, 2.0], [0.0, 1.0]]
TAKEN = torch.tensor([0.25, 1.5, 2.0])  # Q(s_i, a_i; theta') for actions 1, 0, 1


def _batch(terminals):
    # states 0 -> 1 -> 2 -> 3, actions 1, 0, 1, rewards 1, 0, 2
    return SegmentBatch(obs=torch.tensor([[0], [1], [2], [3]]), actions=torch.tensor([1, 0, 1]),
                        rewards=[1.0, 0.0, 2.0], terminals=terminals)


def _targets(cls, *overrides, terminals=(False, False, False)):
    """The y_i the loss regressed on, read back from the loss (taken values are known)."""
    cfg = compose(f"algo={cls.config.name}", "algo.gamma=0.5", *overrides).algo
    algo = cls(cfg, torch.Generator().manual_seed(0))
    online = TableQ(ONLINE)
    loss, _ = algo.loss(online, TableQ(TARGET), _batch(list(terminals)))
    (grad,) = torch.autograd.grad(loss, [online.table])
    # d loss / d Q(s_i, a_i) = 2 (Q - y), so y = Q - grad / 2
    rows = grad[torch.arange(3), torch.tensor([1, 0, 1])]
    return (TAKEN - rows / 2).tolist()


def test_double_q_values_the_online_choice_with_the_target_network():
    q_target = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
    q_online = torch.tensor([[4.0, 0.0], [0.0, 1.0]])  # picks action 0, then action 1
    assert state_values(q_target, q_online).tolist() == [1.0, 2.0]
    assert state_values(q_target).tolist() == [5.0, 3.0]  # the paper's max, for contrast


def test_one_step_double_q_targets():
    # y_i = r_i + 0.5 Q^-(s_{i+1}, argmax Q'(s_{i+1})): Q^-(s_1, 0) = 1, Q^-(s_2, 1) = -3,
    # Q^-(s_3, 1) = 4
    assert _targets(OneStepQ, "algo.double_q=true") == pytest.approx([1.5, -1.5, 4.0])
    # without it the max of theta^-: 5, 2, 7
    assert _targets(OneStepQ) == pytest.approx([3.5, 1.0, 5.5])


def test_nstep_double_q_bootstraps_with_the_online_choice():
    # R_2 = 2 + 0.5 Q^-(s_3, 1) = 4; R_1 = 2; R_0 = 2 (paper: 5.5, 2.75, 2.375)
    assert _targets(NStepQ, "algo.double_q=true") == pytest.approx([2.0, 2.0, 4.0])
    assert _targets(NStepQ) == pytest.approx([2.375, 2.75, 5.5])


def test_nstep_lambda_returns_mix_in_every_state_after_a_step():
    # lambda 0.5 on max Q^-(s_1..s_3) = 5, 2, 7: G_2 = 2 + 0.5*7 = 5.5,
    # G_1 = 0.5 (0.5*2 + 0.5*5.5) = 1.875, G_0 = 1 + 0.5 (0.5*5 + 0.5*1.875) = 2.71875
    assert _targets(NStepQ, "algo.lambda_return=0.5") == pytest.approx([2.71875, 1.875, 5.5])
    # a terminal last step: G_2 = 2, G_1 = 0.5 (1 + 1) = 1, G_0 = 1 + 0.5 (2.5 + 0.5) = 2.5
    assert _targets(NStepQ, "algo.lambda_return=0.5",
                    terminals=(False, False, True)) == pytest.approx([2.5, 1.0, 2.0])


def test_nstep_lambda_one_is_the_paper_return():
    assert _targets(NStepQ, "algo.lambda_return=1.0") == _targets(NStepQ)


@pytest.mark.parametrize(("gae_lambda", "advantages"), [
    # GAE(0.5): returns 1.625, 1.5, 4 against V 0.5, 1, 2 (tests/algos/test_returns.py)
    (0.5, [1.125, 0.5, 2.0]),
    # lambda 1 is the n-step return 2, 2, 4
    (1.0, [1.5, 1.0, 2.0]),
])
def test_a3c_gae_advantages_and_value_targets(gae_lambda, advantages):
    cfg = compose("env=classic/cartpole", "algo.gamma=0.5", f"algo.gae_lambda={gae_lambda}").algo
    algo = A3C(cfg, torch.Generator().manual_seed(0))
    _, stats = algo.loss(TableActorCritic([0.5, 1.0, 2.0, 4.0]), None, _batch([False] * 3))
    # the critic regresses on A + V, so its squared error is the advantages' squares
    assert stats["value_loss"] == pytest.approx(sum(a * a for a in advantages))
    # uniform over 2 actions: -log pi = log 2 for every step, times its advantage
    assert stats["policy_loss"] == pytest.approx(math.log(2) * sum(advantages))
