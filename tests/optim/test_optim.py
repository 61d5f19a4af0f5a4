"""Shared RMSProp, learning-rate annealing and gradient clipping against their formulas."""

import math

import pytest
import torch
from torch import nn

from asyncrl.optim import (
    MomentumSGD,
    RMSProp,
    SharedRMSProp,
    annealed_lr,
    build_optimizer,
    clip_grad_norm,
)


def test_shared_rmsprop_two_steps_by_hand():
    param = nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = SharedRMSProp([param], alpha=0.9, eps=0.1)
    opt.step([torch.tensor([1.0, 2.0])], lr=0.5)
    # g = 0.1 * grad^2 = (0.1, 0.4); theta -= 0.5 * grad / sqrt(g + 0.1)
    assert opt.square_avg[0].tolist() == pytest.approx([0.1, 0.4])
    expected = [1.0 - 0.5 * 1.0 / math.sqrt(0.2), -2.0 - 0.5 * 2.0 / math.sqrt(0.5)]
    assert param.tolist() == pytest.approx(expected, rel=1e-6)
    opt.step([torch.tensor([-1.0, 0.0])], lr=0.1)
    g = [0.9 * 0.1 + 0.1 * 1.0, 0.9 * 0.4]
    assert opt.square_avg[0].tolist() == pytest.approx(g, rel=1e-6)
    expected = [expected[0] + 0.1 / math.sqrt(g[0] + 0.1), expected[1]]
    assert param.tolist() == pytest.approx(expected, rel=1e-6)


def test_epsilon_is_inside_the_square_root():
    param = nn.Parameter(torch.zeros(1))
    opt = SharedRMSProp([param], alpha=0.0, eps=0.25)
    opt.step([torch.tensor([0.0])], lr=1.0)  # g = 0: the step size is 1/sqrt(eps), not 1/eps
    opt.step([torch.tensor([1.0])], lr=1.0)
    assert param.item() == pytest.approx(-1.0 / math.sqrt(1.0 + 0.25))


def test_statistics_live_in_shared_memory_after_share_memory():
    opt = SharedRMSProp(nn.Linear(3, 2).parameters()).share_memory()
    assert all(g.is_shared() for g in opt.square_avg)


def test_state_dict_round_trip_and_mismatch():
    model = nn.Linear(3, 2)
    opt = SharedRMSProp(model.parameters())
    opt.step([torch.ones_like(p) for p in model.parameters()], lr=0.01)
    other = SharedRMSProp(nn.Linear(3, 2).parameters())
    other.load_state_dict(opt.state_dict())
    for a, b in zip(opt.square_avg, other.square_avg, strict=True):
        assert torch.equal(a, b)
    with pytest.raises(ValueError):
        SharedRMSProp(nn.Linear(3, 2, bias=False).parameters()).load_state_dict(opt.state_dict())


def test_build_optimizer_reads_the_config(tmp_path):
    from tests.conftest import compose

    cfg = compose("setting=paper")
    opt = build_optimizer(cfg.optimizer, nn.Linear(2, 2).parameters())
    assert isinstance(opt, SharedRMSProp)
    assert (opt.alpha, opt.eps) == (0.99, 0.1)
    tuned = build_optimizer(compose().optimizer, nn.Linear(2, 2).parameters())
    assert tuned.eps == 1e-3 and all(bool(s.eq(0.1).all()) for s in tuned.statistics)


@pytest.mark.parametrize(("frames", "expected"), [(0, 1e-3), (250, 7.5e-4), (1000, 0.0),
                                                  (1500, 0.0)])
def test_learning_rate_anneals_linearly_to_zero(frames, expected):
    assert annealed_lr(1e-3, frames, 1000) == pytest.approx(expected)


def test_clipping_scales_to_max_norm_and_reports_the_norm_before():
    grads = [torch.tensor([3.0]), torch.tensor([4.0])]
    assert clip_grad_norm(grads, 1.0) == pytest.approx(5.0)
    assert [g.item() for g in grads] == pytest.approx([0.6, 0.8], rel=1e-5)
    small = [torch.tensor([0.3, 0.4])]
    assert clip_grad_norm(small, 1.0) == pytest.approx(0.5)
    assert small[0].tolist() == pytest.approx([0.3, 0.4])


def test_per_worker_rmsprop_keeps_each_workers_statistics_apart():
    param = nn.Parameter(torch.tensor([0.0]))
    opt = RMSProp([param], alpha=0.5, eps=0.0, workers=3).share_memory()
    assert opt.statistics[0].shape == (3, 1) and opt.statistics[0].is_shared()
    opt.step([torch.tensor([2.0])], lr=1.0, worker=1)
    # worker 1: g = .5 * 4 = 2, step 2 / sqrt(2); the other slots stay 0
    assert opt.statistics[0][:, 0].tolist() == pytest.approx([0.0, 2.0, 0.0])
    assert param.item() == pytest.approx(-2.0 / math.sqrt(2.0))
    opt.step([torch.tensor([2.0])], lr=1.0, worker=2)  # a fresh slot: the same first step
    assert param.item() == pytest.approx(-4.0 / math.sqrt(2.0))
    assert opt.statistics[0][:, 0].tolist() == pytest.approx([0.0, 2.0, 2.0])


