"""Seeded random command lines against the contract of a user's mistake.

Every key of every option of every config group, and every option, gets values from its
type's edge cases (0, -1, 1, small, huge, NaN, inf, an empty string, a list where a scalar
goes, a wrong type, a misspelt key or option), alone and two or three together, on the
single-run and the ``-m`` paths. Each command line must either be refused (exit 2, one
line on stderr, no traceback, no run directory) or train its few hundred frames to exit 0;
exit 3 (diverged) is accepted only for an ordinary value, never for an extreme one.

The check runs in this process as the CLI runs it before anything starts
(``run_command`` with ``check_only``: compose, then ``validate``); accepted command lines
then train in-process (serial mode, one worker), and a sample of all of them goes through
the real CLI in a subprocess.

``python -m tests.fuzz --seed 0 --cases 400 --train 40 --cli 12`` (``nox -s fuzz``) prints
what it drew and every finding; ``tests/commands/test_fuzz.py`` runs one seed's worth in the
default session.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

GROUPS = ("algo", "network", "optimizer", "env", "setting")
# small, quick, quiet: each accepted command line trains a few hundred frames
BASE = ["total_frames=300", "eval.episodes=0", "log.progress=false", "log.tensorboard=false",
        "log.interval_seconds=0.2"]
# extreme values: a run that accepts one must train; diverging is no excuse for them
EXTREME = {"1000000000000", "1e30", "nan", "inf", "-inf"}
EDGES: dict[str, list[str]] = {
    "int": ["0", "-1", "1", "2", "1000000000000", "nan", "inf", "''", "[1,2]", "abc", "1.5"],
    "float": ["0", "-1", "1", "1e-8", "1e30", "nan", "inf", "-inf", "''", "[1]", "abc"],
    "bool": ["true", "false", "0", "1", "abc", "''", "[true]"],
    "str": ["''", "abc", "0", "[a]", "1.5"],
    "list": ["[]", "[1]", "[0.5,-1]", "abc", "1", "nan", "[[1]]", "['a']"],
}
# keys whose accepted values are not run: they say how long a run is or how many processes
# it starts (a huge total_frames is a long run, not a mistake)
NOT_RUN = ("total_frames", "lr_anneal_frames", "workers", "serial", "resume", "envs_per_worker",
           "stall_seconds", "max_worker_restarts", "eval.", "checkpoint.", "log.",
           "env.default_total_frames")
CHEAP_ENVS = ("classic/cartpole", "atari/pong", "mujoco/inverted_pendulum", "maze/small")


@dataclass
class Case:
    args: list[str]
    multirun: bool
    mutated: list[tuple[str, str]] = field(default_factory=list)  # (key, value)

    @property
    def extreme(self) -> bool:
        return any(value in EXTREME for _, value in self.mutated)

    @property
    def runnable(self) -> bool:
        return not self.multirun and not any(
            key.startswith(NOT_RUN) for key, _ in self.mutated)

    def line(self) -> str:
        return " ".join(["asyncrl", *(["-m"] if self.multirun else []), *self.args])


@dataclass
class Verdict:
    case: Case
    outcome: str          # refused, accepted, trained, diverged, finding
    detail: str = ""


def env_options() -> list[str]:
    from asyncrl.config.paths import config_dir

    root = Path(config_dir()) / "env"
    return sorted(str(p.relative_to(root))[: -len(".yaml")] for p in root.rglob("*.yaml")
                  if not p.name.startswith("_"))


def options(group: str) -> list[str]:
    from asyncrl.config.paths import config_dir

    if group == "env":
        return env_options()
    return sorted(p.stem for p in (Path(config_dir()) / group).glob("*.yaml")
                  if not p.stem.startswith("_"))


def fill(option: str) -> list[str]:
    """What an option needs besides itself to compose (env=gym needs an id)."""
    return {"env=gym": ["env.id=CartPole-v1"], "env=atari/any": ["env.game=pong"]}.get(option, [])


def kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int) or value is None:
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, ListConfig | list):
        return "list"
    return "str"


@cache
def keys_of(choice: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every leaf key of the config these overrides compose, with its type's name."""
    from asyncrl.config.compose import compose_config

    # the keys an option has, over the base groups: a setting's layer sets values, not keys,
    # and may set keys that some options lack (conf/domain), which is its own refusal
    cfg = compose_config([*(c for c in choice if not c.startswith("setting=")), "setting=base"])
    found: list[tuple[str, str]] = []

    def walk(node: Any, prefix: str) -> None:
        for key in node:
            path = f"{prefix}{key}"
            value = OmegaConf.select(node, str(key), throw_on_resolution_failure=False)
            if isinstance(value, DictConfig):
                if len(value):
                    walk(value, path + ".")
                continue
            if path.endswith((".name", ".family")) or path == "resume":
                continue  # what selects the option; covered by misspelt options
            found.append((path, kind(value)))

    walk(cfg, "")
    return found


def misspelt(word: str, rng: random.Random) -> str:
    at = rng.randrange(len(word))
    return word[:at] + word[at] + word[at:]  # one letter doubled


