"""The values of spreadsheet cells that are dates and durations, as openpyxl reads them:
which number formats show a date or a duration, an Excel serial number in the workbook's
1900 or 1904 system, and a `t="d"` cell's ISO 8601 text (documents/sheet_xml.py)."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from typing import Any

# Excel's serial day 0 in the 1900 system (shifted a day for its fictitious 29 Feb 1900)
# and in the 1904 system (old Mac Excel).
WINDOWS_EPOCH = datetime(1899, 12, 30)
MAC_EPOCH = datetime(1904, 1, 1)
_SECONDS_PER_DAY = 86_400

# The built-in number formats that show dates or times (ECMA-376 part 1, 18.8.30, as
# openpyxl's BUILTIN_FORMATS lists them): 14-22 and 45-47; 46 is "[h]:mm:ss", a duration.
BUILTIN_DATE_FORMATS = frozenset({14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47})
BUILTIN_DURATION_FORMATS = frozenset({46})
# A custom format shows a date when its first section has a date/time letter outside
# quoted literals and bracketed locale/colour codes ([h], [mm], [ss] are elapsed time).
_FORMAT_LITERALS = re.compile(r'".*?"|\[(?!hh?\]|mm?\]|ss?\])[^\]]*\]')
_DATE_LETTER = re.compile(r"(?<![_\\])[dmhysDMHYS]")
_DURATION = re.compile(r"\[hh?\](:mm(:ss(\.0*)?)?)?|\[mm?\](:ss(\.0*)?)?|\[ss?\](\.0*)?", re.I)
_ISO_DATE = re.compile(
    r"(?P<date>(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2}))?T?"
    r"(?P<time>(?P<hour>\d{2}):(?P<minute>\d{2})(:(?P<second>\d{2})(?P<microsecond>\.\d{1,3})?)?)?Z?"
)
_ISO_DURATION = re.compile(r"PT((?P<hours>\d+)H)?((?P<minutes>\d+)M)?((?P<seconds>\d+(\.\d{1,3})?)S)?")


def is_date_format(code: str | None) -> bool:
    if code is None:
        return False
    return _DATE_LETTER.search(_FORMAT_LITERALS.sub("", code.split(";")[0])) is not None


def is_duration_format(code: str | None) -> bool:
    return code is not None and _DURATION.search(code.split(";")[0]) is not None


def excel_date(value: float, epoch: datetime, duration: bool = False) -> Any:
    """An Excel serial number as openpyxl's `from_excel` gives it: a timedelta for a
    duration, a time below 1, else a datetime ("#VALUE!" when out of range, as openpyxl)."""
    try:
        if duration:
            span = timedelta(days=value)
            if span.microseconds:  # to the millisecond, as Excel shows it
                span = timedelta(seconds=span.total_seconds() // 1, microseconds=round(span.microseconds, -3))
            return span
        day, fraction = divmod(value, 1)
        rest = timedelta(milliseconds=round(fraction * _SECONDS_PER_DAY * 1000))
        if 0 <= value < 1 and rest.days == 0:
            minutes, seconds = divmod(rest.seconds, 60)
            hours, minutes = divmod(minutes, 60)
            return time(hours, minutes, seconds, rest.microseconds)
        if 0 < value < 60 and epoch == WINDOWS_EPOCH:
            day += 1  # Excel counts a 29 February 1900 that never was
        return epoch + timedelta(days=day) + rest
    except (OverflowError, ValueError):
        return "#VALUE!"


def iso_date(text: str) -> date | datetime | time | timedelta | None:
    """A `t="d"` cell's ISO 8601 text, read as openpyxl's `from_ISO8601` reads it."""
    if not text:
        return None
    match = _ISO_DATE.match(text)
    if match and any(match.groups()):
        parts = match.groupdict(0)
        number = {
            k: int(parts[k]) if parts[k] else 0 for k in ("year", "month", "day", "hour", "minute", "second")
        }
        micro = int(float(parts["microsecond"]) * 1_000_000) if parts["microsecond"] else 0
        if not parts["date"]:
            return time(number["hour"], number["minute"], number["second"], micro)
        if not parts["time"]:
            return date(number["year"], number["month"], number["day"])
        return datetime(
            number["year"],
            number["month"],
            number["day"],
            number["hour"],
            number["minute"],
            number["second"],
            micro,
        )
    match = _ISO_DURATION.match(text)
    if match and any(match.groups()):
        return timedelta(**{k: float(v) for k, v in match.groupdict(0).items() if v})
    raise ValueError(f"invalid date {text!r}")
