"""envs_per_worker=k: each worker steps k environments, acts for all of them in one batched
forward and makes one update from their k segments."""

from __future__ import annotations

import copy
import csv

import pytest
import torch

from asyncrl.algos import build_algorithm
from asyncrl.learning.rollout import Actors
from asyncrl.nets import build_model
from tests.conftest import ALGOS, QUICK, compose, run_cli

T_MAX = 5
# value-based acting with epsilon 0 from the first frame: greedy, so acting is a function
# of the model alone and a batched member can be replayed by a lone actor
GREEDY = ["algo.epsilon_finals=[0.0]", "algo.epsilon_probabilities=[1.0]",
          "algo.epsilon_anneal_frames=0"]


def _setup(algo: str, network: str, k: int, *extra: str, env: str = "classic/cartpole"):
    cfg = compose(f"env={env}", f"network={network}", f"algo={algo}",
                  f"envs_per_worker={k}", *extra)
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(0))
    actors = Actors(cfg, 11, algorithm, k)
    torch.manual_seed(0)
    model = build_model(cfg, actors.env.observation_space, actors.env.action_space,
                        algorithm.head)
    actors.allocate(model, T_MAX)
    return cfg, algorithm, actors, model


def _assert_one_update_is_the_sum_of_its_parts(algorithm, model, target, batches, params):
    """The loss of one update from k segments, and its gradients, are the sums of each
    segment's alone; returns that loss and its stats."""
    joint, stats = algorithm.loss_many(model, target, batches)
    joint_grads = torch.autograd.grad(joint, params)
    apart = sum(algorithm.loss(model, target, batch)[0] for batch in batches)
    apart_grads = torch.autograd.grad(apart, params)
    assert joint.item() == pytest.approx(apart.item(), rel=1e-5, abs=1e-6)
    for mine, theirs in zip(joint_grads, apart_grads, strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-6)
    return joint, stats


@pytest.mark.parametrize("network", ["ff", "lstm"])
@pytest.mark.parametrize("algo", ALGOS)
def test_one_update_from_k_segments_is_the_sum_of_k_one_segment_updates(algo, network):
    _, algorithm, actors, model = _setup(algo, network, 3)
    target = copy.deepcopy(model)
    with torch.no_grad():  # a target that differs from the online network
        for p in target.parameters():
            p.add_(0.05)
    params = list(model.parameters())
    uneven = 0
    for _ in range(30):
        segments = actors.play(model, 0)
        batches = actors.batches(segments)
        joint, stats = _assert_one_update_is_the_sum_of_its_parts(algorithm, model, target,
                                                                  batches, params)
        assert stats["loss"] == pytest.approx(joint.item())
        steps = [s.steps for s in segments]
        assert actors.frames_played(segments) == sum(steps)
        uneven += len(set(steps)) > 1
    assert uneven > 0  # some update mixed a segment cut by a terminal with full ones


@pytest.mark.parametrize("network", ["ff", "lstm"])
@pytest.mark.parametrize("algo", ["one_step_q", "one_step_sarsa", "nstep_q"])
def test_each_batched_environment_plays_what_it_would_play_alone(algo, network):
    cfg, algorithm, actors, model = _setup(algo, network, 3, *GREEDY)
    alone = [Actors(cfg, seed, build_algorithm(cfg.algo, torch.Generator().manual_seed(0)), 1)
             for seed in _member_seeds(actors)]
    for lone in alone:
        lone.allocate(model, T_MAX)
    ended_early_while_others_went_on = False
    for _ in range(40):
        segments = actors.play(model, 10**9)
        for i, (segment, lone) in enumerate(zip(segments, alone, strict=True)):
            (mine,) = lone.play(model, 10**9)
            assert (mine.rewards, mine.terminals, mine.episode_over, mine.next_action) == (
                segment.rewards, segment.terminals, segment.episode_over, segment.next_action)
            torch.testing.assert_close(actors.obs_bufs[i][: segment.steps + 1],
                                       lone.obs_bufs[0][: mine.steps + 1])
            assert torch.equal(actors.action_bufs[i][: segment.steps],
                               lone.action_bufs[0][: mine.steps])
            if network == "lstm":  # the batched LSTM step carried this member's own state
                torch.testing.assert_close(actors.members[i].state, lone.members[0].state)
        lengths = [s.steps for s in segments]
        ended_early_while_others_went_on |= min(lengths) < T_MAX == max(lengths)
    assert ended_early_while_others_went_on


