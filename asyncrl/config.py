"""Typed schemas for every config group, and the checks no type can express.

The YAML files under ``conf/`` hold the values; the dataclasses here give each key a type,
so a typo'd key or a wrong type fails when Hydra composes the config.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import II, MISSING, OmegaConf

from asyncrl.errors import UserError


def usable_cpus() -> int:
    """Cores this process may run on (respects taskset and cgroup affinity)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


WORKERS_PER_CORE = 8         # more only queue for the cores; 16 on a 2-core machine
WORKER_MEMORY_BYTES = 450e6  # one Atari worker's resident memory, measured (~415 MB)


def available_memory() -> float | None:
    """Bytes the kernel says new processes can still get (MemAvailable), if it says."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def worker_limit() -> tuple[int, str]:
    """The most worker processes this machine can hold, and what bounds it."""
    cores = usable_cpus()
    limit, why = WORKERS_PER_CORE * cores, f"{WORKERS_PER_CORE} per core on {cores} cores"
    memory = available_memory()
    if memory is not None and memory // WORKER_MEMORY_BYTES < limit:
        limit = max(1, int(memory // WORKER_MEMORY_BYTES))
        why = (f"{memory / 2**30:.1f} GiB of memory available, "
               f"~{WORKER_MEMORY_BYTES / 1e9:.2f} GB per worker")
    return limit, why


if not OmegaConf.has_resolver("asyncrl.cpus"):
    OmegaConf.register_new_resolver("asyncrl.cpus", usable_cpus)


@dataclass
class A3CConfig:
    """Advantage actor-critic (paper, Algorithm S3)."""

    name: str = "a3c"
    gamma: float = 0.99
    t_max: int = 5
    entropy_beta: float = 0.01
    value_loss_coef: float = 0.25
    max_grad_norm: float = 40.0
    episode_updates: bool = False
    default_lr: float = 7e-4


@dataclass
class ValueBasedConfig:
    """What the three value-based methods share (paper, Supp. 8 "Experimental Setup")."""

    name: str = MISSING
    gamma: float = 0.99
    max_grad_norm: float = 40.0
    target_update_frames: int = 40_000
    epsilon_finals: list[float] = field(default_factory=lambda: [0.1, 0.01, 0.5])
    epsilon_probabilities: list[float] = field(default_factory=lambda: [0.4, 0.3, 0.3])
    epsilon_anneal_frames: int = 4_000_000
    eval_epsilon: float = 0.05
    default_lr: float = 7e-4


@dataclass
class OneStepQConfig(ValueBasedConfig):
    """One-step Q-learning (paper, Algorithm 1)."""

    name: str = "one_step_q"
    async_update: int = 5


@dataclass
class OneStepSarsaConfig(ValueBasedConfig):
    """One-step Sarsa: Algorithm 1 with the target r + gamma Q(s', a'; theta^-)."""

    name: str = "one_step_sarsa"
    async_update: int = 5


@dataclass
class NStepQConfig(ValueBasedConfig):
    """n-step Q-learning (paper, Algorithm S2)."""

    name: str = "nstep_q"
    t_max: int = 5


VALUE_BASED = ("one_step_q", "one_step_sarsa", "nstep_q")


@dataclass
class DomainDefaults:
    """A3C settings the paper ties to a domain; conf/algo/a3c.yaml reads them from here."""

    a3c_entropy_beta: float = 0.01
    a3c_episode_updates: bool = False
    a3c_default_lr: float = 7e-4  # A3C's lr unless lr= is given
    default_total_frames: int = 40_000_000  # total_frames unless given
    sweep_lr_low: float = 1e-4   # the LogUniform range of +sweep=lr_loguniform (paper, Sec. 5)
    sweep_lr_high: float = 1e-2


# whole-episode buffers hold every observation of an episode: keep them small
EPISODE_UPDATE_MAX_STEPS = 10_000


@dataclass
class AtariEnvConfig(DomainDefaults):
    """An ALE game with DQN preprocessing."""

    family: str = "atari"
    game: str = MISSING
    frame_skip: int = 4
    screen_size: int = 84
    frame_stack: int = 4
    noop_max: int = 30
    repeat_action_probability: float = 0.0
    max_episode_frames: int = 108_000
    terminal_on_life_loss: bool = True
    clip_rewards: bool = True


@dataclass
class GymEnvConfig(DomainDefaults):
    """Any registered gymnasium environment with vector observations and discrete actions."""

    family: str = "gym"
    id: str = MISSING
    max_episode_steps: int | None = None
    clip_rewards: bool = False


@dataclass
class MujocoDefaults(DomainDefaults):
    """The paper's MuJoCo settings (Supp. "Continuous Action Control", Figure S-mujoco)."""

    a3c_entropy_beta: float = 1e-4
    a3c_episode_updates: bool = True
    sweep_lr_low: float = 1e-5
    sweep_lr_high: float = 1e-1


