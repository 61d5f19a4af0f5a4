"""Targets of one-step Q, one-step Sarsa and n-step Q on hand-worked numbers."""

import gymnasium as gym
import pytest
import torch

from asyncrl.algos import NStepQ, OneStepQ, OneStepSarsa, SegmentBatch
from asyncrl.algos.q_targets import nstep_q_targets, one_step_targets
from asyncrl.learning.rollout import Actor
from tests.conftest import compose


def test_one_step_targets_bootstrap_unless_terminal():
    y = one_step_targets([1.0, 0.0, -1.0], [False, False, True], torch.tensor([2.0, 4.0, 9.0]),
                         gamma=0.5)
    # 1 + .5 * 2, 0 + .5 * 4, and -1 alone after the terminal step
    assert y.tolist() == pytest.approx([2.0, 2.0, -1.0])


def test_nstep_targets_forward_view_by_hand():
    # gamma .9, rewards 1, 0, 2, bootstrap max Q = 10:
    # R_2 = 2 + .9 * 10 = 11; R_1 = 0 + .9 * 11 = 9.9; R_0 = 1 + .9 * 9.9 = 9.91
    y = nstep_q_targets([1.0, 0.0, 2.0], [False, False, False], torch.tensor([3.0, 10.0]), 0.9)
    assert y.tolist() == pytest.approx([9.91, 9.9, 11.0])
    # a terminal last step bootstraps 0 whatever Q says: R = 2, 1.8, 2.62
    y = nstep_q_targets([1.0, 0.0, 2.0], [False, False, True], torch.tensor([3.0, 10.0]), 0.9)
    assert y.tolist() == pytest.approx([2.62, 1.8, 2.0])


class TableQ(torch.nn.Module):
    """Q(s, .) = table[s]: observations are row indices, so targets can be worked by hand."""

    recurrent = False

    def __init__(self, table):
        super().__init__()
        self.table = torch.nn.Parameter(torch.tensor(table))

    def forward(self, obs, state=None):
        return self.table[obs.long().view(-1)], state

    def initial_state(self):
        return None


TARGET = [[0.0, 0.0], [1.0, 5.0], [2.0, -3.0], [7.0, 4.0]]  # theta^-
ONLINE = [[0.5, 0.25], [1.5, 0.0], [0.0, 2.0], [3.0, 3.0]]  # theta'


def _batch(terminals, next_action=None):
    # states 0 -> 1 -> 2 -> 3, actions 1, 0, 1, rewards 1, 0, 2
    return SegmentBatch(obs=torch.tensor([[0], [1], [2], [3]]), actions=torch.tensor([1, 0, 1]),
                        rewards=[1.0, 0.0, 2.0], terminals=terminals, next_action=next_action)


def _loss(algo_name, batch, gamma=0.5):
    cfg = compose(f"algo={algo_name}", f"algo.gamma={gamma}").algo
    algo = {"one_step_q": OneStepQ, "one_step_sarsa": OneStepSarsa, "nstep_q": NStepQ}[
        algo_name](cfg, torch.Generator().manual_seed(0))
    online, target = TableQ(ONLINE), TableQ(TARGET)
    loss, _ = algo.loss(online, target, batch)
    taken = torch.tensor([0.25, 1.5, 2.0])  # Q(s_i, a_i; theta')
    return loss, taken, online, target


def test_one_step_q_uses_the_target_networks_max():
    loss, taken, *_ = _loss("one_step_q", _batch([False, False, False]))
    y = torch.tensor([1 + 0.5 * 5.0, 0 + 0.5 * 2.0, 2 + 0.5 * 7.0])
    assert loss.item() == pytest.approx(float(((y - taken) ** 2).sum()))


def test_one_step_q_after_a_terminal_does_not_bootstrap():
    loss, taken, *_ = _loss("one_step_q", _batch([False, False, True]))
    y = torch.tensor([3.5, 1.0, 2.0])
    assert loss.item() == pytest.approx(float(((y - taken) ** 2).sum()))


def test_sarsa_uses_the_action_taken_next():
    # a_1 = 0, a_2 = 1, and the next segment starts with a' = 1 in s_3
    loss, taken, *_ = _loss("one_step_sarsa", _batch([False, False, False], next_action=1))
    y = torch.tensor([1 + 0.5 * 1.0, 0 + 0.5 * -3.0, 2 + 0.5 * 4.0])
    assert loss.item() == pytest.approx(float(((y - taken) ** 2).sum()))