@pytest.mark.parametrize("network", ["ff", "lstm"])
def test_a3c_samples_in_a_batch_what_it_samples_one_environment_at_a_time(network):
    """A3C's acting is a draw: from one fixed generator state, the batched forward's k
    sampled actions (and LSTM states) are those of k single-environment steps in member
    order, so each member acts on its own policy, not a neighbour's."""
    cfg, algorithm, actors, model = _setup("a3c", network, 3)
    lone = build_algorithm(cfg.algo, torch.Generator())
    with torch.no_grad():  # a sharp policy that differs between members' observations
        model.policy.weight.mul_(40.0)
    obs = torch.stack([torch.from_numpy(m.obs) for m in actors.members]) * torch.tensor(
        [[1.0], [-1.0], [3.0]])
    states = [model.initial_state() for _ in actors.members]
    differed = 0
    with torch.inference_mode():
        for draw in range(50):
            algorithm.generator.manual_seed(draw)
            lone.generator.manual_seed(draw)
            batched, batched_states = algorithm.act(model, obs, states, 0)
            one_by_one = [lone.act(model, obs[i : i + 1], [states[i]], 0) for i in range(3)]
            assert batched == [actions[0] for actions, _ in one_by_one]
            if network == "lstm":
                for mine, (_, theirs) in zip(batched_states, one_by_one, strict=True):
                    torch.testing.assert_close(mine, theirs[0])
            differed += len(set(batched)) > 1
            states = batched_states
    assert differed > 0  # the members' actions were not all one action


def test_the_lstm_on_atari_screens_acts_and_learns_in_a_batch_as_each_screen_alone():
    """The conv torso under the LSTM, on Pong's screens: each member's recurrent state after a
    batched segment is the one the network reaches reading that member's screens alone from
    the segment's start state, and the update is the sum of the members' own losses."""
    _, algorithm, actors, model = _setup("a3c", "lstm", 3, env="atari/pong")
    params = list(model.parameters())
    for _ in range(12):
        segments = actors.play(model, 0)
        for i, segment in enumerate(segments):
            state = segment.start_state
            with torch.inference_mode():
                for t in range(segment.steps):
                    _, _, state = model(actors.obs_bufs[i][t : t + 1], state)
            torch.testing.assert_close(actors.members[i].state, state, rtol=1e-4, atol=1e-5)
        _assert_one_update_is_the_sum_of_its_parts(algorithm, model, model,
                                                   actors.batches(segments), params)
    # the members' screens and states differ, so a mixed-up member would have shown
    assert not torch.equal(actors.members[0].state[0], actors.members[1].state[0])


def _member_seeds(actors: Actors) -> list[int]:
    from asyncrl.learning.seeding import derive_seed

    return [11 if i == 0 else derive_seed(11, i) for i in range(len(actors.members))]


def test_members_start_from_their_own_seeds_and_the_first_keeps_the_workers():
    _, _, actors, _ = _setup("a3c", "ff", 4)
    first = [tuple(m.obs.tolist()) for m in actors.members]
    assert len(set(first)) == 4
    _, _, lone, _ = _setup("a3c", "ff", 1)
    assert tuple(lone.members[0].obs.tolist()) == first[0]


@pytest.mark.parametrize("network", ["ff", "lstm"])
def test_episodes_played_as_one_batch_score_what_each_would_score_alone(network):
    """The evaluator's episodes, all at once: each member's score is its episode's when
    played alone from the same state, however long the others run; max_steps cuts each
    episode."""
    cfg, _, actors, model = _setup("nstep_q", network, 4, *GREEDY)
    alone = [Actors(cfg, seed, build_algorithm(cfg.algo, torch.Generator().manual_seed(0)), 1)
             for seed in _member_seeds(actors)]
    for lone in alone:
        lone.allocate(model, T_MAX)
    lengths = set()
    for max_steps in (500, 500, 9):
        played = actors.play_episodes(model, max_steps)
        assert played == [lone.play_episode(model, max_steps) for lone in alone]
        # CartPole scores 1 a step, one frame a step: the score is the length
        assert all(score == frames for score, frames in played)
        lengths.update(p.frames for p in played)
    assert len(lengths) > 2 and max(lengths) > 9 and 9 in lengths


