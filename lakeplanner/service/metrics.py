"""Prometheus metrics of one service process (text format at /metrics)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("lakeplanner_requests", "HTTP requests", ["endpoint", "status"], registry=self.registry)
        self.latency = Histogram(
            "lakeplanner_request_seconds",
            "seconds per request",
            ["endpoint"],
            buckets=(0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 20, 40, 80, 160, 320),
            registry=self.registry,
        )
        self.queue_depth = Gauge("lakeplanner_queue_depth", "questions running or waiting", registry=self.registry)
        self.rejected = Counter("lakeplanner_queue_rejections", "questions refused with 429", registry=self.registry)
        self.plan_cache = Counter("lakeplanner_plan_cache", "plan cache lookups", ["result"], registry=self.registry)
        self.tokens = Counter("lakeplanner_llm_tokens", "LLM tokens", ["kind"], registry=self.registry)
        self.llm_calls = Counter("lakeplanner_llm_calls", "LLM calls", registry=self.registry)
        self.policy = Counter("lakeplanner_policy_decisions", "denied requests", ["decision"], registry=self.registry)
