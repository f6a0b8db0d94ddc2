"""NearDupConfig, its conf file and presets, and `neardup calibrate` (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from quiltdetect.cli import build_parser, main
from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.neardup.cli import neardup_config
from quiltdetect.neardup.config import PRESETS, NearDupConfig

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("override", "message"), [
    ({"algorithm": "x"}, "--algorithm 'x'"),
    ({"b_threshold": 7}, "--b-threshold must be at most 6"),
    ({"c_threshold": 400}, "--c-threshold must be at most 384"),
    ({"algorithm": "c", "c_threshold": 200}, "use >= 300"),
    ({"k": 0}, "-k must be an integer >= 1"),
    ({"bucket_cap": 1}, "--bucket-cap must be an integer >= 2"),
    ({"wrap": "yes"}, "--wrap must be true or false"),
    ({"resemblance_threshold": 0}, r"--resemblance-threshold must be a number in \(0, 1\]"),
    ({"containment_threshold": 1.5}, r"--containment-threshold must be a number in \(0, 1\]"),
    ({"lsh_bands": 0}, "--lsh-bands must be an integer >= 1"),
    ({"lsh_bands": 100, "lsh_rows": 20}, "use at most 1024"),
])
def test_bad_values_name_the_option(override, message):
    with pytest.raises(ConfigError, match=message):
        merge_settings(NearDupConfig, override).validate(need_io=False)


def test_preset_then_file_then_options_then_set(tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("k: 6\nbucket_cap: 50\n")
    args = build_parser().parse_args(["neardup", "--preset", "henzinger2006", "--config", str(conf), "-k", "7",
                                      "--set", "bucket_cap=60", "--input", "x", "--output", "y"])
    cfg = neardup_config(args)
    assert (cfg.k, cfg.bucket_cap, cfg.algorithm) == (7, 60, "combined")
    assert (cfg.b_threshold, cfg.c_threshold, cfg.combined_c_threshold) == (2, 372, 355)
    assert PRESETS["henzinger2006"]["k"] == 8
    # the default before lsh, kept as a preset: Henzinger's combined algorithm, calibrated thresholds
    old = neardup_config(build_parser().parse_args(["neardup", "--preset", "henzinger-calibrated"]), need_io=False)
    assert (old.algorithm, old.k, old.b_threshold, old.c_threshold, old.combined_c_threshold) == ("combined", 5, 1, 355, 328)


def test_calibrate_command_writes_thresholds(tmp_path, capsys):
    base = " ".join(f"word{i}" for i in range(300))
    rows = []
    for i in range(6):
        near = base.replace(f"word{i * 7}", "changed")
        other = " ".join(f"other{i}x{j}" for j in range(300))
        rows.append({"corpus": "a" if i % 2 else "b", "label": 2, "left_text": base, "right_text": near})
        rows.append({"corpus": "a" if i % 2 else "b", "label": 0, "left_text": base, "right_text": other})
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "chosen.yaml"
    assert main(["neardup", "calibrate", "--pairs", str(pairs), "--train-corpus", "a", "--test-corpus", "b",
                 "--write-config", str(out)]) == 0
    text = capsys.readouterr().out
    assert "calibration on 6 pairs (a)" in text and "held-out pairs (b)" in text and "F1=1.000" in text
    chosen = yaml.safe_load(out.read_text())
    assert set(chosen) == {"k", "wrap", "lsh_bands", "lsh_rows", "resemblance_threshold", "containment_threshold",
                           "b_threshold", "c_threshold", "combined_c_threshold"}
    merge_settings(NearDupConfig, chosen).validate(need_io=False)
    assert main(["neardup", "calibrate"]) == 2  # no --pairs: a message, not a traceback


def test_calibrate_on_pairs_it_cannot_read_says_so_in_one_line(tmp_path, capsys):
    """Issue 73: a missing --pairs file was "the run failed: No such file or directory ... the same
    command resumes after them" (calibrate has no stages), a bad line a traceback."""
    gone, bad, partial, not_gzip = (tmp_path / n for n in ("gone.jsonl", "bad.jsonl", "partial.jsonl", "p.jsonl.gz"))
    bad.write_text('{"label": 1, "left_text": "a", "right_text": "b"}\nnot json\n')
    partial.write_text('{"label": 1, "left_text": "a"}\n')
    not_gzip.write_bytes(b"plain")
    cases = {gone: f"--pairs {gone}: no such file; give a JSON Lines file of labelled pairs",
             tmp_path: f"--pairs {tmp_path}: a directory",
             bad: f"--pairs {bad}, line 2: not JSON",
             partial: f"--pairs {partial}, line 1: a pair is an object with label, left_text and right_text",
             not_gzip: f"--pairs {not_gzip}: cannot read it (Not a gzipped file"}
    for path, said in cases.items():
        capsys.readouterr()
        assert main(["neardup", "calibrate", "--pairs", str(path), "--output", str(tmp_path / "out")]) == 2, path
        err = capsys.readouterr().err
        assert err.startswith(f"quiltdetect: error: {said}") and err.count("\n") == 1 and "resume" not in err, err
    assert not (tmp_path / "out").exists()
