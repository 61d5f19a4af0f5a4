"""The benchmark's file: a partial run replaces only the sections it measured."""

from asyncrl.tools.bench import command_line, merge_sections, other_domains_markdown


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
