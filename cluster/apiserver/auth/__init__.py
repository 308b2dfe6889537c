"""Authentication, authorization and the identity of API calls.

identity.py: UserInfo (who calls) and RequestInfo (what the call asks), shared by the
authenticators, the authorizer and the request gates.
"""

from cluster.apiserver.auth.identity import ANONYMOUS, RequestInfo, UserInfo

__all__ = ["ANONYMOUS", "RequestInfo", "UserInfo"]
