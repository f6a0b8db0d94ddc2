"""Each option is declared once, to the end (issue 76): which commands offer it, its range and
its choices are part of its field's ``option(...)``, and nothing else decides them.

* every option a command's config class declares for that command reaches that command's parser
  (the console's own, ``cli.build_parser``, every command and subcommand), and no other option of
  the class does; every command a declaration names is a real one whose class holds the field;
* every declared range and choice is enforced by the generic check (``check_options``, from each
  config's ``validate``), with a message that starts with the option's flag, and its bounds
  themselves are accepted;
* the foreign rule is one parsed value; the flag of a field is its declaration's.

No Spark.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import typing

import pytest

from quiltdetect.cli import build_parser
from quiltdetect.common.config import (
    ConfigError,
    Option,
    check_options,
    flag_of,
    options_of,
    scalar_type,
)
from quiltdetect.common.foreign import FOREIGN_CHOICES, ForeignRule
from quiltdetect.ingest.job import IngestConfig
from quiltdetect.mwo.config import MwoConfig, MwoQueryConfig
from quiltdetect.neardup.config import NearDupConfig
from quiltdetect.options import config_from_args
from quiltdetect.phrases.config import PhrasesConfig
from quiltdetect.quilts.config import QuiltConfig
from quiltdetect.reuse.config import ReuseConfig
from quiltdetect.sweep.config import SweepConfig

# Each command as typed after ``quiltdetect`` -> the config class it builds its settings from.
CONFIGS: dict[str, type] = {
    "quilts": QuiltConfig, "ingest": IngestConfig, "neardup": NearDupConfig, "phrases": PhrasesConfig,
    "sweep": SweepConfig, "reuse discover": ReuseConfig, "reuse detect": ReuseConfig,
    "reuse mutate-eval": ReuseConfig, "mwo index": MwoConfig, "mwo join": MwoConfig, "mwo query": MwoQueryConfig,
}
WITHOUT_CONFIG = {"demo", "review"}  # the bundled sample's run and the review server


def leaves(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every command and subcommand that takes no further command -> its parser."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {prefix: parser}
    found: dict[str, argparse.ArgumentParser] = {}
    for name, sub in subs[0].choices.items():
        found.update(leaves(sub, f"{prefix} {name}".strip()))
    return found


LEAVES = leaves(build_parser())


def test_every_command_is_known_here():
    assert set(LEAVES) == set(CONFIGS) | WITHOUT_CONFIG


@pytest.mark.parametrize("command", sorted(CONFIGS))
def test_each_option_declared_for_a_command_reaches_its_parser_and_no_other_does(command):
    parser, cls = LEAVES[command], CONFIGS[command]
    dests = {a.dest for a in parser._actions}
    offered = 0
    for name, opt in options_of(cls).items():
        if opt.offered_to(command):
            for flag in opt.spellings(name):
                assert flag in parser._option_string_actions, f"`quiltdetect {command}` refuses {flag} ({name})"
                assert parser._option_string_actions[flag].dest == name, (command, flag)
            offered += 1
        else:
            assert name not in dests, f"`quiltdetect {command}` takes {name}, which its declaration does not offer it"
    assert offered >= 1, command


def test_every_command_a_declaration_names_exists_and_every_offered_option_has_a_command():
    for cls in set(CONFIGS.values()):
        for name, opt in options_of(cls).items():
            for command in opt.commands or ():
                assert command in CONFIGS, f"{cls.__name__}.{name}: no command `{command}`"
                assert name in options_of(CONFIGS[command]), f"`{command}` has no setting {name}"
            if opt.cli or opt.commands:  # a command-line option: some command offers it
                takers = [c for c, k in CONFIGS.items() if name in options_of(k) and opt.offered_to(c)
                          and issubclass(k, _declaring(cls, name))]
                assert takers, f"{cls.__name__}.{name} is declared for the command line but no command offers it"


def _declaring(cls: type, name: str) -> type:
    """The class among ``cls``'s bases that declares the field ``name`` (JobConfig for inputs)."""
    for base in reversed(cls.__mro__):
        if dataclasses.is_dataclass(base) and name in getattr(base, "__annotations__", {}):
            return base
    return cls


def _kind(cls: type, name: str) -> type | None:
    hint = typing.get_type_hints(cls)[name]
    scalar, _ = scalar_type(hint)
    if scalar is not None:
        return scalar
    return (typing.get_args(hint) or (None,))[0]  # a list's element type


