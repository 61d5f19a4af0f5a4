"""The checks no type can express: each group's ranges, then the combinations of choices,
then the environment family's own. Each raises a one-line ``UserError`` naming the key."""

from __future__ import annotations

from typing import Any

from asyncrl.action_kinds import action_kind_problem
from asyncrl.algos.configs import epsilon_problem, is_value_based
from asyncrl.config.machine import worker_limit
from asyncrl.config.option_checks import check_options
from asyncrl.config.schemas import SCHEMAS, FFNetworkConfig, keys_of
from asyncrl.envs.family import Family, family_of
from asyncrl.errors import UserError
from asyncrl.run_files.trackers import check_wandb_installed

# whole-episode buffers hold every observation of an episode: keep them small
EPISODE_UPDATE_MAX_STEPS = 10_000

# each environment is a live emulator (or a TORCS process); past this the batch stops paying
MAX_ENVS_PER_WORKER = 256
SEED_LIMIT = 2**32  # numpy's and torch's seeds are unsigned 32-bit numbers
# the paper's sweeps draw lr up to 0.1; past 1 every step overshoots, and a run that then
# diverges tells the user nothing they could not have been told here
LR_MAX = 1.0


def _positive_finite(value: float) -> bool:
    return 0 < value < float("inf")


def validate(cfg: Any) -> None:
    """Refuse values that are well-typed but impossible; raise UserError naming the key.

    First each group's own ranges, then the combinations of choices and what must be
    installed; the environment family's own checks (``family.check``) come last.
    """
    _check_options_chosen(cfg)
    # before the run's keys, which default to these: a bad one is named as the user wrote it
    _check_env_keys(cfg.env)
    _check_lr("algo.default_lr", cfg.algo.default_lr)
    _check_run(cfg)
    _check_intervals(cfg)
    _check_objective(cfg)
    _check_algo(cfg.algo)
    _check_network(cfg.network)
    _check_optimizer(cfg.optimizer)
    _check_combinations(cfg)


def _check_options_chosen(cfg: Any) -> None:
    """Each group holds one of its options, not a file of shared keys."""
    for group in ("algo", "network", "optimizer"):
        node = getattr(cfg, group)
        # a file of shared keys (conf/algo/_value_based.yaml) composes, but has no schema
        name = node.get("name") if isinstance(node, dict) else node.name
        if name not in SCHEMAS[group] or isinstance(node, dict):
            what = f"{group}={name}" if name else f"the {group} option chosen"
            article = "an" if group == "algo" else "a"
            raise UserError(f"{what} is not {article} {group} (conf/{group}/_*.yaml hold shared "
                            f"keys); choose one of {', '.join(sorted(SCHEMAS[group]))}")


def _check_run(cfg: Any) -> None:
    """The top-level keys: processes, frames, lr, seed, restarts."""
    if cfg.workers < 1:
        raise UserError(f"workers={cfg.workers}: need at least 1 worker process")
    limit, why = worker_limit()
    if cfg.workers > limit:
        raise UserError(f"workers={cfg.workers}: this machine holds at most {limit} "
                        f"({why})")
    if not 1 <= cfg.envs_per_worker <= MAX_ENVS_PER_WORKER:
        raise UserError(f"envs_per_worker={cfg.envs_per_worker}: must lie in "
                        f"[1, {MAX_ENVS_PER_WORKER}] (1 is the paper's loop)")
    if not 1 <= cfg.minibatches <= cfg.envs_per_worker:
        raise UserError(f"minibatches={cfg.minibatches}: must lie in [1, envs_per_worker="
                        f"{cfg.envs_per_worker}] (each optimizer step learns from one "
                        "environment's segment or more)")
    if cfg.total_frames <= 0:
        raise UserError(f"total_frames={cfg.total_frames}: must be a positive number of frames")
    if cfg.lr_anneal_frames is not None and cfg.lr_anneal_frames <= 0:
        raise UserError(f"lr_anneal_frames={cfg.lr_anneal_frames}: must be a positive number "
                        "of frames, or null to anneal over total_frames")
    _check_lr("lr", cfg.lr)
    if not 0 <= cfg.seed < SEED_LIMIT:
        raise UserError(f"seed={cfg.seed}: must lie in [0, 2**32)")
    if cfg.max_worker_restarts < 0:
        raise UserError("max_worker_restarts must be 0 or more")
    if not cfg.stall_seconds > 0:
        raise UserError(f"stall_seconds={cfg.stall_seconds}: must be positive")


