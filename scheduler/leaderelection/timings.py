"""The three durations of a leader election and the rules they must keep, in one place: the elector
refuses timings that break them, and the scheduler configuration's leaderElection section and the
``podsched scheduler`` / ``podsched up`` flags are checked against the same rules.

The rules are client-go's (NewLeaderElector): every duration finite and above zero, LeaseDuration above
RenewDeadline (the leader stops before anyone may take over), and RenewDeadline above RetryPeriod x
JitterFactor (a leader gets more than one jittered attempt to renew before its deadline).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: client-go's JitterFactor: a candidate waits RetryPeriod * (1 + 1.2 * random()) between attempts, so
#: that candidates started together drift apart.
JITTER_FACTOR = 1.2
#: kube-scheduler's defaults (--leader-elect-lease-duration, -renew-deadline, -retry-period).
DEFAULT_LEASE_DURATION_S = 15.0
DEFAULT_RENEW_DEADLINE_S = 10.0
DEFAULT_RETRY_PERIOD_S = 2.0

#: The rules, as ``TimingViolation.rule`` names them.
FINITE = "finite"
POSITIVE = "positive"
LEASE_ABOVE_RENEW = "lease above renew"
RENEW_ABOVE_JITTERED_RETRY = "renew above jittered retry"


@dataclass(frozen=True, slots=True)
class TimingViolation:
    """One rule the timings break."""

    rule: str
    #: The duration at fault, named as the config file's leaderElection section names it.
    field: str
    #: What it must be, in client-go's words ("must be greater than renewDeadline").
    requirement: str
    #: The durations whose values show the violation (the one at fault first).
    compared: tuple[str, ...]


def timing_violations(
    lease_duration_s: float, renew_deadline_s: float, retry_period_s: float
) -> list[TimingViolation]:
    """Every rule these timings break (empty when none). A value that is not finite is reported alone:
    comparing it says nothing more."""
    values = {"leaseDuration": lease_duration_s, "renewDeadline": renew_deadline_s,
              "retryPeriod": retry_period_s}
    violations = [TimingViolation(FINITE, field, "must be a finite number of seconds", (field,))
                  for field, value in values.items() if not math.isfinite(value)]
    if violations:
        return violations
    if not lease_duration_s > renew_deadline_s:
        violations.append(TimingViolation(
            LEASE_ABOVE_RENEW, "leaseDuration", "must be greater than renewDeadline",
            ("leaseDuration", "renewDeadline")))
    if not renew_deadline_s > JITTER_FACTOR * retry_period_s:
        violations.append(TimingViolation(
            RENEW_ABOVE_JITTERED_RETRY, "renewDeadline",
            f"must be greater than retryPeriod*JitterFactor (JitterFactor {JITTER_FACTOR:g})",
            ("renewDeadline", "retryPeriod")))
    violations += [TimingViolation(POSITIVE, field, "must be greater than zero", (field,))
                   for field, value in values.items() if not value > 0]
    return violations


def validate_timings(lease_duration_s: float, renew_deadline_s: float, retry_period_s: float) -> list[str]:
    """What client-go's NewLeaderElector would reject in these timings (empty when nothing), in its
    words, naming the fields as the config file's leaderElection section does, with the values given."""
    values = {"leaseDuration": lease_duration_s, "renewDeadline": renew_deadline_s,
              "retryPeriod": retry_period_s}
    problems = []
    for violation in timing_violations(lease_duration_s, renew_deadline_s, retry_period_s):
        if violation.rule == FINITE:
            got = f"{violation.field} {values[violation.field]}"
        else:
            got = ", ".join(f"{field} {values[field]:g}s" for field in violation.compared)
        problems.append(f"{violation.field} {violation.requirement}: got {got}")
    return problems


@dataclass(frozen=True, slots=True)
class LeaderElectionTimings:
    """The three durations of an election, in seconds; validated as client-go validates them."""

    #: How long a standby waits, after it last saw the record change, before it takes over (default
    #: 15 s). Shorter means faster failover and less tolerance for a leader's slow renewals.
    lease_duration_s: float = DEFAULT_LEASE_DURATION_S
    #: How long, since its last successful renewal, a leader keeps trying to renew before it stops
    #: leading (default 10 s). Must stay below lease_duration_s: the leader stops before anyone takes over.
    renew_deadline_s: float = DEFAULT_RENEW_DEADLINE_S
    #: The pause between attempts, for candidates and for the leader's renewals (default 2 s).
    retry_period_s: float = DEFAULT_RETRY_PERIOD_S

    def __post_init__(self) -> None:
        problems = validate_timings(self.lease_duration_s, self.renew_deadline_s, self.retry_period_s)
        if problems:
            raise ValueError("; ".join(problems))