@dataclass
class MujocoEnvConfig(MujocoDefaults):
    """A gymnasium MuJoCo task from its physical state; actions are clipped to the bounds
    for the simulator only (the policy's sample is what the loss sees)."""

    family: str = "mujoco"
    id: str = MISSING
    max_episode_steps: int | None = None
    clip_rewards: bool = False


@dataclass
class MujocoPixelsEnvConfig(MujocoDefaults):
    """A dm_control suite task seen only through an RGB camera (the paper's pixel tasks)."""

    family: str = "mujoco_pixels"
    domain: str = MISSING
    task: str = MISSING
    camera_id: int = 0
    screen_size: int = 84
    frame_skip: int = 4
    clip_rewards: bool = False


@dataclass
class MazeEnvConfig(DomainDefaults):
    """A Labyrinth-like maze level: labmaze's generator settings and the game's clock."""

    family: str = "maze"
    level: str = MISSING
    height: int = 11
    width: int = 11
    max_rooms: int = 4
    room_min_size: int = 3
    room_max_size: int = 5
    apples_per_room: int = 2
    episode_seconds: float = 60.0
    fps: int = 60
    frame_skip: int = 4
    screen_size: int = 84
    eval_seeds: list[int] = field(default_factory=list)
    clip_rewards: bool = False


@dataclass
class TorcsEnvConfig(DomainDefaults):
    """A TORCS race seen as an 84x84 RGB view; a frame is one of TORCS's 50 Hz driver calls."""

    family: str = "torcs"
    setting: str = MISSING
    track: str = "g-track-1"
    track_category: str = "road"
    car: str = MISSING
    opponents: list[str] = field(default_factory=list)  # TORCS robots as module/index
    laps: int = 3
    max_episode_seconds: float = 90.0
    frame_skip: int = 5
    screen_size: int = 84
    off_track_margin: float = 1.0
    stuck_seconds: float = 3.0
    stuck_speed: float = 1.0
    steer_levels: list[float] = field(default_factory=lambda: [0.5, 0.0, -0.5])
    pedal_levels: list[float] = field(default_factory=lambda: [1.0, 0.0, -0.5])
    policy_network: str = II("network.name")  # gaussian: continuous actions, else discrete
    reward_scale: float = 0.1
    clip_rewards: bool = False


@dataclass
class FFNetworkConfig:
    """Feed-forward network: the paper's conv torso for images, an MLP for vectors."""

    name: str = "ff"
    hidden: int = 256
    mlp_layers: list[int] = field(default_factory=lambda: [64, 64])
    policy_init_scale: float = 1.0
    centre_input: bool = True
    mlp_activation: str = "tanh"


@dataclass
class LSTMNetworkConfig(FFNetworkConfig):
    """The feed-forward torso followed by an LSTM (paper, Section 5.1: 256 cells)."""

    name: str = "lstm"
    lstm_size: int = 256


@dataclass
class GaussianNetworkConfig:
    """Separate policy and value nets, each encoder -> LSTM; a spherical Gaussian policy."""

    name: str = "gaussian"
    hidden: int = 200
    lstm_size: int = 128


@dataclass
class SharedRMSPropConfig:
    """RMSProp whose squared-gradient statistics g are shared by all workers."""

    name: str = "shared_rmsprop"
    alpha: float = 0.99
    eps: float = 0.1
    initial_square_avg: float = 0.0


@dataclass
class RMSPropConfig(SharedRMSPropConfig):
    """RMSProp with each worker keeping its own statistics g."""

    name: str = "rmsprop"


