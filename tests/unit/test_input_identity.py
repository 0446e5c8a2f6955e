"""input_identity.py without Spark: an input created again whose files the stream read are gone,
or found at another location, refuses the run; one declared again over the same files goes on;
Spark's file-source log read from its newest file (a compacted one holds all before it)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import List

import pytest

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.records import InputIdentity, InputsRecord
from dbt.adapters.window_views.storage.filesystems import LOCAL
from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.inputs import input_identity


def a_run(tmp_path: Path) -> SimpleNamespace:
    where = Locations(table=str(tmp_path / "m"), late=str(tmp_path / "m__late"), checkpoint=str(tmp_path / "cp"))
    return SimpleNamespace(fs=LOCAL, where=where, model="m", plan=SimpleNamespace(model="m"))


def spark_log(run: SimpleNamespace, source: int, name: str, files: List[Path]) -> None:
    folder = Path(run.where.spark_sources) / str(source)
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["v1"] + [json.dumps({"path": f.as_uri(), "timestamp": 0, "batchId": 0}) for f in files]
    (folder / name).write_text("\n".join(lines))


def inputs(location: Path, created: str) -> InputsRecord:
    return InputsRecord((InputIdentity("s.landed", str(location), created),))


def test_the_first_run_records_its_inputs_and_the_same_ones_go_on(tmp_path):
    run = a_run(tmp_path)
    input_identity.check(run, inputs(tmp_path / "landed", "Mon 1"))
    assert Path(run.where.inputs_file).exists()
    input_identity.check(run, inputs(tmp_path / "landed", "Mon 1"))


def test_an_input_at_another_location_is_refused(tmp_path):
    run = a_run(tmp_path)
    input_identity.check(run, inputs(tmp_path / "landed", "Mon 1"))
    with pytest.raises(
        StreamFailure, match=r"its input s.landed is at another location .* run `dbt run --full-refresh -s m`"
    ):
        input_identity.check(run, inputs(tmp_path / "landed__v2", "Mon 1"))


def test_an_input_created_again_is_refused_only_when_the_files_read_last_are_gone(tmp_path):
    run = a_run(tmp_path)
    landed = tmp_path / "landed"
    landed.mkdir()
    old, kept, other = landed / "part-0.parquet", landed / "part-1.parquet", tmp_path / "other" / "x.parquet"
    for f in (old, kept):
        f.write_text("")
    spark_log(run, 0, "8", [old])
    spark_log(run, 0, "9.compact", [old, kept])
    spark_log(run, 0, ".9.compact.crc", [])
    spark_log(run, 1, "10", [other])  # the newest log file names another input's files only
    input_identity.check(run, inputs(landed, "Mon 1"))
    old.unlink()
    input_identity.check(run, inputs(landed, "Mon 2"))  # declared again: a file it read is there
    kept.unlink()
    with pytest.raises(StreamFailure, match=r"was created again .* \(created Mon 2, now Mon 3\) and the files"):
        input_identity.check(run, inputs(landed, "Mon 3"))


def test_an_input_the_stream_read_nothing_of_goes_on_when_created_again(tmp_path):
    run = a_run(tmp_path)
    input_identity.check(run, inputs(tmp_path / "landed", "Mon 1"))
    input_identity.check(run, inputs(tmp_path / "landed", "Mon 2"))
