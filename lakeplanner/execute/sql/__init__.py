"""SQL steps: the statement a step runs (statement), the writer's prompt (prompt), the lake values a step
names (values), the pure rewrites of a written statement (rewrites), the rewrites that ask the engine
(probes), and statements per period (periods)."""