def _bad_values(cls: type, name: str, opt: Option) -> list[object]:
    """Values outside the declared range or choices of the field ``name``."""
    kind = _kind(cls, name)
    step = 1 if kind is int else 0.5
    bad: list[object] = []
    if opt.low is not None:
        bad.append(opt.low if opt.low_open else opt.low - step)
    if opt.high is not None:
        bad.append(opt.high + step)
    if opt.choices is not None:
        bad.append("no-such-choice")
    if kind is float and (opt.low is not None or opt.high is not None):
        bad.append(math.nan)
    return bad


def _edges(cls: type, name: str, opt: Option) -> list[object]:
    """The declared bounds that are themselves allowed, and every choice."""
    edges = [v for v in (None if opt.low_open else opt.low, opt.high) if v is not None]
    return edges + list(opt.choices or ())


def _with(cls: type, name: str, value: object):
    cfg = cls()
    is_list = isinstance(getattr(cfg, name), list)
    setattr(cfg, name, [value] if is_list else value)
    return cfg


def _validate(cfg) -> None:
    """The configuration's own validate path (as its command runs it), else the generic check."""
    if hasattr(cfg, "validate"):
        cfg.validate(need_io=False)
    else:
        check_options(cfg)


DECLARED = sorted({(cls.__name__, cls, name) for cls in CONFIGS.values() for name, opt in options_of(cls).items()
                   if opt.low is not None or opt.high is not None or opt.choices is not None},
                  key=lambda t: (t[0], t[2]))


def test_ranges_and_choices_are_declared_for_every_analysis():
    assert {cls for _, cls, _ in DECLARED} >= set(CONFIGS.values()) - {MwoQueryConfig}
    assert len(DECLARED) > 50


@pytest.mark.parametrize(("cls", "name"), [(cls, name) for _, cls, name in DECLARED],
                         ids=[f"{n}.{f}" for n, _, f in DECLARED])
def test_every_declared_range_and_choice_is_enforced_by_the_generic_check(cls, name):
    opt = options_of(cls)[name]
    flag = flag_of(cls, name)
    for value in _bad_values(cls, name, opt):
        with pytest.raises(ConfigError) as err:
            _validate(_with(cls, name, value))
        assert str(err.value).startswith(f"{flag} "), (name, value, str(err.value))
        with pytest.raises(ConfigError):
            check_options(_with(cls, name, value))
    for value in _edges(cls, name, opt):
        check_options(_with(cls, name, value))


@pytest.mark.parametrize(("cfg", "message"), [
    (QuiltConfig(theta=1.5), "--theta must be a number in [0, 1], got 1.5"),
    (QuiltConfig(m=1), "-m must be an integer >= 2, got 1"),
    (NearDupConfig(resemblance_threshold=0), "--resemblance-threshold must be a number in (0, 1], got 0"),
    (NearDupConfig(b_threshold=7), "--b-threshold must be at most 6 (supershingles), got 7"),
    (NearDupConfig(algorithm="x"), "--algorithm 'x': use one of lsh, b, c, combined, combined-sites"),
    (ReuseConfig(partial_threshold=2), "--partial-threshold must be a number in [0, 1] or null, got 2"),
    (ReuseConfig(max_mutations_cpp=0), "--max-mutations-cpp must be a number > 0, got 0"),
    (ReuseConfig(mutations=["add", "swap"]), "--mutations swap: use some of add, delete, modify"),
    (PhrasesConfig(foreign="rack"), "--foreign 'rack': use one of none, host, domain, ip"),
    (MwoConfig(min_weight_ratio=-1), "--min-weight-ratio must be a number >= 0, got -1"),
    (SweepConfig(thetas=[0.5, 1.5]), "--theta values must be numbers in [0, 1], got 1.5"),
    (SweepConfig(ks=[0, 3]), "-k values must be integers >= 1, got 0"),
    (SweepConfig(pivot=[0, 50, 4, 0.5]), "--pivot k must be an integer >= 1, got 0"),
])
def test_messages_say_what_to_give(cfg, message):
    with pytest.raises(ConfigError) as err:
        cfg.validate(need_io=False)
    assert str(err.value) == message


