"""dbt's basic adapter suite (dbt.tests.adapter.basic) as dbt-spark runs it
(dbt-spark's tests/functional/adapter/test_basic.py), with its `spark_session` skips."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestRemovedIn10Warning")

SKIPPED_BY_DBT_SPARK = pytest.mark.skip(reason="dbt-spark skips it for its spark_session profile")


@SKIPPED_BY_DBT_SPARK
class TestSimpleMaterializations(BaseSimpleMaterializations):
    pass


class TestSingularTests(BaseSingularTests):
    pass


class TestSingularTestsEphemeral(BaseSingularTestsEphemeral):
    pass


class TestEmpty(BaseEmpty):
    pass


@SKIPPED_BY_DBT_SPARK
class TestEphemeral(BaseEphemeral):
    pass


@SKIPPED_BY_DBT_SPARK
class TestIncremental(BaseIncremental):
    pass


class TestGenericTests(BaseGenericTests):
    pass


# dbt-spark skips both for session (and apache_spark): they need Delta (delta.DefaultSource)
@SKIPPED_BY_DBT_SPARK
class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    pass


@SKIPPED_BY_DBT_SPARK
class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    pass


@SKIPPED_BY_DBT_SPARK
class TestAdapterMethod(BaseAdapterMethod):
    pass
