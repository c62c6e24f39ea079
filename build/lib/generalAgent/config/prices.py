"""Model prices for the cost line: MODEL_PRICES parsed into a table by model name."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """What a model costs per million tokens: fresh input, input served from the cache, output."""

    input: float
    cached_input: float
    output: float

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        fresh = max(0, input_tokens - cached_tokens)
        return (fresh * self.input + cached_tokens * self.cached_input + output_tokens * self.output) / 1e6


PRICE_FORMAT = (
    "model=input/cached input/output per million tokens, comma-separated, e.g. deepseek-chat=2/0.5/8"
)


def parse_prices(text: str | None) -> dict[str, Price]:
    """MODEL_PRICES as a table by model name; ValueError saying what is wrong."""
    prices: dict[str, Price] = {}
    for entry in (text or "").split(","):
        if not entry.strip():
            continue
        name, equals, figures = entry.partition("=")
        parts = figures.split("/")
        try:
            numbers = [float(part) for part in parts]
        except ValueError:
            numbers = []
        if not equals or not name.strip() or len(numbers) != 3 or any(n < 0 for n in numbers):
            raise ValueError(f"{entry.strip()!r} is not {PRICE_FORMAT}")
        prices[name.strip()] = Price(*numbers)
    return prices
