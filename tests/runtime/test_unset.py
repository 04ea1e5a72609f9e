"""``runtime.UNSET``: what a name holds in derived code before a loop sets it."""

import pickle

import numpy as np
import pytest

from tangent_ast import runtime


def test_its_zero_tangent_adds_up():
    assert runtime.zeros_like(runtime.UNSET) == 0.0
    assert runtime.zero_tangent(runtime.UNSET) == 0.0
    ct = runtime.zero_tangent([runtime.UNSET, np.ones(2)])
    np.testing.assert_array_equal(ct[0] + ct[1], np.zeros(2))


def test_no_arithmetic_takes_it():
    with pytest.raises(TypeError):
        runtime.UNSET * 2.0


def test_it_pickles_as_itself():
    assert pickle.loads(pickle.dumps(runtime.UNSET)) is runtime.UNSET
    assert repr(runtime.UNSET) == "UNSET"
