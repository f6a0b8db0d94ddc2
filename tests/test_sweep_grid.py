"""The sweep's arithmetic without Spark: bucket counts -> every (θ, c), breaks, options."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from quiltdetect.cli import build_parser
from quiltdetect.common.config import ConfigError
from quiltdetect.sweep.cli import sweep_config
from quiltdetect.sweep.config import SweepConfig, parse_values
from quiltdetect.sweep.grid import grid_breaks, grid_counts, suffix_sums
from quiltdetect.sweep.job import monotonicity_summary

REPO = Path(__file__).resolve().parents[1]
THETAS = [0.2, 0.5, 0.8]
CS = [1, 2, 4]


def bucket(value, bounds):
    return sum(value >= b for b in bounds) - 1


@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 6)), max_size=40))
@settings(max_examples=200, deadline=None)
def test_grid_counts_equal_direct_counting(docs):
    cells = [(bucket(pf, THETAS), bucket(ns, CS), 1, ns) for pf, ns in docs]
    cells = [c for c in cells if c[0] >= 0 and c[1] >= 0]
    count, sources = grid_counts(cells, len(THETAS), len(CS))
    for i, t in enumerate(THETAS):
        for j, c in enumerate(CS):
            quilted = [ns for pf, ns in docs if pf >= t and ns >= c]
            assert count[i, j] == len(quilted) and sources[i, j] == sum(quilted)
    # Theorems 1 and 2: never more quilts for a larger θ or c
    assert (np.diff(count, axis=0) <= 0).all() and (np.diff(count, axis=1) <= 0).all()


@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 6), st.floats(0, 1), st.integers(0, 6)), max_size=40))
@settings(max_examples=200, deadline=None)
def test_grid_breaks_equal_direct_counting(pairs):
    rows = [(bucket(a, THETAS), bucket(b, CS), bucket(c, THETAS), bucket(d, CS), 1) for a, b, c, d in pairs]
    rows = [r for r in rows if r[0] >= 0 and r[1] >= 0]
    breaks = grid_breaks(rows, len(THETAS), len(CS))
    for i, t in enumerate(THETAS):
        for j, c in enumerate(CS):
            expected = sum(1 for a, b, x, y in pairs if a >= t and b >= c and not (x >= t and y >= c))
            assert breaks[i, j] == expected


def test_suffix_sums():
    assert suffix_sums(np.array([[1, 2], [3, 4]])).tolist() == [[10, 6], [7, 4]]


def test_parse_values_lists_and_ranges():
    assert parse_values("-k", "2:5", int) == [2, 3, 4, 5]
    assert parse_values("-m", "10:30:10,55", int) == [10, 20, 30, 55]
    assert parse_values("--theta", "0.4:1:0.1", float) == [0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    for bad in ("", "a", "1:2:0", "1:2:3:4"):
        with pytest.raises(ConfigError, match="give values like|no values"):
            parse_values("-k", bad, int)


def test_conf_file_equals_the_dataclass_defaults():
    shipped = yaml.safe_load((REPO / "conf" / "sweep.yaml").read_text())
    assert shipped == dataclasses.asdict(SweepConfig())


def test_default_grid_is_table_1():
    cfg = SweepConfig().validate(need_io=False)
    passes = cfg.passes()
    assert len(passes) == 9 + 8 - 1 and (5, 50) in passes and (2, 50) in passes and (5, 80) in passes
    assert cfg.thetas[0] == 0.4 and cfg.cs == list(range(2, 11))


def test_command_line(tmp_path):
    args = build_parser().parse_args(
        ["sweep", "--input", str(REPO / "data" / "sample"), "--output", str(tmp_path / "o"), "-k", "4:6",
         "-m", "20,40", "-c", "2:3", "--theta", "0.6,0.7", "--pivot", "5,40,3,0.7", "--phi", "0,0.1", "--grid", "full"]
    )
    cfg = sweep_config(args)
    assert cfg.ks == [4, 5, 6] and cfg.ms == [20, 40] and cfg.thetas == [0.6, 0.7] and cfg.phis == [0.0, 0.1]
    assert cfg.pivot == [5, 40, 3, 0.7] and len(cfg.passes()) == 6
    args = build_parser().parse_args(["sweep", "--input", "x", "--output", "y", "--pivot", "5,50"])
    with pytest.raises(ConfigError, match="--pivot"):
        sweep_config(args)
    with pytest.raises(ConfigError, match="--theta values"):
        SweepConfig(thetas=[1.5]).validate(need_io=False)
    with pytest.raises(ConfigError, match="count-occurrences"):
        SweepConfig(phis=[0.1], count_occurrences=True).validate(need_io=False)


def test_monotonicity_summary_reports_breaks():
    rows = [dict(k=5, m=m, c=2, theta=t, phi=0.0, quilted=q, m_breaks=b)
            for m, t, q, b in ((10, 0.5, 5, None), (10, 0.6, 4, None), (20, 0.5, 4, 2), (20, 0.6, 4, 1))]
    checks = monotonicity_summary(rows)
    assert checks == {"theta_violations": 0, "c_violations": 0, "m_count_decreases": 1,
                      "m_break_points": 2, "m_break_pages_max": 2}


@pytest.mark.parametrize("pivot", [[5.7, 50, 4, 0.5], [5, 50.5, 4, 0.5], [5, 50, True, 0.5]])
def test_a_pivot_of_fractions_is_refused_not_truncated(pivot):
    from quiltdetect.common.config import merge_settings
    from quiltdetect.sweep.config import SweepConfig

    with pytest.raises(ConfigError, match="--pivot"):
        merge_settings(SweepConfig, {"inputs": ["x"], "output": "y", "pivot": pivot}).validate()
