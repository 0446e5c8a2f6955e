"""dbt's relation cache with `warm_spark`: dbt lists every schema's relations before any model
runs, which opens the Spark Connect client (half a second of imports) and asks the server even
for a command that looks nothing up; here a schema is listed at its first lookup instead."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.utils.formatting import lowercase


class DeferredSchemas:
    """The schemas dbt asked to cache before any model runs, listed only when a lookup first needs
    one (`warm_spark`): a command that looks nothing up, such as `dbt compile` of models that query
    nothing, then opens no Spark Connect client at all (its import alone is half a second)."""

    def __init__(self) -> None:
        self._schemas: Dict[Tuple[Optional[str], str], BaseRelation] = {}

    @staticmethod
    def _key(database: Optional[str], schema: str) -> Tuple[Optional[str], str]:
        return (lowercase(database), schema.lower())  # as dbt's cache compares schemas

    def defer(self, schemas: Iterable[BaseRelation]) -> None:
        self._schemas.update({self._key(s.database, s.schema): s for s in schemas if s.schema})

    def fill(self, adapter: SparkAdapter, database: Optional[str], schema: str) -> None:
        """Cache a deferred schema's relations, once: under the cache's lock, so another thread's
        lookup in it waits for them instead of listing it again."""
        with adapter.cache.lock:
            relation = self._schemas.pop(self._key(database, schema), None)
            if relation is None:
                return
            for found in adapter.list_relations_without_caching(relation):
                adapter.cache.add(found)
            adapter.cache.update_schemas([(database, schema)])  # an empty schema too: no second listing


class LazyRelationCache(SparkAdapter):
    """dbt-spark's adapter whose cache population waits for a lookup when `_deferred` is set."""

    _deferred: Optional[DeferredSchemas] = None

    def _relations_cache_for_schemas(
        self, relation_configs: Iterable[Any], cache_schemas: Optional[Set[BaseRelation]] = None
    ) -> None:
        if self._deferred is None:
            super()._relations_cache_for_schemas(relation_configs, cache_schemas)
        else:
            self._deferred.defer(cache_schemas or self._get_cache_schemas(relation_configs))

    def list_relations(self, database: Optional[str], schema: str) -> List[BaseRelation]:
        if self._deferred is not None:
            self._deferred.fill(self, database, schema)
        return super().list_relations(database, schema)
