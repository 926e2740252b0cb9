"""Planning: a question compiles into a validated DAG of single-source sub-queries (seed 000)."""
