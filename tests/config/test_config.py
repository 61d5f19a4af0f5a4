"""Every config file composes; typos, wrong types and impossible values are refused."""

import dataclasses
from pathlib import Path

import gymnasium as gym
import pytest
from omegaconf import OmegaConf

from asyncrl.algos import algorithm_class
from asyncrl.config.checks import validate
from asyncrl.config.compose import RENAMED_PRESETS, compose_config, renamed_preset_notes
from asyncrl.config.machine import usable_cpus
from asyncrl.config.schemas import SCHEMAS
from asyncrl.envs import make_env
from asyncrl.envs.atari import known_games
from asyncrl.errors import UserError
from asyncrl.nets import build_model
from asyncrl.optim import build_optimizer
from tests.conftest import CONF, compose, run_cli

PAPER_GAMES = 57


def options(group: str) -> list[str]:
    """Every selectable option of a group: conf/<group>/**.yaml, minus shared _files and
    templates with a value to fill in (atari/any, gym: tested with a value below)."""
    root = CONF / group
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.yaml")
                  if not p.name.startswith("_") and "???" not in p.read_text())


# TORCS needs `asyncrl-torcs install`; its configs are built in tests/envs/test_torcs_race.py
@pytest.mark.parametrize("env", [e for e in options("env") if not e.startswith("torcs/")])
def test_every_env_composes_and_builds_a_model_and_optimizer(env):
    cfg = compose(f"env={env}", "workers=2")
    validate(cfg)
    if cfg.env.family == "atari":
        obs = gym.spaces.Box(0, 255, (cfg.env.frame_stack, 84, 84))
        actions = gym.spaces.Discrete(6)
    else:
        probe = make_env(cfg.env)
        obs, actions = probe.observation_space, probe.action_space
    model = build_model(cfg, obs, actions, algorithm_class(cfg.algo.name).head)
    assert build_optimizer(cfg.optimizer, model.parameters()).params


@pytest.mark.parametrize("setting", ["base", "paper", "tuned"])
@pytest.mark.parametrize("group", ["algo", "network", "optimizer"])
def test_every_option_of_the_other_groups_composes(group, setting):
    found = options(group)
    assert found, f"conf/{group} is empty"
    # the layers set keys of RMSProp and of the image networks: with the options that lack
    # them, a setting's layer is refused in one line that names it (the next test)
    lacking = {"tuned": {"gaussian", "momentum_sgd"}, "paper": {"gaussian"}}.get(setting, set())
    for option in found:
        if option in lacking:
            continue
        cfg = compose(f"{group}={option}", f"setting={setting}")
        assert getattr(cfg, group).name == Path(option).name


@pytest.mark.parametrize("override", ["family=atari", "domain=tuned/atari/a3c",
                                      "domain/all=mujoco/a3c", "+family=maze"])
def test_the_groups_the_config_chooses_itself_are_refused_on_the_command_line(override):
    with pytest.raises(UserError, match="follows from env= and setting="):
        compose_config([override, "env=mujoco/hopper"], as_object=True)


@pytest.mark.parametrize(("overrides", "said"), [
    (["optimizer=momentum_sgd"], "optimizer.eps is not a key of optimizer=momentum_sgd: "
     "momentum SGD keeps no squared-gradient statistics; conf/domain/tuned/atari/a3c.yaml sets "
     "it for setting=tuned: add setting=base (or setting=paper) to leave it out"),
    # where the same command over the base groups is refused, that is what is said
    (["network=gaussian", "setting=paper"], "network=gaussian draws continuous actions, but "
     "pong has discrete ones"),
    (["network=gaussian"], "network=gaussian draws continuous actions"),
])
def test_a_layer_key_the_option_lacks_is_refused_naming_the_layer(overrides, said):
    with pytest.raises(UserError) as refused:
        compose_config(overrides, as_object=True)
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_one_config_per_paper_game_and_each_names_a_real_rom():
    games = options("env/atari")
    assert len(games) == PAPER_GAMES
    for game in games:
        assert compose(f"env=atari/{game}").env.game in known_games()


def test_any_ale_game_by_id():
    cfg = compose("env=atari/any", "env.game=galaxian")
    validate(cfg)
    assert cfg.env.game == "galaxian"


