"""Python as people write it: containers, records, keyword arguments."""

import collections
import dataclasses
import functools
import math
import warnings

import numpy as np

from .cases import Case

V = np.array([0.3, -0.7, 1.1])
W = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.6]])


@dataclasses.dataclass
class Params:
    W: np.ndarray
    b: np.ndarray
    scale: float


Pair = collections.namedtuple("Pair", ["left", "right"])


def swap(x, y):
    a, b = y, x
    return a * 2.0 + b


def returns_pair(x, y):
    return x * y, x + y


def uses_pair(x, y):
    s, t = returns_pair(x, y)
    return s * t


def nested_unpack(x, y):
    t = (x, (y, x * y))
    a, (b, c) = t
    return a + b * c


def starred_unpack(x, y, z):
    first, *rest = (x, y, z)
    return first * rest[0] + rest[1]


def tuple_input(t):
    a, b = t
    return a * np.sum(b)


def tuple_index(t):
    return t[0] ** 2 + np.sum(t[1] * t[0])


def list_literal(x, y):
    parts = [x, y, x * y]
    return parts[0] + parts[1] * parts[2]


def tuple_len(t):
    n = len(t)
    s = 0.0
    for i in range(n):
        s = s + t[i] * (i + 1)
    return s


def tuple_output(x):
    return np.sin(x), np.cos(x) * 2.0


def dataclass_input(p, x):
    return np.sum(np.tanh(p.W @ x + p.b)) * p.scale


def namedtuple_input(pair):
    return pair.left * pair.right + pair.left


def helper_with_defaults(x, scale=2.0, shift=0.5):
    return scale * x + shift


def keyword_call(x):
    return helper_with_defaults(x, shift=1.5) * helper_with_defaults(x)


def keyword_call_active(x, s):
    return helper_with_defaults(x, scale=s)


def pair_from_helper(x):
    return Pair(x, x)


def dict_comprehension(x, y):
    """A dict comprehension assigned to a name: the loop filling the dict, its variable its
    own (the x after it is the argument)."""
    powers = {k: x**k * y for k in range(1, 4) if k != 2}
    scaled = {name: v * 2.0 for name, v in {"a": x, "b": y}.items()}
    return powers[1] + powers[3] + scaled["a"] * scaled["b"] + x


CASES = [
    Case(dict_comprehension, (0.4, 1.3)),
    Case(swap, (0.4, 1.3)),
    Case(returns_pair, (0.4, 1.3)),
    Case(uses_pair, (0.4, 1.3)),
    Case(nested_unpack, (0.4, 1.3)),
    Case(starred_unpack, (0.4, 1.3, -0.6)),
    Case(tuple_input, ((0.7, V),)),
    Case(tuple_index, ((0.7, V),)),
    Case(list_literal, (0.4, 1.3)),
    Case(tuple_len, ((0.7, 1.2, -0.3),)),
    Case(tuple_output, (V,)),
    Case(dataclass_input, (Params(W, np.array([0.1, -0.2]), 1.5), V)),
    Case(dataclass_input, (Params(W, np.array([0.1, -0.2]), 1.5), V), wrt=(0,)),
    Case(namedtuple_input, (Pair(0.3, 1.7),)),
    Case(keyword_call, (0.8,)),
    Case(keyword_call_active, (0.8, 1.7)),
]


