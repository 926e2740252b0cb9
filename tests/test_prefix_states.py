"""KV states of fixed prompt prefixes kept across calls: the cache's bookkeeping, then the real
0.5B model (the same text with and without kept states, and only the variable part evaluated)."""

import pytest

from lakeplanner.llm import LLMSettings, system, user
from lakeplanner.llm.base import LLM
from lakeplanner.llm.prefix_states import PrefixStates, Snapshot, shared_length


def snap(tokens, size=10):
    return Snapshot(tuple(tokens), b"x" * size)


def test_the_snapshot_sharing_the_longest_prefix_is_chosen():
    states = PrefixStates(1000)
    states.put(snap([1, 2, 3]))
    states.put(snap([1, 2, 3, 4, 5, 6]))
    states.put(snap([9, 9]))
    assert states.longest([1, 2, 3, 4, 5, 6, 7]).tokens == (1, 2, 3, 4, 5, 6)
    assert states.longest([1, 2, 3, 4, 7]).tokens == (1, 2, 3)  # a snapshot is used whole or not at all
    assert states.longest([8]) is None


def test_least_recently_used_snapshots_go_first_past_the_capacity():
    states = PrefixStates(25)
    states.put(snap([1]))
    states.put(snap([2]))
    states.longest([1])  # [1] is now the most recently used
    states.put(snap([3]))
    assert [1] in states and [3] in states and [2] not in states
    assert states.size_bytes == 20
    states.put(snap([4], size=30))  # larger than the whole cache: not kept, nothing dropped
    assert len(states) == 2


def test_shared_length():
    assert shared_length([1, 2, 3], [1, 2, 4]) == 2
    assert shared_length([], [1]) == 0
    assert shared_length([1, 2], [1, 2, 3]) == 2


RULES = " ".join(f"Rule {i}: prefer column {i} when a question names thing {i}." for i in range(30))
WRITER = "You write one SQL SELECT for the question over the tables below. " + RULES
PICKER = "You choose the passages that answer a question. " + " ".join(
    f"Step {i}: keep passage {i} when it names item {i}." for i in range(30)
)
CALLS = [
    ((WRITER, "\nTables: orders(id, total)"), "How many orders are there?"),
    ((PICKER,), "Who founded the company?"),
    ((WRITER, "\nTables: orders(id, total)"), "What is the largest total?"),
    ((PICKER,), "When was the bridge built?"),
    ((WRITER, "\nTables: staff(id, name, supervisor)"), "Who is staff 3?"),  # a changed schema
]


def asked(prefix_cache_mb: int, directory=None, calls=CALLS) -> list:
    from lakeplanner.llm.local import LocalBackend

    settings = LLMSettings(
        backend="local",
        model="small",
        prefix_cache_mb=prefix_cache_mb,
        prefix_states_on_disk=directory is not None,
        prefix_states_dir=directory,
    )
    llm = LLM(LocalBackend(settings), settings)
    try:
        return [llm.complete([system(*s), user(q)], max_tokens=12) for s, q in calls]
    finally:
        llm.close()


@pytest.mark.real_model
def test_alternating_prompt_families_evaluate_their_fixed_part_once():
    plain, kept = asked(0), asked(256)
    assert [c.text for c in kept] == [c.text for c in plain]
    sent = [c.usage.prompt_tokens for c in kept]
    evaluated = [c.usage.prompt_tokens_evaluated for c in kept]
    assert evaluated[:2] == sent[:2]  # each family's first call computes everything
    assert all(e < 30 for e in evaluated[2:4])  # the same family again: the question only
    # a changed schema slice keeps the writer's instructions, not the old tables
    assert 10 < evaluated[4] < sent[4] // 4
    without = [c.usage.prompt_tokens_evaluated for c in plain]
    assert all(w >= s - 5 for w, s in zip(without[1:], sent[1:], strict=True))  # families alternate: no reuse


def test_a_system_message_of_parts_marks_where_each_fixed_part_ends():
    message = system("fixed instructions\n", "a schema slice\n", "the rest")
    assert message.content == "fixed instructions\na schema slice\nthe rest"
    assert [message.content[:p] for p in message.cache_points] == [
        "fixed instructions\n",
        "fixed instructions\na schema slice\n",
    ]
    assert "cache_points" not in message.model_dump() and system("one").cache_points == ()


def test_snapshots_on_disk_serve_the_next_process_and_stay_within_the_capacity(tmp_path):
    first = PrefixStates(100, tmp_path)
    first.put(snap([1, 2]))
    first.put(snap([1, 2, 3]))
    later = PrefixStates(100, tmp_path)  # a new process, same directory
    assert later.longest([1, 2, 3, 4]) == snap([1, 2, 3])
    first.put(snap([7], size=60))  # files past 100 bytes on disk: the least recently used go
    assert [7] in PrefixStates(100, tmp_path) and len(list(tmp_path.glob("*.kv"))) == 1
    (tmp_path / "junk.kv").write_bytes(b"not a state")  # unreadable files are ignored
    assert len(PrefixStates(100, tmp_path)) == 1


@pytest.mark.real_model
def test_a_later_process_restores_the_prefixes_an_earlier_one_kept(tmp_path):
    cold = asked(256, tmp_path, CALLS[:2])
    warm = asked(256, tmp_path, CALLS[2:4])  # a new backend: same families, other questions
    assert [c.usage.prompt_tokens_evaluated for c in cold] == [c.usage.prompt_tokens for c in cold]
    assert all(c.usage.prompt_tokens_evaluated < 30 for c in warm)
    assert [c.text for c in warm] == [c.text for c in asked(0, None, CALLS[2:4])]


@pytest.mark.real_model
def test_a_prepared_prefix_leaves_the_first_call_of_a_later_process_its_question_only(tmp_path):
    from lakeplanner.llm.local import LocalBackend

    settings = LLMSettings(backend="local", model="small", prefix_cache_mb=256, prefix_states_dir=tmp_path)
    prefix = [system(*CALLS[0][0])]
    first = LocalBackend(settings)
    try:
        assert first.prepare(prefix) > 100
        assert first.prepare(prefix) == 0  # kept already
    finally:
        first.close()
    later = LLM(LocalBackend(settings), settings)  # a new process, same directory
    try:
        call = later.complete([*prefix, user(CALLS[0][1])], max_tokens=12)
    finally:
        later.close()
    assert call.usage.prompt_tokens_evaluated < 30
    assert call.text == asked(0, None, CALLS[:1])[0].text  # the same answer as a cold call's
