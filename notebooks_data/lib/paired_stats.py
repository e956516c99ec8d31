"""Paired statistics of the trained-ablation zoo (docs/table4.md, issue 27), in plain Python.

A variant and the baseline trained from the same seed share their initial tensors and their data
order, so the seed is the unit of pairing: the per-seed differences d_s = variant_s − baseline_s
are tested with a one-sample Student t test (two-sided), and the p-values of all variants are
corrected together with Holm's step-down method. No SciPy at run time (tests/python checks these
functions against scipy.stats on fixed numbers).

    paired_t([4.70, 4.68, 4.71], [4.64, 4.63, 4.66]) -> {"n", "mean_diff", "sd", "se", "t", "df",
                                                        "ci95": [lo, hi], "p"}
    holm({"-c2p": 0.01, "-p2c": 0.2}) -> {"-c2p": 0.02, "-p2c": 0.2}
"""
import math


def _betacf(a, b, x, eps=1e-15, max_iter=10000):
    """Continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, max_iter + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))        # even step
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))   # odd step
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            return h
    raise ArithmeticError("incomplete beta: no convergence for a=%g b=%g x=%g" % (a, b, x))


def betainc(a, b, x):
    """Regularised incomplete beta I_x(a, b), a, b > 0, 0 <= x <= 1."""
    if not (0.0 <= x <= 1.0):
        raise ValueError("betainc: x = %r outside [0, 1]" % x)
    if x == 0.0 or x == 1.0:
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_sf2(t, df):
    """Two-sided tail probability P(|T| >= |t|) of Student's t with df degrees of freedom."""
    if df <= 0:
        raise ValueError("t distribution needs df > 0, got %r" % df)
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_cdf(t, df):
    """P(T <= t)."""
    tail = 0.5 * t_sf2(t, df)
    return 1.0 - tail if t >= 0 else tail


def t_ppf(q, df):
    """The q-quantile of Student's t (0 < q < 1), by bisection on t_cdf to 1e-13."""
    if not (0.0 < q < 1.0):
        raise ValueError("t quantile needs 0 < q < 1, got %r" % q)
    lo, hi = -1.0, 1.0
    while t_cdf(lo, df) > q:
        lo *= 2.0
    while t_cdf(hi, df) < q:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * max(1.0, abs(mid)):
            break
    return 0.5 * (lo + hi)


def paired_t(variant, baseline, level=0.95):
    """Paired t test of variant − baseline (equal-length sequences, one entry per seed, n >= 2):
    mean difference, its standard error, the two-sided p-value and the `level` t-interval."""
    if len(variant) != len(baseline):
        raise ValueError("paired_t: %d variant values against %d baseline values" % (len(variant), len(baseline)))
    d = [float(v) - float(b) for v, b in zip(variant, baseline)]
    n = len(d)
    if n < 2:
        raise ValueError("paired_t: need at least 2 paired seeds, got %d" % n)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    se = sd / math.sqrt(n)
    df = n - 1
    if se == 0.0:
        t = 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    else:
        t = mean / se
    p = t_sf2(t, df)
    half = t_ppf(0.5 + level / 2.0, df) * se
    return {"n": n, "diffs": d, "mean_diff": mean, "sd": sd, "se": se, "t": t, "df": df,
            "ci95": [mean - half, mean + half], "p": p}


def holm(pvalues):
    """Holm's step-down adjustment of {name: p}: the i-th smallest of m p-values is multiplied by
    m − i (i from 0), made monotone and capped at 1. Returns {name: p_holm}."""
    items = sorted(pvalues.items(), key=lambda kv: kv[1])
    m = len(items)
    out, running = {}, 0.0
    for i, (name, p) in enumerate(items):
        running = max(running, min(1.0, (m - i) * p))
        out[name] = running
    return out
