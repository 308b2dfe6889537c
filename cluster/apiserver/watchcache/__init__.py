"""The API server's watch cache, as kube-apiserver's cacher: one store watch feeds, per kind, the current
objects (decoded once) and a ring of recent events, each serialized once for every watcher that sees it.

* framing.py: a WatchEvent's wire bytes from an object's bytes;
* ring.py: the decoded events and the bounded ring of recent ones;
* watcher.py: one Watch call's bounded queue of event bytes;
* kindcache.py: one kind's objects, ring and watchers;
* revisionprobe.py: the store's current revision, one probe shared by concurrent readers;
* reflector.py: the initial List and the one store watch, re-listed when it breaks;
* cacher.py: what the verbs ask: List, Get and Watch served from the cache, or from the store.
"""

from cluster.apiserver.watchcache.cacher import Cacher, CacheSettings, read_scope

__all__ = ["CacheSettings", "Cacher", "read_scope"]
