"""``asyncrl-report DIR [DIR ...]``: the paper's figures and tables from runs and sweeps.

    asyncrl-report multirun/2026-11-26/10-00-00               # one sweep
    asyncrl-report multirun/opt_* --out reports/optimizers    # several, overlaid by rank
    asyncrl-report multirun/pong_sweep --status               # progress of a sweep
    asyncrl-report outputs/pong_* --time-to -10 0 18           # frames and minutes to each
    asyncrl-report outputs/pong_* --curves pong.png --time-to 18  # each run's curve, a line each
    asyncrl-report outputs/pong_nq --time-to 0 18 --by-worker  # and each worker's own episodes
    asyncrl-report outputs/pong_nq --time-to 0 18 --by-epsilon # and those at each final epsilon
    asyncrl-report outputs/pong_nq --curves nq.png --by-epsilon # a line per final epsilon

Writes into ``--out`` (default: ``DIR/report``): ``report.md`` and the PNGs it shows.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from asyncrl.commands import run_tool
from asyncrl.errors import UserError
from asyncrl.report import build_report, find_runs, status_table
from asyncrl.report.runs import natural_order
from asyncrl.report.time_to_score import curves_figure, time_to_table

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="asyncrl-report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", type=Path, nargs="+", help="run or sweep directories")
    parser.add_argument("--out", type=Path, help="where to write (default: FIRST_DIR/report)")
    parser.add_argument("--top-k", type=int, default=5, help="runs averaged in the curves")
    parser.add_argument("--window", type=int, default=20,
                        help="episodes averaged into a run's final score")
    parser.add_argument("--reference", type=float,
                        help="score whose time-to-reach gives the worker speed-up")
    parser.add_argument("--status", action="store_true",
                        help="print each run's status instead of writing a report")
    parser.add_argument("--time-to", type=float, nargs="+", metavar="SCORE",
                        help="print when each run's mean of --window episodes first reached "
                             "each SCORE: frames, and minutes from the command")
    parser.add_argument("--by-worker", action="store_true",
                        help="with --time-to, a row per worker too: its own episodes (a "
                             "value-based worker plays at its own final epsilon)")
    parser.add_argument("--by-epsilon", action="store_true",
                        help="with --time-to, a row per final epsilon too: the episodes "
                             "played at it, by the workers (or, with "
                             "algo.epsilon_per_environment, the environments) that drew it; "
                             "with --curves, a line per final epsilon of each run")
    parser.add_argument("--curves", type=Path, metavar="PNG",
                        help="draw each run's mean of --window episodes against frames and "
                             "minutes from the command, a line per run (levels: --time-to)")
    args = parser.parse_args(argv)
    return run_tool("asyncrl-report", lambda: _report(args))


def _report(args: argparse.Namespace) -> int:
    missing = [d for d in args.dirs if not d.is_dir()]
    if missing:
        raise UserError(f"no such directory: {missing[0]}")
    if args.top_k < 1 or args.window < 1:
        raise UserError("--top-k and --window must be at least 1")
    if args.curves and args.curves.suffix.lower() not in FIGURE_SUFFIXES:
        raise UserError(f"--curves {args.curves}: name a {', '.join(FIGURE_SUFFIXES)} file")
    if args.by_worker and not args.time_to:
        raise UserError("--by-worker splits the --time-to table: give --time-to SCORE too")
    if args.by_epsilon and not (args.time_to or args.curves):
        raise UserError("--by-epsilon splits the --time-to table and the --curves lines: "
                        "give --time-to SCORE or --curves PNG too")
    if args.status:
        print(status_table(find_runs(args.dirs)))
        return 0
    if args.time_to or args.curves:
        # runs still going count too: how far one has got is what a user polls for
        found = sorted({f.parent for d in args.dirs for f in d.rglob("episodes.csv")},
                       key=natural_order)
        if not found:
            raise UserError(f"no episodes.csv under {', '.join(map(str, args.dirs))}")
        if args.curves:
            drawn = curves_figure(found, args.curves, args.window, args.time_to or (),
                                  args.by_epsilon)
            print(f"wrote {drawn}")
        if args.time_to:
            print(time_to_table(found, args.time_to, args.window, args.by_worker,
                                args.by_epsilon))
        return 0
    out = args.out or args.dirs[0] / "report"
    report = build_report(args.dirs, out, args.top_k, args.window, args.reference)
    print(f"wrote {report} and its figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