def fill_preallocated(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = np.sin(x[i]) * 2.0
    return np.sum(out * out)


def rnn_into_array(x, w):
    h = np.zeros(len(x) + 1)
    for t in range(len(x)):
        h[t + 1] = np.tanh(w * h[t] + x[t])
    return np.sum(h ** 2)


def update_slices(x):
    y = np.zeros(3)
    y[0] = x
    y[1:] += x * 2.0
    y[2] *= x
    return np.sum(y * y)


def update_rows(A, v):
    B = np.zeros((3, 3))
    for i in range(3):
        B[i] = A[i] * v[i]
    B[:, 0] -= v
    return np.sum(B @ B)


def update_copy_of_argument(x):
    y = x.copy()
    y[0] = y[0] * 3.0
    y[1:] = np.sin(y[1:])
    return np.sum(y * x)


def update_in_branch(x, flag):
    y = np.zeros(2)
    if flag > 0:
        y[0] = x * x
    else:
        y[1] = x
    return np.sum(y) + y[0] * 2.0


CASES += [
    Case(fill_preallocated, (V,)),
    Case(rnn_into_array, (V, 0.7)),
    Case(update_slices, (0.7,)),
    Case(update_rows, (W.T @ W, V)),
    Case(update_copy_of_argument, (V,)),
    Case(update_in_branch, (0.6, 1)),
    Case(update_in_branch, (0.6, -1)),
]


def dict_params(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    return np.sum(h * h) * params["scale"]


def builds_dict(x, y):
    d = {"a": x * y, "b": np.sin(x)}
    return d["a"] + d["b"] * y


CASES += [
    Case(dict_params, ({"W": W, "b": np.array([0.1, -0.2]), "scale": 1.5}, V)),
    Case(dict_params, ({"W": W, "b": np.array([0.1, -0.2]), "scale": 1.5}, V), wrt=(0,)),
    Case(builds_dict, (0.4, 1.3)),
]


def with_lambda(x, y):
    scale = x * 2.0
    f = lambda t: np.sin(t) * scale
    return f(y) + f(x * y)


def with_nested_def(x, w):
    def layer(v):
        z = v * w
        return np.tanh(z) + v

    h = layer(x)
    return np.sum(layer(h) ** 2)


def nested_def_in_loop(x, n):
    def step(s, i):
        return s * 0.9 + x / (i + 1)

    s = 0.0
    for i in range(n):
        s = step(s, i)
    return s


CASES += [
    Case(with_lambda, (0.4, 1.3)),
    Case(with_nested_def, (V, 0.7)),
    Case(nested_def_in_loop, (0.6, 4)),
]


def builds_list_functionally(x, y):
    xs = [x]
    for i in range(3):
        xs = xs + [xs[-1] * y + i]
    return xs[1] + xs[3] * xs[0]


def repeats_list(x):
    parts = [x, x * x] * 2
    return parts[0] + parts[3] * parts[2]


def concatenates_tuples(x, y):
    t = (x,) + (y, x * y)
    return t[0] * t[2] + t[1]


CASES += [
    Case(builds_list_functionally, (0.4, 1.3)),
    Case(repeats_list, (0.7,)),
    Case(concatenates_tuples, (0.4, 1.3)),
]


def appends_in_loop(x, y):
    hs = []
    h = x
    for i in range(4):
        h = np.tanh(h * y + i)
        hs.append(h)
    return hs[0] + hs[-1] * hs[2]


def list_comprehension(xs, w):
    squares = [x * x * w for x in xs if x > -1.0]
    return squares[0] + squares[-1]


def generator_sum(xs, w):
    return sum(np.sin(x) * w for x in xs)


def stack_comprehension(x, w):
    rows = np.stack([x * (i + 1.0) * w for i in range(3)])
    return np.sum(rows ** 2)


def sum_of_list(a, b):
    return sum([a, b * a, b])


CASES += [
    Case(appends_in_loop, (0.4, 1.3)),
    Case(list_comprehension, (V, 0.8)),
    Case(generator_sum, (V, 0.8)),
    Case(stack_comprehension, (V, 0.8)),
    Case(sum_of_list, (0.4, 1.3)),
]


class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(self.w * x + self.b)

    def loss(self, x):
        return np.sum(self.forward(x) ** 2)

    def forward(self, x):
        return np.tanh(self.w * x + self.b)


def method_call(layer, x):
    return layer.loss(x) * 2.0


# methods of global instances (two of one class, with other values) and an instance called
FIRST_LAYER = Layer(0.7, np.array([0.1, -0.3, 0.2]))
SECOND_LAYER = Layer(-1.2, np.array([0.4, 0.0, -0.5]))


def methods_of_global_instances(x):
    return FIRST_LAYER.loss(x) + 3.0 * SECOND_LAYER.loss(x * 2.0)


def global_instance_called(x):
    return np.sum(FIRST_LAYER(x) * SECOND_LAYER(x))


CASES += [
    Case(method_call, (Layer(0.7, np.array([0.1, -0.3, 0.2])), V)),
    Case(method_call, (Layer(0.7, np.array([0.1, -0.3, 0.2])), V), wrt=(0,)),
    Case(methods_of_global_instances, (V,)),
    Case(global_instance_called, (V,)),
]


def builds_dataclass(W, b, x):
    p = Params(W, b=b * 2.0, scale=0.5)
    return dataclass_input(p, x)


def builds_namedtuple(x, y):
    pair = Pair(x * y, right=np.sin(x))
    return namedtuple_input(pair)


CASES += [
    Case(builds_dataclass, (W, np.array([0.1, -0.2]), V)),
    Case(builds_namedtuple, (0.4, 1.3)),
]


def replaces_field(p, x):
    q = dataclasses.replace(p, b=p.b * x[0], scale=2.0)
    return dataclass_input(q, x)


def writes_with_out(x):
    y = np.zeros(3)
    np.add(y, x * x, out=y)
    np.multiply(y, x, out=y)
    return np.sum(y)


CASES += [
    Case(replaces_field, (Params(W, np.array([0.1, -0.2]), 1.5), V)),
    Case(writes_with_out, (V,)),
]


# Arguments updated in place: the derived rules leave them as the function does,
# and check_grads compares the argument's tangent with finite differences of its final state.

def scales_argument_in_place(x, s):
    x *= s
    x += np.sin(x)
    return np.sum(x * x)


def sets_slot_of_argument(x, y):
    x[0] = x[1] * y
    return np.sum(x * x)


def recurrence_in_argument(x, a):
    for i in range(1, x.shape[0]):
        x[i] = x[i] + a * x[i - 1]
    return np.sum(x)


def out_into_argument(x, y):
    np.multiply(x, y, out=x)
    return np.sum(x * y)


def reads_view_before_update(x):
    head = x[:2]
    s = np.sum(head * head)
    x[1:] += x[:2] * 3.0
    return s + np.sum(np.cos(x))


def fills_row_of_matrix_argument(m, v):
    for i in range(m.shape[0]):
        m[i, :] = m[i, :] * v[i]
    return np.sum(m ** 2)


def updates_argument_then_rebinds_it(x, y):
    x *= y
    for i in range(2):
        x[i] = x[i] + y[i]
    x = np.sin(x)  # a new value from here on; the caller's x keeps the updates before
    x[1] = 0.5 * x[0]
    return np.sum(x)


CASES += [
    Case(updates_argument_then_rebinds_it, (V, np.array([0.5, -1.0, 2.0]))),
    Case(scales_argument_in_place, (V, 1.5)),
    Case(scales_argument_in_place, (V, 1.5), wrt=(1,), note="-argument-not-in-wrt"),
    Case(sets_slot_of_argument, (V, 0.8)),
    Case(sets_slot_of_argument, (V, 0.8), wrt=(1,), note="-argument-not-in-wrt"),
    Case(recurrence_in_argument, (V, 0.5)),
    Case(out_into_argument, (V, np.array([1.5, -0.5, 2.0]))),
    Case(reads_view_before_update, (V,)),
    Case(fills_row_of_matrix_argument, (W, np.array([0.7, -1.2]))),
]


# Helpers that update their arguments in place, called on the caller's values: inlined, so
# the caller's array changes as the program changes it, and its derivative with it.

SHIFT = 0.25


def add_into(out, v):
    out += v


def scale_first(v, c):
    v[0] = v[0] * c


def push_square(xs, v):
    xs.append(v * v)


def shift_sum(a, s=0.5):
    a -= s * np.tanh(a) + SHIFT
    return np.sum(a * a)


def add_twice(out, v):
    add_into(out, v)
    add_into(out, v * 0.5)


def bumped(t, d):
    t += d  # a float: rebinds the helper's name only
    return t * 2.0


def fills_buffer_by_helpers(x, y):
    buf = np.zeros_like(x)
    add_into(buf, x * y)
    scale_first(buf, y[1])
    return np.sum(buf * x)


def helper_updates_argument(x, y):
    add_into(x, np.sin(y))
    return np.sum(x * y)


def helper_result_and_update(x):
    buf = x.copy()
    total = shift_sum(buf)
    return total + np.sum(buf * x)


def helper_in_loop_with_break(x):
    acc = np.zeros_like(x)
    for k in range(4):
        add_twice(acc, x * (k + 1.0))
        if np.sum(acc) > 4.0:
            break
    return np.sum(acc * acc)


def appends_by_helper(x):
    sq = []
    for k in range(3):
        push_square(sq, x[k] * (k + 0.5))
    return sq[0] + sq[1] * sq[2]


def helper_rebinds_a_float(x):
    t = x[0] * 1.0
    u = bumped(t, x[1])
    return t * u


def helper_on_one_branch(x, s):
    buf = x * 1.0
    if s > 0.2:
        scale_first(buf, s)
    return np.sum(np.cos(buf))


CASES += [
    Case(fills_buffer_by_helpers, (V, np.array([0.5, 1.5, -0.7]))),
    Case(helper_updates_argument, (V, np.array([0.5, 1.5, -0.7]))),
    Case(helper_result_and_update, (V,)),
    Case(helper_in_loop_with_break, (V,)),
    Case(appends_by_helper, (V,)),
    Case(helper_rebinds_a_float, (V,)),
    Case(helper_on_one_branch, (V, 0.7)),
    Case(helper_on_one_branch, (V, -0.7), note="-other-branch"),
]


# Fields of dataclass instances assigned: r.f = v is r = replace(r, f=v) in derived code (a
# record is a value there); an argument's fields are written back into the caller's object.


@dataclasses.dataclass
class Layer:
    w: object
    b: float


def assigns_fields_of_argument(x, layer):
    layer.w = layer.w * x
    layer.b += np.sum(x * x)
    return np.sum(layer.w) * layer.b


def assigns_fields_in_loop(x):
    state = Layer(x * 2.0, 0.5)
    for i in range(3):
        state.b = state.b * np.sum(state.w) + x[i]
        state.w = np.sin(state.w)
    return state.b + np.sum(state.w)


def assigns_field_on_one_branch(x, layer):
    if x[0] > 0.0:
        layer.w = layer.w + x
    else:
        layer.b = 2.0 * layer.b
    return np.sum(layer.w * x) * layer.b


CASES += [
    Case(assigns_fields_of_argument, (V, Layer(np.array([0.5, -1.0, 2.0]), 0.5))),
    Case(assigns_fields_in_loop, (V,)),
    Case(assigns_field_on_one_branch, (V, Layer(np.array([0.5, -1.0, 2.0]), 0.5))),
    Case(assigns_field_on_one_branch, (-V, Layer(np.array([0.5, -1.0, 2.0]), 0.5)), note="-else"),
]


# Dicts updated by key: d[k] = v is d = runtime.dict_with(d, k, v) in derived code; a dict
# argument's entries are written back into the caller's dict at the end.


def updates_dict_argument(x, d):
    d["w"] = d["w"] * x
    d["b"] = np.sum(d["w"])
    return d["b"] * np.sum(x)


def builds_dict_by_key(x):
    d = {"a": x, "b": 2.0}
    d["a"] = d["a"] * d["b"]
    d["c"] = np.sin(x)
    return np.sum(d["a"] * d["c"])


def dict_entry_added_in_loop(x):
    d = {}
    for i in range(3):
        d["s"] = x[i] * 2.0 if i == 0 else d["s"] * x[i]
    return d["s"]


def adds_into_float_entry(x):
    d = {"s": 0.5, "w": x * 2.0}
    d["s"] += np.sum(d["w"])
    return d["s"] * x[0]


def replaces_dict_entry_by_another_shape(a, m):
    d = {"a": a, "m": m}
    d["a"] = d["a"][None, :]
    return np.sum((d["a"] @ d["m"]) ** 2)


CASES += [
    Case(replaces_dict_entry_by_another_shape, (V, np.arange(6.0).reshape(3, 2) / 5.0)),
    Case(updates_dict_argument, (V, {"w": np.array([0.5, -1.0, 2.0]), "b": 0.0})),
    Case(builds_dict_by_key, (V,)),
    Case(dict_entry_added_in_loop, (V,)),
    Case(adds_into_float_entry, (V,)),
]


# with blocks: each context entered and left around the body, in every derived rule


class Counted:
    """A context manager that counts how often it is entered and left."""

    def __init__(self):
        self.entered = self.left = 0

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, *exc):
        self.left += 1
        return False


COUNTED = Counted()


def inside_contexts(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.log(x) * x
    with COUNTED, np.printoptions(precision=3):
        z = np.sin(y) * 2.0
    return np.sum(z * z)


CASES += [Case(inside_contexts, (np.array([0.5, 1.5, 2.5]),))]


# Lists updated by item: xs[i] = v makes a new list (runtime.list_with), so the
# list keeps being a value; a second name or a tuple holding it is refused.

def updates_list_items(x, y):
    xs = [0.0, 0.0, x]
    xs[1] = x * y
    xs[2] += y
    return xs[0] + xs[1] * xs[2]


def fills_list_in_loop(x):
    hs = [0.0] * 4
    hs[0] = x
    for t in range(3):
        hs[t + 1] = np.tanh(hs[t]) * 1.5
    return sum(hs)


def updates_list_of_arrays(v):
    rows = [v, v * 2.0]
    rows[-1] = np.sin(rows[0])
    return np.sum(rows[0] * rows[1])


CASES += [
    Case(updates_list_items, (0.7, 1.3)),
    Case(updates_list_items, (0.7, 1.3), wrt=(1,), note="-one-argument"),
    Case(fills_list_in_loop, (0.4,)),
    Case(updates_list_of_arrays, (V,)),
]


# Function values: a function passed in, or a closure made in the function, is called
# through its own derived rule, found when the call runs (function_values.call_fwd / call_jvp).

def make_scaled_sine(scale):
    def scaled_sine(x):
        return np.sin(x) * scale
    return scaled_sine


def cube(x):
    return x * x * x


def applies_function_twice(f, x, y):
    a = f(x)
    b = f(a * y)
    return a + b


def applies_closure_made_here(x, n):
    g = make_scaled_sine(float(n))
    return g(x) * x


FUNCTIONS = [np.tanh, cube]


def calls_what_calls_return(x, n):
    # the function a call returns, and an item of a list of functions, called at once
    return make_scaled_sine(float(n))(x) * FUNCTIONS[1](x) + FUNCTIONS[0](x)


CASES += [
    Case(calls_what_calls_return, (0.5, 3)),
    Case(applies_function_twice, (make_scaled_sine(2.0), 0.5, 1.5)),
    Case(applies_function_twice, (make_scaled_sine(-3.0), 0.5, 1.5), note="-another-closure"),
    Case(applies_function_twice, (cube, V, 0.7)),
    Case(applies_closure_made_here, (0.5, 3)),
]


def fills_then_scales(x):
    y = np.zeros(3)
    y[0] = x
    y[2] = x * x
    y *= 2.0          # a local array: y = y * 2.0, nothing else holds it
    return np.sum(y * y)


CASES += [Case(fills_then_scales, (0.7,))]


# -- keyword-only parameters, *args and **kwargs -------------------------------

def penalized_loss(w, x, *, l2=0.1):
    r = x @ w
    return np.sum(r * r) + l2 * np.sum(w * w)


def weighted_sum(x, *rest, scale=1.0, **options):
    total = scale * x
    for r in rest:
        total = total + r * x
    return total * options.get("gain", 1.0)


def forwards_everything(*args, **kwargs):
    return weighted_sum(*args, **kwargs)


def calls_through_wrapper(x, y):
    return forwards_everything(x, y, y * y, scale=2.0, gain=x)


def calls_without_extras(x):
    return forwards_everything(x) + weighted_sum(x, x, scale=x)


def scaled(x, *, factor):
    return factor * np.sin(x)


def keyword_only_active(x, y):
    return scaled(x, factor=y) + scaled(y, factor=2.0)


def norm_of_all(*xs):
    return sum(np.sum(x * x) for x in xs)


def positional_only(x, y, /, z=1.0):
    return x * y + z


def calls_positional_only(x, y):
    return positional_only(x, y) + positional_only(y, x, z=x)


def logged(fn):
    """A decorator passing every argument through, as timing and logging decorators do."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@logged
def decorated_helper(x, scale=2.0):
    return scale * np.tanh(x)


def calls_decorated(x, s):
    return decorated_helper(x, scale=s) + decorated_helper(x)


CASES += [
    Case(penalized_loss, (V, W)),
    Case(penalized_loss, (V, W), kwargs={"l2": 0.3}, note="-l2-given"),
    Case(penalized_loss, (V, W), wrt=(0, 2), kwargs={"l2": 0.3}, note="-wrt-keyword-only"),
    Case(weighted_sum, (0.7, 1.3, -0.4), kwargs={"scale": 2.0, "gain": 0.5}),
    Case(calls_through_wrapper, (0.7, 1.3)),
    Case(calls_without_extras, (0.7,)),
    Case(keyword_only_active, (0.7, 1.3)),
    Case(norm_of_all, (V, 0.5, W)),
    Case(calls_positional_only, (0.7, 1.3)),
    Case(decorated_helper, (0.7,)),
    Case(calls_decorated, (0.7, 1.3)),
]


def doubled(fn):
    """A decorator that changes the result: the derivative is the wrapper's, not fn's."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper


@doubled
def doubled_sine(x, phase=0.0):
    return np.sin(x + phase)


CASES += [
    Case(doubled_sine, (0.7,)),
    Case(doubled_sine, (0.7,), kwargs={"phase": 0.3}, note="-phase"),
]


# -- list arguments changed in place: the caller's list is left as the function leaves it --

def scales_list_argument(xs, s):
    for i in range(len(xs)):
        xs[i] = xs[i] * s
    return xs[0] + xs[-1]


def appends_to_list_argument(xs, y):
    xs.append(y * y)
    xs += [np.sin(y)]
    return sum(xs)


def sets_item_of_list_argument_only(xs, y):
    xs[1] = y * y       # the result does not read xs: its tangent is still updated
    return 2.0 * y


def appends_to_list_argument_only(xs, y):
    xs.append(y * y)    # the result does not read xs: its cotangent has xs's length as given
    return 2.0 * y


def sets_slot_of_argument_only(x, y):
    x[0] = y * y        # an array argument, likewise
    return 2.0 * y


CASES += [
    Case(scales_list_argument, ([0.5, -1.0, 2.0], 1.5)),
    Case(scales_list_argument, ([0.5, -1.0, 2.0], 1.5), wrt=(1,), note="-list-not-in-wrt"),
    Case(appends_to_list_argument, ([0.5, 2.0], 0.7)),
    Case(sets_item_of_list_argument_only, ([0.5, 2.0], 0.7)),
    Case(appends_to_list_argument_only, ([0.5, 2.0], 0.7)),
    Case(sets_slot_of_argument_only, (V, 0.7)),
]


def smooth_step(x, width=1.0, *, offset=0.0):
    return np.tanh((x - offset) / width)


def applies_with_keywords(f, x, w):
    return f(x, w, offset=0.5) + f(x * w)     # a default filled in at run time


CASES += [Case(applies_with_keywords, (smooth_step, 0.7, 1.3))]


def updates_a_computed_array(x, s):
    """The result of arithmetic or of a ufunc is a new array: updating it in place is fine."""
    v = x * 1.0
    v[0] = s
    w = np.tanh(x)
    w[1] = w[1] * s
    return np.sum(v * w)


CASES += [Case(updates_a_computed_array, (V, 0.6))]


# --- lambdas: the differentiated function itself, closures, two on one line, defaults
sum_of_squares = lambda x: np.sum(x ** 2)  # noqa: E731
dot_times_first = lambda a, b: np.dot(a, b) * a[0]  # noqa: E731
scaled_sine = (lambda scale: (lambda x: np.sum(np.sin(x) * scale)))(1.5)
product_plus, quotient_minus = (lambda x, y: x * y + y), (lambda x, y: x / y - x)
cubed_with_default = lambda x, s=2.0: x ** 3 * s  # noqa: E731


CASES += [
    Case(sum_of_squares, (V,), note="lambda"),
    Case(dot_times_first, (V, V * 2.0), note="lambda"),
    Case(scaled_sine, (V,), note="closure lambda"),
    Case(product_plus, (0.4, 1.3), note="first lambda of a line"),
    Case(quotient_minus, (0.4, 1.3), note="second lambda of a line"),
    Case(cubed_with_default, (0.7,), note="lambda with a default"),
]


# --- statements numerical code uses
def quiet_log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x) * 2.0
    return np.sum(y)


def deletes_a_temporary(x):
    t = x * 2.0
    y = t + 1.0
    del t
    return y * y


def assigns_in_a_condition(x):
    if (y := x * 2.0) > 0.5:
        return y * y
    return y


def while_else_without_break(x):
    i = 0
    while i < 3:
        x = x * 1.5
        i = i + 1
    else:
        x = x + 1.0
    return x


def while_else_with_break(x, limit):
    while x < 10.0:
        x = x * 1.5
        if x > limit:
            break
    else:
        x = x - 1.0
    return x


def getattr_with_a_constant_name(x):
    return getattr(np, "sin")(x) * 2.0


CASES += [
    Case(quiet_log, (np.array([0.7, 1.3]),)),
    Case(deletes_a_temporary, (0.7,)),
    Case(assigns_in_a_condition, (0.7,)),
    Case(assigns_in_a_condition, (0.1,), note="other branch"),
    Case(while_else_without_break, (0.7,)),
    Case(while_else_with_break, (0.7, 3.0), wrt=(0,)),
    Case(while_else_with_break, (0.7, 100.0), wrt=(0,), note="no break"),
    Case(getattr_with_a_constant_name, (0.7,)),
]


def tuple_of_a_list(x, y):
    t = tuple([x, y * 2.0])
    a, b = t
    return a * b + t[1]


def tuple_of_an_array(v):
    rows = tuple(v)
    return rows[0] * rows[1] + rows[2]


CASES += [Case(tuple_of_a_list, (0.7, 1.3)), Case(tuple_of_an_array, (V,))]


# --- try/except: the try body (and its else) is derived; a call that runs a handler is refused
def log_or_zero(x):
    try:
        y = math.log(x)
    except ValueError:
        y = 0.0
    return y * 2.0


def try_else_in_a_loop(x):
    total = 0.0
    for k in range(3):
        try:
            step = x * (k + 1.0)
        except ZeroDivisionError:
            step = 0.0
        else:
            step = step * step
        total = total + step
    return total


CASES += [Case(log_or_zero, (2.0,)), Case(try_else_in_a_loop, (0.7,))]


def norm_of_a_list(x, y):
    return np.linalg.norm([x, y * 2.0])


CASES += [Case(norm_of_a_list, (0.3, 0.4))]


def remainder_by_divmod(x, y):
    q, r = divmod(x, y)
    return r * r + q * x


def remainder_of_an_array(x):
    q, r = divmod(x, 0.4)
    return np.sum(r * x)


CASES += [
    Case(remainder_by_divmod, (1.7, 0.3)),
    Case(remainder_of_an_array, (np.array([0.3, 1.1, 2.05]),)),
]


# --- tuple assignment reads every value before it assigns any name (x, y = y, x)
def swaps(x, y):
    x, y = y, x
    return x - y * 0.5


def rotates(x, y, z):
    x, y, z = y, z, x
    return x * 1.0 + y * 2.0 + z * 3.0


def fibonacci_steps(a, b):
    for i in range(4):
        a, b = b, a + b
    return b * a


CASES += [
    Case(swaps, (1.0, 2.0)),
    Case(rotates, (0.5, 1.5, 2.5)),
    Case(fibonacci_steps, (0.7, 1.3)),
]


# --- functions that take a function: written out as the loops they run
def maps_a_lambda(x, y):
    return sum(map(lambda t: t * t * y, [x, y, x * y]))


def maps_a_ufunc(v):
    return sum(map(np.sin, v))


def maps_a_local_def(x, y):
    def scaled(t, s):
        return t * s + 1.0

    return sum(map(scaled, [x, y], [y, 2.0]))


def filters(v):
    return sum(filter(lambda t: t > 0.0, [v[0], v[1] * 2.0, v[2]]))


def reduces(v):
    return functools.reduce(lambda a, b: a * b, [v[0], v[1], v[2]])


def reduces_from_a_start(v, s):
    return functools.reduce(lambda a, b: a + b * b, v, s)


def sorts_by_a_key(v):
    ys = sorted([v[0], v[1], v[2]], key=lambda t: (t - 0.5) ** 2, reverse=True)
    return ys[0] * 3.0 + ys[1] - ys[2] * ys[2]


def largest_by_a_key(v):
    return max([v[0], v[1] * 2.0, v[2]], key=abs) * 3.0 + min(v[1], v[2], key=np.cos)


_V3 = np.array([0.3, -1.2, 2.5])

CASES += [
    Case(maps_a_lambda, (0.4, 1.3)),
    Case(maps_a_ufunc, (_V3,)),
    Case(maps_a_local_def, (0.4, 1.3)),
    Case(filters, (_V3,)),
    Case(reduces, (_V3,)),
    Case(reduces_from_a_start, (_V3, 0.5)),
    Case(sorts_by_a_key, (_V3,)),
    Case(largest_by_a_key, (_V3,)),
]


# --- lists and dicts changed by their methods, read with defaults
def pops_and_inserts(v):
    xs = [v[0], v[1], v[2]]
    last = xs.pop()
    xs.insert(0, last * 2.0)
    first = xs.pop(0)
    xs.insert(-1, first * v[1])
    return xs[0] * xs[1] + xs[2] * last


def reads_with_defaults(x, y):
    d = {"a": x, "b": y * x}
    return d.get("a", 0.0) * d.get("c", y) + d.get("b")


def pops_from_a_dict(x, y):
    d = {"a": x, "b": y}
    a = d.pop("a")
    return a * d["b"]


CASES += [
    Case(pops_and_inserts, (_V3,)),
    Case(reads_with_defaults, (0.4, 1.3)),
    Case(pops_from_a_dict, (0.4, 1.3)),
]


# --- try ... finally: the finally block runs after the body
def cleans_up(x, y):
    total = x * y
    try:
        total = total + np.sin(x)
    except ValueError:
        total = 0.0
    else:
        total = total * y
    finally:
        scale = 2.0
    return total * scale


CASES += [Case(cleans_up, (0.4, 1.3))]


# --- sets of indices and constants (a set of differentiable values is refused)
def indexes_by_a_set(v):
    rows = {i % 2 for i in range(4)}
    return np.sum(v[sorted(rows)] ** 2) * len({1, 2, 2})


CASES += [Case(indexes_by_a_set, (_V3,))]


# --- a nested def that changes the caller's names (nonlocal), inlined at each call
def accumulates_nonlocal(x, y):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v * v

    add(x)
    for i in range(2):
        add(y * i)
    return total


def counts_and_returns(x, y):
    scale = 1.0

    def step(v):
        nonlocal scale
        scale = scale * v
        return scale + 1.0

    a = step(x)
    return a * step(y) + scale


CASES += [Case(accumulates_nonlocal, (0.4, 1.3)), Case(counts_and_returns, (0.4, 1.3))]


# --- lambdas passed or stored as function values (called through their own rules)
def _apply(f, v):
    return f(v)


def passes_a_lambda(v, s):
    scale = 2.0
    return np.sum(_apply(lambda t: np.sin(t) * scale, v * s))


def stores_a_lambda(v):
    g = lambda t: t * t + 1.0  # noqa: E731
    return np.sum(_apply(g, v)) + np.sum(g(v))


CASES += [Case(passes_a_lambda, (_V3, 0.7)), Case(stores_a_lambda, (_V3,))]


# --- a local function defined again: each call uses the definition before it
def redefines_a_helper(x, y):
    def inner(z):
        return z * 2.0 + y

    a = inner(x)

    def inner(z):
        return z * x

    g = lambda t: t + 1.0  # noqa: E731
    b = g(inner(a))
    g = lambda t: t * t  # noqa: E731
    return g(b)


CASES += [Case(redefines_a_helper, (0.4, 1.3))]


# --- a += b on an array with a second name, or on a view: every name sees the new values
def augments_a_second_name(x):
    y = x * 2.0
    z = y
    y += 1.0
    return np.sum(z * y) + np.sum(z)


def augments_a_view(x):
    y = x * 2.0
    tail = y[1:]
    tail *= 3.0
    head = y[0]
    return np.sum(y * y) + head * np.sum(tail)


CASES += [Case(augments_a_second_name, (_V3,)), Case(augments_a_view, (_V3,))]


def names_an_array_after_its_updates(x):
    y = x * 1.0
    y[0] = 3.0
    y *= 0.5
    z = y
    return np.sum(z * x)


CASES += [Case(names_an_array_after_its_updates, (_V3,))]


def augments_an_argument_through_names(x, w):
    second = x
    second += 1.0
    tail = w[1:]
    tail *= 2.0
    return np.sum(x * w) + np.sum(tail)


CASES += [Case(augments_an_argument_through_names, (_V3, _V3 * 0.5))]


def augments_a_view_then_transposes(b, c):
    v1 = np.outer(b, b) + c
    vw = v1[1:]
    vw *= 2.0
    return np.sum(v1.T * c)


CASES += [Case(augments_a_view_then_transposes, (_V3, np.outer(_V3, _V3[::-1])))]


def uses_the_names_of_generated_code(saved, ct_out):
    # a reverse rule's own parameters are named saved and ct_out: the user's keep theirs
    a = saved * ct_out
    return np.sum(a * saved) + np.sum(ct_out)


def unpacks_a_tuple_named_saved(saved, scale):
    a = saved[0] * scale
    return np.sum(a * saved[1]) + scale * saved[0][0]


CASES += [
    Case(uses_the_names_of_generated_code, (_V3, _V3 * 0.5)),
    Case(unpacks_a_tuple_named_saved, ((_V3, _V3 * 2.0), 1.5)),
]


# p.w += v, d["k"] *= v, xs[0] += v: Python adds into the array the slot holds; on a local
# record or container whose array no other name holds, the update is the slot's new value
def augments_a_field_in_a_loop(x, y):
    p = Params(x * 1.0, y * 2.0, 0.5)
    total = 0.0
    for _ in range(3):
        total = total + np.sum(p.W * y)
        p.W *= y
        p.scale = p.scale + 1.0
    if total > 0.0:
        p.b += p.W
    else:
        p.b -= p.W
    return total + np.sum(p.W * p.b) * p.scale


def augments_items_of_containers(x, y):
    d = {"a": x * 2.0, "b": y}
    d["a"] += y
    d["a"] *= d["b"]
    xs = [y, np.sin(x)]
    xs[-1] += d["a"]
    return np.sum(xs[1] * xs[0]) + np.sum(d["a"])


CASES += [
    Case(augments_a_field_in_a_loop, (_V3, _V3 * 0.5 - 0.2)),
    Case(augments_items_of_containers, (_V3, _V3 * 0.5 - 0.2)),
]


def scale_then_double(a, c):
    a[0] = a[0] * c
    a *= 2.0


def helper_augments_a_ufunc_result(x, c):
    # np.sin of an array is an array, so the helper's a *= 2.0 updates it in place
    a = np.sin(x)
    scale_then_double(a, c)
    return np.sum(a**2)


CASES += [Case(helper_augments_a_ufunc_result, (V, 1.5))]


# a += v on an array a container or record built before holds: Python's container holds the
# array the update changed, so it is built again from the new value
def augments_an_array_held_in_containers(x, y):
    a = np.sin(x)
    pair = (a, 2.0)
    d = {"a": a, "y": y}
    p = Params(a, y, 0.5)
    a *= y
    a += 1.0
    d["z"] = a * 2.0
    return np.sum(pair[0]) * pair[1] + np.sum(d["a"] * d["z"]) + np.sum(np.stack([p.W, p.b]))


CASES += [Case(augments_an_array_held_in_containers, (_V3, _V3 * 0.5 - 0.2))]


# an argument placed into a new array by np.stack / np.concatenate / np.vstack, then updated
# in place: the list display is read into the new array by the call, and nothing keeps it
def stacks_an_argument_then_updates_it(x, y):
    joined = np.concatenate([x, y]) ** 2
    rows = np.vstack((x, y * 2.0))
    mean = np.stack([x, y]).sum(axis=0)
    x *= y
    x[0] = y[1] * 3.0
    return np.sum(joined[:3] * x) + np.sum(rows * x) + np.sum(mean * x)


CASES += [Case(stacks_an_argument_then_updates_it, (_V3, _V3 * 0.5 - 0.2))]


# max and min of two numbers are one of them: a number, whose += rebinds (not an array
# updated in place that the list built before would see)
def augments_a_max_of_numbers(x, s):
    s *= s + max(np.sqrt(s**2 + 1.0), min(s, 0.5))
    held = [s, 2.0]
    s += np.tanh(s)
    return s * held[0] + np.sum(x) * s


CASES += [Case(augments_a_max_of_numbers, (_V3, 0.7))]


# max and min of a list, of an array's items, of three values: the first of the greatest
# (least) item, as Python picks it
def greatest_and_least_of_a_list(x, s):
    scaled = []
    for t in x:
        scaled.append(t * s)
    return max(scaled) + min(scaled) * 2.0 + max(x[0] * s, x[1], s**2) - min(x * s)


CASES += [Case(greatest_and_least_of_a_list, (_V3, 0.8))]


# a number that is an int in the first iteration (t = 0) and a float after, kept in a list
# and a tuple: its place in the container's cotangent holds None, read as a zero; also when
# such a list is a tape of a derived rule differentiated again
def keeps_a_number_that_starts_as_an_int(x, s):
    t = 0
    kept = []
    total = 0.0
    for i in range(3):
        kept.append(t)
        pair = (t * 2, s)
        total = total + pair[1] * x
        t = t + x * s
    return kept[2] * 3.0 + total + t


CASES += [Case(keeps_a_number_that_starts_as_an_int, (0.7, 1.3))]


# the same number passed to a function of the module, whose rule is derived for the
# caller's kind (a float): in the callee's container cotangent the int's place is None too
def _pairs_with(t, x):
    pair = (t, x)
    return pair[1] * t + x


def passes_a_number_that_starts_as_an_int(x):
    t = 0
    total = 0.0
    for i in range(3):
        total = total + _pairs_with(t, x)
        t = t + x
    return total


CASES += [Case(passes_a_number_that_starts_as_an_int, (0.7,))]


# arrays updated in place in loops: an argument, an array of the function's own with +=,
# one named again after it is bound to a new array. Their reverse rules add into arrays
# they own in place (ct_x += ...) and know unbroadcast's kind, so that they can be derived
# again
def updates_an_argument_in_a_loop(x, s):
    for i in range(3):
        x *= s
        x[0] += np.sin(x[1])
    return np.sum(x**2)


def augments_its_own_array_in_a_loop(x, s):
    out = np.zeros(3)
    for i in range(3):
        out[i] = x[i] * s
        out += x * 0.5
    return np.sum(out**2)


def names_an_array_then_binds_it_anew(x, s):
    a = x * 2.0
    b = a
    a = np.zeros(3) + a
    a[1] += s
    return np.sum(a * b)


CASES += [
    Case(updates_an_argument_in_a_loop, (_V3, 1.1)),
    Case(augments_its_own_array_in_a_loop, (_V3, 1.1)),
    Case(names_an_array_then_binds_it_anew, (_V3, 0.8)),
]


# the builtin sum of an array adds its rows: each row's cotangent is the sum's
def sums_the_rows_of_an_array(x, a):
    v = a * 1.0
    v *= math.sin(x)
    return sum(v) + np.sum(sum(np.outer(v, a)) ** 2)


CASES += [Case(sums_the_rows_of_an_array, (0.37, _V3))]


# np.prod of an array made from a list grown in a loop (a kind not known), then the array
# updated in place: the product's tangent is a number, not an array to copy
def multiplies_by_a_product_then_updates(x, a):
    lst = []
    for t in a:
        lst.append(t * 2.0)
    v = np.array(lst)
    x *= np.prod(v)
    v[1:] = 0.5
    return x + np.sum(v * a)


CASES += [Case(multiplies_by_a_product_then_updates, (0.37, _V3))]


# np.var with ddof (a kind not known: a number) of an argument a helper updates later: its
# tangent is copied as what it may be, a number or an array (found by the fuzzer)
def _adds_half(out, v):
    out += v * 0.5


def keeps_a_variance_then_updates(a, b):
    v2 = np.var(b, ddof=1)
    _adds_half(b, a)
    return v2 * np.sum(b * a)


CASES += [Case(keeps_a_variance_then_updates, (_V3, _V3[::-1].copy()))]


# an array a loop's branch makes and updates in place, on iterations that do not all take
# the branch: its tape holds UNSET for those, and the reverse sweep's copy of its last value
# (which nothing read) is gone
def updates_an_array_some_iterations_make(x):
    for k in range(3):
        if k == 1:
            v = np.ones(3) * x
            v[1] = 2.0
            x = v[0] * x
    return x


# an int among a list's numbers: its place in the list's tangent is 0.0, so that sum adds
def sums_a_list_holding_an_int(x):
    return sum([0, x, 2 * x]) * x


CASES += [
    Case(updates_an_array_some_iterations_make, (0.3,)),
    Case(sums_a_list_holding_an_int, (0.3,)),
]


# an int kept in a dict whose kind is a number not known: its place in the dict's tangent
# is 0.0; and np.where's tangent, of a kind not known, copied where the function has a value
# named copy (w.copy()'s) and an argument it updates
def keeps_an_int_in_a_dict(x, a):
    v = np.linspace(0.5, -0.25, 3) if x > 5.0 else np.ones(3) * 0.3
    t = 0
    for i in range(0):
        t += np.sum(v)
    d = {"p": t, "q": x}
    w = np.where(np.linspace(0.3, 0.3, 3) < 0.0, a, x).copy()
    a[0] = 1.0
    return d["p"] * d["q"] + x + np.sum(w)


CASES += [Case(keeps_an_int_in_a_dict, (0.3, _V3))]


# the builtin sum of an array of a kind not known (np.linspace, np.concatenate of lists):
# its items' cotangents are an array, as the array's rows
def sums_an_array_of_a_kind_not_known(x, a):
    v = np.concatenate([[1.0], [2.0, x]])
    v *= 0.9
    return sum(v) + sum((a + np.linspace(2.0, 1.5, 3)) ** 2)


CASES += [Case(sums_an_array_of_a_kind_not_known, (0.3, _V3))]


# a guard clause returning early inside a nested if, then an array updated in place: the
# code after the return is written once per path, and the reverse sweep copies the array
# in each path that makes it (on the path that returned it was never made)
def returns_early_inside_a_nested_if(x):
    if x < 1.5:
        if x < 1.0:
            return x
    v = np.zeros(3)
    v[0] = x * x
    return np.sum(v)


CASES += [Case(returns_early_inside_a_nested_if, (0.3,)), Case(returns_early_inside_a_nested_if, (2.0,))]
