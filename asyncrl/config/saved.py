"""A saved run's config (a resolved plain dict from its checkpoint) back into the typed
schemas, with the keys added or removed since it was saved, so that it resumes on what it
trained with."""

from __future__ import annotations

from typing import Any

from omegaconf import OmegaConf

from asyncrl.config.schemas import SCHEMAS, TrainConfig
from asyncrl.errors import UserError

GROUP_KEYS = {"algo": "name", "env": "family", "network": "name", "optimizer": "name"}


def typed_config(data: dict[str, Any]) -> Any:
    """A saved, resolved config (plain dict) back into its typed schemas, for resuming."""
    data = _with_keys_added_since(_without_keys_removed(data))
    base = OmegaConf.structured(TrainConfig)
    for group, key in GROUP_KEYS.items():
        node = data.get(group) or {}
        schema = SCHEMAS[group].get(node.get(key, ""))
        if schema is None:
            raise UserError(f"saved config has an unknown {group} '{node.get(key)}'")
        base[group] = OmegaConf.structured(schema)
    return OmegaConf.merge(base, data)


# top-level keys that existed on main for a while and were removed, with the value that is
# today's behaviour: a run saved with it resumes; one saved with another value is refused
KEYS_REMOVED = {"precision": "fp32"}  # bf16 autocast, built and removed (docs/notes/)


# (group, key) of keys that only gave another key its default and were removed: the run
# saved the value they gave (its config is resolved), so they are dropped whatever they held.
# 2026-12-07: a preset's per-game lr, and A3C's values for a domain, which moved from the env
# schema to conf/domain (env.default_lr is the name a3c_default_lr had for a day)
DEFAULTS_REMOVED = {("env", "a3c_t20_background_lr"), ("env", "a3c_default_lr"),
                    ("env", "a3c_entropy_beta"), ("env", "a3c_episode_updates"),
                    ("env", "default_lr")}


def _without_keys_removed(data: dict[str, Any]) -> dict[str, Any]:
    for key, today in KEYS_REMOVED.items():
        if key in data and data[key] != today:
            raise UserError(f"this run was saved with {key}={data[key]}, which this asyncrl "
                            f"no longer has (only {today})")
    kept = {k: v for k, v in data.items() if k not in KEYS_REMOVED}
    for group, key in DEFAULTS_REMOVED:
        if isinstance(kept.get(group), dict) and key in kept[group]:
            kept[group] = {k: v for k, v in kept[group].items() if k != key}
    return kept


# Keys added since runs were first saved (checkpoint format 1), with the value those runs
# trained with: the schemas leave every value YAML sets to the YAML (MISSING), so a saved
# run that lacks one would otherwise not resume. tests/data/saved_configs holds configs as
# the first commit of each option saved them. Each entry: (the config node, "" for the top
# level; the options of its group it applies to, () for all) -> {key: value}.
KEYS_ADDED: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {
    # before these keys: one environment per worker, lr annealed over total_frames, the
    # sweepers' objective the training score, a stalled worker killed after 300 s
    ("", ()): {"envs_per_worker": 1, "lr_anneal_frames": None, "objective": "train_score",
               "stall_seconds": 300.0, "init_from": None,
               "minibatches": 1},
    ("log", ()): {"wandb": False, "wandb_project": "asyncrl"},
    ("checkpoint", ()): {"keep": False},
    ("eval", ()): {"final_episodes": 0},  # no evaluation of the final weights
    # before default_lr, conf/config.yaml gave every run lr 7e-4 (Atari's A3C lr was
    # env.default_lr for a day, removed since); every update was a bootstrapped
    # segment; the advantage was the n-step one
    ("algo", ("a3c",)): {"default_lr": 7e-4, "episode_updates": False, "gae_lambda": 1.0},
    # and each worker drew one final epsilon for all of its environments
    ("algo", ("one_step_q", "one_step_sarsa", "nstep_q")): {"default_lr": 7e-4,
                                                            "epsilon_per_environment": False,
                                                            "epsilon_redraw": False},
    ("algo", ("one_step_q", "nstep_q")): {"double_q": False, "replay_capacity": 0,
                                          "replay_ratio": 0},
    ("algo", ("nstep_q",)): {"lambda_return": 1.0},
    # raw pixels and ReLU MLPs; the policy layer's initial weights scaled by 0.01
    ("network", ("ff", "lstm")): {"centre_input": False, "mlp_activation": "relu",
                                  "policy_init_scale": 0.01, "dueling": False,
                                  "spatial_softmax": False, "conv": "paper",
                                  "torso_init": "lecun_bias", "centre_on": "mean"},
    ("optimizer", ("shared_rmsprop",)): {"initial_square_avg": 0.0},
    # the gym family took vector observations only
    ("env", ("gym",)): {"kwargs": {}, "frame_skip": 1, "grayscale": True, "screen_size": 84,
                        "frame_stack": 4},
}


def _with_keys_added_since(data: dict[str, Any]) -> dict[str, Any]:
    """A run saved before a key of ``KEYS_ADDED`` existed gets that key's old value."""
    filled = {k: dict(v) if isinstance(v, dict) else v for k, v in data.items()}
    for (where, options), added in KEYS_ADDED.items():
        node = filled.setdefault(where, {}) if where else filled
        if not options or node.get(GROUP_KEYS[where]) in options:
            for key, value in added.items():
                node.setdefault(key, value)
    return filled