TUNED_ATARI_A3C_LR = 3e-3  # conf/domain/tuned/atari/a3c.yaml (docs/results.md)


@pytest.mark.parametrize("switch", [["+experiment=paper"], ["setting=paper"]])
def test_the_paper_setting_holds_each_value_the_paper_states(switch):
    # Supp. 8, "Experimental Setup", and Algorithms S2 and S3
    cfg = compose(*switch)
    assert (cfg.algo.name, cfg.env.game, cfg.network.name, cfg.optimizer.name) == (
        "a3c", "pong", "ff", "shared_rmsprop")  # shared RMSProp; the Atari 2013 network
    assert (cfg.network.conv, cfg.network.hidden) == ("paper", 256)  # 16 8x8/4, 32 4x4/2, 256
    assert (cfg.algo.t_max, cfg.algo.gamma, cfg.algo.entropy_beta) == (5, 0.99, 0.01)
    assert cfg.algo.value_loss_coef == 1.0  # Algorithm S3: ∂(R − V)²/∂θv, unweighted
    assert cfg.envs_per_worker == 1 and cfg.workers == min(16, usable_cpus())  # 16 threads
    assert cfg.network.centre_input is False  # the DQN input, without centring
    assert (cfg.optimizer.alpha, cfg.env.frame_skip, cfg.env.frame_stack) == (0.99, 4, 4)
    assert cfg.env.noop_max == 30 and cfg.env.repeat_action_probability == 0.0
    # what the paper leaves open, with the value the setting uses (conf/setting/paper.yaml)
    assert (cfg.lr, cfg.optimizer.eps, cfg.network.torso_init) == (7e-3, 0.1, "lecun_bias")
    q = compose(*switch, "algo=nstep_q")
    assert (q.algo.t_max, q.algo.target_update_frames, q.envs_per_worker) == (5, 40_000, 1)
    assert (list(q.algo.epsilon_finals), list(q.algo.epsilon_probabilities)) == (
        [0.1, 0.01, 0.5], [0.4, 0.3, 0.3])
    assert q.algo.epsilon_anneal_frames == 4_000_000 and q.network.centre_input is False
    assert q.algo.epsilon_redraw is True  # "ε periodically sampled": each episode here
    assert compose("algo=nstep_q").algo.epsilon_redraw is False  # the base: drawn once
    # the other domains: Algorithm S3's loss, the MuJoCo entropy weight and whole episodes
    hopper = compose(*switch, "env=mujoco/hopper")
    assert (hopper.algo.value_loss_coef, hopper.algo.entropy_beta) == (1.0, 1e-4)
    assert hopper.algo.episode_updates is True and hopper.envs_per_worker == 1


def test_the_default_on_atari_is_the_tuned_layer_and_the_rest_keep_their_defaults():
    cfg = compose()
    assert (cfg.envs_per_worker, cfg.algo.t_max, cfg.lr) == (16, 20, TUNED_ATARI_A3C_LR)
    assert (cfg.optimizer.eps, cfg.optimizer.initial_square_avg) == (1e-3, 0.1)
    assert (cfg.network.torso_init, cfg.network.centre_on) == ("orthogonal", "background")
    assert (cfg.algo.value_loss_coef, cfg.network.centre_input) == (0.25, True)
    # one lr for every game (no game's own)
    assert {compose(f"env=atari/{g}").lr for g in ("breakout", "space_invaders", "alien")} == {
        TUNED_ATARI_A3C_LR}
    # no layer for the value-based methods or the other families: their defaults stay
    assert compose("algo=nstep_q").lr == compose("algo=one_step_q").lr == 7e-4
    assert compose("algo=nstep_q").envs_per_worker == 1
    maze = compose("env=maze/small")
    assert (maze.lr, maze.envs_per_worker, maze.algo.t_max) == (7e-4, 1, 5)
    assert compose("env=mujoco/hopper").total_frames == compose().total_frames == 40_000_000
    assert compose("total_frames=1000").total_frames == 1000
    assert compose("lr=1e-3").lr == 1e-3


