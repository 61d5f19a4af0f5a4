"""Looking at a maze: the agent's view beside a top-down map of its path, as frames or a GIF.

    asyncrl-maze --level small --seed 3 --steps 300 --out maze.gif   # a random agent
    asyncrl-maze --level small --random-score 20                      # its mean score
    asyncrl-eval RUN_DIR --episodes 5 --video maze.gif                # a trained one
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from asyncrl.envs.maze.raycast import APPLE, PORTAL

PANEL = 336  # pixels of each half of the picture
PATH_COLOUR = (250, 210, 40)
AGENT_COLOUR = (255, 255, 255)


def top_down(env: Any, size: int = PANEL) -> np.ndarray:
    """The maze from above: walls in their colours, apples, portal, the path, the agent."""
    layout = env.layout
    rows, cols = layout.walls.shape
    cell = size // max(rows, cols)
    image = np.full((size, size, 3), 40, dtype=np.uint8)
    wall_cells = np.argwhere(layout.walls)
    for r, c in wall_cells:
        image[r * cell:(r + 1) * cell, c * cell:(c + 1) * cell] = layout.wall_colour[r, c]

    def pixel(x: float, y: float) -> tuple[int, int]:
        return int(x * cell), int(y * cell)

    for (x, y), on in zip(layout.apples, env.apple_on, strict=True):
        if on:
            cv2.circle(image, pixel(x, y), max(2, cell // 5), tuple(int(v) for v in APPLE), -1)
    cv2.circle(image, pixel(*layout.portal), max(3, cell // 3), tuple(int(v) for v in PORTAL), 2)
    points = np.array([pixel(x, y) for x, y in env.path], dtype=np.int32)
    if len(points) > 1:
        cv2.polylines(image, [points.reshape(-1, 1, 2)], False, PATH_COLOUR, 1)
    head = pixel(env.x, env.y)
    tip = pixel(env.x + 0.5 * math.cos(env.angle), env.y + 0.5 * math.sin(env.angle))
    cv2.circle(image, head, max(2, cell // 6), AGENT_COLOUR, -1)
    cv2.line(image, head, tip, AGENT_COLOUR, 1)
    return image


def side_by_side(env: Any) -> np.ndarray:
    view = cv2.resize(env._screen, (PANEL, PANEL), interpolation=cv2.INTER_NEAREST)
    return np.concatenate([view, top_down(env)], axis=1)


def random_scores(env: Any, episodes: int, seed: int) -> list[float]:
    """Whole-episode scores of uniformly random actions."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    scores = []
    for _ in range(episodes):
        env.reset()
        score, over = 0.0, False
        while not over:
            _, reward, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            score += float(reward)
            over = terminated or truncated
        scores.append(score)
    return scores
