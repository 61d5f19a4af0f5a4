"""A first-person view of a grid maze, drawn column by column (numba-compiled).

Each screen column casts one ray through the grid (a DDA walk, cell edge to cell edge) and
draws ceiling, the wall it hits, and floor; apples and the portal are camera-facing sprites
drawn over the walls where they are nearer than the wall in that column. Coordinates are
in cells: x along columns, y along rows (pointing down the map), angle 0 facing +x,
increasing clockwise on the map.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

CEILING = np.array([150, 170, 190], dtype=np.uint8)
FLOOR = np.array([110, 90, 70], dtype=np.uint8)
APPLE = np.array([220, 40, 40], dtype=np.uint8)
PORTAL = np.array([170, 60, 230], dtype=np.uint8)
# the walls of each room get their own colour, as DeepMind Lab gives rooms their own texture
WALL_PALETTE = np.array([
    [200, 200, 200], [90, 140, 200], [210, 180, 80], [90, 180, 120],
    [200, 120, 160], [120, 200, 200], [170, 130, 100], [140, 140, 220],
], dtype=np.uint8)

APPLE_KIND, PORTAL_KIND = 0, 1
APPLE_SIZE, PORTAL_SIZE = 0.35, 0.9  # of a wall's height


@njit(cache=True)
def render_view(walls: np.ndarray, wall_colour: np.ndarray, x: float, y: float, angle: float,
                sprite_x: np.ndarray, sprite_y: np.ndarray, sprite_kind: np.ndarray,
                sprite_on: np.ndarray, fov_tan: float, out: np.ndarray) -> None:
    """Draw into ``out`` (H, W, 3) uint8; ``walls`` (rows, cols) is nonzero for a wall and
    ``wall_colour`` (rows, cols, 3) gives each wall cell its colour."""
    height, width = out.shape[0], out.shape[1]
    half = height / 2.0
    dir_x, dir_y = math.cos(angle), math.sin(angle)
    plane_x, plane_y = -dir_y * fov_tan, dir_x * fov_tan
    depth = np.empty(width)
    for col in range(width):
        cam = 2.0 * (col + 0.5) / width - 1.0
        ray_x = dir_x + plane_x * cam
        ray_y = dir_y + plane_y * cam
        cell_x, cell_y = int(x), int(y)
        delta_x = abs(1.0 / ray_x) if ray_x != 0.0 else 1e30
        delta_y = abs(1.0 / ray_y) if ray_y != 0.0 else 1e30
        if ray_x < 0:
            step_x, side_x = -1, (x - cell_x) * delta_x
        else:
            step_x, side_x = 1, (cell_x + 1.0 - x) * delta_x
        if ray_y < 0:
            step_y, side_y = -1, (y - cell_y) * delta_y
        else:
            step_y, side_y = 1, (cell_y + 1.0 - y) * delta_y
        side = 0
        while True:
            if side_x < side_y:
                side_x += delta_x
                cell_x += step_x
                side = 0
            else:
                side_y += delta_y
                cell_y += step_y
                side = 1
            if (cell_y < 0 or cell_x < 0 or cell_y >= walls.shape[0]
                    or cell_x >= walls.shape[1] or walls[cell_y, cell_x]):
                break
        distance = (side_x - delta_x) if side == 0 else (side_y - delta_y)
        distance = max(distance, 1e-3)
        depth[col] = distance
        line = height / distance
        top = max(0, int(half - line / 2.0))
        bottom = min(height, int(half + line / 2.0))
        # walls facing north/south darker than east/west, and everything dimmer with distance
        light = (0.75 if side == 1 else 1.0) / (1.0 + 0.12 * distance)
        cy = min(max(cell_y, 0), walls.shape[0] - 1)
        cx = min(max(cell_x, 0), walls.shape[1] - 1)
        for row in range(top):
            for ch in range(3):
                out[row, col, ch] = CEILING[ch]
        for row in range(top, bottom):
            for ch in range(3):
                out[row, col, ch] = np.uint8(wall_colour[cy, cx, ch] * light)
        for row in range(bottom, height):
            # rows near the horizon see distant floor: darker there, a cue for motion
            floor_light = 0.55 + 0.45 * (row - half) / half
            for ch in range(3):
                out[row, col, ch] = np.uint8(FLOOR[ch] * floor_light)

    order = np.argsort(-((sprite_x - x) ** 2 + (sprite_y - y) ** 2))  # far to near
    inv_det = 1.0 / (plane_x * dir_y - dir_x * plane_y)
    for k in order:
        if not sprite_on[k]:
            continue
        rel_x, rel_y = sprite_x[k] - x, sprite_y[k] - y
        across = inv_det * (dir_y * rel_x - dir_x * rel_y)
        ahead = inv_det * (-plane_y * rel_x + plane_x * rel_y)
        if ahead <= 0.1:
            continue
        centre_col = (width / 2.0) * (1.0 + across / ahead)
        wall_px = height / ahead
        apple = sprite_kind[k] == APPLE_KIND
        size = wall_px * (APPLE_SIZE if apple else PORTAL_SIZE)
        half_w = size / 2.0 if apple else size / 4.0
        # sprites stand on the floor: their bottom edge is the floor line at their distance
        bottom_row = half + wall_px / 2.0
        centre_row = bottom_row - size / 2.0
        colour = APPLE if apple else PORTAL
        col0 = max(0, int(centre_col - half_w))
        col1 = min(width, int(centre_col + half_w) + 1)
        row0 = max(0, int(centre_row - size / 2.0))
        row1 = min(height, int(bottom_row) + 1)
        for col in range(col0, col1):
            if ahead >= depth[col]:
                continue
            u = (col + 0.5 - centre_col) / half_w
            for row in range(row0, row1):
                v = (row + 0.5 - centre_row) / (size / 2.0)
                r2 = u * u + v * v
                # an apple is a disc; the portal is an upright ring with a bright rim
                if apple and r2 <= 1.0:
                    shade = 1.0 - 0.35 * r2
                elif not apple and 0.45 <= r2 <= 1.0:
                    shade = 1.0
                elif not apple and r2 < 0.45:
                    shade = 0.45
                else:
                    continue
                for ch in range(3):
                    out[row, col, ch] = np.uint8(colour[ch] * shade)
