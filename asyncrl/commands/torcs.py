"""`asyncrl-torcs`: set TORCS up, check that a race runs, measure the reference driver.

    asyncrl-torcs install            # Debian's TORCS + headers, our driver module built
    asyncrl-torcs check              # a short race with the scripted driver: steps/s
    asyncrl-torcs reference [SETTING ...] [--episodes K]   # the scripted driver's scores
"""

from __future__ import annotations

import argparse
import sys
import time

from asyncrl.commands import run_tool
from asyncrl.commands.prepare import register_schemas
from asyncrl.config.checks import validate
from asyncrl.config.compose import compose_config
from asyncrl.envs.torcs.env import RaceStartFailed
from asyncrl.errors import UserError

SETTINGS = ("slow_car", "slow_car_bots", "fast_car", "fast_car_bots")


def _env(setting: str, continuous: bool = True):  # noqa: ANN202 - a TorcsEnv
    from asyncrl.envs.torcs.settings import make_torcs

    register_schemas()
    network = "network=gaussian" if continuous else "network=lstm"
    cfg = compose_config([f"env=torcs/{setting}", "algo=a3c", network], as_object=True)
    validate(cfg)
    return make_torcs(cfg.env)


def check(setting: str, steps: int) -> None:
    from asyncrl.envs.torcs.scripted import ScriptedDriver

    env = _env(setting)
    try:
        start = time.perf_counter()
        env.reset()
        started = time.perf_counter() - start
        driver = ScriptedDriver(env)
        first = env._observe().copy()
        distance, taken, begin = 0.0, 0, time.perf_counter()
        for _ in range(steps):
            obs, reward, terminated, truncated, info = env.step(driver.act())
            distance += reward
            taken += 1
            if terminated or truncated:
                break
        rate = taken / (time.perf_counter() - begin)
        changed = float((obs != first).mean())
        print(f"torcs/{setting}: race started in {started:.2f} s; {taken} agent steps at "
              f"{rate:,.0f} steps/s ({rate * env.frame_skip:,.0f} frames/s), {distance:.0f} m "
              f"driven, speed {info['speed']:.1f} m/s, {info['opponents']} opponents, "
              f"{changed:.0%} of the view changed")
    finally:
        env.close()


def reference(settings: list[str], episodes: int) -> None:
    from asyncrl.envs.torcs.scripted import ScriptedDriver, drive_episode

    print("setting,episodes,mean_score,laps,end_reason")
    for setting in settings:
        env = _env(setting)
        try:
            results = [drive_episode(env, ScriptedDriver(env)) for _ in range(episodes)]
        finally:
            env.close()
        mean = sum(score for score, _ in results) / len(results)
        info = results[-1][1]
        print(f"{setting},{episodes},{mean:.1f},{info['laps']},{info['end_reason']}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="asyncrl-torcs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    inst = sub.add_parser("install", help="install TORCS and build asyncrl's driver module")
    inst.add_argument("--rebuild", action="store_true", help="fetch the headers again")
    chk = sub.add_parser("check", help="run a short race with the scripted driver")
    chk.add_argument("--setting", default="slow_car_bots", choices=SETTINGS)
    chk.add_argument("--steps", type=int, default=300)
    ref = sub.add_parser("reference", help="the scripted driver's score per setting")
    ref.add_argument("settings", nargs="*", default=list(SETTINGS))
    ref.add_argument("--episodes", type=int, default=1)
    args = parser.parse_args(argv)
    sys.exit(run_tool("asyncrl-torcs", lambda: _run(args)))


def _run(args: argparse.Namespace) -> int:
    try:
        if args.command == "install":
            from asyncrl.envs.torcs.install import install, log

            paths = install(rebuild=args.rebuild)
            log(f"ready: TORCS in {paths.system}, driver module {paths.driver}")
            check("slow_car_bots", 100)
        elif args.command == "check":
            check(args.setting, args.steps)
        else:
            unknown = [s for s in args.settings if s not in SETTINGS]
            if unknown:
                raise UserError(f"unknown setting(s) {unknown}: choose from {', '.join(SETTINGS)}")
            reference(args.settings, args.episodes)
    except RaceStartFailed as exc:  # what a check is for: say it in a line, not a traceback
        print(f"asyncrl-torcs: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    main()