def test_shared_rmsprop_statistics_are_the_same_for_every_worker():
    param = nn.Parameter(torch.tensor([0.0]))
    opt = SharedRMSProp([param], alpha=0.5, eps=0.0, workers=3)
    opt.step([torch.tensor([2.0])], lr=1.0, worker=0)
    opt.step([torch.tensor([2.0])], lr=1.0, worker=2)
    # one g for all: 2, then .5 * 2 + .5 * 4 = 3
    assert opt.square_avg[0].tolist() == pytest.approx([3.0])
    assert param.item() == pytest.approx(-2.0 / math.sqrt(2.0) - 2.0 / math.sqrt(3.0))


def test_momentum_sgd_two_steps_by_hand():
    param = nn.Parameter(torch.tensor([1.0, 1.0]))
    opt = MomentumSGD([param], momentum=0.9, workers=2)
    opt.step([torch.tensor([1.0, -2.0])], lr=0.5, worker=0)
    # m = .1 * grad = (.1, -.2); theta -= .5 * m
    assert opt.statistics[0][0].tolist() == pytest.approx([0.1, -0.2])
    assert param.tolist() == pytest.approx([0.95, 1.1])
    opt.step([torch.tensor([1.0, 0.0])], lr=0.5, worker=0)
    # m = .9 * (.1, -.2) + .1 * (1, 0) = (.19, -.18)
    assert opt.statistics[0][0].tolist() == pytest.approx([0.19, -0.18])
    assert param.tolist() == pytest.approx([0.95 - 0.095, 1.1 + 0.09])
    assert opt.statistics[0][1].tolist() == [0.0, 0.0]  # worker 1's momentum untouched


def test_per_worker_statistics_follow_a_new_worker_count():
    model = nn.Linear(2, 1)
    opt = MomentumSGD(model.parameters(), workers=2)
    for slot in range(2):
        opt.step([torch.ones_like(p) for p in model.parameters()], lr=0.1, worker=slot)
    bigger = MomentumSGD(nn.Linear(2, 1).parameters(), workers=3)
    notes = bigger.load_state_dict(opt.state_dict())
    assert notes and "restored for 2 of 3" in notes[0]
    assert torch.equal(bigger.statistics[0][:2], opt.statistics[0])
    assert not bigger.statistics[0][2].any()


@pytest.mark.parametrize(("name", "cls"), [("shared_rmsprop", SharedRMSProp),
                                           ("rmsprop", RMSProp), ("momentum_sgd", MomentumSGD)])
def test_each_optimizer_config_builds_its_optimizer(name, cls):
    from tests.conftest import compose

    opt = build_optimizer(compose(f"optimizer={name}", "setting=base").optimizer,
                          nn.Linear(2, 2).parameters(),
                          workers=4)
    assert type(opt) is cls
    assert opt.statistics[0].shape[0] == (4 if cls.per_worker else 2)


def test_statistics_can_start_from_one_as_tensorflows_rmsprop_does():
    param = nn.Parameter(torch.tensor([0.0]))
    opt = SharedRMSProp([param], alpha=0.9, eps=0.0, initial_square_avg=1.0)
    opt.step([torch.tensor([0.5])], lr=1.0)
    # g = .9 * 1 + .1 * .25 = .925: a damped first step instead of lr * grad / |grad| * 3.16
    assert opt.square_avg[0].item() == pytest.approx(0.925)
    assert param.item() == pytest.approx(-0.5 / math.sqrt(0.925))


@pytest.mark.parametrize("cls", [SharedRMSProp, RMSProp, MomentumSGD])
def test_updates_land_in_memory_that_moved_to_shared_memory(cls):
    model = nn.Linear(3, 2)
    opt = cls(model.parameters(), workers=2)
    ones = [torch.ones_like(p) for p in model.parameters()]
    opt.step(ones, lr=0.1, worker=1)  # views of the private storage are taken here
    model.share_memory()
    opt.share_memory()  # both storages move
    before = [p.detach().clone() for p in model.parameters()]
    stats_before = [s.clone() for s in opt.statistics]
    opt.step(ones, lr=0.1, worker=1)
    assert all((p < b).all() for p, b in zip(model.parameters(), before, strict=True))
    assert all(not torch.equal(s, b) for s, b in zip(opt.statistics, stats_before, strict=True))
