"""dbt's relation cache, filled at a schema's first lookup: dbt lists every schema's relations
before any model runs, which starts Spark's JVM in-process (seconds), or opens the Spark Connect
client (half a second of imports) and asks the server, even for a command that looks nothing up,
such as `dbt compile` of models that query nothing."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.utils.formatting import lowercase


class DeferredSchemas:
    """The schemas dbt asked to cache before any model runs, each listed only when a lookup first
    needs it."""

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
    """dbt-spark's adapter whose cache population waits for a lookup."""

    def __init__(self, config: Any, mp_context: Any) -> None:
        self._deferred = DeferredSchemas()
        super().__init__(config, mp_context)

    def _relations_cache_for_schemas(
        self, relation_configs: Iterable[Any], cache_schemas: Optional[Set[BaseRelation]] = None
    ) -> None:
        self._deferred.defer(cache_schemas or self._get_cache_schemas(relation_configs))

    def list_relations(self, database: Optional[str], schema: str) -> List[BaseRelation]:
        self._deferred.fill(self, database, schema)
        return super().list_relations(database, schema)
