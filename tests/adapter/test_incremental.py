"""dbt-spark's incremental classes (its tests/functional/adapter/incremental*/) on the plugin, each
configured as dbt-spark configures it and skipped only where dbt-spark skips it for its
`spark_session` profile. dbt-spark's incremental_strategies classes (TestDefaultAppend,
TestInsertOverwrite, TestDeltaStrategies, TestBadStrategies) are its own fixtures, and dbt-spark
skips every one of their tests for `spark_session`: they are not repeated here."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import BaseMergeExcludeColumns
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import BaseIncrementalOnSchemaChangeSetup
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.util import check_relations_equal, run_dbt

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestRemovedIn10Warning")

SKIPPED_BY_DBT_SPARK = pytest.mark.skip(reason="dbt-spark skips it for its spark_session profile")


class IgnoreOrFail(BaseIncrementalOnSchemaChangeSetup):
    """on_schema_change 'ignore' and 'fail': what Spark's formats all support."""

    def test_run_incremental_ignore(self, project):
        models = "model_a incremental_ignore incremental_ignore_target"
        self.run_twice_and_assert(models, "incremental_ignore", "incremental_ignore_target", project)

    def test_run_incremental_fail_on_schema_change(self, project):
        models = "model_a incremental_fail"
        run_dbt(["run", "--select", models, "--full-refresh"])
        second = run_dbt(["run", "--select", models], expect_pass=False)
        assert "Compilation Error" in second[1].message


class TestAppendOnSchemaChange(IgnoreOrFail):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "append"}}


@SKIPPED_BY_DBT_SPARK
class TestInsertOverwriteOnSchemaChange(IgnoreOrFail):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {"+file_format": "parquet", "+partition_by": "id", "+incremental_strategy": "insert_overwrite"}
        }


@SKIPPED_BY_DBT_SPARK
class TestDeltaOnSchemaChange(BaseIncrementalOnSchemaChangeSetup):
    pass


# new columns whose names need quoting; Spark takes no spaces or dots in a parquet column's name
_SOURCE = """
{{ config(materialized='table') }}
select 1 as id, 'a' as {{ adapter.quote("select") }}, 10 as {{ adapter.quote("with-dash") }}
union all select 2, 'b', 20
union all select 3, 'c', 30
union all select 4, 'd', 40
"""
_APPEND_NEW = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns') }}
{% if is_incremental() %}
select id, {{ adapter.quote("select") }}, {{ adapter.quote("with-dash") }} from {{ ref('quoted_source') }}
where id not in (select id from {{ this }})
{% else %}
select id, {{ adapter.quote("select") }} from {{ ref('quoted_source') }} where id <= 2
{% endif %}
"""
_APPEND_NEW_EXPECTED = """
{{ config(materialized='table') }}
select id, {{ adapter.quote("select") }},
       case when id <= 2 then null else {{ adapter.quote("with-dash") }} end as {{ adapter.quote("with-dash") }}
from {{ ref('quoted_source') }}
"""


class TestAppendOnSchemaChangeSpecialChars(BaseIncrementalOnSchemaChangeSetup):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "append"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "quoted_source.sql": _SOURCE,
            "append_new_quoted.sql": _APPEND_NEW,
            "append_new_quoted_expected.sql": _APPEND_NEW_EXPECTED,
        }

    def test_incremental_append_new_columns_with_special_characters(self, project):
        run_dbt(["run"])
        run_dbt(["run"])
        check_relations_equal(project.adapter, ["append_new_quoted", "append_new_quoted_expected"])


@SKIPPED_BY_DBT_SPARK
class TestMicrobatch(BaseMicrobatch):
    pass


@SKIPPED_BY_DBT_SPARK
class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


@SKIPPED_BY_DBT_SPARK
class TestIncrementalPredicatesMerge(BaseIncrementalPredicates):
    pass


@SKIPPED_BY_DBT_SPARK
class TestUniqueKey(BaseIncrementalUniqueKey):
    pass
