"""The logical nodes of a strads process, found through gdb's threads.

Every node's driver thread has a thread-local `current_runtime` (core/src/runtime.cc) pointing
at its strads::Runtime; worker threads have none. In a single-process replay all P nodes are in
the process; under mpiexec each process has one.
"""

import re

import gdb

from . import inferior_values as iv

CURRENT_RUNTIME = "'strads::(anonymous namespace)::current_runtime'"
MAX_WORKERS = 1 << 15


class Node(object):
    def __init__(self, number, thread, runtime):
        self.number = number  # the node's index
        self.thread = thread  # its driver's gdb.InferiorThread
        self.runtime = runtime  # gdb.Value of its strads::Runtime


def runtime_of_selected_thread():
    """The strads::Runtime of the selected thread, or None (a worker thread, not started)."""
    try:
        pointer = gdb.parse_and_eval(CURRENT_RUNTIME)
        if int(pointer) == 0:
            return None
        return pointer.dereference()
    except iv.READ_ERRORS:
        return None


def all_nodes():
    """Every node of the process by number, from the driver threads (the selection restored)."""
    inferior = gdb.selected_inferior()
    if inferior is None or inferior.pid == 0:
        return {}
    selected = gdb.selected_thread()
    frame = None
    try:
        frame = gdb.selected_frame()
    except gdb.error:
        pass
    found = {}
    try:
        for thread in inferior.threads():
            if not thread.is_valid():
                continue
            thread.switch()
            runtime = runtime_of_selected_thread()
            if runtime is None:
                continue
            try:
                number = iv.integer(runtime, "node_", 0, iv.MAX_NODES)
            except iv.READ_ERRORS:
                continue
            found.setdefault(number, Node(number, thread, runtime))
    finally:
        if selected is not None and selected.is_valid():
            selected.switch()
            if frame is not None and frame.is_valid():
                frame.select()
    return found


def current_node():
    """The node of the selected thread: the one it is the driver or a worker of, or None."""
    runtime = runtime_of_selected_thread()
    if runtime is not None:
        number = iv.integer(runtime, "node_", 0, iv.MAX_NODES)
        return Node(number, gdb.selected_thread(), runtime)
    return node_of_thread(gdb.selected_thread())


def context_of(runtime):
    """The node's internal::NodeContext (a gdb.Value)."""
    context = iv.held_pointer(iv.field(runtime, "context_"))
    if int(context) == 0:
        raise iv.Garbage("the runtime has no context yet")
    return context.dereference()


def dds_of(runtime, in_memory=False):
    """[(name, typed value)] of every DDS of the node, in creation order. Values are copies
    unless `in_memory` (an lvalue, for $strads_dds; gdb then warns about RTTI it cannot find)."""
    context = context_of(runtime)
    registry = context["dds_"]
    impl = registry["_M_impl"]
    start, finish = impl["_M_start"], impl["_M_finish"]
    count = int(finish - start)
    if count < 0 or count > 1 << 20:
        raise iv.Garbage("a registry of %d DDS" % count)
    result = []
    for i in range(count):
        pointer = iv.held_pointer(start[i])
        if int(pointer) == 0:
            continue
        base = pointer.dereference()
        result.append((iv.std_string(iv.field(base, "name_")), typed_object(pointer, in_memory)))
    return result


def typed_object(pointer, in_memory):
    """*pointer as its dynamic type (a DdsBase* as the dvector<T> it is), still in memory.

    The type is looked up from the name of the object's vtable symbol (gdb's own dynamic_type
    misses the RTTI of some template arguments, as in "std::array<float, 32ul>", and warns)."""
    vtable = int(pointer.cast(gdb.lookup_type("unsigned long").pointer()).dereference())
    symbol = gdb.execute("info symbol %d" % vtable, to_string=True)
    match = re.match(r"vtable for (.*?) \+ \d+ in section", symbol)
    if match:
        name = match.group(1)
        for candidate in (name, re.sub(r"\b(\d+)ul\b", r"\1", name)):
            try:
                # DdsBase is the first and only base: the same address (no RTTI lookup).
                typed = gdb.lookup_type(candidate).strip_typedefs()
                typed.fields()  # completes the type, which overload resolution needs
                if not in_memory:  # the object's bytes: no dereference, no RTTI lookup
                    data = gdb.selected_inferior().read_memory(int(pointer), typed.sizeof)
                    return gdb.Value(bytes(data), typed)
                # DdsBase is the first and only base: the same address.
                return pointer.reinterpret_cast(typed.pointer()).dereference()
            except gdb.error:
                continue
    return pointer.dereference()


def thread_handle(thread):
    """The pthread_t of a gdb thread, as an integer (None when gdb cannot tell)."""
    try:
        return int.from_bytes(thread.handle(), "little")
    except (gdb.error, TypeError, ValueError):
        return None


def worker_threads(node):
    """[gdb thread of worker t] of `node`: worker 0 is its driver thread (core/src/thread_pool.h)."""
    pool = context_of(node.runtime)["pool_"]
    start = pool["workers_"]["_M_impl"]["_M_start"]
    count = int(pool["workers_"]["_M_impl"]["_M_finish"] - start)
    if count < 0 or count > MAX_WORKERS:
        raise iv.Garbage("a pool of %d threads" % count)
    by_handle = {thread_handle(t): t for t in gdb.selected_inferior().threads()}
    workers = [node.thread]
    for i in range(count):
        workers.append(by_handle.get(int(start[i]["_M_id"]["_M_thread"])))
    return workers


def node_of_thread(thread, found=None):
    """The node whose driver or worker `thread` is, or None."""
    found = all_nodes() if found is None else found
    for node in found.values():
        if node.thread == thread:
            return node
    for node in found.values():
        try:
            if thread in worker_threads(node):
                return node
        except iv.READ_ERRORS:
            continue
    return None
