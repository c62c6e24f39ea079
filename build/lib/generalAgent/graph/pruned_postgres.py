"""PostgresSaver that keeps only each thread's latest checkpoint (imported only with the `postgres` extra).

The same rule as `PrunedSqliteSaver` (see checkpoints.py): each save deletes the thread's
older checkpoints, their writes and the per-channel blobs only they used, in the save's
own transaction. Threads stored before are pruned once at start-up with LangGraph's own
`prune(strategy="keep_latest")` (`prune_all`). Dead rows are reclaimed by PostgreSQL's
autovacuum, which is its incremental vacuum.
"""

from __future__ import annotations

import logging

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.types.json import Jsonb

LOGGER = logging.getLogger(__name__)

# Checkpoint ids grow with time, so "older" is "<". Writes of an older step may be saved
# after its successor checkpoint (LangGraph saves both in the background): they go too.
PRUNE_OLDER_SQL = (
    "DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id < %s",
    "DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id < %s",
)
# A blob is a channel's value at one version; the ones no kept checkpoint names are garbage.
UNUSED_BLOBS_SQL = """
DELETE FROM checkpoint_blobs b
WHERE b.thread_id = %s AND b.checkpoint_ns = %s AND NOT EXISTS (
    SELECT 1 FROM checkpoints c
    WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
    AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version
)
"""
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
        """Save `checkpoint` and delete what only the thread's older checkpoints used, in
        one transaction: one commit per step, as in `PrunedSqliteSaver`, and no moment
        where the thread has both or neither.

        The rows are PostgresSaver's own (its SQL and blob encoding); the prune is
        `prune(strategy="keep_latest")` for a thread of one namespace, which is what a
        thread of ours is (a sub-agent runs on a thread of its own, not as a subgraph).
        No channel of ours is a DeltaChannel, whose value would need the older rows.
        """
        where = config["configurable"]
        thread_id, namespace = str(where["thread_id"]), where["checkpoint_ns"]
        values = dict(checkpoint["channel_values"])
        blobs = {
            channel: values.pop(channel)
            for channel, value in checkpoint["channel_values"].items()
            if not (value is None or isinstance(value, str | int | float | bool))
        }
        inline = {**checkpoint, "channel_values": values}
        blob_versions = {k: v for k, v in new_versions.items() if k in blobs}
        key = (thread_id, namespace, checkpoint["id"])
        with self._cursor() as cur, cur.connection.transaction():
            if blob_versions:
                cur.executemany(
                    self.UPSERT_CHECKPOINT_BLOBS_SQL,
                    self._dump_blobs(thread_id, namespace, blobs, blob_versions),
                )
            cur.execute(
                self.UPSERT_CHECKPOINTS_SQL,
                (
                    *key,
                    where.get("checkpoint_id"),
                    Jsonb(inline),
                    Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
                ),
            )
            for sql in PRUNE_OLDER_SQL:
                cur.execute(sql, key)
            cur.execute(UNUSED_BLOBS_SQL, key[:2])
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": namespace, "checkpoint_id": key[2]}}

    def prune_all(self) -> int:
        """Prune every thread that still has older checkpoints; returns how many threads."""
        with self._cursor() as cur:
            threads = [row["thread_id"] for row in cur.execute(THREADS_TO_PRUNE_SQL).fetchall()]
        if threads:
            self.prune(threads, strategy="keep_latest")
        return len(threads)
