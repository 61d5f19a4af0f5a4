"""``asyncrl-maze``: a random agent's episode in a maze as a GIF and its map, or a random
agent's mean score over the evaluation mazes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from asyncrl.commands import run_tool
from asyncrl.commands.prepare import register_schemas
from asyncrl.config.compose import compose_config
from asyncrl.envs import make_env
from asyncrl.envs.maze.view import random_scores, top_down


def main(argv: list[str] | None = None) -> int:
    return run_tool("asyncrl-maze", lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="asyncrl-maze",
                                     description="Render a random agent's episode in a maze.")
    parser.add_argument("--level", default="small", help="a config under conf/env/maze/")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=300, help="agent steps to record")
    parser.add_argument("--out", default="maze.gif", help=".gif or .mp4 for the episode; "
                        "a .png of the final map is written beside it")
    parser.add_argument("--random-score", type=int, metavar="EPISODES", default=0,
                        help="instead of a GIF: a uniformly random agent's mean score over "
                        "this many whole episodes of the evaluation mazes (the reference a "
                        "trained agent should beat)")
    args = parser.parse_args(argv)
    import imageio.v2 as imageio

    register_schemas()
    cfg = compose_config([f"env=maze/{args.level}"], as_object=True)
    if args.random_score > 0:
        scores = random_scores(make_env(cfg.env, evaluation=True), args.random_score,
                               args.seed)
        print(f"maze/{args.level}, random agent, {len(scores)} evaluation episodes: mean "
              f"{np.mean(scores):.2f}, std {np.std(scores):.2f}")
        return 0
    env = make_env(cfg.env, render_mode="rgb_array")
    env.reset(seed=args.seed)
    frames: list[Any] = [env.render()]
    rng = np.random.default_rng(args.seed)
    score = 0.0
    actions = int(env.action_space.n)  # type: ignore[attr-defined]
    for _ in range(args.steps):
        _, reward, terminated, truncated, _ = env.step(int(rng.integers(actions)))
        score += float(reward)
        frames.append(env.render())
        if terminated or truncated:
            break
    out = Path(args.out)
    imageio.mimsave(out, frames, duration=1000 / 15)
    imageio.imwrite(out.with_suffix(".png"), top_down(env))
    print(f"{out}: {len(frames) - 1} steps, score {score:g}; map {out.with_suffix('.png')}")
    return 0



if __name__ == "__main__":
    sys.exit(main())