def _check_lr(name: str, value: float) -> None:
    if not 0 < value <= LR_MAX:
        raise UserError(f"{name}={value}: a learning rate must lie in (0, {LR_MAX:g}]")


def _check_entropy_beta(name: str, value: float) -> None:
    if not 0 <= value <= 1:
        raise UserError(f"{name}={value}: an entropy weight must lie in [0, 1] "
                        "(the paper: 0.01, MuJoCo 1e-4)")


def _check_env_keys(env: Any) -> None:
    if env.default_total_frames <= 0:
        raise UserError(f"env.default_total_frames={env.default_total_frames}: must be a "
                        "positive number of frames")
    low, high = env.sweep_lr_low, env.sweep_lr_high
    if not 0 < low < high <= LR_MAX:  # NaN fails here too
        raise UserError(f"env.sweep_lr_low={low:g} and env.sweep_lr_high={high:g}: the "
                        f"LogUniform lr range of +sweep=lr_loguniform needs 0 < low < high "
                        f"<= {LR_MAX:g}")


def _check_algo(algo: Any) -> None:
    """The algorithm's own keys: those its schema has."""
    if not 0 <= algo.gamma <= 1:
        raise UserError(f"algo.gamma={algo.gamma}: must lie in [0, 1]")
    for key in ("t_max", "async_update", "target_update_frames"):
        if key in keys_of(algo) and getattr(algo, key) < 1:
            raise UserError(f"algo.{key}={getattr(algo, key)}: must be at least 1")
    if not _positive_finite(algo.max_grad_norm):
        raise UserError(f"algo.max_grad_norm={algo.max_grad_norm}: must be positive "
                        "and finite")
    if is_value_based(algo.name):
        if algo.epsilon_anneal_frames < 0:
            raise UserError(f"algo.epsilon_anneal_frames={algo.epsilon_anneal_frames}: must "
                            "be 0 (the final epsilon from the start) or more")
        problem = epsilon_problem(algo.epsilon_finals, algo.epsilon_probabilities,
                                  algo.eval_epsilon)
        if problem is not None:
            raise UserError(problem)
        return
    _check_entropy_beta("algo.entropy_beta", algo.entropy_beta)
    if not 0 < algo.value_loss_coef <= 1:
        raise UserError(f"algo.value_loss_coef={algo.value_loss_coef}: must lie in (0, 1]")


def _check_network(network: Any) -> None:
    """Layer sizes, the conv stack, the MLP's activation and the policy's initial scale."""
    _check_sizes(network)
    # conv, torso_init, centre_on and mlp_activation are choices of names: their types
    # (asyncrl.choices) refuse any other when the config composes
    if isinstance(network, FFNetworkConfig) and not _positive_finite(network.policy_init_scale):
        raise UserError(f"network.policy_init_scale={network.policy_init_scale}: must be "
                        "positive and finite")


def _check_combinations(cfg: Any) -> None:
    """Choices that are each valid but cannot work together, then the environment's own."""
    if cfg.serial and cfg.workers != 1:
        raise UserError(f"serial=true runs one worker in-process; got workers={cfg.workers}")
    # a package to install comes after every mistake the command line itself can fix
    if cfg.log.wandb:
        check_wandb_installed()
    family = family_of(cfg.env)
    family.check_available(cfg.env)
    _check_actions_against_choices(cfg, family)
    _check_episode_updates(cfg, family)
    check_options(cfg, family.observes_images(cfg.env))
    family.check(cfg.env)


def _check_intervals(cfg: Any) -> None:
    checks = [("eval.interval_frames", cfg.eval.interval_frames, 1),
              ("eval.max_episode_frames", cfg.eval.max_episode_frames, 1),
              ("checkpoint.interval_frames", cfg.checkpoint.interval_frames, 1),
              ("log.score_window", cfg.log.score_window, 1)]
    for key, value, least in checks:
        if value < least:
            raise UserError(f"{key}={value}: must be at least {least}")
    if not _positive_finite(cfg.checkpoint.interval_seconds):
        raise UserError(f"checkpoint.interval_seconds={cfg.checkpoint.interval_seconds}: "
                        "must be positive and finite")
    if not 0 <= cfg.log.interval_seconds < float("inf"):
        raise UserError(f"log.interval_seconds={cfg.log.interval_seconds}: must be 0 or more")
    if cfg.eval.episodes < 0:
        raise UserError("eval.episodes must be 0 or more")
    if cfg.eval.final_episodes < 0:
        raise UserError(f"eval.final_episodes={cfg.eval.final_episodes}: must be 0 or more")


