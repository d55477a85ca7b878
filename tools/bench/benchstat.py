# SPDX-License-Identifier: GPL-2.0
"""tools/bench/benchstat.py: the statistics of 'make bench''s verdicts.

A row of 'make bench' runs two arms, kverbs and perftest, alternately, a
number of times each, and gives each arm's runs to compare(), which says:

- each arm's median and interquartile range;
- the ratio of the medians (arm a over arm b) with a bootstrap 95 %
  confidence interval: both arms' runs resampled with replacement,
  independently, RESAMPLES times, from a generator seeded with the row's
  name, so that the same runs give the same interval;
- the two-sided p-value of the Mann-Whitney U test of the two arms;
- the verdict against the row's target ratio: "met" or "missed" only when
  the whole interval lies on one side of the target, else "undecided";
- for each arm, whether its runs split into two groups (bimodality())
  and whether they trend over the run order (drift()).

Python's standard library only (statistics, random): Debian's
python3-scipy is not among make bench's packages.  The U test's normal
approximation is the textbook one, with its sources named at
mann_whitney(); the normal distribution is statistics.NormalDist.
Documentation/performance.rst, "How a row is decided", says how the
bench uses these; tools/bench/test-benchstat tests them.
"""
import math
import random
import statistics
import zlib

# Resamples of the bootstrap: the 2.5 and 97.5 percentiles of 10,000
# resampled ratios move by well under 1 % from one seed to another, far
# less than the intervals' own widths on this bench.
RESAMPLES = 10000
CONFIDENCE = 0.95
# Fewer runs per arm than this: no verdict.  The median of 3 or 4 runs
# resampled takes a handful of values, and the percentile interval
# covers the true ratio far less often than it says.
MIN_RUNS = 5
# Exact U distribution up to this many runs in both arms together
# (without ties); the normal approximation above it.
EXACT_MAX = 50
# bimodality(): the share of an arm's variance that its best split into
# a low and a high group explains, from which the arm is flagged.
BIMODAL_SHARE = 0.9
# drift(): an arm is flagged when its Theil-Sen slope moves it by at
# least DRIFT_CHANGE of its median over its runs and the Mann-Kendall
# test of a trend gives p below DRIFT_P.
DRIFT_CHANGE = 0.10
DRIFT_P = 0.01


def quartiles(xs):
    """The first and third quartiles of @xs: statistics.quantiles'
    "inclusive" method, which interpolates between the order statistics
    (R's type 7, numpy's default)."""
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[2]


def seed_of(name):
    """The bootstrap's seed for a row called @name: its CRC32."""
    return zlib.crc32(name.encode())


def ratio_ci(a, b, seed, resamples=RESAMPLES, confidence=CONFIDENCE):
    """The percentile bootstrap interval of median(a) / median(b).

    Each resample draws len(a) runs from @a and len(b) from @b with
    replacement, independently (the arms' runs are not paired), from
    random.Random(@seed).  Returns (low, high)."""
    rng = random.Random(seed)
    na, nb = len(a), len(b)
    med = statistics.median
    ratios = sorted(med(rng.choices(a, k=na)) / med(rng.choices(b, k=nb))
                    for _ in range(resamples))
    tail = (1 - confidence) / 2
    lo = ratios[int(math.floor(tail * resamples))]
    hi = ratios[int(math.ceil((1 - tail) * resamples)) - 1]
    return lo, hi


