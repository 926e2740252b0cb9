"""Golden question -> plan -> SQL files of the sample lakes, and the cassettes that replay their LLM calls."""
