"""n-step returns and advantages against numbers worked by hand."""

import pytest
import torch

from asyncrl.algos.returns import advantages, discounted_returns, lambda_returns


def test_non_terminal_segment_bootstraps_from_value():
    # gamma 0.5, rewards 1, 2, 3, V(s_3) = 8
    # R2 = 3 + 0.5*8 = 7; R1 = 2 + 0.5*7 = 5.5; R0 = 1 + 0.5*5.5 = 3.75
    assert discounted_returns([1, 2, 3], [False, False, False], 8.0, 0.5) == [3.75, 5.5, 7.0]


def test_terminal_segment_bootstraps_zero():
    # the bootstrap value 100 must be ignored after a terminal
    # R2 = 3; R1 = 2 + 0.5*3 = 3.5; R0 = 1 + 0.5*3.5 = 2.75
    assert discounted_returns([1, 2, 3], [False, False, True], 100.0, 0.5) == [2.75, 3.5, 3.0]


def test_terminal_inside_segment_cuts_the_chain():
    # terminal after step 1: R1 = 2, R0 = 1 + 0.9*2 = 2.8; R2 = 3 + 0.9*10 = 12
    out = discounted_returns([1, 2, 3], [False, True, False], 10.0, 0.9)
    assert out == pytest.approx([2.8, 2.0, 12.0])


def test_gamma_099_five_steps():
    rewards = [0.0, 0.0, 1.0, 0.0, -1.0]
    out = discounted_returns(rewards, [False] * 5, 0.5, 0.99)
    # R4 = -1 + .99*.5 = -0.505; R3 = .99*R4; R2 = 1 + .99*R3; R1 = .99*R2; R0 = .99*R1
    r4 = -0.505
    r3 = 0.99 * r4
    r2 = 1 + 0.99 * r3
    assert out == pytest.approx([0.99 * 0.99 * r2, 0.99 * r2, r2, r3, r4])


def test_matches_a_vectorised_discount_matrix():
    torch.manual_seed(0)
    rewards = torch.randn(7)
    gamma, bootstrap = 0.97, 1.3
    n = len(rewards)
    powers = torch.tensor([[gamma ** (j - i) if j >= i else 0.0 for j in range(n)]
                           for i in range(n)])
    expected = powers @ rewards + bootstrap * gamma ** torch.arange(n, 0, -1, dtype=torch.float)
    out = discounted_returns(rewards.tolist(), [False] * n, bootstrap, gamma)
    assert torch.allclose(torch.tensor(out), expected, atol=1e-5)


def test_length_mismatch_is_refused():
    with pytest.raises(ValueError):
        discounted_returns([1.0], [False, True], 0.0, 0.99)


def test_advantage_is_return_minus_value_without_gradient_into_value():
    values = torch.tensor([1.0, 2.0], requires_grad=True)
    adv = advantages(torch.tensor([3.0, 1.0]), values)
    assert adv.tolist() == [2.0, -1.0]
    assert not adv.requires_grad


# A 3-step segment worked by hand: gamma 0.5, lambda 0.5, rewards 1, 0, 2,
# V(s_0 .. s_3) = 0.5, 1, 2, 4.  TD errors d_i = r_i + gamma V(s_{i+1}) - V(s_i).
GAMMA, LAM = 0.5, 0.5
REWARDS = [1.0, 0.0, 2.0]
VALUES = [0.5, 1.0, 2.0, 4.0]


def test_gae_on_a_segment_cut_by_t_max_bootstraps_from_the_last_value():
    # d = 1, 0, 2; A_2 = 2, A_1 = 0 + 0.25*2 = 0.5, A_0 = 1 + 0.25*0.5 = 1.125
    returns = lambda_returns(REWARDS, [False] * 3, VALUES[1:], GAMMA, LAM)
    assert returns == pytest.approx([1.625, 1.5, 4.0])
    assert [g - v for g, v in zip(returns, VALUES, strict=False)] == pytest.approx(
        [1.125, 0.5, 2.0])


def test_gae_on_a_segment_that_ends_terminally_ignores_the_value_after_it():
    # V(s_3) = 4 must not count: d_2 = 2 - 2 = 0, d_1 = 0 + 0.5*2 - 1 = 0, d_0 = 1
    returns = lambda_returns(REWARDS, [False, False, True], VALUES[1:], GAMMA, LAM)
    assert returns == pytest.approx([1.5, 1.0, 2.0])
    assert [g - v for g, v in zip(returns, VALUES, strict=False)] == pytest.approx(
        [1.0, 0.0, 0.0])


@pytest.mark.parametrize("terminals", [[False] * 3, [False, False, True], [True, False, False]])
def test_lambda_one_is_the_n_step_return(terminals):
    bootstrap = VALUES[-1]
    n_step = discounted_returns(REWARDS, terminals, bootstrap, GAMMA)
    assert lambda_returns(REWARDS, terminals, VALUES[1:], GAMMA, 1.0) == n_step


def test_lambda_zero_is_the_one_step_target():
    # r_i + gamma V(s_{i+1}): 1 + 0.5, 0 + 1, 2 + 2
    assert lambda_returns(REWARDS, [False] * 3, VALUES[1:], GAMMA, 0.0) == [1.5, 1.0, 4.0]