def test_setting_base_gives_the_defaults_of_before_the_layers():
    # CHANGELOG.md, 2026-12-07: the old default, one switch away
    cfg = compose("setting=base")
    assert (cfg.envs_per_worker, cfg.algo.t_max, cfg.lr, cfg.algo.value_loss_coef) == (
        1, 5, 7e-3, 0.25)
    assert (cfg.network.centre_input, cfg.network.centre_on, cfg.network.torso_init) == (
        True, "mean", "lecun_bias")
    assert (cfg.optimizer.eps, cfg.optimizer.initial_square_avg) == (0.1, 0.0)
    assert compose("setting=base", "algo.default_lr=2e-3").lr == 2e-3


def test_cartpoles_defaults_are_the_measured_quick_start():
    # docs/notes/, "CartPole-v1, A3C, 2 workers: the defaults"
    cfg = compose("env=classic/cartpole")
    assert (cfg.total_frames, cfg.lr, cfg.algo.entropy_beta, cfg.algo.gamma) == (
        150_000, 1.5e-3, 0.0, 0.99)
    assert cfg.network.mlp_activation == "tanh"


def test_the_settings_of_before_stay_reachable_by_override():
    cfg = compose("setting=base", "lr=7e-4", "algo.value_loss_coef=0.5",
                  "network.policy_init_scale=0.01",
                  "network.centre_input=false")
    validate(cfg)
    assert (cfg.lr, cfg.algo.value_loss_coef, cfg.network.policy_init_scale,
            cfg.network.centre_input) == (7e-4, 0.5, 0.01, False)


