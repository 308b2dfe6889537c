"""Scheduler extenders (KEP-1819): HTTP webhooks that filter, prioritize, preempt and bind."""
