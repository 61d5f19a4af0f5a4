"""A warning, once per run, when a feed-forward image network has stopped reading the screen.

Too large a step can silence every unit of a ReLU layer at once. From then on the policy and
the value are the same on every screen, no gradient reaches the silent layer, and the score
stays at random play's: on Breakout, the preset's lr with 16 workers did so from the first
million frames to 20M (docs/learning.md). The probe finds it after the run; this watch finds
it while the run goes, from two metrics A3C's workers log: ``value_spread`` and
``policy_spread``, how much V(s) and the policy's logits differ across each update's states.

Read on 192 segments of random play through the Atari network (5 states and their bootstrap
state each, or 16 such segments together, as at 16 environments per worker; the probe's
``collect_screens`` and ``output_spreads`` on each run's checkpoint, on the 2-core AMD EPYC
on 2026-11-30), the means were:

| network | V(s) | logits |
| --- | ---: | ---: |
| at T = 0 (Pong, Breakout) | 3.4e-3 to 6.0e-3 | 3.5e-3 to 6.2e-3 |
| learning (Pong lr 1e-3 at 1M frames, Breakout lr 3e-4 at 6.8M) | 5.0e-2 or more | 7.3e-3 or more |
| blind (Pong lr 2e-3 at 1M, Breakout with 16 workers at 20M) | 2e-9 to 8.8e-5 | 8e-10 to 2.2e-5 |

So the threshold sits between the blind and the untrained, for both. Logged by the workers
of real runs (2 workers on the 2-core machine, 1M frames, means per 100k frames): Pong with
the preset never went below 1.7e-2 (V) and 5.2e-3 (policy); Breakout at the defaults (lr
7e-3, which sat at random play's score for 5.8M frames in docs/learning.md) fell to
8.9e-5-2.7e-4 and 2.0e-4-4.3e-4 from 0.3M frames on, and this watch, given that run's
readings in the order they came, speaks at 0.56M. Pong
with the preset and 16 workers on the 2 cores came closest without it: means of 6.2e-4 and
1.8e-4 at their lowest (0.1-0.4M frames), 58 of its 1,556 readings below both but at most 25
in a row, and it went on to learn.

Both must be below it: V alone can be the same on every state of a healthy network, where
the reward follows the action and not the state. A recurrent network's state moves its
outputs when the torso is blind, and a small state vector's outputs were not read, so the
watch reads feed-forward convolutional networks only.
"""

from __future__ import annotations

from typing import Any

from asyncrl.nets.torsos import ConvTorso

BLIND_SPREAD = 3e-4
# how long the spreads must stay below BLIND_SPREAD before the warning: this many readings in
# a row (each a worker's mean over log.interval_seconds) spanning this many frames of T, or a
# tenth of a shorter run. Pong's 16 workers above stayed below for 25 readings over 18.6k
# frames at most; Breakout at the defaults for 32 over 69k, then 50 over 106k.
BLIND_READINGS = 30
BLIND_FRAMES = 100_000


class BlindnessWatch:
    """Reads the workers' ``value_spread`` and ``policy_spread``; ``reading`` returns the
    warning the first time both have stayed below BLIND_SPREAD for ``readings`` readings in
    a row over ``frames`` frames, and None otherwise."""

    def __init__(self, readings: int = BLIND_READINGS, frames: int = BLIND_FRAMES) -> None:
        self.needed_readings = readings
        self.needed_frames = frames
        self.streak = 0
        self.since = 0
        self.warned = False

    def reading(self, frames: int, stats: dict[str, float]) -> str | None:
        value, policy = stats.get("value_spread"), stats.get("policy_spread")
        if value is None or policy is None or self.warned:
            return None
        if not (value < BLIND_SPREAD and policy < BLIND_SPREAD):  # a nan is not below it
            self.streak = 0
            return None
        if self.streak == 0:
            self.since = frames
        self.streak += 1
        if self.streak < self.needed_readings or frames - self.since < self.needed_frames:
            return None
        self.warned = True
        return (f"the network's policy and V(s) barely differ between states: both spreads "
                f"below {BLIND_SPREAD:g} (under a tenth of an untrained network's) in "
                f"{self.streak} readings in a row from T={self.since:,} to T={frames:,}, so "
                f"it has most likely stopped reading the screen; runs in this state stayed at "
                f"random play's score for millions of frames, and a lower lr kept the network "
                f"reading it (docs/learning.md; asyncrl-probe --analyse RUN_DIR says which "
                f"layers fell silent)")


def blindness_watch(model: Any, total_frames: int) -> BlindnessWatch | None:
    """A watch for ``model`` in a run of ``total_frames``, or None where the watch's
    threshold was not measured."""
    if getattr(model, "recurrent", False) or not isinstance(getattr(model, "torso", None),
                                                            ConvTorso):
        return None
    return BlindnessWatch(frames=min(BLIND_FRAMES, total_frames // 10))