@pytest.mark.parametrize(("overrides", "fragment"), [
    (["algo.entropy_betta=0.1"], "Key 'entropy_betta' not in 'A3CConfig'"),
    (["foo=1"], "Key 'foo' not in 'TrainConfig'"),
    (["workers=many"], "could not be converted to Integer"),
    (["env=atari/not_a_game"], "unknown env option 'atari/not_a_game'"),
    (["algo=ppo"],
     "unknown algo option 'ppo' (conf/algo has: a3c, nstep_q, one_step_q, one_step_sarsa)"),
    (["env=atari/any"], "env.game has no default"),
    (["env=gym"], "env.id has no default"),
    (["env=gym", "env.id=CartPole-v1", "env.kwargs={a: 1}"], "+env.kwargs.NAME=VALUE"),
    (["algo=nstep_q", "algo.epsilon_per_environment=1"],
     "algo.epsilon_per_environment=1: must be true or false"),
    (["network.centre_input=yes"], "network.centre_input=yes: must be true or false"),
    (["serial=0"], "serial=0: must be true or false"),
])
def test_composition_errors_are_one_line(overrides, fragment):
    with pytest.raises(UserError) as err:
        compose_config(overrides, as_object=True)
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("overrides", "fragment"), [
    (["workers=0"], "workers=0"),
    (["workers=10000"], "workers=10000: this machine holds at most"),
    (["total_frames=-1"], "total_frames=-1"),
    (["lr=0"], "lr=0"),
    (["network.mlp_activation=gelu"], "network.mlp_activation=gelu: choose relu or tanh"),
    (["serial=true", "workers=2"], "serial=true"),
    (["env=atari/any", "env.game=no_such_rom"], "unknown Atari game 'no_such_rom'"),
    (["algo.t_max=0"], "algo.t_max=0"),
    (["lr_anneal_frames=0"], "lr_anneal_frames=0"),
    (["network.policy_init_scale=0"], "network.policy_init_scale=0"),
    (["network.policy_init_scale=inf"], "network.policy_init_scale=inf"),
    (["algo.value_loss_coef=-0.5"], "algo.value_loss_coef=-0.5"),
    (["seed=-1"], "seed=-1"),
    (["seed=4294967296"], "seed=4294967296"),
    (["lr=inf"], "lr=inf"),
    # unused by this run's lr (given), still a mistake
    (["lr=1e-3", "algo.default_lr=2"], "algo.default_lr=2.0"),
    (["eval.interval_frames=0"], "eval.interval_frames=0"),
    (["eval.max_episode_frames=0"], "eval.max_episode_frames=0"),
    (["checkpoint.interval_frames=0"], "checkpoint.interval_frames=0"),
    (["checkpoint.interval_seconds=0"], "checkpoint.interval_seconds=0"),
    (["log.score_window=0"], "log.score_window=0"),
    (["log.interval_seconds=-1"], "log.interval_seconds=-1"),
    (["optimizer.eps=0"], "optimizer.eps=0"),
    (["optimizer.alpha=1"], "optimizer.alpha=1"),
    (["setting=base", "optimizer=momentum_sgd", "optimizer.momentum=-0.1"],
     "optimizer.momentum=-0.1"),
    (["optimizer.initial_square_avg=-1"], "optimizer.initial_square_avg=-1"),
    (["algo.entropy_beta=-0.01"], "algo.entropy_beta=-0.01"),
    (["algo.max_grad_norm=0"], "algo.max_grad_norm=0"),
    (["algo=_value_based"], "the algo option chosen is not an algo"),
    (["env=classic/cartpole", "env.id=NoSuchEnv-v0", "algo=nstep_q"],
     "unknown gymnasium environment id 'NoSuchEnv-v0'"),
    # each named as written, not as the key that reads it (lr, total_frames)
    (["algo.default_lr=-1", "lr=1e-3"], "algo.default_lr=-1.0"),
    (["algo=nstep_q", "algo.default_lr=-1"], "algo.default_lr=-1.0"),
    (["env.default_total_frames=-5", "total_frames=1000"], "env.default_total_frames=-5"),
    (["env.default_total_frames=-5"], "env.default_total_frames=-5"),
    (["env.sweep_lr_low=-1"], "env.sweep_lr_low=-1 and env.sweep_lr_high=0.01"),
    (["env.sweep_lr_high=nan"], "env.sweep_lr_high=nan"),
    (["env.sweep_lr_low=0.1", "env.sweep_lr_high=0.01"], "needs 0 < low < high"),
    (["algo=nstep_q", "algo.epsilon_anneal_frames=-5"], "algo.epsilon_anneal_frames=-5"),
    (["algo=nstep_q", "algo.epsilon_probabilities=[0.4,0.3,nan]"],
     "must be non-negative and sum to 1"),
    (["env=maze/small", "env.episode_seconds=inf"], "env.episode_seconds=inf"),
    (["env=maze/small", "env.episode_seconds=1e308"], "env.episode_seconds=1e+308"),
    (["env=maze/small", "env.episode_seconds=0.01"], "env.episode_seconds=0.01"),
    (["env=maze/small", "env.eval_seeds=[3,-1]"], "env.eval_seeds: -1"),
    (["env=maze/small", "env.eval_seeds=[2147483647]"], "env.eval_seeds: 2147483647"),
    # the clock named by every key that sets it, before algo.episode_updates reads it
    (["env=maze/small", "env.frame_skip=100000"], "env.frame_skip=100000"),
    (["env=maze/small", "env.episode_seconds=inf", "algo.episode_updates=true"],
     "env.episode_seconds=inf"),
    (["env=maze/small", "env.episode_seconds=nan", "algo.episode_updates=true"],
     "env.episode_seconds=nan"),
    # unread by a vector task, still a mistake
    (["env=classic/cartpole", "env.screen_size=-1"], "env.screen_size=-1"),
    (["env=classic/cartpole", "env.frame_stack=-1"], "env.frame_stack=-1"),
])
def test_impossible_values_are_refused(overrides, fragment):
    with pytest.raises(UserError, match=None) as err:
        validate(compose(*overrides))
    assert fragment in str(err.value)


def test_the_worker_limit_follows_cores_and_available_memory(monkeypatch):
    import asyncrl.config.machine as machine

    monkeypatch.setattr(machine, "usable_cpus", lambda: 2)
    monkeypatch.setattr(machine, "available_memory", lambda: 64 * 2**30)
    assert machine.worker_limit() == (16, "8 per core on 2 cores")
    monkeypatch.setattr(machine, "available_memory", lambda: 2.0 * 2**30)
    limit, why = machine.worker_limit()
    assert limit == 4 and "2.0 GiB of memory available" in why  # 2 GiB / 0.45 GB
    monkeypatch.setattr(machine, "available_memory", lambda: 1e8)
    assert machine.worker_limit()[0] == 1  # one worker is always allowed to try


