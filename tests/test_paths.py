"""Every path a user gives is made absolute once, where options are read (common/paths.py); a
path that cannot work is one line and exit 2 before Spark starts. No Spark here."""

from __future__ import annotations

import os

import pytest
import yaml

from quiltdetect.cli import build_parser, main
from quiltdetect.common.config import ConfigError, merge_settings
from quiltdetect.common.paths import absolute, is_uri
from quiltdetect.quilts.cli import quilt_config
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.reuse.config import ReuseConfig


@pytest.mark.parametrize(("given", "uri"), [
    ("s3a://bucket/crawl/", True), ("hdfs:///data/x", True), ("file:/tmp/x", True), ("file:///tmp/x", True),
    ("gs://b/k", True), ("crawl/", False), ("t:12:00.jsonl", False), ("dir/a:b/c", False), ("C:/x", False),
    ("crawl [2024]/*.warc.gz", False), ("/abs/x", False),
])
def test_a_uri_names_its_scheme_and_a_slash(given, uri):
    assert is_uri(given) is uri
    assert (absolute(given) == given) is (uri or given.startswith("/"))


def test_every_path_of_a_configuration_is_absolute_whichever_layer_gave_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"inputs": ["crawl/a.warc.gz"], "previous": "runs/*"}))
    args = build_parser().parse_args(["quilts", "--config", "c.yaml", "--output", "out/q", "--input", "crawl/",
                                      "--set", "previous=runs/w1"])
    assert args.config == [str(tmp_path / "c.yaml")]
    cfg = quilt_config(args)
    assert cfg.inputs == [str(tmp_path / "crawl")]  # the option replaces the file's list
    assert (cfg.output, cfg.previous) == (str(tmp_path / "out/q"), str(tmp_path / "runs/w1"))
    reuse = merge_settings(ReuseConfig, {"inputs": "~/c", "output": "s3a://b/o", "labeled": "disc/",
                                         "stop_chunks": ["x.txt"]}).validate()
    home = os.path.expanduser("~")
    assert (reuse.inputs, reuse.output) == ([os.path.join(home, "c")], "s3a://b/o")
    assert (reuse.labeled, reuse.stop_chunks) == (str(tmp_path / "disc"), [str(tmp_path / "x.txt")])
    # the Python API's settings go through the same validation
    api = merge_settings(QuiltConfig, {"output": "rel"}).validate(need_io=False)
    assert api.output == str(tmp_path / "rel")


def test_an_output_under_a_file_or_a_file_into_a_missing_directory_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "crawl.warc.gz").write_bytes(b"")
    (tmp_path / "notes").write_text("mine")
    assert main(["quilts", "--input", "crawl.warc.gz", "--output", "notes/q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--output notes/q: {tmp_path / 'notes'} is a file" in err, err
    assert main(["quilts", "--input", "crawl.warc.gz", "--output", "notes"]) == 2
    assert "--output notes is a file; give a directory" in capsys.readouterr().err
    assert main(["review", "--run", "nowhere", "--export", "no/such/dir/labels.csv"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--export no/such/dir/labels.csv: no such directory" in err, err
    assert main(["neardup", "calibrate", "--pairs", "p.jsonl", "--write-config", "nope/c.yaml"]) == 2
    assert "--write-config nope/c.yaml: no such directory" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="is a file"):
        merge_settings(QuiltConfig, {"inputs": ["crawl.warc.gz"], "output": "notes/a/b"}).validate()
