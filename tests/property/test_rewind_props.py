"""Restoring after any sequence of writes gives back each file as it was at the chosen point."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generalAgent.agent.rewind import files_plan, restore_files
from generalAgent.snapshots import SnapshotStore, snapshot_hook
from generalAgent.tools.workspace import Workspace

NAMES = ("outputs/a.md", "outputs/b.txt", "outputs/sub/c.bin")
# One step of a turn: (start the next turn first?, which file, what the agent writes).
AGENT_WRITE = st.tuples(st.booleans(), st.sampled_from(NAMES), st.binary(max_size=40))
# Before the chosen point the user may also change files (None: a change of the user's).
EARLIER_STEP = st.tuples(st.booleans(), st.sampled_from(NAMES), st.one_of(st.none(), st.binary(max_size=40)))


def read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def play(workspace: Workspace, store: SnapshotStore, steps, turn: int) -> int:
    """Run the steps from `turn` on; returns the last turn."""
    for next_turn, name, content in steps:
        turn += next_turn
        real = workspace.root / name
        if content is None:
            real.parent.mkdir(parents=True, exist_ok=True)
            real.write_bytes(b"the user's own version")
            continue
        agent = Workspace(root=workspace.root, before_write=snapshot_hook(store, "s", turn, read))
        agent.write_bytes(real, content)
    return turn


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    earlier=st.lists(EARLIER_STEP, max_size=8),
    since=st.lists(AGENT_WRITE, max_size=8),
    changed_after=st.sets(st.sampled_from(NAMES)),
)
def test_restoring_gives_back_each_file_as_of_the_chosen_turn(earlier, since, changed_after) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SnapshotStore(Path(tmp) / "snapshots.db")
        workspace = Workspace.for_session(Path(tmp) / "workspaces", "s")
        target = play(workspace, store, earlier, 0) + 1  # the point: the next turn's message
        as_of = {name: read(workspace.root / name) for name in NAMES}
        play(workspace, store, [(False, n, c) for _next, n, c in since], target)
        written_since = {name for _next, name, _content in since}
        for name in changed_after:  # the user works on files after the agent
            (workspace.root / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace.root / name).write_bytes(b"changed after the agent")
        now = {name: read(workspace.root / name) for name in NAMES}

        plan = files_plan(store, "s", target)
        report = restore_files(plan, store, workspace, delete_created=True)

        for name in NAMES:
            real = workspace.root / name
            if name not in written_since:  # the agent did not write it since then: untouched
                assert read(real) == now[name]
            elif name in changed_after and now[name] != as_of[name]:  # a conflict: left alone
                assert read(real) == now[name] and str(real.resolve()) in report.kept
            else:  # as it stood at the chosen point (deleted if it did not exist)
                assert read(real) == as_of[name]
        assert {step.path for step in plan} == {str((workspace.root / n).resolve()) for n in written_since}