def draw_cases(seed: int, count: int, cover_all: bool = True) -> list[Case]:
    """First one case per option of each group and per key of each option's schema (the
    cover, unless ``cover_all`` is false), then ``count`` random ones; a seed gives the
    same list."""
    rng = random.Random(seed)
    cover: list[Case] = []
    if not cover_all:
        return [_case(rng, _random_choice(rng), mutations=rng.choice((1, 1, 2, 3)))
                for _ in range(count)]
    for group in GROUPS:
        for option in options(group):
            cover.append(_case(rng, {group: option}, mutations=0))
    seen: set[tuple[str, str]] = set()
    for group in GROUPS:
        for option in options(group):
            # the games of one family share their keys: one case per key per family
            family = option.split("/")[0] if group == "env" else option
            for key, _ in keys_of(tuple(_choice_args({group: option}))):
                owner = family if key.startswith(f"{group}.") else "run"  # lr, eval.*, ...
                if (owner, key) not in seen and (owner != "run" or group == "algo"):
                    seen.add((owner, key))
                    cover.append(_case(rng, {group: option}, mutations=1, key=key))
    randoms = [_case(rng, _random_choice(rng), mutations=rng.choice((1, 1, 2, 3)))
               for _ in range(count)]
    return cover + randoms


def _random_choice(rng: random.Random) -> dict[str, str]:
    choice: dict[str, str] = {}
    for group in GROUPS:
        if rng.random() < 0.5:
            pool = CHEAP_ENVS if group == "env" and rng.random() < 0.7 else options(group)
            choice[group] = rng.choice(pool)
    choice.setdefault("env", "classic/cartpole")
    return choice


def _choice_args(choice: dict[str, str]) -> list[str]:
    out = []
    for group, option in choice.items():
        out += [f"{group}={option}", *fill(f"{group}={option}")]
    return out


def _case(rng: random.Random, choice: dict[str, str], mutations: int,
          key: str | None = None) -> Case:
    multirun = rng.random() < 0.25
    args = [*_choice_args(choice), *BASE]
    keys = keys_of(tuple(_choice_args(choice)))
    case = Case(args=args, multirun=multirun)
    for m in range(mutations):
        picked = next((k for k in keys if k[0] == key), None) if m == 0 and key else None
        _mutate(rng, case, picked or rng.choice(keys), choice, misspell=picked is None)
    return case


def _mutate(rng: random.Random, case: Case, key_type: tuple[str, str],
            choice: dict[str, str], misspell: bool = True) -> None:
    key, type_name = key_type
    roll = rng.random() if misspell else 1.0  # the cover gives its key a value
    if roll < 0.06:  # a misspelt key
        case.args.append(f"{misspelt(key, rng)}=1")
        case.mutated.append((misspelt(key, rng), "1"))
        return
    if roll < 0.10 and choice:  # a misspelt option
        group = rng.choice(sorted(choice))
        wrong = misspelt(choice[group], rng)
        case.args = [a for a in case.args if not a.startswith(f"{group}=")]
        case.args.insert(0, f"{group}={wrong}")
        case.mutated.append((group, wrong))
        return
    value = rng.choice(EDGES[type_name])
    scalars = [v for v in EDGES[type_name] if not v.startswith(("[", "'"))]
    if case.multirun and rng.random() < 0.6 and scalars:  # a sweep over two values
        value = f"{rng.choice(scalars)},{rng.choice(scalars)}"
    case.args = [a for a in case.args if not a.startswith(f"{key}=")]
    case.args.append(f"{key}={value}")
    case.mutated.append((key, value))


def check(case: Case, workdir: Path) -> Verdict:
    """The CLI's own check before Hydra starts, in this process."""
    from asyncrl.commands.cli import run_command
    from asyncrl.errors import UserError

    where = (f"hydra.sweep.dir={workdir / 'sweep'}" if case.multirun
             else f"hydra.run.dir={workdir / 'run'}")
    argv = [*(["-m"] if case.multirun else []), *case.args, where]
    try:
        run_command(argv, check_only=True)
    except UserError as err:
        message = str(err)
        if "\n" in message or not message.strip():
            return Verdict(case, "finding", f"refusal is not one line: {message!r}")
        if any(workdir.iterdir()):
            return Verdict(case, "finding", "refused, but left files behind")
        return Verdict(case, "refused", message)
    except Exception as exc:  # the CLI would end in a traceback
        return Verdict(case, "finding", f"{type(exc).__name__}: {exc}".splitlines()[0])
    return Verdict(case, "accepted")


def train(verdict: Verdict, workdir: Path) -> Verdict:
    """An accepted single run, trained in this process (serial, one worker)."""
    from asyncrl.config.compose import compose_config
    from asyncrl.run.launcher import Launcher

    case = verdict.case
    cfg = compose_config([*case.args, "serial=true", "workers=1"], as_object=True)
    try:
        code = Launcher(cfg, workdir / "run").run()
    except Exception as exc:
        return Verdict(case, "finding", f"accepted, then {type(exc).__name__}: {exc}"[:300])
    return _judge_exit(case, code, _reason(workdir / "run"))


