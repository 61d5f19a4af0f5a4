"""Learning-rate annealing (paper, Supp. 8: "annealed to 0 over the course of training")."""


def annealed_lr(initial_lr: float, frames: int, total_frames: int) -> float:
    """Linear decay from ``initial_lr`` at frame 0 to 0 at ``total_frames``, never negative."""
    return initial_lr * max(0.0, 1.0 - frames / total_frames)