def _rows(path):
    with path.open() as handle:
        return list(csv.DictReader(handle))


# one-step Q and Sarsa act and update through nstep_q's batched path (their targets differ,
# and the sum test above holds each of them): their CLI runs go to the slow session
_CLI_CASES = [("a3c", "ff"), ("nstep_q", "ff"), ("a3c", "lstm"),
              pytest.param("one_step_q", "ff", marks=pytest.mark.slow),
              pytest.param("one_step_sarsa", "ff", marks=pytest.mark.slow)]


@pytest.mark.parametrize(("algo", "network"), _CLI_CASES)
def test_every_algorithm_trains_with_several_environments_per_worker(workdir, algo, network):
    run_dir = workdir / "run"
    result = run_cli(["env=classic/cartpole", f"algo={algo}", f"network={network}",
                      "workers=2", "envs_per_worker=3", "total_frames=3000", *QUICK,
                      f"hydra.run.dir={run_dir}"], workdir, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "3 environments per worker" in (run_dir / "asyncrl.log").read_text()
    episodes = _rows(run_dir / "episodes.csv")
    assert {r["worker"] for r in episodes} == {"0", "1"}
    # each row names the environment that played it; CartPole's short episodes end in all three
    assert {r["environment"] for r in episodes} == {"0", "1", "2"}
    final_t = torch.load(run_dir / "checkpoints" / "last.pt", weights_only=True)["frames"]
    # the episodes' frames are all inside T; the last row's T need not be the largest, since
    # the two workers' rows arrive in any order
    assert sum(int(r["episode_frames"]) for r in episodes) <= final_t
    assert final_t >= 3000


def test_pong_trains_with_two_environments_per_worker(workdir):
    run_dir = workdir / "run"
    result = run_cli(["env=atari/pong", "env.max_episode_frames=1200", "workers=2",
                      "envs_per_worker=2", "total_frames=6000", *QUICK,
                      f"hydra.run.dir={run_dir}"], workdir, timeout=300)
    assert result.returncode == 0, result.stderr
    episodes = _rows(run_dir / "episodes.csv")
    # 1,200-frame episodes: both environments of both workers finished some
    assert len(episodes) >= 4 and {r["worker"] for r in episodes} == {"0", "1"}
    updates = _rows(run_dir / "updates.csv")
    assert all(float(r["grad_norm"]) > 0 for r in updates)


class PapersLoop:
    """The paper's loop for one environment written out step by step, apart from
    ``Actors``: acting, Sarsa's next action and truncated BPTT as Algorithms 1, S2 and S3
    read, to hold the one shared loop to at k = 1."""

    def __init__(self, cfg, seed, algorithm):
        from asyncrl.envs import make_env

        self.env, self.algorithm, self.clip = make_env(cfg.env), algorithm, cfg.env.clip_rewards
        self.obs, _ = self.env.reset(seed=seed)
        self.state, self.pending = None, None

    def segment(self, model):
        from asyncrl.nets import detach_state

        if self.state is None:
            self.state = model.initial_state()
        observed, actions, rewards = [], [], []
        over = terminal = False
        with torch.inference_mode():
            for _ in range(T_MAX):
                observed.append(torch.as_tensor(self.obs).clone())
                if self.pending is not None:
                    action, self.state = self.pending
                    self.pending = None
                else:
                    (action,), (self.state,) = self.algorithm.act(
                        model, torch.as_tensor(self.obs)[None], [self.state], 10**9)
                self.obs, reward, terminal, truncated, _ = self.env.step(action)
                actions.append(action)
                rewards.append(float(reward))
                over = terminal or truncated
                if over:
                    break
            observed.append(torch.as_tensor(self.obs).clone())
            next_action = None
            if self.algorithm.needs_next_action and not terminal:
                (next_action,), (after,) = self.algorithm.act(
                    model, torch.as_tensor(self.obs)[None], [self.state], 10**9)
                self.pending = (next_action, after)
        self.state = detach_state(self.state)
        if over:
            self.obs, _ = self.env.reset()
            self.state, self.pending = None, None
        return observed, actions, rewards, next_action


@pytest.mark.parametrize(("algo", "network"), [("a3c", "lstm"), ("one_step_sarsa", "lstm"),
                                               ("nstep_q", "ff")])
def test_one_environment_plays_the_papers_loop(algo, network):
    greedy = () if algo == "a3c" else GREEDY  # A3C's draws match: both generators seeded 0
    cfg, algorithm, actors, model = _setup(algo, network, 1, *greedy)
    papers = PapersLoop(cfg, 11, build_algorithm(cfg.algo, torch.Generator().manual_seed(0)))
    episodes = 0
    for _ in range(60):
        (segment,) = actors.play(model, 10**9)
        observed, actions, rewards, next_action = papers.segment(model)
        assert segment.rewards == rewards and segment.next_action == next_action
        assert actors.action_bufs[0][: segment.steps].tolist() == actions
        torch.testing.assert_close(actors.obs_bufs[0][: segment.steps + 1],
                                   torch.stack(observed))
        if segment.episode_over:
            episodes += 1
    assert episodes > 0


def _seeded_actors(cfg, k):
    """The algorithm (exploration seed 7), k environments from seed 11 and a model."""
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(0),
                                exploration_seed=7, environments=k)
    actors = Actors(cfg, 11, algorithm, k)
    torch.manual_seed(0)
    model = build_model(cfg, actors.env.observation_space, actors.env.action_space,
                        algorithm.head)
    actors.allocate(model, T_MAX)
    return algorithm, actors, model


