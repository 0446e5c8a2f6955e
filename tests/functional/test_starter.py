"""starter/, the project the README tells a newcomer to copy, builds as it is: a batch window
view, an append-only landing model and a streaming window view, with their data tests."""

import shutil

import yaml

from tests.support.dbt_projects import REPO


def test_the_starter_project_builds_and_streams(project):
    for path in (REPO / "starter").rglob("*"):
        if path.is_file() and path.name != "profiles.yml":
            target = project.root / path.relative_to(REPO / "starter")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    # the shared test session's profile (DbtProject's), under the starter's own project
    settings = yaml.safe_load((project.root / "dbt_project.yml").read_text())
    (project.root / "dbt_project.yml").write_text(yaml.safe_dump({**settings, "profile": "wv_test"}))

    result = project.dbt("build")
    assert sorted(r.node.name for r in result.result if r.status not in ("success", "pass")) == []
    assert [(str(s.time()), str(e.time()), r) for s, e, r in project.rows("revenue_per_10min")] == [
        ("08:00:00", "08:10:00", 11),
        ("08:10:00", "08:20:00", 10),
    ]
    # the watermark is 08:17 - 1 minute: [08:00, 08:10) is closed, [08:10, 08:20) is not yet
    assert [(str(s.time()), r, n) for s, _, r, n in project.rows("revenue_stream")] == [("08:00:00", 11, 3)]
    streamed = next(r for r in result.result if r.node.name == "revenue_stream")
    assert streamed.message.startswith("STREAM 1 batch, 6 in, 1 out, 0 late"), streamed.message
