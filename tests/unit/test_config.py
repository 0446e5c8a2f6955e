import pytest

from dbt.adapters.window_views.model.config import ConfigError, WindowViewConfig


def parse(**config):
    return WindowViewConfig.from_model("m", {"materialized": "window_view", **config})


def test_defaults():
    cfg = parse()
    assert (cfg.execution, cfg.emit, cfg.late_data, cfg.file_format) == ("batch", "on_update", "table", "parquet")
    assert cfg.watermark is None
    assert cfg.trigger.describe() == "available_now"
    assert cfg.on_change == "fail"
    assert parse(on_change="rebuild").on_change == "rebuild"


def test_watermark_and_properties():
    cfg = parse(emit="on_window_close", watermark={"column": "bidtime", "delay": "5 minutes"})
    assert cfg.watermark.column == "bidtime" and cfg.watermark.delay.micros == 300_000_000
    assert cfg.properties()["window_views.watermark"] == "bidtime - 5 minutes"
    assert parse(emit="on_window_close", watermark={"column": "ts"}).watermark.delay.micros == 0


def test_trigger_with_a_bound():
    cfg = parse(trigger={"processing_time": "30 seconds", "max_duration": "10 minutes"})
    assert cfg.trigger.describe() == "processing_time 30 seconds for at most 10 minutes"
    with pytest.raises(ConfigError, match="the bound makes dbt run return"):
        parse(trigger={"processing_time": "30 seconds"})


def test_absolute_paths_and_uris_are_accepted():
    assert parse(location_root="/data/wv", checkpoint_location="file:///data/cp").location_root == "/data/wv"
    assert parse(location_root="s3a://bucket/wv").location_root == "s3a://bucket/wv"  # batch: Spark writes it
    # streaming too: its files go through the filesystem of the location's scheme (filesystems.py)
    streaming = parse(
        execution="streaming",
        watermark={"column": "t"},
        location_root="s3a://bucket/wv",
        checkpoint_location="abfss://c@a.dfs.core.windows.net/cp",
    )
    assert (streaming.location_root, streaming.checkpoint_location) == (
        "s3a://bucket/wv",
        "abfss://c@a.dfs.core.windows.net/cp",
    )


def test_dbt_and_spark_keys_are_known():
    parse(
        tags=["a"],
        meta={"x": 1},
        partition_by=["k"],
        location_root="/tmp/x",
        persist_docs={"relation": True},
        grants={},
        alias="a",
        schema="s",
        tblproperties={"a": "b"},
        options={"a": "b"},
        **{"pre-hook": [], "post-hook": []},
    )


@pytest.mark.parametrize(
    "config, message",
    [
        ({"emit": "on_close"}, "config 'emit' = 'on_close' is not valid; expected one of: on_update, on_window_close"),
        ({"on_change": "refresh"}, "config 'on_change' = 'refresh' is not valid; expected one of: fail, rebuild"),
        ({"watermrk": {"column": "t"}}, "did you mean 'watermark'?"),
        ({"emit": "on_window_close"}, "config 'watermark' is missing"),
        ({"watermark": "bidtime"}, "config 'watermark' = 'bidtime' is not valid"),
        ({"watermark": {"column": "a b"}}, "must be a column name"),
        ({"checkpoint_location": ""}, "config 'checkpoint_location' = '' is not a path"),
        ({"location_root": "data/wv"}, "config 'location_root' = 'data/wv' is a relative path"),
        ({"checkpoint_location": "./cp"}, "config 'checkpoint_location' = './cp' is a relative path"),
        (
            {"execution": "streaming", "watermark": {"column": "t"}, "file_format": "orc"},
            "config 'file_format' = 'orc' cannot be used: execution='streaming' writes parquet files, a Delta table",
        ),
        (
            {"execution": "streaming", "watermark": {"column": "t"}, "partition_by": ["k"]},
            "config 'partition_by' is not supported with execution='streaming'",
        ),
    ],
)
def test_errors_name_model_key_and_fix(config, message):
    with pytest.raises(ConfigError) as info:
        parse(**config)
    assert info.value.msg.startswith("window_view model 'm': config '")
    assert message in info.value.msg
