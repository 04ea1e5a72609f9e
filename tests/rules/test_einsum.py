"""np.einsum: its forward rule is the contraction itself with a tangent in one operand's
place, and the cotangent helper its reverse rule writes, runtime.einsum_vjp, has rules of its
own, so second derivatives (forward over reverse, reverse over reverse) are derived."""

import textwrap

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast import runtime
from tangent_ast.errors import TangentAstError
from tangent_ast.testing import check_grads, check_second_order

rng = np.random.default_rng(41)


def r(*shape):
    return rng.standard_normal(shape)


def matmul(a, b):
    return np.sum(np.sin(np.einsum("ij,jk->ik", a, b)))


def transpose(a):
    return np.sum(np.sin(np.einsum("ij->ji", a)) * np.arange(6.0).reshape(3, 2))


def trace(a):
    return np.sin(np.einsum("ii->", a))


def diagonal(a):
    return np.sum(np.sin(np.einsum("ii->i", a)))


def outer(x, y):
    return np.sum(np.sin(np.einsum("i,j->ij", x, y)))


def batched(a, b):
    return np.sum(np.sin(np.einsum("bij,bjk->bik", a, b)))


def ellipsis_broadcast(a, b):
    return np.sum(np.sin(np.einsum("...ij,...jk->...ik", a, b)))


def implicit(a, b):
    return np.sum(np.sin(np.einsum("ij,jk", a, b)))


def three(a, b, c):
    return np.sum(np.sin(np.einsum("ij,jk,kl->il", a, b, c)))


def repeated_operand(x):
    return np.sin(np.einsum("i,i->", x, x))


def four_with_trace(a, b, x, y):
    return np.sum(np.sin(np.einsum("ii,ij,j,k->k", a, b, x, y)))


def sublists(a, b):
    return np.sum(np.sin(np.einsum(a, [0, 1], b, [1, 2], [0, 2])))


def one_constant(a):
    return np.sum(np.sin(np.einsum("ij,jk->ik", a, np.arange(12.0).reshape(3, 4) / 10)))


CASES = [
    (matmul, (r(2, 3), r(3, 4))),
    (transpose, (r(2, 3),)),
    (trace, (r(3, 3),)),
    (diagonal, (r(3, 3),)),
    (outer, (r(3), r(4))),
    (batched, (r(2, 2, 3), r(2, 3, 2))),
    (ellipsis_broadcast, (r(2, 3), r(2, 2, 3, 2))),
    (ellipsis_broadcast, (r(2, 1, 2, 3), r(3, 3, 2))),
    (implicit, (r(2, 3), r(3, 4))),
    (three, (r(2, 3), r(3, 2), r(2, 2))),
    (repeated_operand, (r(4),)),
    (four_with_trace, (r(3, 3), r(3, 2), r(2), r(2))),
    (sublists, (r(2, 3), r(3, 2))),
    (one_constant, (r(2, 3),)),
]
IDS = [f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(CASES)]


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_first_order(fn, args):
    check_grads(fn, args, modes=("forward", "reverse"))


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_first_order_transpose_route(fn, args):
    check_grads(fn, args, modes=("reverse",), route="transpose")


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_second_order(fn, args):
    check_second_order(fn, args)


@pytest.mark.parametrize(("fn", "args"), CASES[:3], ids=IDS[:3])
def test_second_order_by_check_grads(fn, args):
    check_grads(fn, args, order=2)


def body(source):
    lines = source.split("\n\n\n", 1)[-1].splitlines()
    return "\n".join(line.split("  # line")[0] for line in lines).strip() + "\n"


@pytest.mark.usefixtures("direct_route")
def test_forward_rule_is_the_same_contraction():
    def f(a, b):
        return np.einsum("ij,jk->ik", a, b)

    source = ta.derive(f, "forward", wrt=(0, 1), args=(r(2, 3), r(3, 4))).source
    assert body(source) == textwrap.dedent("""\
        def f_jvp(a, b, da, db):
            out = np.einsum('ij,jk->ik', a, b)
            dout = np.einsum('ij,jk->ik', da, b) + np.einsum('ij,jk->ik', a, db)
            return out, dout
        """)


