"""The README's "first five minutes" commands, run as written (with fewer frames)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, cli_env

MODULES = {"asyncrl": "asyncrl", "asyncrl-eval": "asyncrl.commands.evaluate",
           "asyncrl-report": "asyncrl.commands.report"}
# what makes each run short: a few thousand frames, short Pong episodes, no live panel
SHORTER = ["log.progress=false", "eval.episodes=0", "eval.max_episode_frames=1200"]


def first_five_minutes() -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    section = text.split("## The first five minutes", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, "the section has no command block"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def shortened(words: list[str]) -> list[str]:
    args = [w for w in words[1:] if not w.startswith("total_frames=")]
    if words[0] == "asyncrl":
        pong = "env=atari/pong" in args
        args += [f"total_frames={4000 if pong else 3000}", *SHORTER,
                 *(["env.max_episode_frames=1200"] if pong else [])]
    return args


def test_the_first_five_minutes_commands_run_as_the_readme_says(tmp_path):
    commands = first_five_minutes()
    assert [c[0] for c in commands] == ["asyncrl", "asyncrl-eval", "asyncrl-report",
                                        "tensorboard", "asyncrl", "asyncrl-eval"]
    for words in commands:
        if words[0] == "tensorboard":  # a server: check it is installed and has something
            assert (Path(sys.executable).parent / "tensorboard").exists()
            assert list((tmp_path / "outputs" / "cartpole" / "tb").rglob("events.*"))
            continue
        result = subprocess.run([sys.executable, "-m", MODULES[words[0]], *shortened(words)],
                                cwd=tmp_path, env=cli_env(), capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, f"{' '.join(words)}:\n{result.stderr[-2000:]}"
    cartpole, pong = tmp_path / "outputs" / "cartpole", tmp_path / "outputs" / "pong"
    assert (cartpole / "evaluation.json").is_file()
    assert (cartpole / "report" / "report.md").is_file()
    assert (pong / "pong.gif").stat().st_size > 1000  # into the run, as the README says
    assert not (tmp_path / "pong.gif").exists()


def which_command_rows() -> list[list[str]]:
    """The ``asyncrl ...`` commands of the README's "Which command" table, as words."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Which command", 1)[1].split("\n## ", 1)[0]
    commands = []
    for line in section.splitlines():
        cells = line.split(" | ")
        if line.startswith("|") and len(cells) > 2:
            found = re.fullmatch(r"`(asyncrl [^`]*)`", cells[1].strip())
            if found:
                commands.append(shlex.split(found.group(1)))
    return commands


def test_each_command_of_the_which_command_table_composes():
    from asyncrl.config.checks import validate
    from asyncrl.config.compose import check_multirun, compose_config

    commands = which_command_rows()
    assert len(commands) >= 8, "the table lost its asyncrl commands"
    for words in commands:
        args = [w for w in words[1:] if not w.startswith("hydra.")]
        if "-m" in args:  # a sweep: its preset's runs, checked as the CLI checks a multirun
            check_multirun([a for a in args if a != "-m"])
            continue
        cfg = compose_config(args, as_object=True)
        if cfg.env.family != "torcs":  # its check asks for TORCS installed, which CI has not
            validate(cfg)
        assert cfg.algo.name in ("a3c", "nstep_q"), words
