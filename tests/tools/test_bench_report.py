"""The benchmark's file: a partial run replaces only the sections it measured."""

import queue

from asyncrl.tools.bench import (
    DEFAULT_ROW,
    _gym_env_loop,
    command_line,
    markdown,
    merge_sections,
    other_domains_markdown,
)


def test_partial_benchmark_keeps_the_sections_it_did_not_measure():
    old = ("# Benchmarks\n\n## Atari\n\nold atari table\n\n## TORCS: agent steps/s per worker "
           "(A3C, network=lstm)\n\nold torcs table\n")
    fresh = other_domains_markdown({"maze": [], "mujoco": [], "torcs": [
        {"setting": "slow_car", "workers": 2, "raw": 2000.0, "train": 300.0}]}, 15)
    merged = merge_sections(old, "# Benchmarks\n\n" + fresh)
    assert merged.startswith("# Benchmarks\n\n## Atari\n\nold atari table\n")
    assert "old torcs table" not in merged
    # 2 workers: 1,000 raw and 150 training steps/s per process, ratio 300 / 2000
    assert "| slow_car | 2 | 1,000 | 150 | 0.150 |" in merged
    assert merged.count("## TORCS") == 1


def test_each_section_names_the_command_that_measured_it():
    assert command_line([]) == "`python -m asyncrl.commands.bench` (what `nox -s bench` runs)"
    given = command_line(["--sections", "maze", "--seconds", "12"])
    assert given == "`python -m asyncrl.commands.bench --sections maze --seconds 12`"
    fresh = other_domains_markdown({"maze": [{"level": "small", "workers": 1, "steps": 9.0}],
                                    "mujoco": [], "torcs": []}, 12, given)
    assert f"Command: {given}." in fresh and "UTC on " in fresh


def test_the_atari_table_sets_training_beside_its_env_and_a_plain_gymnasium_loop():
    rows = [{"algo": DEFAULT_ROW, "workers": 2, "envs": 16, "raw": 30_000.0,
             "train": 12_000.0, "ratio": 0.4, "gym_raw": 20_000.0}]
    table = markdown(rows, {"act": 0.5, "env": 0.5}, 20, "`cmd`", game="breakout")
    # 6,000 a worker; 12,000 / 30,000 and 12,000 / 20,000
    assert "| a3c, the default setting | 2 | 16 | 30,000 | 12,000 | 6,000 | 0.400 | 20,000 " \
        "| 0.600 |" in table
    assert "gym.make('BreakoutNoFrameskip-v4')" in table


def test_a_plain_gymnasium_loop_is_timed():
    # in this process: the bench's own processes would start the forkserver here, before
    # tests/run/test_pool.py's check of what it imported
    rates: queue.Queue[float] = queue.Queue()
    _gym_env_loop("pong", 0.5, 0, rates)
    assert rates.get_nowait() > 0