@pytest.mark.parametrize("algo", ["nstep_q", "one_step_sarsa"])
def test_with_epsilon_per_environment_each_environment_acts_at_its_own_draw(algo):
    """Final ε 0 or 1, one per environment: through the worker's acting loop (Sarsa's next
    action included) the ε 0 environments play Q's argmax on every step, the ε 1 ones not."""
    k = 8
    cfg = compose("env=classic/cartpole", f"algo={algo}", f"envs_per_worker={k}",
                  "algo.epsilon_per_environment=true", "algo.epsilon_finals=[0.0,1.0]",
                  "algo.epsilon_probabilities=[0.5,0.5]", "algo.epsilon_anneal_frames=0")
    algorithm, actors, model = _seeded_actors(cfg, k)
    finals = algorithm.final_epsilons
    assert set(finals) == {0.0, 1.0}
    off_greedy = [0] * k
    for _ in range(6):
        segments = actors.play(model, 10**6)
        for i, segment in enumerate(segments):
            with torch.no_grad():
                greedy = model(actors.obs_bufs[i][: segment.steps].float(), None)[0].argmax(1)
            off_greedy[i] += int((actors.action_bufs[i][: segment.steps] != greedy).sum())
    assert all(off_greedy[i] == 0 for i in range(k) if finals[i] == 0.0), (finals, off_greedy)
    assert all(off_greedy[i] > 0 for i in range(k) if finals[i] == 1.0), (finals, off_greedy)


def test_with_epsilon_redraw_the_acting_loop_draws_again_at_each_finished_episode():
    """CartPole's episodes end often: each one that ends in a segment makes its environment
    draw again (counted per environment), and the others keep theirs."""
    k = 4
    cfg = compose("env=classic/cartpole", "algo=nstep_q", f"envs_per_worker={k}",
                  "algo.epsilon_redraw=true")
    algorithm, actors, model = _seeded_actors(cfg, k)
    ended = [0] * k
    for _ in range(40):
        for i, segment in enumerate(actors.play(model, 0)):
            ended[i] += segment.finished is not None
    assert sum(ended) > k  # ε 1 at frame 0: random play ends episodes within ~20 steps
    assert algorithm.episodes_begun == ended
