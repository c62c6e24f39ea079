"""PostgresSaver that keeps only each thread's latest checkpoint (imported only with the `postgres` extra).

The same rule as `PrunedSqliteSaver` (see checkpoints.py), with LangGraph's own
`prune(strategy="keep_latest")`, which also drops the per-channel blobs only older
checkpoints used. It works on one snapshot of the thread, so writes a run saves meanwhile
are neither seen nor deleted; writes of an older step that land after their checkpoint
was pruned are deleted by the next save. Dead rows are reclaimed by PostgreSQL's
autovacuum, which is its incremental vacuum.
"""

from __future__ import annotations

import logging

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver

LOGGER = logging.getLogger(__name__)

OLDER_WRITES_SQL = (
    "DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id < %s"
)
THREADS_TO_PRUNE_SQL = (
    "SELECT DISTINCT thread_id FROM checkpoints GROUP BY thread_id, checkpoint_ns HAVING count(*) > 1"
)


class PrunedPostgresSaver(PostgresSaver):
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        saved = super().put(config, checkpoint, metadata, new_versions)
        where = saved["configurable"]
        try:
            self.prune([str(where["thread_id"])], strategy="keep_latest")
            with self._cursor() as cur:
                cur.execute(
                    OLDER_WRITES_SQL,
                    (str(where["thread_id"]), where["checkpoint_ns"], where["checkpoint_id"]),
                )
        except psycopg.Error as exc:  # housekeeping: the next save prunes again
            LOGGER.warning("old checkpoints not pruned: %s", exc)
        return saved

    def prune_all(self) -> int:
        """Prune every thread that still has older checkpoints; returns how many threads."""
        with self._cursor() as cur:
            threads = [row["thread_id"] for row in cur.execute(THREADS_TO_PRUNE_SQL).fetchall()]
        if threads:
            self.prune(threads, strategy="keep_latest")
        return len(threads)
