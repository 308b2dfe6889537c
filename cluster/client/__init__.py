"""The Python client of podsched's API server: `Client` (one method per verb, retries and failover across
API server replicas), `Informer` (a local, indexed, watch-fed copy of one kind, with handlers) and
`LeadershipWatch` (who leads the scheduler replicas, followed on their Lease).

Everything a program needs is importable from here; the modules behind it promise nothing more.
"""

from cluster.api.errors import (
    AlreadyExists,
    ApiError,
    Conflict,
    Expired,
    Fenced,
    Forbidden,
    InternalError,
    Invalid,
    NotFound,
    Unavailable,
)
from cluster.client.client import Client, Fence, ObjectList, RequestTooLarge, WatchEvent, object_request_bytes
from cluster.client.credentials import ClientCredentials, CredentialsError, TlsError
from cluster.client.informer import Informer
from cluster.client.leadership import LeaderChange, LeadershipWatch
from cluster.client.retry import DEFAULT_POLICY, FAIL_FAST_POLICY, RetryPolicy, ServerUnreachable

__all__ = [
    "DEFAULT_POLICY",
    "FAIL_FAST_POLICY",
    "AlreadyExists",
    "ApiError",
    "Client",
    "ClientCredentials",
    "Conflict",
    "CredentialsError",
    "Expired",
    "Fence",
    "Fenced",
    "Forbidden",
    "Informer",
    "InternalError",
    "Invalid",
    "LeaderChange",
    "LeadershipWatch",
    "NotFound",
    "ObjectList",
    "RequestTooLarge",
    "RetryPolicy",
    "ServerUnreachable",
    "TlsError",
    "Unavailable",
    "WatchEvent",
    "object_request_bytes",
]
