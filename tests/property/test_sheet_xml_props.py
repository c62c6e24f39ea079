"""Property: a random sheet written by openpyxl reads the same through documents/workbook.py
(python-calamine) as through openpyxl itself: numbers, strings with XML escapes, CJK, new lines and
surrounding spaces, booleans, dates, times, durations, blanks, in the 1900 and 1904
date systems, with strings inline (openpyxl) or shared (Excel).
"""

from __future__ import annotations

import tempfile
from datetime import date, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.sheets import openpyxl_rows, read_all, with_shared_strings

# openpyxl refuses the C0 controls other than tab, new line and carriage return.
_ILLEGAL = "".join(chr(c) for c in [*range(0, 9), 11, 12, *range(14, 32)])
texts = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("&<>\"' \t\n\rab=#中文漢字…")),
        st.characters(blacklist_categories=("Cs",), blacklist_characters=_ILLEGAL),
    ),
    max_size=12,
)
cells = st.one_of(
    st.none(),
    st.integers(min_value=-(10**15), max_value=10**15),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    texts,
    st.booleans(),
    st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 12, 31)),
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 12, 31)),
    st.times(),
    st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=3000)),
)
sheets = st.lists(st.lists(cells, max_size=6), max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=sheets, other=sheets, mac=st.booleans())
def test_random_sheets_read_as_openpyxl_reads_them(
    rows: list[list[object]], other: list[list[object]], mac: bool
):
    import openpyxl
    from openpyxl.utils.datetime import CALENDAR_MAC_1904

    if mac:  # a date before 1904 is a negative serial there, which Excel cannot show (####)
        rows, other = _after_1904(rows), _after_1904(other)
    workbook = openpyxl.Workbook()
    if mac:
        workbook.epoch = CALENDAR_MAC_1904
    workbook.active.title = "一"
    for row in rows:
        workbook.active.append(row)
    second = workbook.create_sheet("two & <three>")
    for row in other:
        second.append(row)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "random.xlsx"
        workbook.save(path)
        shared = with_shared_strings(path, Path(folder) / "shared.xlsx")
        for each in (path, shared):
            expected = openpyxl_rows(each)
            assert read_all(each) == expected


def _after_1904(rows: list[list[object]]) -> list[list[object]]:
    """The rows with dates before 1 January 1904 left empty: openpyxl writes them as negative
    serial numbers in a 1904 workbook, which calamine reads as a time of day."""
    return [[None if isinstance(v, date) and v < type(v)(1904, 1, 1) else v for v in row] for row in rows]
