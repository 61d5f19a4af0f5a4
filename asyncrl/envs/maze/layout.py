"""Random mazes of rooms and corridors from labmaze (DeepMind Lab's own layout generator).

labmaze draws the text map: ``*`` wall, ``P`` spawn points, ``G`` object places, and a
variations layer that names each room by a letter. From it a Layout keeps the wall grid,
each wall's colour (its room's), the spawn cells, the apple cells, and the portal's cell.
"""

from __future__ import annotations

from dataclasses import dataclass

import labmaze
import numpy as np

from asyncrl.envs.maze.raycast import WALL_PALETTE


@dataclass(frozen=True)
class LevelSpec:
    """The maze generator's knobs for one level (sizes are odd: labmaze's grid)."""

    height: int
    width: int
    max_rooms: int
    room_min_size: int
    room_max_size: int
    apples_per_room: int


@dataclass
class Layout:
    walls: np.ndarray        # (rows, cols) uint8, 1 = wall
    wall_colour: np.ndarray  # (rows, cols, 3) uint8
    spawns: np.ndarray       # (n, 2) float cell centres (x, y) where the agent may appear
    apples: np.ndarray       # (m, 2) float cell centres of the apples
    portal: np.ndarray       # (2,) float cell centre of the portal
    text: str                # labmaze's map, for looking at


def generate(spec: LevelSpec, seed: int) -> Layout:
    """The maze of ``seed``: the same seed gives the same maze, apples and portal."""
    # one more object place per room than apples: one of them becomes the portal
    maze = labmaze.RandomMaze(
        height=spec.height, width=spec.width, max_rooms=spec.max_rooms,
        room_min_size=spec.room_min_size, room_max_size=spec.room_max_size,
        spawns_per_room=1, objects_per_room=spec.apples_per_room + 1,
        random_seed=int(seed) % (2**31 - 1), retry_count=1000,
    )
    grid = np.array([list(line) for line in str(maze.entity_layer).splitlines()])
    rooms = np.array([list(line) for line in str(maze.variations_layer).splitlines()])
    walls = (grid == "*").astype(np.uint8)
    cells = lambda token: np.argwhere(grid == token)[:, ::-1] + 0.5  # noqa: E731  (x, y)
    spawns, objects = cells("P"), cells("G")
    if len(spawns) == 0:  # a maze of corridors only: any floor cell will do
        spawns = cells(" ")
    rng = np.random.default_rng(seed)
    if len(objects) == 0:  # no rooms: place the portal in the corridors
        floor = cells(" ")
        objects = floor[rng.choice(len(floor), size=1)]
    portal_index = int(rng.integers(len(objects)))
    portal = objects[portal_index]
    apples = np.delete(objects, portal_index, axis=0)
    return Layout(walls=walls, wall_colour=_wall_colours(walls, rooms), spawns=spawns,
                  apples=apples, portal=portal, text=str(maze.entity_layer))


def _wall_colours(walls: np.ndarray, rooms: np.ndarray) -> np.ndarray:
    """Each wall takes the colour of a room next to it; corridor walls the first colour."""
    rows, cols = walls.shape
    colour = np.empty((rows, cols, 3), dtype=np.uint8)
    colour[:] = WALL_PALETTE[0]
    for r in range(rows):
        for c in range(cols):
            if not walls[r, c]:
                continue
            for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < rows and 0 <= cc < cols and rooms[rr, cc].isalpha():
                    index = 1 + (ord(rooms[rr, cc]) - ord("A")) % (len(WALL_PALETTE) - 1)
                    colour[r, c] = WALL_PALETTE[index]
                    break
    return colour
