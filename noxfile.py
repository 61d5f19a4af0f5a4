"""Sessions: tests (default, what CI runs, after lint), slow, faults, fuzz, soak, torcs,
lint, typecheck, smoke, bench.

torch is pinned to the CPU build these machines carry; an unpinned torch would pull a
multi-GB CUDA build.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True
nox.options.default_venv_backend = "venv"

TORCH = "torch==2.13.0"


def install(session: nox.Session, *extras: str) -> None:
    session.install(TORCH)
    target = f".[{','.join(extras)}]" if extras else "."
    session.install(target)


@nox.session
def tests(session: nox.Session) -> None:
    """Unit, numerical, config, environment and end-to-end CLI tests (not the slow ones);
    with the optional extras their tests use (an Optuna study, W&B offline)."""
    install(session, "test", "tune", "wandb")
    session.run("pytest", *session.posargs)


@nox.session(default=False)
def slow(session: nox.Session) -> None:
    """Learning tests and long end-to-end runs (marked slow)."""
    install(session, "test")
    session.run("pytest", "-m", "slow", *session.posargs)


@nox.session(default=False)
def faults(session: nox.Session) -> None:
    """Runs hit at random moments (launcher, worker or evaluator killed, SIGTERM, Ctrl-C, a
    full disk, damaged checkpoints, a stopped sweep), then resumed: whole files, no frame
    logged twice, status files that say what happened."""
    install(session, "test")
    session.run("pytest", "-m", "faults", *session.posargs)


@nox.session(default=False)
def fuzz(session: nox.Session) -> None:
    """Seeded random command lines (every option, every key, edge-case values, alone and
    together, single runs and -m): each refused in one line with exit 2 or trained to its
    end. `nox -s fuzz -- --seed 3 4 --cases 800` for more; docs/reliability.md."""
    install(session, "test")
    session.run("python", "-m", "tests.fuzz", *session.posargs)


@nox.session(default=False)
def soak(session: nox.Session) -> None:
    """30 minutes of Pong with a random kill every ~3 minutes (a worker, the evaluator, or the
    launcher and then a resume); prints T reached, rows twice or missing, memory. Not in CI.
    `nox -s soak -- --minutes 5` for a shorter one."""
    install(session)
    session.run("python", "-m", "tests.soak", *session.posargs)


@nox.session(default=False)
def torcs(session: nox.Session) -> None:
    """Set TORCS up (Debian's package, its headers, our driver module; needs root the first
    time), then the tests that race on it (marked torcs)."""
    install(session, "test")
    session.run("asyncrl-torcs", "install")
    session.run("pytest", "-m", "torcs", *session.posargs)


@nox.session(default=False)
def lint(session: nox.Session) -> None:
    """ruff over the Python, yamllint over the configs, import-linter over the layers
    (the contracts in pyproject.toml, docs/architecture.md)."""
    session.install("ruff>=0.5", "yamllint>=1.35", "import-linter>=2.1")
    session.run("ruff", "check", "asyncrl", "hydra_plugins", "tests", "noxfile.py")
    session.run("yamllint", "--strict", "conf")
    session.run("lint-imports", "--no-cache")


@nox.session(default=False)
def typecheck(session: nox.Session) -> None:
    """mypy over the package."""
    install(session, "typecheck")
    session.run("mypy")


@nox.session(default=False)
def smoke(session: nox.Session) -> None:
    """The real CLI: A3C on Pong, 2 worker processes, a few thousand frames."""
    install(session)
    session.run("asyncrl", "workers=2", "total_frames=8000", "eval.interval_frames=4000",
                "eval.episodes=1", "env.max_episode_frames=2000", "log.progress=false",
                "hydra.run.dir=outputs/smoke", *session.posargs)


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Training frames/s of each algorithm against raw env frames/s, 1 and 2 workers, A3C
    with 1, 4, 8 and 16 environments per worker, SB3 A2C in the same run, and
    the seconds to the first frame -> docs/benchmarks.md (`-- --sections learning`: the
    minutes to a Pong score, about an hour; `env=atari/<game>` times another game)."""
    install(session, "bench")
    # nox would follow a Ctrl-C with SIGTERM and SIGKILL within a second: the bench stops
    # its running setting with a checkpoint and writes the rows so far, which takes longer
    session.run("python", "-m", "asyncrl.commands.bench", *session.posargs,
                interrupt_timeout=None)
