"""Torsos, recurrent core and heads, and the one function that builds a model from config."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from torch import nn

from asyncrl.action_kinds import action_kind_problem
from asyncrl.choices import Conv
from asyncrl.nets.agent_network import ActorCritic, AgentNetwork, QNetwork
from asyncrl.nets.gaussian import GaussianActorCritic
from asyncrl.nets.recurrent import LSTMCore, LSTMState, detach_state
from asyncrl.nets.torsos import ConvTorso, MLPTorso

__all__ = ["HEADS", "ActorCritic", "AgentNetwork", "GaussianActorCritic", "LSTMCore", "LSTMState",
           "QNetwork", "build_model", "detach_state"]


def build_torso(net_cfg: Any, observation_space: gym.Space) -> nn.Module:
    """Conv torso for image stacks (C, H, W), MLP torso for flat vectors."""
    shape = observation_space.shape
    if shape is None:
        raise ValueError("observation space has no shape")
    if len(shape) == 3:
        return ConvTorso(shape, hidden=net_cfg.hidden, centre_input=net_cfg.centre_input,
                         spatial_softmax=bool(net_cfg.spatial_softmax), conv=net_cfg.conv,
                         init=net_cfg.torso_init, centre_on=net_cfg.centre_on)
    if net_cfg.spatial_softmax:
        raise ValueError(f"network.spatial_softmax needs image observations, got shape {shape}")
    if net_cfg.conv != Conv.paper:
        raise ValueError(f"network.conv={net_cfg.conv} needs image observations, got shape {shape}")
    if len(shape) == 1:
        return MLPTorso(shape[0], layers=list(net_cfg.mlp_layers), hidden=net_cfg.hidden,
                        activation=net_cfg.mlp_activation)
    raise ValueError(f"no torso for observations of shape {shape}")


HEADS = ("actor_critic", "q")  # what an algorithm class declares as its ``head``


def build_model(cfg: Any, observation_space: gym.Space, action_space: gym.Space,
                head: str) -> nn.Module:
    """The model with ``head`` (a policy and a value, or one Q-value per action) on the
    torso (and core) ``cfg.network`` names."""
    if head not in HEADS:
        raise ValueError(f"unknown head '{head}': one of {HEADS}")
    if head == "q" and not isinstance(action_space, gym.spaces.Discrete):
        raise ValueError(f"a Q head needs one of n actions, got {action_space}")
    problem = action_kind_problem(cfg.network.name, isinstance(action_space, gym.spaces.Box),
                                  f"the action space {action_space}")
    if problem is not None:
        raise ValueError(problem)
    if cfg.network.name == "gaussian":
        action_shape = action_space.shape or ()
        if len(action_shape) != 1:
            raise ValueError(f"network=gaussian needs a vector of actions, got {action_space}")
        return GaussianActorCritic(tuple(observation_space.shape or ()), action_shape[0],
                                   hidden=cfg.network.hidden, lstm_size=cfg.network.lstm_size)
    if not isinstance(action_space, gym.spaces.Discrete):  # MultiDiscrete, Tuple, ...
        raise ValueError(f"network={cfg.network.name} needs one of n actions, got {action_space}")
    torso = build_torso(cfg.network, observation_space)
    core = None
    if cfg.network.name == "lstm":
        core = LSTMCore(int(torso.output_size), cfg.network.lstm_size)  # type: ignore[arg-type]
    if head == "q":
        return QNetwork(torso, int(action_space.n), core,
                        dueling=bool(cfg.network.dueling))
    return ActorCritic(torso, int(action_space.n), core,
                       policy_init_scale=cfg.network.policy_init_scale)
