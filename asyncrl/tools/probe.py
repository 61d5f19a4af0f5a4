"""Learning-speed probe: a short real run, then what the network has learned to see and do.

    asyncrl-probe --frames 600000 --name lr3e-3 lr=3e-3
    asyncrl-probe --analyse outputs/pong_a3c      # a run that already exists
    asyncrl-probe --analyse outputs/pong_a3c/checkpoints/frames_00003000000.pt  # at that T
    asyncrl-probe --analyse outputs/pong_a3c --timeline  # every kept checkpoint, a row each

A long run tells after hours whether a setting learns; the probe tells within minutes
whether the first steps of learning are under way. It trains through the real CLI (real
worker processes) for ``--frames`` with the learning rate annealed over ``--horizon``, as
the first frames of a long run would be, then compares the model at T=0 with the trained
one on a fixed set of screens played by a seeded random policy:

- entropy: the policy's mean entropy over the screens (uniform: ln |A|);
- logit spread: how far the policy's (centred) logits differ across screens; a policy that
  ignores the screen has none;
- policy share: of the gradient the policy and value losses send into each torso layer,
  the policy's share (mean norms over segments of the screens' own random play);
- live units: the share of each ReLU layer's (unit, position) outputs that vary across
  the screens;
- score: the mean training score of the run's first and last episodes.

``--timeline`` reads every checkpoint a run kept (``checkpoint.keep=true``) instead, a row
per T, to see when a network went blind and which parameters RMSProp normalised: for each
parameter, the share of its elements whose squared-gradient average g stands above ε. Once
g has followed the gradients for a few hundred updates, that is where the step is about lr
whatever the gradient's size; below ε the step is plain SGD with rate lr/sqrt(ε). While g
still holds a large ``optimizer.initial_square_avg``, "above ε" means steps below lr.

Only actor-critic networks with a discrete policy are probed (A3C with ``network=ff`` or
``network=lstm``).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asyncrl.run_files.atomic import write_text_atomically

SCREEN_SEED = 20_161_602  # the same screens for every probe of an environment
SEGMENT_GAP = 20  # random steps between two recorded segments, so screens differ
SCORE_EPISODES = 20


@dataclass
class Screens:
    """Segments of random play: obs (S, t_max+1, ...), actions, rewards and terminals (S, t_max)."""

    obs: Any
    actions: Any
    rewards: np.ndarray
    terminals: np.ndarray


@dataclass
class NetworkReading:
    entropy: float
    logit_spread: float
    value_spread: float
    policy_share: dict[str, float]
    live_units: dict[str, float]


@dataclass
class ProbeReport:
    source: str  # the run directory or the checkpoint file read
    frames: int
    entropy_uniform: float
    init: NetworkReading
    trained: NetworkReading
    first_score: float | None
    last_score: float | None
    episodes: int
    training_entropy: list[tuple[int, float]]


def collect_screens(cfg: Any, segments: int, t_max: int) -> Screens:
    """``segments`` stretches of t_max steps of a seeded uniformly random policy."""
    import torch

    from asyncrl.envs import make_env

    env = make_env(cfg.env)
    rng = np.random.default_rng(SCREEN_SEED)
    obs, _ = env.reset(seed=SCREEN_SEED)
    env.action_space.seed(SCREEN_SEED)
    obs_out = np.zeros((segments, t_max + 1, *np.shape(obs)), dtype=np.asarray(obs).dtype)
    actions = np.zeros((segments, t_max), dtype=np.int64)
    rewards = np.zeros((segments, t_max), dtype=np.float32)
    terminals = np.zeros((segments, t_max), dtype=bool)
    n_actions = int(env.action_space.n)  # type: ignore[attr-defined]  # A3C's softmax: Discrete
    for s in range(segments):
        for _ in range(SEGMENT_GAP):
            obs, _, terminated, truncated, _ = env.step(int(rng.integers(n_actions)))
            if terminated or truncated:
                obs, _ = env.reset()
        for t in range(t_max):
            obs_out[s, t] = obs
            action = int(rng.integers(n_actions))
            obs, reward, terminated, truncated, _ = env.step(action)
            actions[s, t], rewards[s, t] = action, max(-1.0, min(1.0, float(reward)))
            # a segment that reaches an episode's end keeps its last state as the bootstrap
            # observation and treats it as terminal, like the worker does
            terminals[s, t] = terminated
            if terminated or truncated:
                terminals[s, t:] = True
                obs_out[s, t + 1:] = obs
                obs, _ = env.reset()
                break
        else:
            obs_out[s, t_max] = obs
    env.close()
    return Screens(torch.from_numpy(obs_out), torch.from_numpy(actions), rewards, terminals)


def _relu_outputs(model: Any, obs: Any) -> dict[str, Any]:
    """The output of every ReLU in the torso, named by the layer before it."""
    import torch
    from torch import nn

    names: dict[nn.Module, str] = {}
    previous = "input"
    for name, module in model.torso.named_modules():
        if isinstance(module, nn.Conv2d | nn.Linear):
            previous = name
        elif isinstance(module, nn.ReLU):
            names[module] = previous
    outputs: dict[str, Any] = {}
    hooks = [module.register_forward_hook(
        lambda mod, _inp, out: outputs.__setitem__(names[mod], out.detach()))
        for module in names]
    try:
        with torch.no_grad():
            model.torso(obs)
    finally:
        for hook in hooks:
            hook.remove()
    return outputs


def _torso_layers(model: Any) -> dict[str, list[Any]]:
    from torch import nn

    return {name: list(module.parameters()) for name, module in model.torso.named_modules()
            if isinstance(module, nn.Conv2d | nn.Linear)}


def screen_outputs(model: Any, screens: Screens) -> tuple[float, float, float,
                                                         dict[str, float]]:
    """Entropy, logit spread and value spread on the screens' first states, each read from
    the network's initial recurrent state, and the share of each ReLU layer's (unit,
    position) outputs that vary across them."""
    import torch

    first = screens.obs[:, 0]
    with torch.no_grad():
        # each screen as the first step of an episode: an LSTM reads it from its initial
        # state, not after the screens before it as one sequence
        (logits, values), _ = model.step_many(first, [None] * len(first))
        entropy = float(model.distribution.entropy(logits).mean())
        centred = logits - logits.mean(dim=-1, keepdim=True)
        logit_spread = float(centred.std(dim=0).mean())
        value_spread = float(values.std())
    live = {name: float((out.std(dim=0) > 1e-6).float().mean())
            for name, out in _relu_outputs(model, first).items()}
    return entropy, logit_spread, value_spread, live


def segment_losses(model: Any, screens: Screens,
                   algo_cfg: Any) -> Iterator[tuple[Any, Any, Any]]:
    """For each segment of the screens, A3C's loss as a worker would compute it (n-step
    returns bootstrapped from V unless terminal), with its values V(s_i) and returns R_i."""
    import torch

    from asyncrl.algos.a3c import a3c_loss
    from asyncrl.algos.returns import discounted_returns

    distribution = model.distribution
    for s in range(screens.obs.shape[0]):
        steps = int(np.argmax(screens.terminals[s])) + 1 if screens.terminals[s].any() \
            else screens.terminals.shape[1]
        logits, values, _ = model(screens.obs[s, : steps + 1])
        bootstrap = 0.0 if screens.terminals[s, steps - 1] else float(values[steps].detach())
        returns = torch.tensor(discounted_returns(list(screens.rewards[s, :steps]),
                                                  list(screens.terminals[s, :steps]),
                                                  bootstrap, algo_cfg.gamma))
        loss = a3c_loss(distribution.log_prob(logits[:steps], screens.actions[s, :steps]),
                        distribution.entropy(logits[:steps]), values[:steps], returns,
                        algo_cfg.entropy_beta, algo_cfg.value_loss_coef)
        yield loss, values[:steps], returns


def read_network(model: Any, screens: Screens, algo_cfg: Any) -> NetworkReading:
    """Entropy, logit and value spread, gradient shares and live units on ``screens``."""
    import torch

    entropy, logit_spread, value_spread, live = screen_outputs(model, screens)
    layers = _torso_layers(model)
    policy_norms = {name: 0.0 for name in layers}
    value_norms = {name: 0.0 for name in layers}
    all_params = [p for params in layers.values() for p in params]
    for loss, _, _ in segment_losses(model, screens, algo_cfg):
        for part, norms in ((loss.policy, policy_norms),
                            (algo_cfg.value_loss_coef * loss.value, value_norms)):
            grads = torch.autograd.grad(part, all_params, retain_graph=True, allow_unused=True)
            index = 0
            for name, params in layers.items():
                chunk = grads[index: index + len(params)]
                index += len(params)
                norms[name] += math.sqrt(sum(float(g.pow(2).sum()) for g in chunk
                                             if g is not None))
    share = {name: policy_norms[name] / (policy_norms[name] + value_norms[name])
             if policy_norms[name] + value_norms[name] > 0 else float("nan")
             for name in layers}
    return NetworkReading(entropy, logit_spread, value_spread, share, live)


def training_curve(run_dir: Path, up_to: int,
                   points: int = 8) -> tuple[list[tuple[int, float]], list[float]]:
    """The logged policy entropy at ``points`` even stretches of T, and the episode scores,
    up to T = ``up_to`` (a kept checkpoint's T: the run's files go on past it)."""
    from asyncrl.run_files.plots import read_columns

    updates = read_columns(run_dir / "updates.csv", ["frames", "entropy"])
    order = np.argsort(updates["frames"], kind="stable")
    frames, entropy = np.asarray(updates["frames"])[order], np.asarray(updates["entropy"])[order]
    before = frames <= up_to
    frames, entropy = frames[before], entropy[before]
    curve = [(int(frames[chunk[-1]]), float(entropy[chunk].mean()))
             for chunk in np.array_split(np.arange(len(frames)), max(1, min(points, len(frames))))
             if len(chunk)]
    episodes = read_columns(run_dir / "episodes.csv", ["frames", "score"])
    order = np.argsort(episodes["frames"], kind="stable")
    return curve, [float(episodes["score"][i]) for i in order
                   if episodes["frames"][i] <= up_to]


def _check_readable(cfg: Any, source: Path) -> None:
    from asyncrl.errors import UserError

    if cfg.algo.name != "a3c" or cfg.network.name == "gaussian":
        raise UserError(f"the probe reads A3C with a softmax policy; {source} trained "
                        f"algo={cfg.algo.name} network={cfg.network.name}")


@dataclass
class Reader:
    """What reading a run's checkpoints needs: its config, the model its checkpoints load
    into (the run's own T = 0 model, rebuilt from its seed) and the probe's screens."""

    cfg: Any
    model: Any
    screens: Screens


def _reader(saved: Any, source: Path, segments: int) -> Reader:
    import torch

    from asyncrl.config.saved import typed_config
    from asyncrl.learning.seeding import seed_everything
    from asyncrl.run.launcher import build_shared_state

    torch.set_num_threads(1)
    cfg = typed_config(saved.config)
    _check_readable(cfg, source)
    cfg.workers = 1
    seed_everything(cfg.seed)  # the same draw as the run's own model at T=0
    model = build_shared_state(cfg).model
    return Reader(cfg, model, collect_screens(cfg, segments, int(cfg.algo.t_max)))


def analyse(source: Path, segments: int) -> ProbeReport:
    """Read a run (its config, checkpoint and CSV files) into a report: a run directory at
    its last checkpoint, or one checkpoint file of a run at that checkpoint's T."""
    from asyncrl.run_files.checkpoint import checkpoint_source, load_checkpoint

    path, run_dir = checkpoint_source(source)
    saved = load_checkpoint(path)
    reader = _reader(saved, source, segments)
    trained = copy.deepcopy(reader.model)
    trained.load_state_dict(saved.model)
    curve, scores = training_curve(run_dir, saved.frames)
    n_actions = int(saved.model["policy.bias"].numel())
    window = min(SCORE_EPISODES, len(scores))
    return ProbeReport(
        source=str(source), frames=saved.frames,
        entropy_uniform=math.log(n_actions),
        init=read_network(reader.model, reader.screens, reader.cfg.algo),
        trained=read_network(trained, reader.screens, reader.cfg.algo),
        first_score=float(np.mean(scores[:window])) if window else None,
        last_score=float(np.mean(scores[-window:])) if window else None,
        episodes=len(scores), training_entropy=curve)


@dataclass
class TimelineRow:
    """The network at one kept checkpoint, read without gradients."""

    frames: int
    entropy: float
    logit_spread: float
    value_spread: float
    live_units: dict[str, float]
    # parameter name -> share of its elements whose RMSProp g stands above eps (None for
    # momentum SGD, which has no g)
    above_eps: dict[str, float] | None


def share_above_eps(opt_cfg: Any, names: list[str], statistics: list[Any] | None
                    ) -> dict[str, float] | None:
    """For each parameter, the share of its elements whose squared-gradient average g is
    above ``opt_cfg.eps``: RMSProp's normalised regime. Per-worker statistics (a leading
    slot per worker) count every slot's elements."""
    if opt_cfg.name not in ("shared_rmsprop", "rmsprop") or statistics is None:
        return None
    eps = float(opt_cfg.eps)
    return {name: float((g > eps).float().mean()) for name, g in zip(names, statistics,
                                                                      strict=True)}


def kept_checkpoints(run_dir: Path) -> list[Path]:
    """The run's kept checkpoints (``checkpoint.keep=true``), in the order of their T."""
    from asyncrl.errors import UserError

    if run_dir.is_file():
        raise UserError(f"--timeline reads a run directory's kept checkpoints, not one file: "
                        f"give the run directory ({run_dir.parent.parent} for a file in its "
                        "checkpoints/)")
    if not run_dir.is_dir():
        raise UserError(f"no run directory at {run_dir}")
    kept = sorted((run_dir / "checkpoints").glob("frames_*.pt"))
    if not kept:
        raise UserError(f"{run_dir} kept no checkpoints: train it with checkpoint.keep=true")
    return kept


def timeline(run_dir: Path, segments: int) -> list[TimelineRow]:
    """A row for each checkpoint ``run_dir`` kept, read on the probe's screens."""
    from asyncrl.run_files.checkpoint import load_checkpoint

    files = kept_checkpoints(run_dir)
    first = load_checkpoint(files[0])
    reader = _reader(first, run_dir, segments)
    # the optimizer keeps its statistics in the order of model.parameters()
    names = [name for name, _ in reader.model.named_parameters()]
    rows = []
    for path in files:
        saved = first if path == files[0] else load_checkpoint(path)
        reader.model.load_state_dict(saved.model)
        entropy, logit_spread, value_spread, live = screen_outputs(reader.model,
                                                                   reader.screens)
        statistics = saved.optimizer.get("statistics", saved.optimizer.get("square_avg"))
        rows.append(TimelineRow(saved.frames, entropy, logit_spread, value_spread, live,
                                share_above_eps(reader.cfg.optimizer, names, statistics)))
    return rows


def format_timeline(run_dir: Path, rows: list[TimelineRow]) -> str:
    """A table, a row per kept checkpoint: the outputs' readings, then for each weight the
    share of it that RMSProp normalises, and the mean share over the biases (the JSON has
    each bias's own)."""
    live_names = list(rows[0].live_units)
    normalised = rows[0].above_eps or {}
    biases = [n for n in normalised if n.rsplit(".", 1)[-1].startswith("bias")]
    weights = [n for n in normalised if n not in biases]
    head = (["T", "entropy", "logit spread", "value spread"]
            + [f"live {n}" for n in live_names]
            + [f"g > eps, {n.removeprefix('torso.').removesuffix('.weight')}" for n in weights]
            + (["g > eps, biases (mean of their shares)"] if biases else []))
    lines = [f"timeline of {run_dir}: {len(rows)} kept checkpoints", "",
             "| " + " | ".join(head) + " |", "|" + " ---: |" * len(head)]
    for row in rows:
        above = row.above_eps or {}
        cells = [f"{row.frames / 1e6:.2f}M", f"{row.entropy:.3f}", f"{row.logit_spread:.4g}",
                 f"{row.value_spread:.4g}", *(f"{row.live_units[n]:.2f}" for n in live_names),
                 *(f"{above[n]:.2f}" for n in weights)]
        if biases:
            cells.append(f"{np.mean([above[n] for n in biases]):.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_report(report: ProbeReport) -> str:
    """A small table of the two readings, then the run's scores and entropy curve."""
    def row(label: str, init: Any, trained: Any, fmt: str = "{:.4g}") -> str:
        return f"| {label} | {fmt.format(init)} | {fmt.format(trained)} |"

    i, t = report.init, report.trained
    lines = [f"probe of {report.source} at T={report.frames:,}", "",
             "| reading | T=0 | trained |", "| --- | ---: | ---: |",
             row(f"entropy (uniform {report.entropy_uniform:.3f})", i.entropy, t.entropy),
             row("logit spread across screens", i.logit_spread, t.logit_spread),
             row("value spread across screens", i.value_spread, t.value_spread)]
    lines += [row(f"policy share of gradient into {name}", i.policy_share[name],
                  t.policy_share[name], "{:.3f}") for name in i.policy_share]
    lines += [row(f"live units after {name}", i.live_units[name], t.live_units[name],
                  "{:.2f}") for name in i.live_units]
    first = "n/a" if report.first_score is None else f"{report.first_score:.2f}"
    last = "n/a" if report.last_score is None else f"{report.last_score:.2f}"
    lines += ["", f"training score: first {SCORE_EPISODES} episodes {first}, last "
              f"{SCORE_EPISODES} {last} ({report.episodes} episodes)",
              "training entropy by T: " + ", ".join(f"{frames / 1e6:.2f}M {value:.3f}"
                                                     for frames, value in
                                                     report.training_entropy)]
    return "\n".join(lines)


def train(name: str, frames: int, horizon: int, workers: int, out: Path,
          overrides: list[str]) -> Path:
    """The short run, as the CLI runs it (one pass: composed, checked, launched), in this
    process, its log lines on the console and in its asyncrl.log; a mistake in its command
    line is this tool's one-line error."""
    from asyncrl.commands.cli import whole_frame_counts
    from asyncrl.commands.prepare import prepare_run, register_schemas, run_log, run_prepared
    from asyncrl.run import start_method

    run_dir = out / name
    # one checkpoint at the end unless the user asks for more (with checkpoint.keep=true)
    settings = [f"checkpoint.interval_frames={frames}", *whole_frame_counts(overrides),
                f"workers={workers}", f"total_frames={frames}", f"lr_anneal_frames={horizon}",
                "eval.episodes=0", "log.progress=false", "log.tensorboard=false"]
    register_schemas()
    prepared = prepare_run([*settings, f"hydra.run.dir={run_dir}"])
    print("probe: asyncrl", " ".join(settings), f"hydra.run.dir={run_dir}", flush=True)
    if not prepared.config.serial:
        start_method.start_early()
    with run_log(run_dir, console=True):
        code = run_prepared(prepared)
    if code != 0:
        raise RunFailed(f"the run failed (exit {code}); its log: {run_dir / 'asyncrl.log'}")
    return run_dir


class RunFailed(Exception):
    """The training run stopped with an error of its own (not a mistake on this command
    line): exit 1."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point of ``asyncrl-probe``: a user's mistake is one line and exit 2."""
    from asyncrl.commands import run_tool

    code = run_tool("asyncrl-probe", lambda: _probe(argv))
    if code:
        sys.exit(code)


def _probe(argv: list[str] | None) -> int:
    from asyncrl.errors import UserError

    parser = argparse.ArgumentParser(
        prog="asyncrl-probe",
        description="Train briefly, then read what the network learned (docs/notes/).")
    parser.add_argument("overrides", nargs="*", help="config overrides, as for asyncrl")
    parser.add_argument("--frames", type=int, default=600_000, help="frames to train")
    parser.add_argument("--horizon", type=int, default=10_000_000,
                        help="T at which the lr would reach 0: the long run's total_frames")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--segments", type=int, default=200, help="screens (segments) read")
    parser.add_argument("--name", default="probe", help="run directory under --out")
    parser.add_argument("--out", type=Path, default=Path("outputs/probe"))
    parser.add_argument("--analyse", type=Path, metavar="RUN_DIR_OR_CHECKPOINT",
                        help="read an existing run instead of training one: its last "
                             "checkpoint, or the .pt file given (checkpoint.keep=true keeps "
                             "one per checkpoint)")
    parser.add_argument("--timeline", action="store_true",
                        help="read every checkpoint the run kept, a row per T, instead of "
                             "the last one (-> RUN_DIR/timeline.json); when training, keep "
                             "one every tenth of --frames unless checkpoint.interval_frames "
                             "is given")
    args = parser.parse_args(argv)
    if args.frames <= 0 or args.horizon <= 0 or args.workers < 1 or args.segments < 2:
        raise UserError("--frames, --horizon, --workers and --segments must be positive "
                        "(--segments at least 2)")
    try:
        # a timeline reads kept checkpoints: one every tenth of the run unless the user
        # sets the interval (their keys come after these, so theirs win)
        keep = ([f"checkpoint.interval_frames={max(1, args.frames // 10)}",
                 "checkpoint.keep=true"] if args.timeline else [])
        if args.timeline and not args.analyse and any(
                o.replace(" ", "").lower() == "checkpoint.keep=false" for o in args.overrides):
            raise UserError("--timeline reads the checkpoints a run keeps: drop "
                            "checkpoint.keep=false")
        source = args.analyse or train(args.name, args.frames, args.horizon, args.workers,
                                       args.out, [*keep, *args.overrides])
    except RunFailed as failure:
        print(f"asyncrl-probe: error: {failure}", file=sys.stderr)
        return 1
    if args.timeline:
        rows = timeline(source, args.segments)
        write_text_atomically(source / "timeline.json",
                              json.dumps([asdict(r) for r in rows], indent=1))
        print(format_timeline(source, rows))
        return 0
    report = analyse(source, args.segments)
    written = source.with_suffix(".probe.json") if source.is_file() else source / "probe.json"
    write_text_atomically(written, json.dumps(asdict(report), indent=1))
    print(format_report(report))
    return 0


if __name__ == "__main__":
    main()
