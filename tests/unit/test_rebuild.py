"""The two slots a streaming window view alternates between, and what a rebuild's cleanup keeps
(no Spark): the run lock's folder survives whichever version is removed."""

from pathlib import Path

from dbt.adapters.window_views.storage.filesystems import LOCAL
from dbt.adapters.window_views.streaming.commit import rebuild
from dbt.adapters.window_views.streaming.commit.commits import Locations

HOME = Locations("/wh/s.db/m", "/wh/s.db/m__late", "/wh/s.db/m__checkpoint")


def test_the_second_slot_is_beside_the_first():
    assert rebuild.slot(HOME, 1, False) == HOME
    assert rebuild.slot(HOME, 2, False) == Locations(
        "/wh/s.db/m__v2", "/wh/s.db/m__v2__late", "/wh/s.db/m__v2__checkpoint"
    )
    configured = Locations("/wh/s.db/m", "/wh/s.db/m__late", "s3a://b/cp/m")
    assert rebuild.slot(configured, 2, True).checkpoint == "s3a://b/cp/m__v2"


def test_a_rebuild_writes_the_slot_the_table_does_not_read():
    second = rebuild.slot(HOME, 2, False)
    assert rebuild.other(HOME, HOME, False) == (2, second)
    assert rebuild.other(HOME, second, False) == (1, HOME)
    # the table was at another location_root: the first slot at the new one
    elsewhere = Locations("/old/m", "/old/m__late", "/old/m__checkpoint")
    assert rebuild.other(HOME, elsewhere, False) == (1, HOME)
    assert rebuild.live_version({}) == 1 and rebuild.live_version({rebuild.VERSION_PROPERTY: "2"}) == 2


def files(root: Path):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_cleanup_keeps_the_run_lock(tmp_path):
    for name in (
        "m/a.parquet",
        "m__late/b.parquet",
        "m__checkpoint/run.lock",
        "m__checkpoint/rebuild.json",
        "m__checkpoint/spark/offsets/0",
        "m/_wv_checkpoint/run.lock",
        "m/_wv_checkpoint/spark/commits/0",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    home = Locations(str(tmp_path / "m"), str(tmp_path / "m__late"), str(tmp_path / "m__checkpoint"))
    rebuild.discard(LOCAL, home, home.checkpoint)
    assert files(tmp_path) == ["m__checkpoint/run.lock"]
    # a checkpoint configured inside the table's folder: the table goes, the lock stays
    (tmp_path / "m/_wv_checkpoint").mkdir(parents=True)
    for name in ("m/a.parquet", "m/_wv_checkpoint/run.lock", "m/_wv_checkpoint/spark/commits/0"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    inside = str(tmp_path / "m/_wv_checkpoint")
    rebuild.clear(LOCAL, home.table, inside)
    rebuild.clear(LOCAL, inside, inside)
    assert files(tmp_path) == ["m/_wv_checkpoint/run.lock", "m__checkpoint/run.lock"]
    # another version's folders go whole
    rebuild.discard(LOCAL, rebuild.slot(home, 2, False), home.checkpoint)
    other = Locations(str(tmp_path / "m"), str(tmp_path / "m__late"), str(tmp_path / "m__checkpoint"))
    rebuild.discard(LOCAL, other, inside)
    assert files(tmp_path) == ["m/_wv_checkpoint/run.lock"]