def _yaml_values(group: str, option: str) -> dict:
    """The values an option's YAML sets, its group's shared file (``_value_based``) first."""


    raw = OmegaConf.to_container(OmegaConf.load(CONF / group / f"{option}.yaml"))
    values: dict = {}
    for entry in raw.pop("defaults", []):
        if isinstance(entry, str) and entry.startswith(f"/{group}/_"):
            values.update(_yaml_values(group, entry.split("/")[-1].split("@")[0]))
    return {**values, **raw}


def _two_homes(schema: type, values: dict) -> dict:
    """The keys a YAML sets (``values``) whose schema field holds a value too. A value has
    one home: the YAML sets it and the schema says MISSING, or the schema holds it and no
    YAML restates it. An option's name is the exception: schemas are looked up by it, so
    the schema names itself, and the YAML must agree."""
    found = {}
    for field in dataclasses.fields(schema):
        if field.name not in values:
            continue
        if field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = field.default
        written = values[field.name]
        if dataclasses.is_dataclass(default) and isinstance(written, dict):
            found.update({f"{field.name}.{k}": v
                          for k, v in _two_homes(type(default), written).items()})
        elif field.name in ("name", "family"):
            if written != default:
                found[field.name] = (written, default)
        elif default != "???":
            found[field.name] = (written, default)
    return found


def test_conf_config_yaml_is_the_one_home_of_the_run_keys():
    """The top-level keys and eval/checkpoint/log of conf/config.yaml against TrainConfig."""
    from asyncrl.config.schemas import TrainConfig

    raw = OmegaConf.to_container(OmegaConf.load(CONF / "config.yaml"))
    for key in ("defaults", "hydra", "algo", "env", "network", "optimizer"):
        raw.pop(key, None)
    assert not _two_homes(TrainConfig, raw), _two_homes(TrainConfig, raw)

    # and the test can fail: a number in a schema beside the YAML's is a second home
    @dataclasses.dataclass
    class Restated:
        seed: int = 1
        lr: float = 7e-4

    assert _two_homes(Restated, {"seed": 1, "lr": "${algo.default_lr}"}) == {
        "seed": (1, 1), "lr": ("${algo.default_lr}", 7e-4)}


def test_a_run_saved_before_a_key_existed_resumes_with_the_value_it_used():
    from asyncrl.config.compose import compose_config
    from asyncrl.config.saved import GROUP_KEYS, KEYS_ADDED, typed_config

    saved = OmegaConf.to_container(compose_config([]), resolve=True)
    for (where, options), added in KEYS_ADDED.items():
        node = saved[where] if where else saved
        if not options or node[GROUP_KEYS[where]] in options:
            for key in added:
                node.pop(key)
    restored = typed_config(saved)
    assert restored.algo.episode_updates is False and restored.algo.default_lr == 7e-4
    assert restored.algo.gae_lambda == 1.0 and restored.network.policy_init_scale == 0.01
    assert restored.network.centre_input is False and restored.network.mlp_activation == "relu"
    assert restored.envs_per_worker == 1 and restored.log.wandb is False
    assert restored.optimizer.initial_square_avg == 0
    assert restored.lr == saved["lr"] and restored.total_frames == saved["total_frames"]
    # every key it lacked is filled: none is left MISSING
    assert OmegaConf.missing_keys(restored) == set()


# the config a run stored in its checkpoint, as each of these commits composed and saved it
# (the commit that added the option; eba9e64 had env.default_lr, removed since with the other
# env keys that only gave an algorithm its default: config/saved.py's DEFAULTS_REMOVED)
SAVED_CONFIGS = sorted(
    (Path(__file__).parents[1] / "data" / "saved_configs").glob("*.json"))


@pytest.mark.parametrize("path", SAVED_CONFIGS, ids=lambda p: p.stem)
def test_a_config_saved_by_an_old_commit_resumes_with_every_key_filled(path):
    import json

    from asyncrl.config.saved import DEFAULTS_REMOVED, typed_config

    saved = json.loads(path.read_text())
    restored = OmegaConf.to_object(typed_config(saved))  # raises on a key left MISSING
    assert restored.lr == saved["lr"] and restored.seed == saved["seed"]
    for group in ("algo", "network", "optimizer", "env"):
        for key, value in saved[group].items():
            if (group, key) in DEFAULTS_REMOVED:  # a default of another key: dropped
                assert not hasattr(getattr(restored, group), key)
                continue
            assert getattr(getattr(restored, group), key) == value, (group, key)