# units in one layer: the paper's largest is 256; past this one worker's copy of the model
# no longer fits in memory
MAX_LAYER_UNITS = 4096


def _check_sizes(network: Any) -> None:
    sizes = [(f"network.{key}", getattr(network, key)) for key in ("hidden", "lstm_size")
             if key in keys_of(network)]
    if isinstance(network, FFNetworkConfig):
        sizes += [(f"network.mlp_layers[{i}]", units)
                  for i, units in enumerate(network.mlp_layers)]
    for key, units in sizes:
        if not 1 <= units <= MAX_LAYER_UNITS:
            raise UserError(f"{key}={units}: must lie in [1, {MAX_LAYER_UNITS}]")


OBJECTIVES = ("train_score", "eval_score")


def _check_objective(cfg: Any) -> None:
    if cfg.objective not in OBJECTIVES:
        raise UserError(f"objective={cfg.objective}: choose {' or '.join(OBJECTIVES)}")
    if cfg.objective != "eval_score":
        return
    # the evaluator only runs at multiples of eval.interval_frames below total_frames:
    # a run that never evaluates would hand the sweeper no score at all
    if cfg.eval.episodes == 0:
        raise UserError("objective=eval_score needs evaluations, but eval.episodes=0 turns "
                        "them off")
    if cfg.eval.interval_frames >= cfg.total_frames:
        raise UserError(f"objective=eval_score: no evaluation comes before "
                        f"total_frames={cfg.total_frames:,} with eval.interval_frames="
                        f"{cfg.eval.interval_frames:,}; lower eval.interval_frames")


def _check_optimizer(opt: Any) -> None:
    decay = ("momentum", opt.momentum) if opt.name == "momentum_sgd" else ("alpha", opt.alpha)
    if not 0 <= decay[1] < 1:
        raise UserError(f"optimizer.{decay[0]}={decay[1]}: must lie in [0, 1)")
    if opt.name != "momentum_sgd":
        # eps sits inside the square root: 0 divides by zero where a gradient has been 0
        if not _positive_finite(opt.eps):
            raise UserError(f"optimizer.eps={opt.eps}: must be positive and finite")
        if not 0 <= opt.initial_square_avg < float("inf"):
            raise UserError(f"optimizer.initial_square_avg={opt.initial_square_avg}: "
                            "must be 0 or more and finite")


def _check_actions_against_choices(cfg: Any, family: Family) -> None:
    """The environment's kind of action against the algorithm and the network."""
    name = family.name_in_errors(cfg.env)
    value_based = is_value_based(cfg.algo.name)
    gaussian = cfg.network.name == "gaussian"
    continuous = family.continuous_actions(cfg.env)
    # the environment's actions first: with env=mujoco/... the network is the env's choice
    # (gaussian), and blaming it would send the user to a second error. Where the network
    # picks the kind of action (TORCS), the network is what to change
    if continuous and value_based and not family.network_picks_actions:
        fix = "algo=a3c" if gaussian else "algo=a3c network=gaussian"
        raise UserError(f"{name} has continuous actions, but algo={cfg.algo.name} "
                        f"picks the best of finitely many; use {fix} (a Gaussian policy)")
    if value_based and gaussian:
        raise UserError(f"algo={cfg.algo.name} needs one Q-value per discrete action, which "
                        "network=gaussian does not give; use network=ff or network=lstm")
    problem = action_kind_problem(cfg.network.name, continuous, name)
    if problem is not None:
        raise UserError(problem)


def _check_episode_updates(cfg: Any, family: Family) -> None:
    """Whole-episode updates need a time limit that bounds the episode's buffer."""
    if cfg.algo.name != "a3c" or not cfg.algo.episode_updates:
        return
    limit = family.episode_step_limit(cfg.env)
    if limit is None or limit > EPISODE_UPDATE_MAX_STEPS:
        raise UserError(f"algo.episode_updates=true makes each update one whole episode, "
                        f"which needs a time limit of at most {EPISODE_UPDATE_MAX_STEPS:,} "
                        f"steps; {family.name_in_errors(cfg.env)} has "
                        f"{'none' if limit is None else f'{limit:,}'}")
