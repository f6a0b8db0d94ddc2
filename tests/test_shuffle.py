"""The shuffle partitions of an API call on a session that does not set them (common/shuffle.py):
sized for the input, restored afterwards, also after an error; the session's own setting wins.
Pure Python (a stand-in session); the run on a real one is the README's example in test_readme.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from quiltdetect.common.config import ConfigError, local_spark_defaults
from quiltdetect.common.shuffle import (
    SHUFFLE_PARTITIONS,
    configured_partitions,
    partitions_for,
    size_in_bytes,
    sized_for_input,
)

MB = 1 << 20


class Conf:
    """``spark.conf`` as far as ``sized_for_input`` uses it: unset keys read as the default."""

    def __init__(self, **settings: str):
        self.settings = dict(settings)

    def get(self, key, default=None):
        return self.settings.get(key, default)

    def set(self, key, value):
        self.settings[key] = value

    def unset(self, key):
        self.settings.pop(key, None)


def session(cores: int, **settings: str):
    return SimpleNamespace(conf=Conf(**settings), sparkContext=SimpleNamespace(defaultParallelism=cores))


def test_partitions_are_one_per_core_more_for_a_large_text_at_most_the_configured():
    assert partitions_for(0, 64 * MB, 2, 32) == 2  # an empty frame: no 200 empty tasks per stage
    assert partitions_for(1_548_176, 64 * MB, 2, 32) == 2  # the demo's documents
    assert partitions_for(300 * MB, 64 * MB, 2, 32) == 5 and partitions_for(10 << 30, 64 * MB, 2, 32) == 32
    assert partitions_for(5, 64, 1, 1) == 1 and partitions_for(0, 64, 0, 32) == 1
    assert partitions_for(0, 64 * MB, 64, 32) == 32  # never more than configured
    assert size_in_bytes("67108864b") == 64 * MB == size_in_bytes("64m") and size_in_bytes("1g") == 1 << 30
    assert configured_partitions(local_spark_defaults()) == 32 == configured_partitions({})
    assert configured_partitions({SHUFFLE_PARTITIONS: "8"}) == 8
    for bad in (0, "many", -3):
        with pytest.raises(ConfigError, match="spark.sql.shuffle.partitions must be an integer >= 1"):
            configured_partitions({SHUFFLE_PARTITIONS: bad})


def test_a_call_sizes_an_unset_count_and_unsets_it_again_also_after_an_error():
    spark = session(2, **{"spark.sql.adaptive.advisoryPartitionSizeInBytes": "1m"})
    with sized_for_input(spark, 32, 10 * MB) as n:
        assert n == 10 and spark.conf.get(SHUFFLE_PARTITIONS) == "10"
    assert spark.conf.get(SHUFFLE_PARTITIONS) is None
    with pytest.raises(RuntimeError), sized_for_input(spark, 4, 10 * MB) as n:
        assert n == 4 and spark.conf.get(SHUFFLE_PARTITIONS) == "4"
        raise RuntimeError("the job failed")
    assert spark.conf.get(SHUFFLE_PARTITIONS) is None


def test_the_sessions_own_count_is_used_as_it_is():
    spark = session(2, **{SHUFFLE_PARTITIONS: "200"})  # set by the user: theirs
    with sized_for_input(spark, 32, 0) as n:
        assert n == 200 and spark.conf.get(SHUFFLE_PARTITIONS) == "200"
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "200"