@pytest.mark.usefixtures("direct_route")
def test_second_order_reads_as_contractions(tmp_path):
    """Forward over reverse: the tangent of the cotangent helper is the helper again with a
    tangent in one operand's place, and none for the operand whose cotangent it is; reverse
    over reverse: its transposes are np.einsum and the helper again."""
    check_second_order(matmul, CASES[0][1], cache=tmp_path)
    (hvp,) = tmp_path.glob("*__hvp.py")
    assert (
        "dct_a = runtime.einsum_vjp(dct_einsum, 0, 'ij,jk->ik', a, b) + "
        "runtime.einsum_vjp(ct_einsum, 0, 'ij,jk->ik', a, db)"
    ) in hvp.read_text()
    (twice_reverse,) = tmp_path.glob("*__gradient__*__reverse__*.py")
    text = twice_reverse.read_text()
    assert "ct_ct_einsum = np.einsum('ij,jk->ik', a, ct_ct_b)" in text
    assert "ct_b = runtime.einsum_vjp(ct_einsum, 1, 'ij,jk->ik', ct_ct_a, b)" in text


M = r(3, 2)


def complex_contraction(x):
    z = np.reshape(x * 1j + 1, (2, 3))
    return np.real(np.sum(np.sin(np.einsum("ij,jk->ik", z, M))))


def test_second_order_through_complex_values():
    """einsum_vjp's rules are transposes, with no conjugates: they hold for complex values."""
    check_second_order(complex_contraction, (r(6),))


# --- runtime.einsum_vjp's rules, against its definition -----------------------------------


def vjp_of_operand_0(ct, a, b):
    return np.sum(np.sin(runtime.einsum_vjp(ct, 0, "ij,jk->ik", a, b)))


def vjp_of_operand_1(ct, a, b):
    return np.sum(np.sin(runtime.einsum_vjp(ct, 1, "ij,jk->ik", a, b)))


def vjp_of_trace(ct, a):
    return np.sum(np.sin(runtime.einsum_vjp(ct, 0, "ii->", a)))


HELPER_CASES = [
    (vjp_of_operand_0, (r(2, 4), r(2, 3), r(3, 4))),
    (vjp_of_operand_1, (r(2, 4), r(2, 3), r(3, 4))),
    (vjp_of_trace, (1.5, r(3, 3))),
]


@pytest.mark.parametrize(("fn", "args"), HELPER_CASES, ids=[f.__name__ for f, _ in HELPER_CASES])
def test_rules_of_the_cotangent_helper(fn, args):
    check_grads(fn, args, modes=("forward", "reverse"))
    check_grads(fn, args, modes=("reverse",), route="transpose")


def test_no_derivative_through_the_operand_whose_cotangent_it_is():
    """einsum_vjp reads operand argnum only for its shape: a tangent there changes nothing."""
    a, b, ct = r(2, 3), r(3, 4), r(2, 4)
    _, dout = ta.jvp(vjp_of_operand_0, (ct, a, b), (None, r(2, 3), None))
    assert dout == 0.0
    g = ta.grad(vjp_of_operand_1, wrt=2)(ct, a, b)
    np.testing.assert_array_equal(g, np.zeros_like(b))


def not_a_literal(ct, a, b, k):
    return np.sum(runtime.einsum_vjp(ct, k, "ij,jk->ik", a, b))


def test_argnum_not_a_constant_is_refused():
    with pytest.raises(TangentAstError, match="not a constant"):
        ta.grad(not_a_literal, wrt=1)(r(2, 4), r(2, 3), r(3, 4), 0)


def five(a, b, c, d, e):
    return np.sum(np.einsum("i,i,i,i,i->", a, b, c, d, e))


def test_five_operands_refused():
    with pytest.raises(TangentAstError):
        ta.grad(five, wrt=4)(*(r(3) for _ in range(5)))
