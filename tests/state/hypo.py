"""The two hypothesis budgets of the split-equals-one-shot tests: ``quick`` for the default
suite, ``many`` for ``make test-slow``."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings


def quick(n: int) -> settings:
    """``n`` examples, no shrinking (a failure is shown unshrunk, fast), no deadline."""
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )


def many(n: int) -> settings:
    """``n`` examples, shrunk on failure, no deadline (the slow campaigns)."""
    return settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck))
