"""What a check returns and reads: the ``Check`` names, a ``Failure`` (OME's exact message plus
structured values) and a model's ``ModelFit`` against one runtime spec."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ome_selector.domain.enums import IdentityEnum
from ome_selector.domain.objects import Entry
from ome_selector.texts import messages


class Check(IdentityEnum):
    """Check names, in canonical order; the same names as the proto enum ``ome.selector.v1.Check``
    (rpc/enums.py ``CHECK_TO_PB`` maps them)."""

    DISABLED = enum.auto()
    ACCELERATOR_CLASS = enum.auto()
    DEPLOYMENT_MODE = enum.auto()
    MODEL_FORMAT = enum.auto()
    MODEL_SIZE = enum.auto()
    AUTO_SELECT = enum.auto()
    SCORE = enum.auto()


@dataclass(frozen=True, slots=True)
class EntryMismatch:
    """Why one entry does not match: its index and each difference, in OME's order."""

    index: int
    differences: tuple[str, ...]

    @property
    def text(self) -> str:
        """The differences joined by ``, `` (``unknown mismatch`` when there are none)."""
        return ", ".join(self.differences) if self.differences else messages.UNKNOWN_MISMATCH


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed check: OME's exact ``message`` plus structured values."""

    check: Check
    message: str
    component: str = ""
    runtime_value: str = ""
    requested_value: str = ""
    entries: tuple[EntryMismatch, ...] = ()


@dataclass(frozen=True, slots=True)
class ModelFit:
    """How a model fits a runtime spec; depends only on the two, so it is cached by content
    (engine/memo.py: the model's ``cache_key`` and the spec).

    ``match`` is the first entry that strictly matches (or None); ``score`` and ``score_index``
    come from the lenient scorer (runtime-selection-scoring.md): the highest entry score (0 when
    none is above 0) and the index of the first entry with it (-1 when none); ``format_failure`` and
    ``size_failure`` are the model-format and model-size check results.
    """

    match: Entry | None
    score: int
    score_index: int
    format_failure: Failure | None
    size_failure: Failure | None
    distance_low: float | None
    distance_high: float | None