@dataclass
class MomentumSGDConfig:
    """Momentum SGD with each worker keeping its own momentum m."""

    name: str = "momentum_sgd"
    momentum: float = 0.99


@dataclass
class EvalConfig:
    interval_frames: int = 1_000_000
    episodes: int = 3
    max_episode_frames: int = 108_000


@dataclass
class CheckpointConfig:
    interval_frames: int = 2_000_000
    interval_seconds: float = 600.0


@dataclass
class LogConfig:
    interval_seconds: float = 2.0
    tensorboard: bool = True
    progress: bool = True
    score_window: int = 20


@dataclass
class TrainConfig:
    """Top-level schema: one run of one algorithm on one environment."""

    algo: Any = MISSING
    env: Any = MISSING
    network: Any = MISSING
    optimizer: Any = MISSING
    lr: float = 7e-4
    workers: int = II("asyncrl.cpus:")
    envs_per_worker: int = 1
    total_frames: int = 40_000_000
    lr_anneal_frames: int | None = None
    seed: int = 1
    serial: bool = False
    resume: str | None = None
    max_worker_restarts: int = 3
    stall_seconds: float = 300.0
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    log: LogConfig = field(default_factory=LogConfig)


SCHEMAS: dict[str, dict[str, type]] = {
    "algo": {"a3c": A3CConfig, "one_step_q": OneStepQConfig,
             "one_step_sarsa": OneStepSarsaConfig, "nstep_q": NStepQConfig},
    "env": {"atari": AtariEnvConfig, "gym": GymEnvConfig, "mujoco": MujocoEnvConfig,
            "mujoco_pixels": MujocoPixelsEnvConfig, "maze": MazeEnvConfig,
            "torcs": TorcsEnvConfig},
    "network": {"ff": FFNetworkConfig, "lstm": LSTMNetworkConfig,
                "gaussian": GaussianNetworkConfig},
    "optimizer": {"shared_rmsprop": SharedRMSPropConfig, "rmsprop": RMSPropConfig,
                  "momentum_sgd": MomentumSGDConfig},
}


def register_schemas() -> None:
    """Put every schema in Hydra's ConfigStore under ``schema/<group>/<name>``, and the
    sweeper under ``hydra/sweeper/asyncrl_loguniform``."""
    from hydra_plugins.asyncrl_sweeper import register_sweeper

    register_sweeper()
    cs = ConfigStore.instance()
    cs.store(name="train_schema", node=TrainConfig)
    for group, options in SCHEMAS.items():
        for name, node in options.items():
            cs.store(group=f"schema/{group}", name=name, node=node)


# each environment is a live emulator (or a TORCS process); past this the batch stops paying
MAX_ENVS_PER_WORKER = 256
SEED_LIMIT = 2**32  # numpy's and torch's seeds are unsigned 32-bit numbers


def _positive_finite(value: float) -> bool:
    return 0 < value < float("inf")