def test_a_run_saved_with_a_removed_key_resumes_only_with_todays_behaviour():
    from asyncrl.config.compose import compose_config
    from asyncrl.config.saved import typed_config

    saved = OmegaConf.to_container(compose_config([]), resolve=True)
    assert "precision" not in typed_config({**saved, "precision": "fp32"})
    with pytest.raises(UserError, match="saved with precision=bf16, which this asyncrl no "
                                        "longer has"):
        typed_config({**saved, "precision": "bf16"})


# each environment family's base file: what every option of the family starts from
FAMILY_FILES = sorted(str(p.relative_to(CONF)) for p in (CONF / "env").rglob("*.yaml")
                      if p.name == "_common.yaml" or p.parent == CONF / "env")


@pytest.mark.parametrize("path", FAMILY_FILES)
def test_each_family_file_is_the_one_home_of_its_values(path):
    raw = OmegaConf.to_container(OmegaConf.load(CONF / path))
    raw.pop("defaults", None)
    twice = _two_homes(SCHEMAS["env"][raw["family"]], raw)
    assert not twice, f"conf/{path} and its schema both hold (yaml, schema): {twice}"


@pytest.mark.parametrize(("group", "option"), [
    (group, option) for group in ("algo", "network", "optimizer")
    for option in sorted(SCHEMAS[group])])
def test_each_option_yaml_is_the_one_home_of_its_defaults(group, option):
    """A default the commented YAML gives is MISSING in the schema dataclass, so it cannot
    be changed in one place and stay in the other."""
    twice = _two_homes(SCHEMAS[group][option], _yaml_values(group, option))
    assert not twice, f"conf/{group}/{option}.yaml and its schema both hold (yaml, schema): {twice}"


def test_each_algorithm_class_declares_the_schema_and_facts_the_config_uses():
    from asyncrl.algos import algorithm_classes
    from asyncrl.algos.configs import is_value_based

    classes = algorithm_classes()
    assert set(classes) == set(SCHEMAS["algo"])
    for name, cls in classes.items():
        assert cls.config is SCHEMAS["algo"][name]
        # what the config checks ask (value-based: discrete actions only) matches what the
        # class learns and needs
        assert is_value_based(name) == (cls.head == "q") == cls.uses_target


def test_the_20_step_batched_preset_sets_its_five_keys_and_nothing_else():
    plain, preset = compose("setting=base"), compose("+experiment=a3c_k16_t20")
    assert (preset.envs_per_worker, preset.lr, preset.algo.t_max) == (16, 2e-3, 20)
    assert (preset.optimizer.eps, preset.optimizer.initial_square_avg) == (1e-3, 0.1)
    assert (plain.algo.t_max, plain.optimizer.initial_square_avg) == (5, 0.0)
    preset.algo.t_max = plain.algo.t_max
    assert preset.algo == plain.algo and preset.network == plain.network
    assert preset.total_frames == plain.total_frames and preset.workers == plain.workers


def test_the_batched_nstep_q_preset_is_the_paper_s_nstep_q_with_four_keys():
    plain, preset = compose("algo=nstep_q"), compose("+experiment=nstep_q_k16")
    assert preset.algo.name == "nstep_q" and preset.algo == plain.algo  # t_max 5, θ⁻, the ε draw
    assert (preset.envs_per_worker, preset.lr, preset.optimizer.eps) == (16, 1e-3, 1e-3)
    assert preset.optimizer.initial_square_avg == 0.1
    assert (plain.envs_per_worker, plain.optimizer.initial_square_avg) == (1, 0.0)
    assert preset.network == plain.network and preset.total_frames == plain.total_frames
    spelled = compose("algo=nstep_q", "envs_per_worker=16", "lr=1e-3", "optimizer.eps=1e-3",
                      "optimizer.initial_square_avg=0.1")
    assert preset == spelled  # the command docs/notes/ measured


