"""The options beyond the paper refuse impossible values and combinations in one line, and
leave the paper's method in force when not given."""

import pytest

from asyncrl.config.checks import validate
from asyncrl.errors import UserError
from tests.conftest import compose


@pytest.mark.parametrize(("overrides", "fragment"), [
    (["algo.gae_lambda=1.5"], "algo.gae_lambda=1.5: must lie in [0, 1]"),
    (["algo.gae_lambda=-0.1"], "algo.gae_lambda=-0.1"),
    (["algo=nstep_q", "algo.lambda_return=2"], "algo.lambda_return=2.0: must lie in [0, 1]"),
    (["algo=nstep_q", "algo.replay_capacity=-1", "algo.replay_ratio=1"],
     "algo.replay_capacity=-1"),
    (["algo=nstep_q", "algo.replay_capacity=100001", "algo.replay_ratio=1"],
     "algo.replay_capacity=100001: must lie in [0, 100,000]"),
    (["algo=one_step_q", "algo.replay_capacity=10", "algo.replay_ratio=17"],
     "algo.replay_ratio=17"),
    (["algo=nstep_q", "algo.replay_capacity=10"], "replay needs both"),
    (["algo=nstep_q", "algo.replay_ratio=1"], "replay needs both"),
    (["network.dueling=true"], "algo=a3c has a policy and a value head"),
    (["env=classic/cartpole", "algo=nstep_q", "network.spatial_softmax=true"],
     "network.spatial_softmax=true reads the positions of features in an image"),
    (["network.conv=resnet"], "network.conv=resnet: choose paper or nature"),
    (["env=classic/cartpole", "network.conv=nature"],
     "network.conv=nature picks the conv layers for images"),
    (["network.torso_init=xavier"], "network.torso_init=xavier: choose lecun_bias or orthogonal"),
    (["env=classic/cartpole", "network.torso_init=orthogonal"],
     "network.torso_init=orthogonal starts the conv torso for images"),
    (["network.centre_on=median"], "network.centre_on=median: choose mean or background"),
    (["network.centre_on=background", "network.centre_input=false"],
     "network.centre_input=false turns centring off"),
    (["env=classic/cartpole", "network.centre_on=background"], "centres images"),
])
def test_impossible_option_values_are_refused(overrides, fragment):
    with pytest.raises(UserError) as err:
        validate(compose(*overrides))
    assert fragment in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(("overrides", "fragment"), [
    (["algo.double_q=true"], "algo.double_q is not a key of algo=a3c: A3C learns no Q-values"),
    (["algo.replay_capacity=10"], "importance-weight correction (ACER)"),
    (["algo.replay_ratio=1"], "importance-weight correction (ACER)"),
    (["algo.lambda_return=0.5"], "A3C's λ is algo.gae_lambda"),
    (["algo=one_step_sarsa", "algo.double_q=true"], "the action actually taken next"),
    (["algo=one_step_sarsa", "algo.replay_capacity=10"], "older policy"),
    (["algo=one_step_q", "algo.lambda_return=0.5"], "λ-returns are algo=nstep_q's"),
    (["algo=nstep_q", "algo.gae_lambda=0.9"], "n-step Q's λ is algo.lambda_return"),
    (["env=mujoco/inverted_pendulum", "network.dueling=true"], "no Q head to split"),
    (["env=mujoco/inverted_pendulum", "network.spatial_softmax=true"], "linear convs"),
    (["env=mujoco/inverted_pendulum", "network.conv=nature"], "linear convs"),
    (["env=mujoco/inverted_pendulum", "network.torso_init=orthogonal"], "default init"),
])
def test_an_option_of_another_algorithm_or_network_is_refused_with_the_reason(
        overrides, fragment):
    with pytest.raises(UserError) as err:
        compose(*overrides)
    assert fragment in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("overrides", [
    ["algo=nstep_q", "algo.double_q=true", "algo.lambda_return=0.8", "network.dueling=true",
     "algo.replay_capacity=100", "algo.replay_ratio=2", "network.spatial_softmax=true"],
    ["algo.gae_lambda=0.95", "network=lstm", "network.spatial_softmax=true"],
    ["network.conv=nature", "network.spatial_softmax=true", "network.hidden=512"],
    ["network.torso_init=orthogonal", "network.conv=nature", "network=lstm"],
    ["network.centre_on=background", "network.torso_init=orthogonal"],
    ["algo=one_step_q", "algo.double_q=true", "algo.replay_capacity=5", "algo.replay_ratio=1"],
])
def test_possible_combinations_pass(overrides):
    validate(compose(*overrides))  # Atari Pong: images, discrete actions


def test_every_option_defaults_to_the_paper():
    a3c, nstep = compose().algo, compose("algo=nstep_q").algo
    network = compose("setting=paper").network
    assert a3c.gae_lambda == 1.0 and nstep.lambda_return == 1.0
    assert (nstep.double_q, nstep.replay_capacity, nstep.replay_ratio) == (False, 0, 0)
    assert not network.dueling and not network.spatial_softmax and network.conv == "paper"
    assert network.torso_init == "lecun_bias" and network.centre_on == "mean"
    # but for the two the tuned Atari A3C setting turns on (conf/domain/tuned/atari/a3c.yaml)
    tuned = compose().network
    assert (tuned.torso_init, tuned.centre_on) == ("orthogonal", "background")
    assert compose("algo=nstep_q").network.torso_init == "lecun_bias"


def test_help_names_each_option_by_a_key_its_schema_has():
    import re
    from dataclasses import fields

    from asyncrl.commands.usage import USAGE
    from asyncrl.config.schemas import SCHEMAS

    section = USAGE.split("Beyond the paper")[1].split("Examples:")[0]
    named = set(re.findall(r"\b(algo|network)\.(\w+)=", section))
    assert {key for _, key in named} == {"gae_lambda", "lambda_return", "double_q", "dueling",
                                         "spatial_softmax", "conv", "torso_init", "centre_on",
                                         "replay_capacity",
                                         "replay_ratio"}
    for group, key in named:
        assert any(key in {f.name for f in fields(schema)}
                   for schema in SCHEMAS[group].values()), f"{group}.{key}"
