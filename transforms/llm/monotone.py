"""Monotone cubic interpolation (PCHIP, Fritsch-Carlson with Fritsch-Butland slopes).

A frontier's throughput falls as interactivity rises; an interpolant between its measured
points must not invent a bump the data lacks, which an ordinary cubic spline does. PCHIP
keeps every segment within its two points and monotone wherever the data is. The slopes are
scipy's PchipInterpolator's (weighted harmonic mean inside, the shape-preserving
three-point formula at the ends), written out here because scipy is not a dependency and
one curve of a few points does not call for one.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence


def pchip(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """The PCHIP interpolant of the points (xs strictly increasing, two or more) at x, with
    xs[0] <= x <= xs[-1]."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("pchip needs two or more points, as many xs as ys")
    if not xs[0] <= x <= xs[-1]:
        raise ValueError(f"{x} is outside [{xs[0]}, {xs[-1]}]: pchip never extrapolates")
    k = min(bisect_right(xs, x) - 1, len(xs) - 2)
    slopes = _slopes(xs, ys)
    h = xs[k + 1] - xs[k]
    t = (x - xs[k]) / h
    return ((2 * t**3 - 3 * t**2 + 1) * ys[k] + (t**3 - 2 * t**2 + t) * h * slopes[k]
            + (-2 * t**3 + 3 * t**2) * ys[k + 1] + (t**3 - t**2) * h * slopes[k + 1])


def _slopes(xs: Sequence[float], ys: Sequence[float]) -> list[float]:
    h = [b - a for a, b in zip(xs, xs[1:], strict=False)]
    if any(step <= 0 for step in h):
        raise ValueError("pchip needs strictly increasing xs")
    d = [(b - a) / step for a, b, step in zip(ys, ys[1:], h, strict=False)]
    if len(d) == 1:  # two points: the straight line
        return [d[0], d[0]]
    inner = []
    for k in range(1, len(d)):
        if d[k - 1] * d[k] <= 0:  # a turn (or a flat side): flat there, no overshoot
            inner.append(0.0)
            continue
        w1, w2 = 2 * h[k] + h[k - 1], h[k] + 2 * h[k - 1]
        inner.append((w1 + w2) / (w1 / d[k - 1] + w2 / d[k]))
    return [_end(h[0], h[1], d[0], d[1]), *inner, _end(h[-1], h[-2], d[-1], d[-2])]


def _end(h0: float, h1: float, d0: float, d1: float) -> float:
    """The end slope: the one-sided three-point estimate, kept to the side's sign and
    within three times its secant (scipy's _edge_case)."""
    slope = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1)
    if math.copysign(1, slope) != math.copysign(1, d0) or d0 == 0:
        return 0.0
    if math.copysign(1, d0) != math.copysign(1, d1) and abs(slope) > abs(3 * d0):
        return 3 * d0
    return slope