def test_mwo_query_top_is_declared_once_and_shown():
    parser = LEAVES["mwo query"]
    top = parser._option_string_actions["--top"]
    assert "(default: 20)" in top.help
    args = build_parser().parse_args(["mwo", "query", "--index", "x"])
    assert config_from_args(MwoQueryConfig, args).top == 20
    args = build_parser().parse_args(["mwo", "query", "--index", "x", "--top", "3"])
    assert config_from_args(MwoQueryConfig, args).top == 3
    for command in ("mwo index", "mwo join"):
        assert "(default: 10)" in LEAVES[command]._option_string_actions["--top"].help
    assert MwoConfig().top == 10


def test_the_flag_of_a_field_is_its_declarations():
    assert flag_of(QuiltConfig, "k") == "-k" and flag_of(QuiltConfig, "exclude_attributed") == "--exclude-attributed"
    assert flag_of(SweepConfig, "thetas") == "--theta" and flag_of(SweepConfig, "ks") == "-k"
    assert flag_of(PhrasesConfig, "foreign") == "--foreign"
    assert flag_of(NearDupConfig, "cc_max_rounds") == "--cc-max-rounds"  # not on the command line: its name


def test_the_foreign_rule_is_one_parsed_value():
    assert [ForeignRule(n).on for n in FOREIGN_CHOICES] == [False, True, True, True]
    assert ForeignRule() == ForeignRule("none") and not ForeignRule().on
    with pytest.raises(ConfigError, match="--foreign 'rack': use one of none, host, domain, ip"):
        ForeignRule("rack")
    for cls in (QuiltConfig, SweepConfig, PhrasesConfig):
        assert cls(foreign="domain").foreign_rule == ForeignRule("domain")
    assert ForeignRule("ip").server_kind == "IP address or domain" and ForeignRule().server_kind == ""


def test_the_covers_follow_the_rule_the_doc_table_was_made_under():
    """Whether sources must live on another server is decided once, by the rule the doc table
    is made under (``doc_buckets``): with the rule on the table holds each document's server and
    the covers compare them; off, it holds none and no cover can compare any (no flag of the
    cover's own to disagree with it). Arrow only: the same functions the Spark stages map."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from quiltdetect.quilts import cover as c
    from quiltdetect.quilts import gram_table as g
    from quiltdetect.quilts import patch_grams as p
    from quiltdetect.quilts.arrays import int64s

    texts = ["a b c d e f", "a b c x y z", "d e f x y z", "a b c d e f q"]
    keys = pa.array(range(len(texts)), pa.int64())
    n_gram, n_docs = 4, 2
    rows = pa.Table.from_batches(list(g.gram_rows(2, n_gram, False)(
        iter([pa.RecordBatch.from_arrays([keys, pa.array(texts)], names=["doc_key", "text"])]))))

    def by(table: pa.Table, column: str, fn) -> pa.Table:
        return pa.concat_tables([fn(table.filter(pc.equal(table[column], v)))
                                 for v in sorted(set(table[column].to_pylist()))])

    grams = by(rows, "bucket", g.merge_gram_bucket(n_gram, False))
    parts = pa.Table.from_batches(list(p._doc_parts(n_docs, 4, False, n_gram)(iter(grams.to_batches()))))
    one_server = pa.RecordBatch.from_arrays([keys, pa.array(["same.example"] * len(texts))], names=["doc_key", "server"])
    servers = pa.Table.from_batches(list(p._value_parts(n_docs, p.SERVERS, p._server_ids)(iter([one_server]))))

    def triples(with_servers: bool) -> tuple[list[bool], int]:
        table = by(pa.concat_tables([parts, servers]) if with_servers else parts, "dbucket",
                   lambda t: p._merge_doc_bucket(t, with_servers=with_servers))
        held = [v.is_valid for v in table["server"]]
        pairs = pa.Table.from_batches(list(c._target_pairs(n_gram, 0.0)(
            iter(table.select(list(c.TARGET_PAIR_INPUTS)).to_batches()))))
        found = by(pairs, "bucket", c._triples_of_bucket(n_docs))
        return held, sum(len(int64s(v)) for v in found["target"])

    held, n = triples(with_servers=False)
    assert not any(held) and n > 0  # no servers: every other document holding a gram is a source
    held, n = triples(with_servers=True)
    assert all(held) and n == 0  # every document on one server: none is another's foreign source
