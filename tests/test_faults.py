"""The fault matrix (tests/faults.py): every fault caused for real ends in a clear error or a correct
answer, shows no traceback, and leaves the lake opening at its last committed state."""

import pytest
from faults import FAULTS


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_a_fault_is_named_with_its_fix_and_the_lake_survives(fault, tmp_path):
    seen = fault.run(tmp_path)
    assert seen["clear_error"] or seen["answered"], seen
    assert not seen["traceback"], seen
    assert seen["lake_ok"], seen
