"""Property: a configuration file is read only when where it really lies is inside its folder,
whatever chain of links (absolute or relative, through sub-folders) leads there."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.config.confined import LeavesFolder, read_confined_text

# Each hop of a chain: where the next link (or the file at the end) lives, and how it is written.
hop = st.tuples(st.sampled_from(["inside", "inside/sub", "outside", "outside/sub"]), st.booleans())


@settings(max_examples=60, deadline=None)
@given(chain=st.lists(hop, min_size=1, max_size=4))
def test_read_only_when_the_end_of_the_chain_is_inside(chain: list[tuple[str, bool]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for folder in ("inside/sub", "outside/sub"):
            (root / folder).mkdir(parents=True)
        *links, (end_folder, _relative) = chain
        target = root / end_folder / "target.md"
        target.write_text("content", encoding="utf-8")
        for index, (where, relative) in enumerate(reversed(links)):
            link = root / where / f"link{index}.md"
            link.symlink_to(os.path.relpath(target, link.parent) if relative else target)
            target = link
        entry = root / "inside" / "AGENTS.md"
        entry.symlink_to(target)
        inside = (root / chain[-1][0]).is_relative_to(root / "inside")
        if inside:
            assert read_confined_text(entry, root / "inside") == "content"
        else:
            with pytest.raises(LeavesFolder):
                read_confined_text(entry, root / "inside")