def validate(cfg: Any) -> None:
    """Refuse values that are well-typed but impossible; raise UserError naming the key."""
    for group in ("algo", "network", "optimizer"):
        node = getattr(cfg, group)
        # a file of shared keys (conf/algo/_value_based.yaml) composes, but has no schema
        name = node.get("name") if isinstance(node, dict) else getattr(node, "name", None)
        if name not in SCHEMAS[group] or isinstance(node, dict):
            what = f"{group}={name}" if name else f"the {group} option chosen"
            article = "an" if group == "algo" else "a"
            raise UserError(f"{what} is not {article} {group} (conf/{group}/_*.yaml hold shared "
                            f"keys); choose one of {', '.join(sorted(SCHEMAS[group]))}")
    if cfg.workers < 1:
        raise UserError(f"workers={cfg.workers}: need at least 1 worker process")
    limit, why = worker_limit()
    if cfg.workers > limit:
        raise UserError(f"workers={cfg.workers}: this machine holds at most {limit} "
                        f"({why})")
    if not 1 <= cfg.envs_per_worker <= MAX_ENVS_PER_WORKER:
        raise UserError(f"envs_per_worker={cfg.envs_per_worker}: must lie in "
                        f"[1, {MAX_ENVS_PER_WORKER}] (1 is the paper's loop)")
    if cfg.total_frames <= 0:
        raise UserError(f"total_frames={cfg.total_frames}: must be a positive number of frames")
    if not _positive_finite(cfg.lr):
        raise UserError(f"lr={cfg.lr}: the learning rate must be positive and finite")
    if not 0 <= cfg.seed < SEED_LIMIT:
        raise UserError(f"seed={cfg.seed}: must lie in [0, 2**32)")
    _validate_intervals(cfg)
    _validate_optimizer(cfg.optimizer)
    if getattr(cfg.algo, "entropy_beta", 0.0) < 0:
        raise UserError(f"algo.entropy_beta={cfg.algo.entropy_beta}: must be 0 or more")
    if not _positive_finite(cfg.algo.max_grad_norm):
        raise UserError(f"algo.max_grad_norm={cfg.algo.max_grad_norm}: must be positive "
                        "and finite")
    if cfg.lr_anneal_frames is not None and cfg.lr_anneal_frames <= 0:
        raise UserError(f"lr_anneal_frames={cfg.lr_anneal_frames}: must be a positive number "
                        "of frames, or null to anneal over total_frames")
    activation = getattr(cfg.network, "mlp_activation", "relu")
    if activation not in ("relu", "tanh"):
        raise UserError(f"network.mlp_activation={activation}: choose relu or tanh")
    scale = getattr(cfg.network, "policy_init_scale", 1.0)
    if not _positive_finite(scale):
        raise UserError(f"network.policy_init_scale={scale}: must be positive and finite")
    coef = getattr(cfg.algo, "value_loss_coef", 1.0)
    if not _positive_finite(coef):
        raise UserError(f"algo.value_loss_coef={coef}: must be positive and finite")
    if cfg.serial and cfg.workers != 1:
        raise UserError(f"serial=true runs one worker in-process; got workers={cfg.workers}")
    for key in ("t_max", "async_update", "target_update_frames"):
        if getattr(cfg.algo, key, 1) < 1:
            raise UserError(f"algo.{key}={getattr(cfg.algo, key)}: must be at least 1")
    if not 0 <= cfg.algo.gamma <= 1:
        raise UserError(f"algo.gamma={cfg.algo.gamma}: must lie in [0, 1]")
    if cfg.algo.name in VALUE_BASED:
        _validate_exploration(cfg.algo)
    if cfg.max_worker_restarts < 0:
        raise UserError("max_worker_restarts must be 0 or more")
    if not cfg.stall_seconds > 0:
        raise UserError(f"stall_seconds={cfg.stall_seconds}: must be positive")
    if cfg.eval.episodes < 0:
        raise UserError("eval.episodes must be 0 or more")
    # combinations before the environment's own checks: a missing TORCS or GL library must
    # not hide a mistake the user can fix on the command line
    _validate_env_exists(cfg.env)
    _validate_combination(cfg)
    _validate_env(cfg.env)


def _validate_intervals(cfg: Any) -> None:
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


def _validate_optimizer(opt: Any) -> None:
    decay = ("momentum", opt.momentum) if opt.name == "momentum_sgd" else ("alpha", opt.alpha)
    if not 0 <= decay[1] < 1:
        raise UserError(f"optimizer.{decay[0]}={decay[1]}: must lie in [0, 1)")
    if opt.name != "momentum_sgd":
        # eps sits inside the square root: 0 divides by zero where a gradient has been 0
        if not _positive_finite(opt.eps):
            raise UserError(f"optimizer.eps={opt.eps}: must be positive and finite")
        if opt.initial_square_avg < 0:
            raise UserError(f"optimizer.initial_square_avg={opt.initial_square_avg}: "
                            "must be 0 or more")


def _validate_exploration(algo: Any) -> None:
    finals, probabilities = list(algo.epsilon_finals), list(algo.epsilon_probabilities)
    if not finals or len(finals) != len(probabilities):
        raise UserError(f"algo.epsilon_finals {finals} and algo.epsilon_probabilities "
                        f"{probabilities} must be non-empty and of the same length")
    if any(not 0 <= e <= 1 for e in [*finals, algo.eval_epsilon]):
        raise UserError("algo.epsilon_finals and algo.eval_epsilon must lie in [0, 1]")
    if any(p < 0 for p in probabilities) or abs(sum(probabilities) - 1.0) > 1e-6:
        raise UserError(f"algo.epsilon_probabilities {probabilities} must be non-negative "
                        "and sum to 1")


