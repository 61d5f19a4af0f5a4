"""``asyncrl-eval RUN_DIR``: play a saved checkpoint, print and save its scores.

    asyncrl-eval outputs/2026-11-25/10-00-00 --episodes 10 --video pong.gif
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from asyncrl.evaluate import evaluate
from asyncrl.tools import run_tool


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="asyncrl-eval", description="Evaluate a saved asyncrl checkpoint."
    )
    parser.add_argument("source", type=Path, help="a run directory or a checkpoint .pt file")
    parser.add_argument("--episodes", type=int, default=10, help="episodes to play (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the evaluation episodes")
    parser.add_argument("--video", type=Path, default=None,
                        help="record the first episode to this .gif (or .mp4 with imageio-ffmpeg)")
    parser.add_argument("--output", type=Path, default=None,
                        help="write the scores as JSON here (default: RUN/evaluation.json)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    sys.exit(run_tool("asyncrl-eval", lambda: evaluate(args)))


if __name__ == "__main__":
    main()
