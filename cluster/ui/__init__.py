"""The web view, `podsched ui` (docs/ui.md): a read-only client of the API server that serves a live page
of the cluster."""
