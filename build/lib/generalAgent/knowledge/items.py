"""The knowledge base's two records: an item (a note, a page, an indexed file) and its chunks.

Plain dataclasses with `to_dict` / `from_dict` that round-trip exactly (property-tested);
they are what the tools and `kb --json` show and what `save_chunks` takes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from generalAgent.search.schema import now_iso

# The `source` of a note the agent wrote in a turn that had read untrusted content (a file,
# a page, a tool's output): it may say what that content told it to (tools/provenance.py).
UNTRUSTED_SOURCE = "agent-untrusted"


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass
class KnowledgeItem:
    title: str
    content: str
    domain: str = "general"
    category: str = ""
    tags: list[str] = field(default_factory=list)
    source: str = "user"
    source_path: str | None = None
    priority: int = 1
    id: str = field(default_factory=new_id)
    created_at: str = field(default_factory=now_iso)
    updated_at: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "domain": self.domain,
            "category": self.category,
            "title": self.title,
            "content": self.content,
            "tags": list(self.tags),
            "source": self.source,
            "source_path": self.source_path,
            "priority": self.priority,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KnowledgeItem:
        item = cls(
            title=data["title"],
            content=data["content"],
            domain=data.get("domain", "general"),
            category=data.get("category", ""),
            tags=list(data.get("tags", [])),
            source=data.get("source", "user"),
            source_path=data.get("source_path"),
            priority=int(data.get("priority", 1)),
        )
        for key in ("id", "created_at", "updated_at"):
            if key in data:
                setattr(item, key, data[key])
        return item


@dataclass
class KnowledgeChunk:
    item_id: str
    chunk_index: int
    content: str
    heading: str = ""
    start_position: int = 0
    end_position: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "item_id": self.item_id,
            "chunk_index": self.chunk_index,
            "content": self.content,
            "heading": self.heading,
            "start_position": self.start_position,
            "end_position": self.end_position,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KnowledgeChunk:
        chunk = cls(
            item_id=data["item_id"],
            chunk_index=int(data["chunk_index"]),
            content=data["content"],
            heading=data.get("heading", ""),
            start_position=int(data.get("start_position", 0)),
            end_position=int(data.get("end_position", 0)),
            metadata=dict(data.get("metadata", {})),
        )
        if "id" in data:
            chunk.id = data["id"]
        return chunk