def _validate_combination(cfg: Any) -> None:
    """Pairs of choices that each compose but cannot work together."""
    value_based = cfg.algo.name in VALUE_BASED
    gaussian = cfg.network.name == "gaussian"
    continuous = _has_continuous_actions(cfg.env)
    # the environment's actions first: with env=mujoco/... the network is the env's choice
    # (gaussian), and blaming it would send the user to a second error. TORCS has both kinds
    # of action, and the network picks which
    if continuous and value_based and cfg.env.family != "torcs":
        fix = "algo=a3c" if gaussian else "algo=a3c network=gaussian"
        raise UserError(f"{_env_name(cfg.env)} has continuous actions, but algo={cfg.algo.name} "
                        f"picks the best of finitely many; use {fix} (a Gaussian policy)")
    if value_based and gaussian:
        raise UserError(f"algo={cfg.algo.name} needs one Q-value per discrete action, which "
                        "network=gaussian does not give; use network=ff or network=lstm")
    if continuous and not gaussian:
        raise UserError(f"{_env_name(cfg.env)} has continuous actions, but "
                        f"network={cfg.network.name} has a softmax policy; use network=gaussian")
    if gaussian and not continuous:
        raise UserError(f"network=gaussian draws continuous actions, but {_env_name(cfg.env)} "
                        "has discrete ones; use network=ff or network=lstm")
    if cfg.algo.name == "a3c" and cfg.algo.episode_updates:
        limit = _episode_step_limit(cfg.env)
        if limit is None or limit > EPISODE_UPDATE_MAX_STEPS:
            raise UserError(f"algo.episode_updates=true makes each update one whole episode, "
                            f"which needs a time limit of at most {EPISODE_UPDATE_MAX_STEPS:,} "
                            f"steps; {_env_name(cfg.env)} has "
                            f"{'none' if limit is None else f'{limit:,}'}")


def env_label(env: Any) -> str:
    """``family/what``: how titles, logs and reports name an environment."""
    if env.family == "mujoco_pixels":
        return f"mujoco_pixels/{env.domain}/{env.task}"
    if env.family == "torcs":
        return f"torcs/{env.setting}"
    what = getattr(env, "game", None) or getattr(env, "id", None) or getattr(env, "level", "?")
    return f"{env.family}/{what}"


def _env_name(env: Any) -> str:
    if env.family == "maze":
        return f"maze/{env.level}"
    if env.family == "mujoco_pixels":
        return f"{env.domain}/{env.task} from pixels"
    if env.family == "torcs":
        return f"torcs/{env.setting}"
    return str(env.game if env.family == "atari" else env.id)


def _has_continuous_actions(env: Any) -> bool:
    if env.family in ("atari", "maze"):
        return False
    if env.family == "mujoco_pixels":
        return True
    if env.family == "torcs":
        return bool(env.policy_network == "gaussian")
    import gymnasium as gym

    return not isinstance(gym.make(env.id).action_space, gym.spaces.Discrete)


