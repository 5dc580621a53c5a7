"""Where a replay is: read from each node's Replay policy (replayer/src/replay_policy.h) and
from the hooks it calls (replayer/src/debugger_hooks.h)."""

import os

import gdb

from . import dds
from . import inferior_values as iv
from . import nodes
from . import printers

MAX_THREADS = 1 << 15


def policy_of(runtime):
    """The node's strads::ReplayOrderingPolicy (a gdb.Value), or None when not replaying."""
    try:
        context = nodes.context_of(runtime)
        pointer = iv.held_pointer(context["ordering_"])
        if int(pointer) == 0:
            return None
        policy = pointer.dereference()
        dynamic = policy.dynamic_type
        if "ReplayOrderingPolicy" not in str(dynamic):
            return None
        return policy.cast(dynamic)
    except iv.READ_ERRORS:
        return None


def vector_items(vector):
    impl = vector["_M_impl"]
    start = impl["_M_start"]
    count = int(impl["_M_finish"] - start)
    if count < 0 or count > iv.MAX_ELEMENTS:
        raise iv.Garbage("vector of %d" % count)
    return start, count


def deque_size(deque):
    start, finish = deque["_M_impl"]["_M_start"], deque["_M_impl"]["_M_finish"]
    per_buffer = deque_buffer_size(deque)
    nodes_between = int(finish["_M_node"] - start["_M_node"])
    return (per_buffer * (nodes_between - 1) + int(finish["_M_cur"] - finish["_M_first"]) +
            int(start["_M_last"] - start["_M_cur"])) if nodes_between >= 0 else 0


def deque_buffer_size(deque):
    size = deque.type.strip_typedefs().template_argument(0).sizeof
    return 512 // size if size < 512 else 1  # libstdc++'s __deque_buf_size


def deque_at(deque, i):
    start = deque["_M_impl"]["_M_start"]
    per_buffer = deque_buffer_size(deque)
    offset = i + int(start["_M_cur"] - start["_M_first"])
    return (start["_M_node"] + offset // per_buffer).dereference()[offset % per_buffer]


def site_names(policy):
    """{site id: "AsyncFor at sgdmf.cc:58"} from the policy's copy of the trace's sites."""
    names = {}
    try:
        for key, site in dds.rb_tree_pairs(policy["sites_"]):
            kind, file = iv.std_string(site["kind"]), iv.std_string(site["file"], iv.MAX_PATH_BYTES)
            if kind == "input":  # as trace/src/describe.cc's DescribeSite
                names[int(key)] = "'%s'" % file
            else:
                names[int(key)] = "%s at %s:%d" % (kind, os.path.basename(file), int(site["line"]))
    except iv.READ_ERRORS:
        pass
    return names


def describe(event, names):
    columns = [int(event[name]) & 0xFFFFFFFFFFFFFFFF for name in ("a_", "b_", "c_", "d_", "e_")]
    return printers.describe_event(int(event["kind_"]) & 0xFF, int(event["thread_"]), *columns,
                                   site_name=lambda id: names.get(id, "site %d" % id))


def next_events(policy):
    """[(index, taker, text)] of the events the node takes next, by index: each worker
    thread's next lock grant (taker "thread T") and the driver's next event (taker "driver").
    Threads take their events independently: a node's log orders them only per taker."""
    names = site_names(policy)
    found = []
    driver, count = vector_items(policy["driver_"])
    next_driver = int(policy["driver_next_"])
    if 0 <= next_driver < count:
        d = driver[next_driver]
        found.append((int(d["index"]), "driver", describe(d["event"], names)))
    threads = iv.integer(policy, "thread_count_", 0, MAX_THREADS)
    grants_of = iv.held_pointer(policy["threads_"])
    for t in range(threads):
        grants = grants_of[t]
        next_grant = int(grants["next"])
        if next_grant < deque_size(grants["grants"]):
            g = deque_at(grants["grants"], next_grant)
            found.append((int(g["index"]), "thread %d" % t, printers.describe_event(
                1, t, int(g["lock_id"]), int(g["task"]), int(g["from_number"]),
                int(g["acquire"]), int(g["from"]))))
    return sorted(found)


def operator_text(policy):
    try:
        return iv.std_string(policy["operator_"], iv.MAX_PATH_BYTES) or None
    except iv.READ_ERRORS:
        return None


def current_operator(runtime):
    """The operator the node of `runtime` is in ("in AsyncFor at f.cc:12 (invocation 3)"),
    or None when it is not replaying."""
    policy = policy_of(runtime)
    return operator_text(policy) if policy is not None else None
