"""The optimizers' element-wise updates as single-pass numba loops over flat arrays.

Written as torch ops, one RMSProp step walks the 2.6 MB fc layer six times (scale g, add
dtheta^2, add eps, rsqrt, multiply, subtract) and costs ~11 % of an A3C worker's time; one
fused loop reads and writes each element once and is 3-4x faster. Each loop touches element
i of the shared arrays and nothing else, so concurrent workers interleave exactly as the
lock-free torch ops did.

``error_model="numpy"`` lets a division by zero give inf instead of raising, which is what
lets the loops vectorise; ``fastmath`` allows the reassociation SIMD needs.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def rmsprop_update(param: np.ndarray, grad: np.ndarray, square_avg: np.ndarray,
                   alpha: float, eps: float, lr: float) -> None:
    """g <- alpha g + (1 - alpha) dtheta^2;  theta <- theta - lr dtheta / sqrt(g + eps)."""
    decay = param.dtype.type(alpha)
    blend = param.dtype.type(1.0 - alpha)
    eps_ = param.dtype.type(eps)
    lr_ = param.dtype.type(lr)
    for i in range(param.size):
        d = grad[i]
        g = decay * square_avg[i] + blend * d * d
        square_avg[i] = g
        param[i] -= lr_ * d / np.sqrt(g + eps_)


@njit(cache=True, nogil=True, fastmath=True, error_model="numpy")
def momentum_update(param: np.ndarray, grad: np.ndarray, momentum_buf: np.ndarray,
                    momentum: float, lr: float) -> None:
    """m <- alpha m + (1 - alpha) dtheta;  theta <- theta - lr m."""
    decay = param.dtype.type(momentum)
    blend = param.dtype.type(1.0 - momentum)
    lr_ = param.dtype.type(lr)
    for i in range(param.size):
        m = decay * momentum_buf[i] + blend * grad[i]
        momentum_buf[i] = m
        param[i] -= lr_ * m