def _episode_step_limit(env: Any) -> int | None:
    if env.family == "atari":
        return int(env.max_episode_frames // env.frame_skip)
    if env.family == "maze":
        return int(round(env.episode_seconds * env.fps / env.frame_skip))
    if env.family == "torcs":
        from asyncrl.envs.torcs.controls import episode_step_limit

        return episode_step_limit(env.max_episode_seconds, env.frame_skip)
    if env.family == "mujoco_pixels":
        from asyncrl.envs.dm_pixels import episode_steps

        return episode_steps(env.domain, env.task, env.frame_skip)
    if env.max_episode_steps is not None:
        return int(env.max_episode_steps)
    import gymnasium as gym

    limit = gym.spec(env.id).max_episode_steps
    return None if limit is None else int(limit)


def _validate_env_exists(env: Any) -> None:
    """What the combination checks need: a gymnasium id that exists (its action space is
    looked at), and for pixel tasks a renderer (importing dm_control needs one)."""
    if env.family == "mujoco_pixels":
        from asyncrl.envs.dm_pixels import check_headless_rendering

        check_headless_rendering()
    if env.family not in ("gym", "mujoco"):
        return
    import gymnasium as gym

    if env.id not in gym.registry:
        raise UserError(f"unknown gymnasium environment id '{env.id}'")
    if env.family == "mujoco" and "mujoco" not in str(gym.spec(env.id).entry_point):
        raise UserError(f"'{env.id}' is not a gymnasium MuJoCo task")


def _validate_env(env: Any) -> None:
    if env.family == "atari":
        from asyncrl.envs.atari import known_games

        games = known_games()
        if env.game not in games:
            raise UserError(
                f"unknown Atari game '{env.game}': ale-py knows {len(games)} games, "
                f"e.g. {', '.join(games[:6])}, ... (see asyncrl.envs.atari.known_games())"
            )
        if env.frame_skip < 1 or env.frame_stack < 1 or env.noop_max < 0:
            raise UserError("env.frame_skip and env.frame_stack must be >= 1, env.noop_max >= 0")
    elif env.family in ("gym", "mujoco"):
        if env.max_episode_steps is not None and env.max_episode_steps < 1:
            raise UserError(f"env.max_episode_steps={env.max_episode_steps}: must be >= 1")
    elif env.family == "maze":
        _validate_maze(env)
    elif env.family == "torcs":
        from asyncrl.envs.torcs.settings import validate_torcs

        validate_torcs(env)
    elif env.family == "mujoco_pixels":
        from dm_control import suite  # after check_headless_rendering, in _validate_env_exists

        if (env.domain, env.task) not in suite.ALL_TASKS:
            raise UserError(f"dm_control's suite has no task '{env.domain}/{env.task}'")
        if env.frame_skip < 1 or env.screen_size < 36:
            raise UserError("env.frame_skip must be >= 1 and env.screen_size >= 36")
    else:
        raise UserError(f"unknown environment family '{env.family}'")


def _validate_maze(env: Any) -> None:
    for key in ("height", "width"):
        value = getattr(env, key)
        if value < 5 or value % 2 == 0:
            raise UserError(f"env.{key}={value}: labmaze needs an odd size of at least 5")
    if not 1 <= env.room_min_size <= env.room_max_size:
        raise UserError(f"env.room_min_size={env.room_min_size} and env.room_max_size="
                        f"{env.room_max_size}: need 1 <= min <= max")
    if env.max_rooms < 1 or env.apples_per_room < 0:
        raise UserError("env.max_rooms must be >= 1 and env.apples_per_room >= 0")
    if env.frame_skip < 1 or env.fps < 1 or not env.episode_seconds > 0:
        raise UserError("env.frame_skip and env.fps must be >= 1, env.episode_seconds > 0")
    if not env.eval_seeds:
        raise UserError(f"maze level '{env.level}' names no env.eval_seeds")


GROUP_KEYS = {"algo": "name", "env": "family", "network": "name", "optimizer": "name"}


def typed_config(data: dict[str, Any]) -> Any:
    """A saved, resolved config (plain dict) back into its typed schemas, for resuming."""
    base = OmegaConf.structured(TrainConfig)
    for group, key in GROUP_KEYS.items():
        node = data.get(group) or {}
        schema = SCHEMAS[group].get(node.get(key, ""))
        if schema is None:
            raise UserError(f"saved config has an unknown {group} '{node.get(key)}'")
        base[group] = OmegaConf.structured(schema)
    return OmegaConf.merge(base, _with_keys_added_since(data))


# keys added to the network since runs were first saved, with the value those runs used
# (today's default differs): a saved run resumes on what it trained with
NETWORK_KEYS_ADDED = {"centre_input": False, "mlp_activation": "relu"}


def _with_keys_added_since(data: dict[str, Any]) -> dict[str, Any]:
    """A run saved before a key of ``NETWORK_KEYS_ADDED`` existed gets that key's old value."""
    network = data.get("network") or {}
    if network.get("name") not in ("ff", "lstm"):
        return data
    missing = {k: v for k, v in NETWORK_KEYS_ADDED.items() if k not in network}
    return {**data, "network": {**network, **missing}} if missing else data
