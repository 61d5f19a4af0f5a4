"""``asyncrl-eval RUN_DIR``: play a saved checkpoint, print and save its scores.

    asyncrl-eval outputs/2026-11-25/10-00-00 --episodes 10 --video pong.gif
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

from asyncrl.commands import run_tool
from asyncrl.commands.saved_policy import load_policy, set_evaluation_epsilon
from asyncrl.envs import make_env
from asyncrl.errors import UserError
from asyncrl.learning.evaluate import eval_policy, evaluation_actors, max_eval_steps
from asyncrl.run_files.atomic import write_text_atomically
from asyncrl.run_files.checkpoint import checkpoint_source


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="asyncrl-eval", description="Evaluate a saved asyncrl checkpoint."
    )
    parser.add_argument("source", type=Path, help="a run directory or a checkpoint .pt file")
    parser.add_argument("--episodes", type=int, default=10, help="episodes to play (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the evaluation episodes")
    parser.add_argument("--epsilon", type=float, default=None,
                        help="a value-based run's exploration rate while evaluated (default: "
                             "the run's algo.eval_epsilon, 0.05)")
    parser.add_argument("--video", type=Path, default=None,
                        help="record the first episode to this .gif (or .mp4 with imageio-ffmpeg)")
    parser.add_argument("--output", type=Path, default=None,
                        help="write the scores as JSON here (default: RUN/evaluation.json; "
                             "for a checkpoint file, FILE.evaluation.json beside it)")
    return parser.parse_args(argv)


VIDEO_NEEDS = {".gif": None, ".mp4": "imageio_ffmpeg", ".webm": "imageio_ffmpeg"}


def check_outputs(args: argparse.Namespace, run_dir: Path,
                  checkpoint_file: Path | None) -> tuple[Path | None, Path]:
    """Where the video and the scores go, refused before any episode is played.

    A bare file name (``--video pong.gif``) goes into the run directory, not wherever the
    command happens to run (often a git checkout). The scores of a checkpoint file given by
    name go beside it, so that evaluating the checkpoints a run kept (``checkpoint.keep``)
    leaves one file each.
    """
    video = args.video
    if video is not None:
        suffix = video.suffix.lower()
        if suffix not in VIDEO_NEEDS:
            raise UserError(f"--video {video}: write a {' or '.join(VIDEO_NEEDS)} file")
        module = VIDEO_NEEDS[suffix]
        if module is not None and importlib.util.find_spec(module) is None:
            raise UserError(f"--video {video}: {suffix} needs {module.replace('_', '-')} "
                            f"(pip install {module.replace('_', '-')}); .gif needs nothing more")
        if video.parent == Path("."):
            video = run_dir / video
        _check_writable(video, "--video")
    out = args.output or (checkpoint_file.with_suffix(".evaluation.json") if checkpoint_file
                          else run_dir / "evaluation.json")
    _check_writable(out, "--output")
    return video, out


def _check_writable(path: Path, flag: str) -> None:
    if path.is_dir():
        raise UserError(f"{flag} {path}: is a directory; give a file name")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the video's folders are made; the first one that exists
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {path}: cannot write into {folder}")


def write_video(frames: list[Any], path: Path, fps: int = 30) -> None:
    import imageio.v3 as iio

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".gif":
        iio.imwrite(path, frames, duration=1000 / fps, loop=0)
    else:
        iio.imwrite(path, frames, fps=fps)


def evaluate(args: argparse.Namespace) -> int:
    if args.episodes < 1:
        raise UserError(f"--episodes {args.episodes}: need at least 1 episode")
    path, run_dir = checkpoint_source(args.source)
    video, out = check_outputs(args, run_dir, path if args.source.is_file() else None)
    torch.set_num_threads(1)
    cfg, model, saved = load_policy(path)
    epsilon = set_evaluation_epsilon(cfg, args.epsilon, "--epsilon ")
    env = make_env(cfg.env, render_mode="rgb_array" if video else None,
                   evaluation=True)
    policy = eval_policy(cfg, model, args.seed)
    actors = evaluation_actors(cfg, [env], args.seed, policy.algorithm, model)
    if video is not None:
        try:  # a renderer that is missing shows at the first frame: find out before playing
            env.render()
        except gym.error.DependencyNotInstalled as exc:
            env.close()
            raise UserError(f"--video: this environment cannot draw frames here: "
                            f"{str(exc).splitlines()[0]}") from None
    max_steps = max_eval_steps(cfg)
    scores, lengths = [], []
    for episode in range(args.episodes):
        frames: list[Any] | None = [] if video and episode == 0 else None
        actors.members[0].video = frames
        # seeded at the first reset, as a gymnasium loop of one's own would seed it
        # (asyncrl.load's agent scores the same)
        seed = args.seed if episode == 0 else None
        played = actors.play_episode(model, max_steps, seed)
        scores.append(played.score)
        lengths.append(played.frames)
        # the agent's frames (no-op starts not counted): one near the cap was cut, not ended
        print(f"episode {episode + 1}/{args.episodes}: score {played.score:g}, "
              f"{played.frames:,} frames")
        if frames is not None and video is not None:
            write_video(frames, video)
            print(f"video of episode 1: {video}")
    mean = sum(scores) / len(scores)
    played_at = "" if epsilon is None else f", epsilon {epsilon:g}"
    print(f"mean score over {len(scores)} episodes: {mean:g} "
          f"(checkpoint at T={saved.frames}{played_at})")
    report: dict[str, Any] = {"frames": saved.frames, "scores": scores, "mean": mean,
                              "episode_frames": lengths}
    if epsilon is not None:
        report["epsilon"] = epsilon
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(out, json.dumps(report, indent=2) + "\n")
    return 0


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    sys.exit(run_tool("asyncrl-eval", lambda: evaluate(args)))


if __name__ == "__main__":
    main()
