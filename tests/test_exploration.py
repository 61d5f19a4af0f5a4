"""Each worker's final epsilon, its annealing, and epsilon-greedy action choice."""

import numpy as np
import pytest
import torch

from asyncrl.algos import NStepQ
from asyncrl.algos.exploration import annealed_epsilon, draw_final_epsilon, epsilon_greedy
from tests.conftest import compose

FINALS, PROBS = [0.1, 0.01, 0.5], [0.4, 0.3, 0.3]


def test_final_epsilons_follow_the_papers_distribution():
    rng = np.random.default_rng(123)
    draws = [draw_final_epsilon(rng, FINALS, PROBS) for _ in range(20_000)]
    assert set(draws) == set(FINALS)
    for value, p in zip(FINALS, PROBS, strict=True):
        # binomial standard error at n = 20,000 is about 0.0035
        assert draws.count(value) / len(draws) == pytest.approx(p, abs=0.015)


@pytest.mark.parametrize(("frames", "expected"), [(0, 1.0), (1_000_000, 0.775),
                                                  (2_000_000, 0.55), (4_000_000, 0.1),
                                                  (9_000_000, 0.1)])
def test_epsilon_anneals_linearly_from_one_over_four_million_frames(frames, expected):
    assert annealed_epsilon(0.1, frames, 4_000_000) == pytest.approx(expected)


def test_epsilon_greedy_extremes_and_rate():
    q = torch.tensor([0.0, 3.0, 1.0])
    gen = torch.Generator().manual_seed(0)
    assert all(epsilon_greedy(q, 0.0, gen) == 1 for _ in range(50))
    random_actions = [epsilon_greedy(q, 1.0, gen) for _ in range(3000)]
    assert {0, 1, 2} == set(random_actions)
    assert random_actions.count(0) / 3000 == pytest.approx(1 / 3, abs=0.04)
    # epsilon .3: greedy with probability .7 + .3 / 3 = .8
    picks = [epsilon_greedy(q, 0.3, gen) for _ in range(5000)]
    assert picks.count(1) / 5000 == pytest.approx(0.8, abs=0.03)


def test_workers_draw_their_epsilon_from_their_own_seed():
    cfg = compose("algo=nstep_q").algo
    finals = [NStepQ(cfg, torch.Generator().manual_seed(seed)).final_epsilon
              for seed in range(40)]
    again = [NStepQ(cfg, torch.Generator().manual_seed(seed)).final_epsilon
             for seed in range(40)]
    assert finals == again
    assert set(finals) == set(FINALS)  # 40 workers: every value turns up


def test_a_slot_keeps_its_final_epsilon_across_restarts_and_resumes():
    """A resumed run is the same run: each slot's exploration does not change with it."""
    from asyncrl.learning.worker import WorkerSpec, build_worker_parts
    from asyncrl.run.launcher import build_shared_state

    cfg = compose("algo=nstep_q", "env=classic/cartpole", "workers=8", "seed=3")
    shared = build_shared_state(cfg)

    def finals(restart: int, generation: int) -> list[float]:
        return [build_worker_parts(WorkerSpec(slot, restart, generation), cfg,
                                   shared).algorithm.final_epsilon for slot in range(8)]

    first = finals(0, 0)
    assert finals(2, 0) == first  # restarted after a crash
    assert finals(0, 1) == first  # resumed from a checkpoint
    assert len(set(first)) > 1  # yet the slots still differ from one another
    # while each worker's other randomness still moves on with a resume
    assert WorkerSpec(0, 0, 1).seed(3) != WorkerSpec(0, 0, 0).seed(3)
