"""The one failure of a conversion: the served version's value has no equal in the stored version."""

from __future__ import annotations


class ConversionError(Exception):
    """``problems``: each ``<field path>: <problem>`` in apimachinery's field error wording, the path in
    the served version's names."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
