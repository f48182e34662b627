"""Page outcomes back in fetch order, for the page rules.

A NULL page leaves the pipeline at extraction; an article still waits on notice suppression and
near-duplicate detection (store round trips). Under load an article fetched before a redesign can
reach monitoring several seconds after the redesign's first NULLs, and the sliding window of the
page rules then mixes old and new pages: the alert comes pages later than the site broke (the
redesign test saw it at the 22nd broken page instead of the 15th). So each page takes a ticket
when it enters the item pipeline (the order the spider produced it) and its outcome is released
to the rules only once every earlier ticket of its domain is settled: an article, a NULL, or
nothing (a duplicate, an item error). A ticket that never settles (an item lost to a bug) holds
its domain back at most `max_wait_seconds`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipelines.monitoring.alerts import Outcome

    Settled = dict[int, tuple[float, Outcome | None]]  # ticket -> (when settled, outcome)


class PageOrder:
    def __init__(self, max_wait_seconds: float) -> None:
        self.max_wait_seconds = max_wait_seconds
        self._issued: Counter[str] = Counter()  # next ticket per domain
        self._released: Counter[str] = Counter()  # first unsettled ticket per domain
        # Settled tickets waiting for an earlier one, per domain (outcome None: settled, no page).
        self._waiting: dict[str, Settled] = {}

    def ticket(self, domain: str) -> int:
        ticket = self._issued[domain]
        self._issued[domain] = ticket + 1
        return ticket

    def settle(
        self, domain: str, ticket: int, outcome: Outcome | None, now: float
    ) -> list[Outcome]:
        """Record a ticket's outcome; returns the outcomes now released, in ticket order."""
        if ticket < self._released[domain]:  # given up on as overdue: released as it comes
            return [] if outcome is None else [outcome]
        waiting = self._waiting.setdefault(domain, {})
        waiting[ticket] = (now, outcome)
        return self._release(domain, waiting)

    def overdue(self, now: float) -> dict[str, list[Outcome]]:
        """Release past the unsettled tickets that held a domain back longer than allowed."""
        released: dict[str, list[Outcome]] = {}
        for domain, waiting in list(self._waiting.items()):
            if now - min(settled for settled, _ in waiting.values()) > self.max_wait_seconds:
                self._released[domain] = min(waiting)
                released[domain] = self._release(domain, waiting)
        return released

    def drain(self) -> dict[str, list[Outcome]]:
        """Everything still waiting, in ticket order (the crawl is closing)."""
        released: dict[str, list[Outcome]] = {}
        for domain, waiting in list(self._waiting.items()):
            del self._waiting[domain]
            ordered = (waiting[ticket][1] for ticket in sorted(waiting))
            released[domain] = [outcome for outcome in ordered if outcome is not None]
        return released

    def _release(self, domain: str, waiting: Settled) -> list[Outcome]:
        released = []
        next_ticket = self._released[domain]
        while next_ticket in waiting:
            outcome = waiting.pop(next_ticket)[1]
            if outcome is not None:
                released.append(outcome)
            next_ticket += 1
        self._released[domain] = next_ticket
        if not waiting:
            del self._waiting[domain]
        return released