def test_the_batched_a3c_preset_sets_k_eps_and_lr_and_nothing_else():
    plain, preset = compose("setting=base"), compose("+experiment=a3c_k16")
    assert (preset.envs_per_worker, preset.lr, preset.optimizer.eps) == (16, 1e-3, 1e-3)
    assert (plain.envs_per_worker, plain.optimizer.eps) == (1, 0.1)
    assert preset.algo == plain.algo and preset.network == plain.network
    assert preset.total_frames == plain.total_frames and preset.workers == plain.workers


def test_the_background_preset_is_the_batched_preset_with_two_network_keys():
    batched = compose("+experiment=a3c_k16")
    preset = compose("+experiment=a3c_k16_orthogonal_bg")
    assert (preset.network.torso_init, preset.network.centre_on) == ("orthogonal", "background")
    assert preset.network.centre_input is True
    preset.network.torso_init, preset.network.centre_on = "lecun_bias", "mean"
    assert preset == batched


@pytest.mark.parametrize("game", ["breakout", "pong", "space_invaders"])
def test_the_t20_background_preset_is_the_t20_preset_with_two_network_keys_and_the_default(
        game):
    t20 = compose("+experiment=a3c_k16_t20", f"env=atari/{game}")
    preset = compose("+experiment=a3c_tuned_keys", f"env=atari/{game}")
    assert (preset.network.torso_init, preset.network.centre_on) == ("orthogonal", "background")
    assert (preset.algo.t_max, preset.lr, preset.envs_per_worker) == (20, TUNED_ATARI_A3C_LR, 16)
    default = compose(f"env=atari/{game}")  # the tuned Atari A3C setting, as keys
    assert preset.lr == default.lr
    preset.algo.default_lr = default.algo.default_lr  # the preset gives lr itself
    assert preset == default
    preset.network.torso_init, preset.network.centre_on = "lecun_bias", "mean"
    preset.lr, preset.algo.default_lr = t20.lr, t20.algo.default_lr
    assert preset == t20
    # a given lr still wins over the game's
    given = compose("+experiment=a3c_tuned_keys", f"env=atari/{game}", "lr=1e-3")
    assert given.lr == 1e-3


def test_the_renamed_presets_old_names_are_the_files_that_say_so():
    said = {p.stem: p.read_text().splitlines()[1] for p in (CONF / "experiment").glob("*.yaml")}
    renamed = {name for name, line in said.items() if ": renamed " in line}
    assert renamed == set(RENAMED_PRESETS)
    for old, new in RENAMED_PRESETS.items():
        assert new in said and new not in RENAMED_PRESETS, f"{old} is renamed {new}"
        assert said[old] == f"# {old}: renamed {new} (2026-12-07); this name keeps working"


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED_PRESETS.items()))
@pytest.mark.parametrize("more", [[], ["env=atari/breakout", "network=lstm"]])
def test_each_old_preset_name_composes_exactly_as_its_new_name(old, new, more):
    was = OmegaConf.to_yaml(compose(f"+experiment={old}", *more))
    assert was == OmegaConf.to_yaml(compose(f"+experiment={new}", *more))


def test_an_old_preset_name_is_said_in_one_line_with_its_new_one(workdir):
    assert renamed_preset_notes(["-m", "+experiment=paper,a3c_batched", "seed=1,2"]) == [
        "+experiment=a3c_batched is now +experiment=a3c_k16 (the old name keeps working)"]
    assert renamed_preset_notes(["+experiment=a3c_k16", "env=atari/a3c_batched"]) == []
    shown = run_cli(["--cfg", "job", "+experiment=a3c_batched_t20_background"], workdir)
    assert shown.returncode == 0 and "t_max: 20" in shown.stdout
    assert shown.stderr.strip().splitlines() == [
        "asyncrl: note: +experiment=a3c_batched_t20_background is now "
        "+experiment=a3c_tuned_keys (the old name keeps working)"]


@pytest.mark.parametrize("value", ["true", "True", "false", "'false'"])
def test_a_switch_takes_true_or_false_in_any_case(value):
    cfg = compose_config(["algo=nstep_q", f"algo.double_q={value}"], as_object=True)
    assert cfg.algo.double_q is (value.strip("'").lower() == "true")
