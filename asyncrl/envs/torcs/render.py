"""The agent's 84x84 RGB view, drawn from TORCS's own track geometry and car positions.

TORCS's renderer needs its GUI (menus, a window, an X server) and a patch to read frames
back, and without a GPU it draws a few dozen frames a second. Our driver module instead
sends the track's borders once and every car's pose each step, and this module draws a
view of them from behind the car: grass and sky, the road ahead in alternating bands (so that
motion shows on a straight), red and white kerbs on both edges, and every other car as a
box (ours red, the others blue). Far things are drawn first and nearer ones over them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

SKY = (110, 160, 220)
GRASS = (60, 125, 50)
ROAD = ((105, 105, 110), (90, 90, 95))
KERB = ((200, 40, 40), (235, 235, 235))
CAR = (30, 60, 200)
CAR_TOP = (70, 100, 235)
OWN_CAR = (200, 30, 30)
OWN_CAR_TOP = (240, 80, 60)

# a chase camera: from a driver's eyes a 15 m road fills the whole lower half of an 84x84
# view and the bends ahead are a few pixels high; from behind and above they are visible
CAMERA_BEHIND = 6.0     # metres behind the car's centre
CAMERA_HEIGHT = 3.5     # metres above it
CAMERA_PITCH = math.radians(12.0)
FIELD_OF_VIEW = math.radians(80.0)
NEAR = 0.3              # metres: what is nearer than this is clipped
VIEW_AHEAD = 90         # track samples drawn ahead of the car (~180 m)
VIEW_BEHIND = 3
KERB_WIDTH = 1.0
BAND_SAMPLES = 4        # road shade changes every 4 samples (~8 m)
CAR_HEIGHT = 1.2
MAX_CAR_DISTANCE = 150.0


@njit(cache=True)
def _fill(screen, us, vs, n, r, g, b):
    """Scan-line fill of a convex polygon given in pixel coordinates."""
    height, width = screen.shape[0], screen.shape[1]
    top, bottom = 1e9, -1e9
    for i in range(n):
        top = min(top, vs[i])
        bottom = max(bottom, vs[i])
    first = max(0, int(math.ceil(top - 0.5)))
    last = min(height - 1, int(math.ceil(bottom - 0.5)) - 1)
    for row in range(first, last + 1):
        yc = row + 0.5
        left, right = 1e9, -1e9
        for i in range(n):
            j = (i + 1) % n
            y0, y1 = vs[i], vs[j]
            if (y0 <= yc < y1) or (y1 <= yc < y0):
                x = us[i] + (yc - y0) / (y1 - y0) * (us[j] - us[i])
                left = min(left, x)
                right = max(right, x)
        c0 = max(0, int(math.ceil(left - 0.5)))
        c1 = min(width - 1, int(math.ceil(right - 0.5)) - 1)
        for col in range(c0, c1 + 1):
            screen[row, col, 0] = r
            screen[row, col, 1] = g
            screen[row, col, 2] = b


@njit(cache=True)
def _draw_polygon(screen, camera, basis, focal, points, r, g, b, scratch):
    """Clip a convex world-space polygon at the near plane, project it and fill it.

    ``scratch`` (8, n + 2) is working memory the caller allocates once per frame: a frame
    draws a few hundred polygons, and allocating per polygon cost a third of the frame."""
    n = points.shape[0]
    xs, ys, zs, cx, cy, cz, us, vs = (scratch[0], scratch[1], scratch[2], scratch[3],
                                      scratch[4], scratch[5], scratch[6], scratch[7])
    for i in range(n):
        dx = points[i, 0] - camera[0]
        dy = points[i, 1] - camera[1]
        dz = points[i, 2] - camera[2]
        cx[i] = dx * basis[0, 0] + dy * basis[0, 1] + dz * basis[0, 2]
        cy[i] = dx * basis[1, 0] + dy * basis[1, 1] + dz * basis[1, 2]
        cz[i] = dx * basis[2, 0] + dy * basis[2, 1] + dz * basis[2, 2]
    m = 0
    for i in range(n):
        j = (i + 1) % n
        inside_i = cz[i] >= NEAR
        inside_j = cz[j] >= NEAR
        if inside_i:
            xs[m], ys[m], zs[m] = cx[i], cy[i], cz[i]
            m += 1
        if inside_i != inside_j:
            t = (NEAR - cz[i]) / (cz[j] - cz[i])
            xs[m] = cx[i] + t * (cx[j] - cx[i])
            ys[m] = cy[i] + t * (cy[j] - cy[i])
            zs[m] = NEAR
            m += 1
    if m < 3:
        return
    height, width = screen.shape[0], screen.shape[1]
    for i in range(m):
        us[i] = width / 2 + focal * xs[i] / zs[i]
        vs[i] = height / 2 - focal * ys[i] / zs[i]
    _fill(screen, us, vs, m, r, g, b)


@njit(cache=True)
def _draw_box(screen, camera, basis, focal, x, y, z, yaw, length, width, side_colour,
              top_colour, scratch):
    """A car as a box, faces turned away from the camera left out."""
    c, s = math.cos(yaw), math.sin(yaw)
    hl, hw = length / 2, width / 2
    corners = np.empty((8, 3))
    k = 0
    for up in (0, 1):
        for fx, fy in ((1.0, 1.0), (1.0, -1.0), (-1.0, -1.0), (-1.0, 1.0)):
            corners[k, 0] = x + fx * hl * c - fy * hw * s
            corners[k, 1] = y + fx * hl * s + fy * hw * c
            corners[k, 2] = z - 0.4 + up * CAR_HEIGHT
            k += 1
    face = np.empty((4, 3))
    for side in range(4):
        a, b = side, (side + 1) % 4
        # outward normal of this side, from the box's centre to the side's middle
        nx = (corners[a, 0] + corners[b, 0]) / 2 - x
        ny = (corners[a, 1] + corners[b, 1]) / 2 - y
        if nx * (camera[0] - x) + ny * (camera[1] - y) <= 0:
            continue
        face[0] = corners[a]
        face[1] = corners[b]
        face[2] = corners[b + 4]
        face[3] = corners[a + 4]
        _draw_polygon(screen, camera, basis, focal, face, side_colour[0], side_colour[1],
                      side_colour[2], scratch)
    if camera[2] > z - 0.4 + CAR_HEIGHT:
        _draw_polygon(screen, camera, basis, focal, corners[4:], top_colour[0], top_colour[1],
                      top_colour[2], scratch)


@njit(cache=True)
def render_view(screen, left, right, nearest, x, y, z, yaw, length, width, opponents):
    """Draw the view behind a car at (x, y, z) heading ``yaw`` into ``screen`` (H, W, 3).

    ``left``/``right`` are the track's borders, ``nearest`` the sample nearest the car,
    ``length``/``width`` the car's size, ``opponents`` rows of (x, y, z, yaw, length, width).
    """
    height, columns = screen.shape[0], screen.shape[1]
    focal = (columns / 2) / math.tan(FIELD_OF_VIEW / 2)
    cp, sp = math.cos(CAMERA_PITCH), math.sin(CAMERA_PITCH)
    cyaw, syaw = math.cos(yaw), math.sin(yaw)
    basis = np.empty((3, 3))
    basis[0, 0], basis[0, 1], basis[0, 2] = syaw, -cyaw, 0.0            # right
    basis[1, 0], basis[1, 1], basis[1, 2] = cyaw * sp, syaw * sp, cp    # up
    basis[2, 0], basis[2, 1], basis[2, 2] = cyaw * cp, syaw * cp, -sp   # forward
    camera = np.array((x - CAMERA_BEHIND * cyaw, y - CAMERA_BEHIND * syaw, z + CAMERA_HEIGHT))
    horizon = height / 2 - focal * math.tan(CAMERA_PITCH)
    for row in range(height):
        colour = SKY if row + 0.5 < horizon else GRASS
        for col in range(columns):
            screen[row, col, 0] = colour[0]
            screen[row, col, 1] = colour[1]
            screen[row, col, 2] = colour[2]
    n = left.shape[0]
    quad = np.empty((4, 3))
    scratch = np.empty((8, 6))  # polygons here have 4 corners, 6 after near-plane clipping
    for step in range(VIEW_AHEAD, -VIEW_BEHIND - 1, -1):
        i = (nearest + step) % n
        j = (i + 1) % n
        for side in range(2):
            # the kerb: a strip just outside this border
            a = left if side == 0 else right
            o = right if side == 0 else left
            for k, idx in ((0, i), (1, j)):
                dx, dy = a[idx, 0] - o[idx, 0], a[idx, 1] - o[idx, 1]
                norm = math.sqrt(dx * dx + dy * dy) + 1e-9
                quad[k, 0] = a[idx, 0]
                quad[k, 1] = a[idx, 1]
                quad[k, 2] = a[idx, 2]
                quad[3 - k, 0] = a[idx, 0] + KERB_WIDTH * dx / norm
                quad[3 - k, 1] = a[idx, 1] + KERB_WIDTH * dy / norm
                quad[3 - k, 2] = a[idx, 2]
            kerb = KERB[i % 2]
            _draw_polygon(screen, camera, basis, focal, quad, kerb[0], kerb[1], kerb[2],
                          scratch)
        quad[0] = left[i]
        quad[1] = right[i]
        quad[2] = right[j]
        quad[3] = left[j]
        shade = ROAD[(i // BAND_SAMPLES) % 2]
        _draw_polygon(screen, camera, basis, focal, quad, shade[0], shade[1], shade[2],
                      scratch)
    # other cars, the farthest first
    count = opponents.shape[0]
    distance = np.empty(count)
    for k in range(count):
        distance[k] = math.hypot(opponents[k, 0] - x, opponents[k, 1] - y)
    for k in np.argsort(distance)[::-1]:
        if distance[k] > MAX_CAR_DISTANCE:
            continue
        _draw_box(screen, camera, basis, focal, opponents[k, 0], opponents[k, 1],
                  opponents[k, 2], opponents[k, 3], opponents[k, 4], opponents[k, 5], CAR,
                  CAR_TOP, scratch)
    _draw_box(screen, camera, basis, focal, x, y, z, yaw, length, width, OWN_CAR, OWN_CAR_TOP,
              scratch)