def test_nstep_q_segment_without_a_terminal_bootstraps_from_the_target_networks_max():
    # a segment cut by t_max or by a time limit: its last state is bootstrapped from theta^-
    loss, taken, *_ = _loss("nstep_q", _batch([False, False, False]), gamma=0.5)
    # R_2 = 2 + .5 * max(7, 4) = 5.5; R_1 = 0 + .5 * 5.5 = 2.75; R_0 = 1 + .5 * 2.75 = 2.375
    y = torch.tensor([2.375, 2.75, 5.5])
    assert loss.item() == pytest.approx(float(((y - taken) ** 2).sum()))


def test_a_time_limit_ends_the_episode_but_is_not_terminal_for_learning():
    # CartPole cut after 3 steps, well before the pole can fall: the actor reports the
    # episode over and the step non-terminal, so the segment above bootstraps from theta^-
    cfg = compose("env=classic/cartpole")
    actor = Actor(cfg, seed=0, env=gym.make("CartPole-v1", max_episode_steps=3))
    steps = [actor.step(action) for action in (0, 1, 0)]
    assert [(terminal, over) for _, terminal, over in steps] == [
        (False, False), (False, False), (False, True)]
    # and the pole falling is terminal: always pushing one way ends it within 200 steps
    actor = Actor(cfg, seed=0, env=gym.make("CartPole-v1"))
    for _ in range(200):
        _, terminal, over = actor.step(1)
        if over:
            break
    assert terminal and over


@pytest.mark.parametrize(("algo_name", "y"), [
    ("one_step_q", [3.5, 1.0, 5.5]),      # as in the one-step test above
    ("nstep_q", [2.375, 2.75, 5.5]),      # as in the n-step test above
])
def test_gradient_flows_into_the_online_network_only(algo_name, y):
    # no terminal, so the loss reads theta^-'s max after each step: it must not train it
    loss, _, online, target = _loss(algo_name, _batch([False, False, False]))
    grad, target_grad = torch.autograd.grad(loss, [online.table, target.table],
                                            allow_unused=True)
    # only the taken entries Q(0,1), Q(1,0), Q(2,1) get gradient: 2 (Q - y)
    expected = torch.zeros(4, 2)
    expected[0, 1] = 2 * (0.25 - y[0])
    expected[1, 0] = 2 * (1.5 - y[1])
    expected[2, 1] = 2 * (2.0 - y[2])
    assert torch.allclose(grad, expected)
    assert target_grad is None or not target_grad.any()


def test_nstep_q_over_two_segments_bootstraps_each_from_its_own_last_state():
    cfg = compose("algo=nstep_q", "algo.gamma=0.5").algo
    algo = NStepQ(cfg, torch.Generator().manual_seed(0))
    # 0 -> 1 -> 2 cut by t_max; 3 -> 2 ending in a terminal
    cut = SegmentBatch(obs=torch.tensor([[0], [1], [2]]), actions=torch.tensor([1, 0]),
                       rewards=[1.0, 0.0], terminals=[False, False])
    ended = SegmentBatch(obs=torch.tensor([[3], [2]]), actions=torch.tensor([0]),
                         rewards=[2.0], terminals=[True])
    loss, stats = algo.loss_many(TableQ(ONLINE), TableQ(TARGET), [cut, ended])
    # cut: y_1 = 0 + 0.5 max Q(s_2; theta^-) = 1, y_0 = 1 + 0.5 * 1 = 1.5; ended: y = 2
    y = torch.tensor([1.5, 1.0, 2.0])
    taken = torch.tensor([0.25, 1.5, 3.0])
    assert loss.item() == pytest.approx(float(((y - taken) ** 2).sum()))
    # what the blindness watch reads (asyncrl/run/blindness.py): the online network read
    # states 0, 1 and 3 (a bootstrap state is the target's); action 0's values 0.5, 1.5, 3
    # spread sqrt(114 / 108), action 1's 0.25, 0, 3 sqrt(798 / 432)
    assert stats["q_spread"] == pytest.approx(((114 / 108) ** 0.5 + (798 / 432) ** 0.5) / 2)
    assert "q_spread" in NStepQ.metrics  # logged, so the watch can read it
