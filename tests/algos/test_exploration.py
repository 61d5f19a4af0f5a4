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


def test_with_epsilon_per_environment_each_environment_draws_and_acts_at_its_own():
    cfg = compose("algo=nstep_q", "algo.epsilon_per_environment=true",
                  "algo.epsilon_finals=[0.0,1.0]", "algo.epsilon_probabilities=[0.5,0.5]",
                  "algo.epsilon_anneal_frames=0", "algo.eval_epsilon=0").algo
    per_worker = NStepQ(compose("algo=nstep_q", "algo.epsilon_finals=[0.0,1.0]",
                                "algo.epsilon_probabilities=[0.5,0.5]").algo,
                        torch.Generator(), exploration_seed=7, environments=16)
    algorithm = NStepQ(cfg, torch.Generator().manual_seed(0), exploration_seed=7,
                       environments=16)
    finals = algorithm.final_epsilons
    assert per_worker.final_epsilons == [per_worker.final_epsilon]  # the paper's: one draw
    assert finals[0] == per_worker.final_epsilon  # the first environment keeps the worker's
    assert len(finals) == 16 and set(finals) == {0.0, 1.0}
    assert NStepQ(cfg, torch.Generator(), exploration_seed=7,
                  environments=16).final_epsilons == finals  # a restart keeps them
    assert "final epsilons per environment" in algorithm.describe()

    class Fixed(torch.nn.Module):  # Q = (0, 1, 0, 0) on every state: greedy plays 1
        def step_many(self, obs, states):
            return (torch.tensor([[0.0, 1.0, 0.0, 0.0]]).expand(len(obs), 4),), states

    greedy = [m for m, e in enumerate(finals) if e == 0.0]
    random = [m for m, e in enumerate(finals) if e == 1.0]
    members = [greedy[0], random[0]]
    played = [algorithm.act(Fixed(), torch.zeros(2, 1), [None, None], 10**6,
                            members=members)[0] for _ in range(400)]
    assert all(actions[0] == 1 for actions in played)  # the ε 0 environment never explores
    assert {actions[1] for actions in played} == {0, 1, 2, 3}  # the ε 1 one always does
    # what updates.csv logs: the mean over every environment's, acting or not
    assert algorithm.epsilon_now == pytest.approx(sum(finals) / 16)
    # in an evaluation every row plays at eval_epsilon (0 here), whatever its environment drew
    for _ in range(50):
        assert algorithm.act(Fixed(), torch.zeros(2, 1), [None, None], 10**6,
                             evaluating=True, members=members)[0] == [1, 1]


def test_a_worker_of_a_run_with_epsilon_per_environment_draws_for_each_environment():
    from asyncrl.learning.worker import WorkerSpec, build_worker_parts
    from asyncrl.run.launcher import build_shared_state

    cfg = compose("algo=nstep_q", "env=classic/cartpole", "workers=2", "envs_per_worker=8",
                  "seed=3", "algo.epsilon_per_environment=true")
    parts = build_worker_parts(WorkerSpec(1), cfg, build_shared_state(cfg))
    assert len(parts.algorithm.final_epsilons) == 8
    assert set(parts.algorithm.final_epsilons) <= set(FINALS)


def test_with_epsilon_redraw_each_environment_draws_again_as_each_episode_begins():
    """The paper's "ε periodically sampled ... by each thread": each environment's final ε is
    drawn again at its next episode, from its own stream (the others' draws stay), with the
    paper's probabilities, and a restart repeats the same sequence."""
    cfg = compose("algo=nstep_q", "algo.epsilon_redraw=true").algo
    algorithm = NStepQ(cfg, torch.Generator(), exploration_seed=7, environments=4)
    once = NStepQ(compose("algo=nstep_q", "algo.epsilon_per_environment=true").algo,
                  torch.Generator(), exploration_seed=7, environments=4)
    assert algorithm.final_epsilons == once.final_epsilons  # the first draws are the same
    assert "drawn again as each episode begins" in algorithm.describe()
    drawn = []
    for _ in range(3000):
        before = list(algorithm.final_epsilons)
        algorithm.episode_began(2)
        assert [e for i, e in enumerate(algorithm.final_epsilons) if i != 2] == [
            e for i, e in enumerate(before) if i != 2]  # only environment 2 drew
        drawn.append(algorithm.final_epsilons[2])
    for value, p in zip(FINALS, PROBS, strict=True):  # standard error about 0.009
        assert drawn.count(value) / len(drawn) == pytest.approx(p, abs=0.04)
    again = NStepQ(cfg, torch.Generator(), exploration_seed=7, environments=4)
    for value in drawn[:50]:
        again.episode_began(2)
        assert again.final_epsilons[2] == value
    # without the key nothing is drawn again: the paper's once-a-run draw of asyncrl's base
    for _ in range(20):
        once.episode_began(1)
    assert once.final_epsilons == again.final_epsilons[:2] + once.final_epsilons[2:]


def test_with_epsilon_redraw_one_environment_per_worker_draws_again_too():
    cfg = compose("algo=nstep_q", "algo.epsilon_redraw=true").algo
    algorithm = NStepQ(cfg, torch.Generator(), exploration_seed=3, environments=1)
    seen = set()
    for _ in range(200):
        algorithm.episode_began(0)
        seen.add(algorithm.final_epsilon)
        # the paper's loop acts at the current draw, annealed
        assert algorithm.epsilon(4_000_000) == pytest.approx(algorithm.final_epsilon)
    assert seen == set(FINALS)