def _ranks(values):
    """Midranks (1-based) of @values, and the sizes of their ties."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    ties = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        if j > i:
            ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


def _u_counts(n1, n2):
    """How many of the C(n1 + n2, n1) orderings of two untied samples
    give each U, indexed by U (Mann and Whitney's recurrence: the largest
    value is either the first sample's, which beats all n2 of the second,
    or the second's, which beats none)."""
    # f[j]: the counts for i of the first sample and j of the second.
    f = [[1] for _ in range(n2 + 1)]
    for i in range(1, n1 + 1):
        g = [[1]]
        for j in range(1, n2 + 1):
            c = [0] * (i * j + 1)
            for u, k in enumerate(f[j]):
                c[u + j] += k
            for u, k in enumerate(g[j - 1]):
                c[u] += k
            g.append(c)
        f = g
    return f[n2]


def mann_whitney(a, b):
    """The Mann-Whitney U test of @a against @b, two-sided.

    U is the number of pairs (x of a, y of b) with x > y, a tie counting
    a half.  Without ties and with at most EXACT_MAX runs in all, the
    p-value is exact: twice the smaller tail of U's distribution under
    the null hypothesis, counted with _u_counts() (H. B. Mann and D. R.
    Whitney, "On a test of whether one of two random variables is
    stochastically larger than the other", Ann. Math. Statist. 18(1),
    1947).  Otherwise it is the normal approximation with the variance
    corrected for ties and a continuity correction of 1/2:

        mu = n1 n2 / 2
        sigma^2 = n1 n2 / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1)))
        z = (|U - mu| - 1/2) / sigma,  p = 2 (1 - Phi(z))

    with n = n1 + n2 and t the size of each group of tied values, as in
    M. Hollander, D. A. Wolfe and E. Chicken, "Nonparametric Statistical
    Methods", 3rd ed., Wiley 2014, section 4.1 (the Wilcoxon rank sum
    form, W = U + n1 (n1 + 1) / 2, has the same variance), and in
    scipy.stats.mannwhitneyu(method="asymptotic").

    Returns (U, p, "exact" or "normal")."""
    n1, n2 = len(a), len(b)
    ranks, ties = _ranks(list(a) + list(b))
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    if not ties and n1 + n2 <= EXACT_MAX:
        counts = _u_counts(n1, n2)
        total = sum(counts)
        k = int(round(u))
        low = sum(counts[:k + 1]) / total
        high = sum(counts[k:]) / total
        return u, min(1.0, 2 * min(low, high)), "exact"
    n = n1 + n2
    tie_sum = sum(t ** 3 - t for t in ties)
    var = n1 * n2 / 12 * ((n + 1) - tie_sum / (n * (n - 1)))
    if var <= 0:
        return u, 1.0, "normal"
    z = max(0.0, abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return u, min(1.0, 2 * (1 - statistics.NormalDist().cdf(z))), "normal"


def verdict(lo, hi, target, lower_is_better):
    """@target against the interval [@lo, @hi] of a ratio: "met" when the
    whole interval lies where the target is met (at or below it when
    lower is better, else at or above it), "missed" when none of it does,
    "undecided" otherwise; None without a target."""
    if target is None:
        return None
    if lower_is_better:
        if hi <= target:
            return "met"
        if lo > target:
            return "missed"
    else:
        if lo >= target:
            return "met"
        if hi < target:
            return "missed"
    return "undecided"


def bimodality(xs):
    """Whether the runs @xs fall in two groups.

    The statistic is the largest share of their variance that a split of
    the sorted runs into a low and a high group explains (between-group
    over total sum of squares: Otsu's threshold, or Jenks' natural breaks
    with two classes), over the splits that leave at least max(3, n / 4)
    runs in each group.  A normal sample's best split explains about 2/π
    (0.64) of it, a uniform one's 0.75, two tight groups nearly all.  It
    is chosen over Sarle's bimodality coefficient, b = (g^2 + 1) / (k +
    3 (n - 1)^2 / ((n - 2) (n - 3))), because on samples of this bench's
    size the coefficient passes its 5/9 threshold for one outlying run
    more often than for two modes (in simulation, of 9 runs: 60 % of
    arms with one run in ten at twice the others' value, 20 % of arms of
    two equal normal modes 8 standard deviations apart), and a loaded
    host gives outlying runs; and over Hartigan's dip test, which needs
    tables or a simulation for its p-value.  With BIMODAL_SHARE = 0.9, in
    simulation: of 9 runs drawn from a normal or log-normal distribution
    (sigma up to 0.6) 2 to 3 % are flagged, from a uniform one 8 %, from
    those two modes 78 %; of 15 runs, at most 2 % and 95 %.

    Returns (share, flagged); (None, False) for fewer than 6 runs."""
    n = len(xs)
    k = max(3, n // 4)
    if n < 2 * k:
        return None, False
    s = sorted(xs)
    mean = statistics.fmean(s)
    total = sum((v - mean) ** 2 for v in s)
    if total == 0:
        return 0.0, False
    best = 0.0
    for i in range(k, n - k + 1):
        lo, hi = s[:i], s[i:]
        mlo, mhi = statistics.fmean(lo), statistics.fmean(hi)
        within = sum((v - mlo) ** 2 for v in lo) + sum((v - mhi) ** 2 for v in hi)
        best = max(best, 1 - within / total)
    return best, best >= BIMODAL_SHARE


def drift(xs):
    """How the runs @xs, in the order they ran, trend.

    The slope is Theil and Sen's, the median of the slopes between every
    two runs (robust to a single slow run); change is that slope over
    the runs' span, as a fraction of their median.  The p-value is the
    Mann-Kendall test's (S, the sum of the signs of every later run's
    difference from an earlier one, against its normal approximation,
    var S = (n (n - 1) (2n + 5) - sum t (t - 1) (2t + 5)) / 18 with t
    the sizes of tied groups, continuity-corrected: M. G. Kendall, "Rank
    Correlation Methods", 4th ed., Griffin 1975; Hollander, Wolfe and
    Chicken, section 8.1).

    Returns a dict: slope (per run), change, p, flagged (change at least
    DRIFT_CHANGE in size and p below DRIFT_P, with MIN_RUNS runs or more)."""
    n = len(xs)
    if n < 3:
        return {"slope": None, "change": None, "p": None, "flagged": False}
    slopes, s = [], 0
    for i in range(n):
        for j in range(i + 1, n):
            d = xs[j] - xs[i]
            slopes.append(d / (j - i))
            s += (d > 0) - (d < 0)
    slope = statistics.median(slopes)
    med = statistics.median(xs)
    change = slope * (n - 1) / med if med else None
    _, ties = _ranks(list(xs))
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in ties)) / 18
    if var > 0 and s:
        z = (abs(s) - 1) / math.sqrt(var)
        p = min(1.0, 2 * (1 - statistics.NormalDist().cdf(z)))
    else:
        p = 1.0
    flagged = (n >= MIN_RUNS and change is not None and
               abs(change) >= DRIFT_CHANGE and p < DRIFT_P)
    return {"slope": slope, "change": change, "p": p, "flagged": flagged}


def describe(xs):
    """One arm's runs @xs, in run order: median, quartiles, IQR, min, max,
    bimodality and drift."""
    q1, q3 = quartiles(xs)
    share, bimodal = bimodality(xs)
    return {
        "n": len(xs),
        "median": statistics.median(xs),
        "q1": q1,
        "q3": q3,
        "iqr": q3 - q1,
        "min": min(xs),
        "max": max(xs),
        "bimodal": {"split_share": share, "flagged": bimodal},
        "drift": drift(xs),
        "samples": list(xs),
    }


def half_width(ratio, lo, hi):
    """The interval [@lo, @hi]'s larger distance from @ratio, as a fraction
    of it: 0.1 for an interval within ±10 %."""
    if not ratio:
        return None
    return max(hi / ratio - 1, 1 - lo / ratio)


def compare(a, b, name, target=None, lower_is_better=False):
    """Arm @a (kverbs) against arm @b (perftest), each a list of positive
    numbers in run order, for the row called @name (the bootstrap's seed)
    with @target for median(a) / median(b), lower or higher being better.

    Returns a dict: "a" and "b" (describe()), "ratio", "ci" [low, high],
    "half_width", "u", "p", "p_method" and "verdict" (None without a
    target; "undecided" with fewer than MIN_RUNS runs in either arm)."""
    ratio = statistics.median(a) / statistics.median(b)
    lo, hi = ratio_ci(a, b, seed_of(name))
    u, p, how = mann_whitney(a, b)
    v = verdict(lo, hi, target, lower_is_better)
    if v is not None and min(len(a), len(b)) < MIN_RUNS:
        v = "undecided"
    return {
        "a": describe(a),
        "b": describe(b),
        "ratio": ratio,
        "ci": [lo, hi],
        "confidence": CONFIDENCE,
        "half_width": half_width(ratio, lo, hi),
        "u": u,
        "p": p,
        "p_method": how,
        "verdict": v,
    }
