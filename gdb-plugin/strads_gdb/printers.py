"""Pretty-printers for strads objects, one collection registered the libstdc++ way."""

import gdb
import gdb.printing

from . import dds
from . import inferior_values as iv


class DvectorPrinter(object):
    """strads::dvector<T>: name, size, this node's owned range; the owned elements as children."""

    kind, view_type = "strads::dvector", dds.DvectorView

    def __init__(self, value):
        self.value = value
        try:
            self.view = self.view_type(value)
            self.error = None
        except iv.READ_ERRORS as error:
            self.view = None
            self.error = error

    def to_string(self):
        if self.view is None:
            return iv.describe_error(self.kind, self.error)
        return self.view.summary()

    def children(self):
        if self.view is None:
            return
        # gdb stops pulling children at `set print elements`.
        for i in range(self.view.owned_begin, self.view.owned_end):
            yield "[%d]" % i, self.view.element(i)

    def display_hint(self):
        return "array"


class DmatrixPrinter(DvectorPrinter):
    """strads::dmatrix<T>: name, rows, width, this node's owned rows; the owned rows as children."""

    kind, view_type = "strads::dmatrix", dds.DmatrixView


class MapPrinter(object):
    """strads::dmap / dmultimap: name, global size; this node's pairs as a map."""

    def __init__(self, value, multi):
        try:
            self.view = dds.MapView(value, multi)
            self.error = None
        except iv.READ_ERRORS as error:
            self.view = None
            self.error = error
        self.kind = "strads::dmultimap" if multi else "strads::dmap"

    def to_string(self):
        if self.view is None:
            return iv.describe_error(self.kind, self.error)
        try:
            return self.view.summary()
        except iv.READ_ERRORS as error:
            return iv.describe_error(self.kind, error)

    def children(self):
        if self.view is None:
            return
        try:
            for i, (key, mapped) in enumerate(self.view.local_pairs()):
                yield "[%d]" % (2 * i), key
                yield "[%d]" % (2 * i + 1), mapped
        except iv.READ_ERRORS as error:
            yield "<error>", iv.describe_error(self.kind, error)

    def display_hint(self):
        return "map"


# SeamLock's word (core/include/strads/seam/seam_lock.h): bit 0 held, bits 1..48 the acquire
# count of the last release's thread then, bits 49..63 that thread.
SEAM_LOCK_HELD = 1
SEAM_LOCK_NUMBER_SHIFT = 1
SEAM_LOCK_NUMBER_BITS = 48
SEAM_LOCK_THREAD_SHIFT = 49


def describe_lock_word(word):
    state = "held" if word & SEAM_LOCK_HELD else "free"
    thread = word >> SEAM_LOCK_THREAD_SHIFT
    count = (word >> SEAM_LOCK_NUMBER_SHIFT) & ((1 << SEAM_LOCK_NUMBER_BITS) - 1)
    if thread == 0 and count == 0:
        return "%s, never released" % state
    return "%s, last release by thread %d at its acquire %d" % (state, thread, count)


class SeamLockPrinter(object):
    def __init__(self, value):
        self.value = value

    def to_string(self):
        try:
            word = int(self.value["word"]["_M_i"]) & 0xFFFFFFFFFFFFFFFF
        except iv.READ_ERRORS as error:
            return iv.describe_error("strads::SeamLock", error)
        return "strads::SeamLock " + describe_lock_word(word)


def policy_mode(runtime):
    """live / record / replay (or another policy's name) from the policy's dynamic type."""
    context = iv.held_pointer(iv.field(runtime, "context_"))
    if int(context) == 0:
        return "starting"
    ordering = iv.held_pointer(context.dereference()["ordering_"])
    if int(ordering) == 0:
        return "starting"
    name = str(ordering.dereference().dynamic_type)
    for mode in ("Replay", "Record", "Chaos", "Live"):
        if mode in name:
            return mode.lower()
    return name


class RuntimePrinter(object):
    def __init__(self, value):
        self.value = value

    def to_string(self):
        try:
            node = iv.integer(self.value, "node_", 0, iv.MAX_NODES)
            nodes = iv.integer(self.value, "nodes_", 1, iv.MAX_NODES)
            threads = iv.integer(self.value, "threads_", 0, iv.MAX_NODES)
        except iv.READ_ERRORS as error:
            return iv.describe_error("strads::Runtime", error)
        try:
            mode = policy_mode(self.value)
        except iv.READ_ERRORS:
            mode = "unknown"  # NodeContext has no debug info in this program
        text = "strads::Runtime node %d of %d, %d threads, mode %s" % (node, nodes, threads, mode)
        from . import replay_state  # the replay's view, when the program is replaying

        operator = replay_state.current_operator(self.value)
        if operator:
            text += ", " + operator
        return text


# trace/include/strads/trace/event.h: EventKind and the fields each kind keeps in a_..e_.
EVENT_KINDS = {1: "lock_grant", 2: "delivery", 3: "choice", 4: "operator_begin",
               5: "operator_end", 6: "thread_digest", 7: "input"}
CHOICE_POINTS = {1: "ssp_poll", 2: "task_dispatch"}


def describe_event(kind, thread, a, b, c, d, e, site_name=None):
    """The text trace/src/describe.cc's Describe gives (sites by id unless site_name helps)."""
    site = site_name or (lambda id: "site %d" % id)
    if kind == 1:
        return ("lock_grant lock %d task %d (acquire %d of thread %d, after thread %d released it "
                "at count %d)" % (a, b, d, thread, e, c))
    if kind == 2:
        return "delivery of message %d from node %d (tag %d)" % (b, a, c)
    if kind == 3:
        return "choice %s = %d" % (CHOICE_POINTS.get(a, "unknown"), b)
    if kind in (4, 5):
        return "%s %s (invocation %d)" % (EVENT_KINDS[kind], site(a), b)
    if kind == 6:
        return "thread_digest of thread %d: %d lock acquires, digest %016x" % (thread, a, b)
    if kind == 7:
        return "input of %d bytes at offset %d of %s, FNV-1a %016x" % (c, b, site(a), d)
    return "unknown event (kind %d)" % kind


class EventPrinter(object):
    def __init__(self, value):
        self.value = value

    def to_string(self):
        try:
            v = self.value
            kind = int(v["kind_"]) & 0xFF
            columns = [int(v[name]) & 0xFFFFFFFFFFFFFFFF for name in ("a_", "b_", "c_", "d_", "e_")]
            return "strads::Event " + describe_event(kind, int(v["thread_"]), *columns)
        except iv.READ_ERRORS as error:
            return iv.describe_error("strads::Event", error)


def build_printer():
    printer = gdb.printing.RegexpCollectionPrettyPrinter("strads")
    printer.add_printer("dvector", "^strads::dvector<.*>$", DvectorPrinter)
    printer.add_printer("dmatrix", "^strads::dmatrix<.*>$", DmatrixPrinter)
    printer.add_printer("dmap", "^strads::dmap<.*>$", lambda v: MapPrinter(v, False))
    printer.add_printer("dmultimap", "^strads::dmultimap<.*>$", lambda v: MapPrinter(v, True))
    printer.add_printer("SeamLock", "^strads::SeamLock$", SeamLockPrinter)
    printer.add_printer("Runtime", "^strads::Runtime$", RuntimePrinter)
    printer.add_printer("Event", "^strads::Event$", EventPrinter)
    return printer