def _reason(run_dir: Path) -> str:
    from asyncrl.run_files.run_status import read_status

    return str((read_status(run_dir) or {}).get("reason", ""))


def _judge_exit(case: Case, code: int, reason: str) -> Verdict:
    if code == 0:
        return Verdict(case, "trained")
    if code == 3 and not case.extreme:
        return Verdict(case, "diverged", reason)
    return Verdict(case, "finding", f"accepted, then exit {code}: {reason}"[:300])


def through_cli(verdict: Verdict, workdir: Path, timeout: float = 240) -> Verdict:
    """The same command line through the real CLI: its exit, stderr and files agree."""
    from tests.conftest import run_cli

    case = verdict.case
    where = (f"hydra.sweep.dir={workdir / 'sweep'}" if case.multirun
             else f"hydra.run.dir={workdir / 'run'}")
    args = [*(["-m"] if case.multirun else []), *case.args, "workers=1", where]
    if not any(a.startswith("workers=") for a in case.args):
        args = [*args]
    else:
        args.remove("workers=1")
    try:
        result = run_cli(args, workdir, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Verdict(case, "finding", f"the CLI ran past {timeout:g} s")
    lines = result.stderr.strip().splitlines()
    if result.returncode == 2:
        if "Traceback" in result.stderr or len(lines) != 1 or not lines[0].startswith(
                "asyncrl: error: "):
            return Verdict(case, "finding", f"exit 2 without one error line: {lines[-3:]}")
        if (workdir / "run").exists() or (workdir / "sweep").exists():
            return Verdict(case, "finding", "exit 2, but a run directory was made")
        if verdict.outcome != "refused":
            return Verdict(case, "finding", f"the CLI refused what the check accepted: {lines}")
        return Verdict(case, "refused", lines[0])
    if verdict.outcome == "refused":
        return Verdict(case, "finding", f"the check refused it, the CLI exited "
                                        f"{result.returncode}")
    if "Traceback" in result.stderr:
        tail = result.stderr.strip().splitlines()[-1]
        return Verdict(case, "finding", f"exit {result.returncode} with a traceback: {tail}")
    return _judge_exit(case, result.returncode, result.stderr.strip()[-200:])


def fuzz(seed: int, cases: int, trains: int, clis: int, log: Any = None,
         cover_all: bool = True) -> dict[str, Any]:
    """Draw, check every case in-process, train ``trains`` accepted single runs in-process
    and send ``clis`` cases through the real CLI; what was drawn and every finding."""
    from asyncrl.commands.prepare import register_schemas

    register_schemas()
    started = time.monotonic()
    drawn = draw_cases(seed, cases, cover_all)
    rng = random.Random(seed + 1)
    verdicts: list[Verdict] = []
    with tempfile.TemporaryDirectory(prefix="asyncrl-fuzz-") as tmp:
        for i, case in enumerate(drawn):
            workdir = Path(tmp) / f"c{i}"
            workdir.mkdir()
            verdicts.append(check(case, workdir))
        accepted = [v for v in verdicts if v.outcome == "accepted" and v.case.runnable]
        for i, verdict in enumerate(rng.sample(accepted, min(trains, len(accepted)))):
            workdir = Path(tmp) / f"t{i}"
            workdir.mkdir()
            verdicts[verdicts.index(verdict)] = train(verdict, workdir)
        sample_from = [v for v in verdicts if v.outcome == "refused" or (
            v.outcome in ("accepted", "trained") and (v.case.runnable or v.case.multirun))]
        for i, verdict in enumerate(rng.sample(sample_from, min(clis, len(sample_from)))):
            workdir = Path(tmp) / f"cli{i}"
            workdir.mkdir()
            verdicts.append(through_cli(verdict, workdir))
    findings = [v for v in verdicts if v.outcome == "finding"]
    counts = Counter(v.outcome for v in verdicts)
    summary = {"seed": seed, "drawn": len(drawn), "multirun": sum(c.multirun for c in drawn),
               "counts": dict(counts), "trained_in_process": trains, "through_cli": clis,
               "findings": findings, "seconds": time.monotonic() - started}
    if log:
        print(f"fuzz seed {seed}: {len(drawn)} command lines ({summary['multirun']} with -m), "
              f"{dict(counts)}, {summary['seconds']:.0f} s", file=log)
        for finding in findings:
            print(f"FINDING: {finding.case.line()}\n  -> {finding.detail}", file=log)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz")
    parser.add_argument("--seed", type=int, nargs="+", default=[0])
    parser.add_argument("--cases", type=int, default=400, help="random cases after the cover")
    parser.add_argument("--train", type=int, default=40, help="accepted runs trained in-process")
    parser.add_argument("--cli", type=int, default=12, help="cases through the real CLI")
    args = parser.parse_args()
    found = 0
    for seed in args.seed:
        found += len(fuzz(seed, args.cases, args.train, args.cli, log=sys.stdout)["findings"])
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
