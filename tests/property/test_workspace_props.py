"""No generated path, however odd, resolves outside the workspace or its read-only mounts."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.tools.workspace import Workspace, WorkspaceError

_SEGMENTS = st.one_of(
    st.sampled_from(
        ["..", ".", "uploads", "outputs", "temp", "skills", "~", "", "．．", "／", "..\\..", "%2e%2e", "\x00"]
    ),
    st.text(min_size=1, max_size=12),
)
_PATHS = st.one_of(
    st.lists(_SEGMENTS, min_size=1, max_size=6).map("/".join),
    st.lists(_SEGMENTS, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts)),
    st.text(max_size=40),
)

_ROOT = Path(tempfile.mkdtemp(prefix="ws-prop-"))
_SKILLS = _ROOT / "skills-src"
(_SKILLS / "pdf").mkdir(parents=True)
_WORKSPACE = Workspace.for_session(_ROOT / "workspaces", "s1", skills_dir=_SKILLS)


@settings(max_examples=400)
@given(_PATHS, st.booleans())
def test_resolved_paths_stay_inside(path: str, for_writing: bool) -> None:
    try:
        real = _WORKSPACE.resolve(path, for_writing=for_writing)
    except WorkspaceError:
        return
    allowed = [_WORKSPACE.root, _SKILLS.resolve()]
    assert any(real == base or base in real.parents for base in allowed), (path, real)
    if for_writing:
        relative = real.relative_to(_WORKSPACE.root)
        assert relative.parts[0] in {"outputs", "temp"}
