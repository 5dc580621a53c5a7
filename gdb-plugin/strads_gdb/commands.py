"""The `strads` gdb commands: where a replay is, switching nodes, stopping at an event or an
operator invocation, looking at DDS by name. `help strads` lists them."""

import os

import gdb

from . import dds
from . import inferior_values as iv
from . import nodes
from . import replay_state

# Names in replayer/src/debugger_hooks.h.
BREAK_NODE = "strads_debugger_break_node"
BREAK_EVENT = "strads_debugger_break_event"
EVENT_REACHED = "strads_debugger_event_reached"
OPERATOR_BEGIN = "strads_debugger_operator_begin"
DIVERGENCE = "strads_debugger_divergence"


def process_running():
    inferior = gdb.selected_inferior()
    return inferior is not None and inferior.pid != 0


def parse_int(text, what):
    try:
        value = int(text, 0)
    except ValueError:
        raise gdb.GdbError("strads: %s must be a number, not '%s'" % (what, text))
    if value < 0:
        raise gdb.GdbError("strads: %s must not be negative (%d)" % (what, value))
    return value


def nodes_or_error():
    """Every node of the process by number; an error when there is none yet."""
    found = nodes.all_nodes()
    if not found:
        raise gdb.GdbError("strads: no strads node in this process (not started yet?)")
    return found


def node_policies():
    """(number, node, Replay policy or None) of every node of the process, by number."""
    found = nodes_or_error()
    return [(number, found[number], replay_state.policy_of(found[number].runtime))
            for number in sorted(found)]


def node_or_error(number):
    found = nodes_or_error()
    if number not in found:
        raise gdb.GdbError("strads: no node %d here (nodes: %s)" %
                           (number, ", ".join(str(n) for n in sorted(found))))
    return found[number]


def current_node_or_error():
    node = nodes.current_node()
    if node is None:
        raise gdb.GdbError("strads: the selected thread belongs to no strads node "
                           "(`strads node K` selects one)")
    return node


def argument(frame, name):
    return frame.read_var(name)


class EventTarget(object):
    """The event `strads break-event` stops before: written into the inferior at its start
    (the variables only exist once it runs) and again whenever it changes."""

    node = -1
    event = None

    @classmethod
    def write(cls):
        if not process_running():
            return
        gdb.parse_and_eval("%s = %d" % (BREAK_NODE, cls.node if cls.event is not None else -1))
        gdb.parse_and_eval("%s = %d" % (BREAK_EVENT, cls.event if cls.event is not None
                                        else 0xFFFFFFFFFFFFFFFF))


class ProgramStart(gdb.Breakpoint):
    """At main: writes the pending event target into the new process; never stops."""

    def __init__(self):
        gdb.Breakpoint.__init__(self, "main", internal=True)
        self.silent = True

    def stop(self):
        try:
            EventTarget.write()
        except gdb.error as error:
            print("strads: cannot set the event to stop at: %s" % error)
        return False


class EventReached(gdb.Breakpoint):
    def __init__(self):
        gdb.Breakpoint.__init__(self, EVENT_REACHED, internal=True)
        self.silent = True

    def stop(self):
        frame = gdb.selected_frame()
        node, index = int(argument(frame, "node")), int(argument(frame, "index"))
        text = ""
        found = nodes.all_nodes().get(node)
        policy = replay_state.policy_of(found.runtime) if found else None
        if policy is not None:
            for event_index, _, description in replay_state.next_events(policy):
                if event_index == index:
                    text = ": " + description
        print("strads: node %d is about to take event %d%s" % (node, index, text))
        return True


class OperatorBegin(gdb.Breakpoint):
    """Stops when an operator invocation matching SITE [INVOCATION] starts (on any node, or
    on `node` when given)."""

    def __init__(self, site, invocation, node):
        gdb.Breakpoint.__init__(self, OPERATOR_BEGIN, internal=True)
        self.silent = True
        self.site, self.invocation, self.node = site, invocation, node

    def matches(self, site_id, file, line):
        if self.site.isdigit():
            return int(self.site) == site_id
        name, _, wanted_line = self.site.rpartition(":")
        if not name or not wanted_line.isdigit():
            return os.path.basename(file) == self.site
        return os.path.basename(file) == os.path.basename(name) and int(wanted_line) == line

    def stop(self):
        frame = gdb.selected_frame()
        node = int(argument(frame, "node"))
        site = int(argument(frame, "site"))
        invocation = int(argument(frame, "invocation"))
        kind = iv.c_string(argument(frame, "kind"), 64)
        file = iv.c_string(argument(frame, "file"), 4096)
        line = int(argument(frame, "line"))
        if self.node is not None and node != self.node:
            return False
        if self.invocation is not None and invocation != self.invocation:
            return False
        if not self.matches(site, file, line):
            return False
        print("strads: node %d starts %s at %s:%d (site %d, invocation %d)" %
              (node, kind, os.path.basename(file), line, site, invocation))
        return True


class Divergence(gdb.Breakpoint):
    """Stops where the replay diverged, before the report's exception unwinds, and selects
    the innermost frame outside strads so that the user lands on the line that deviated."""

    def __init__(self):
        gdb.Breakpoint.__init__(self, DIVERGENCE, internal=True)
        self.silent = True

    def stop(self):
        frame = gdb.selected_frame()
        try:
            report = iv.c_string(argument(frame, "report"), 1 << 16)
        except iv.READ_ERRORS as error:
            report = "(the report cannot be read: %s)" % error
        print("strads: the replay diverged:\n%s" % report)
        gdb.post_event(select_user_frame)
        return True


STRADS_SOURCE_PARTS = ("/core/", "/replayer/", "/recorder/", "/trace/", "/usr/include/")


def select_user_frame():
    frame = gdb.newest_frame()
    while frame is not None:
        symtab = frame.find_sal().symtab
        name = symtab.fullname() if symtab else ""
        if name and not any(part in name for part in STRADS_SOURCE_PARTS):
            frame.select()
            gdb.execute("frame", to_string=False)
            return
        frame = frame.older()


_hooks = {}


def install_hooks():
    """The plugin's internal breakpoints: program start and divergence (once per session)."""
    if _hooks:
        return
    _hooks["start"] = ProgramStart()
    _hooks["divergence"] = Divergence()


class StradsPrefix(gdb.Command):
    """strads: commands for strads programs and their replays.

A replay (`strads gdb TRACE -- PROG ARGS`) runs every recorded node as a logical node of one
process; these commands know its nodes, their trace events and their DDS."""

    def __init__(self):
        gdb.Command.__init__(self, "strads", gdb.COMMAND_USER, prefix=True)


class StradsCommand(gdb.Command):
    """A `strads NAME` command: `run(args, node)` gets its words after an optional `--node K`
    (node None when absent), once their count is one of `word_counts`."""

    name, category, usage, word_counts = None, gdb.COMMAND_USER, None, (0,)

    def __init__(self):
        gdb.Command.__init__(self, "strads " + self.name, self.category)

    def invoke(self, arg, from_tty):
        args = gdb.string_to_argv(arg)
        node = None
        if "[--node K]" in self.usage and len(args) >= 2 and args[0] == "--node":
            node = parse_int(args[1], "the node")
            args = args[2:]
        if len(args) not in self.word_counts:
            raise gdb.GdbError("usage: " + self.usage)
        self.run(args, node)


class StatusCommand(StradsCommand):
    """Per node: its gdb thread, its operator, its next trace event, whether it waits.

Usage: strads status"""

    name, category, usage, word_counts = "status", gdb.COMMAND_USER, "strads status", (0,)

    def run(self, args, node):
        for number, node, policy in node_policies():
            print("node %d: thread %d" % (number, node.thread.num))
            if policy is None:
                print("  not replaying")
                continue
            print("  %s" % (replay_state.operator_text(policy) or "before the first operator"))
            events = replay_state.next_events(policy)
            for index, taker, description in events:
                print("  next event %d (%s): %s" % (index, taker, description))
            if not events:
                print("  no events left in its trace")
            waiting = waiting_in(node.thread)
            if waiting:
                print("  waiting: %s" % waiting)


WAIT_FUNCTIONS = (("TakeWhenReleased", "for a lock's recorded release"),
                  ("Collectives", "for other nodes (a collective)"), ("Receive", "for a message"),
                  ("Recv", "for a message"), ("Barrier", "for other nodes (a barrier)"),
                  ("RunOnAll", "for its worker threads"))


def waiting_in(thread):
    """What `thread` waits for, from the functions on its stack, or None."""
    selected = gdb.selected_thread()
    try:
        thread.switch()
        frame = gdb.newest_frame()
        for _ in range(64):
            if frame is None:
                return None
            name = frame.name() or ""
            for function, what in WAIT_FUNCTIONS:
                if function in name:
                    return "%s (in %s)" % (what, name)
            frame = frame.older()
    except gdb.error:
        return None
    finally:
        if selected is not None and selected.is_valid():
            selected.switch()
    return None


class NodeCommand(StradsCommand):
    """Switch to node K's driver thread.

Usage: strads node K"""

    name, category, usage, word_counts = "node", gdb.COMMAND_USER, "strads node K", (1,)

    def run(self, args, node):
        node = node_or_error(parse_int(args[0], "the node"))
        gdb.execute("thread %d" % node.thread.num)


class ThreadCommand(StradsCommand):
    """Switch to worker thread T of node K (worker 0 is the node's driver thread).

Usage: strads thread K T"""

    name, category, usage, word_counts = "thread", gdb.COMMAND_USER, "strads thread K T", (2,)

    def run(self, args, node):
        node = node_or_error(parse_int(args[0], "the node"))
        worker = parse_int(args[1], "the thread")
        workers = nodes.worker_threads(node)
        if worker >= len(workers) or workers[worker] is None:
            raise gdb.GdbError("strads: node %d has threads 0..%d" % (node.number, len(workers) - 1))
        gdb.execute("thread %d" % workers[worker].num)


class BreakEventCommand(StradsCommand):
    """Stop when node K is about to take its trace event N (default node: 0).

Usage: strads break-event [--node K] N
N is an index in node-K.log, as `strads trace dump` and `strads when` print it. One event at
a time: a new break-event replaces the previous one. Costs one compare per event, no stepping."""

    name, category, usage, word_counts = "break-event", gdb.COMMAND_BREAKPOINTS, "strads break-event [--node K] N", (1,)

    def run(self, args, node):
        node = 0 if node is None else node
        EventTarget.node, EventTarget.event = node, parse_int(args[0], "the event")
        if "event" not in _hooks:
            _hooks["event"] = EventReached()
        EventTarget.write()
        print("strads: will stop when node %d is about to take event %d" % (node, EventTarget.event))


class BreakOperatorCommand(StradsCommand):
    """Stop when an invocation of an operator starts (on node K, or on every node).

Usage: strads break-operator [--node K] SITE [INVOCATION]
SITE is FILE:LINE of the operator call (sgdmf.cc:58), or a site id of `strads trace dump`.
INVOCATION counts from 0 (every invocation when omitted)."""

    name, category, usage, word_counts = "break-operator", gdb.COMMAND_BREAKPOINTS, "strads break-operator [--node K] SITE [INVOCATION]", (1, 2)

    def run(self, args, node):
        invocation = parse_int(args[1], "the invocation") if len(args) == 2 else None
        OperatorBegin(args[0], invocation, node)
        print("strads: will stop when %s starts%s%s" %
              (args[0], "" if invocation is None else " invocation %d" % invocation,
               "" if node is None else " on node %d" % node))


class WhenCommand(StradsCommand):
    """The indexes of the next trace events of every node, per taker (rr's `when`).

Usage: strads when"""

    name, category, usage, word_counts = "when", gdb.COMMAND_USER, "strads when", (0,)

    def run(self, args, node):
        for number, _, policy in node_policies():
            if policy is None:
                print("node %d: not replaying" % number)
                continue
            events = replay_state.next_events(policy)
            print("node %d: %s" % (number, "next events " + ", ".join(
                "%d (%s)" % (index, taker) for index, taker, _ in events) if events
                else "at the end of its trace"))


class DdsCommand(StradsCommand):
    """The DDS of the current node: name, element type, size, owned range.

Usage: strads dds"""

    name, category, usage, word_counts = "dds", gdb.COMMAND_DATA, "strads dds", (0,)

    def run(self, args, node):
        node = current_node_or_error()
        for name, value in nodes.dds_of(node.runtime):
            try:
                print(dds.DvectorView(value).summary())
            except iv.READ_ERRORS as error:
                print(iv.describe_error("DDS \"%s\"" % name, error))


class PrintCommand(StradsCommand):
    """One element of a DDS by name, read on the node that owns it.

Usage: strads print NAME INDEX"""

    name, category, usage, word_counts = "print", gdb.COMMAND_DATA, "strads print NAME INDEX", (2,)

    def run(self, args, node):
        name, index = args[0], parse_int(args[1], "the index")
        node = current_node_or_error()
        view = find_dvector(node, name)
        if index >= view.size:
            raise gdb.GdbError("strads: index %d is outside [0, %d) of \"%s\"" % (index, view.size, name))
        owner = view.owner(index)
        where = "owned by node %d" % owner
        if owner != node.number:
            owner_node = nodes.all_nodes().get(owner)
            if owner_node is not None:
                view = find_dvector(owner_node, name)
                where += ", read on node %d" % owner
            else:
                where += "; node %d's cached copy, which may be stale" % node.number
        print("%s[%d] = %s  (%s)" % (name, index, view.element(index).format_string(), where))


def find_dvector(node, name):
    for dds_name, value in nodes.dds_of(node.runtime):
        if dds_name == name:
            return dds.DvectorView(value)
    raise gdb.GdbError("strads: node %d has no DDS named \"%s\" (`strads dds` lists them)" %
                       (node.number, name))


class DdsFunction(gdb.Function):
    """$strads_dds("NAME"): the current node's DDS called NAME, typed (p $strads_dds("W")[3])."""

    def __init__(self):
        gdb.Function.__init__(self, "strads_dds")

    def invoke(self, name):
        node = current_node_or_error()
        wanted = convenience_string(name)
        for dds_name, value in nodes.dds_of(node.runtime, in_memory=True):
            if dds_name == wanted:
                # A reference, like a program's `auto& W`: gdb's overload resolution then finds
                # the xmethods for W[3] and W.size().
                return value.reference_value()
        raise gdb.GdbError("strads: node %d has no DDS named \"%s\" (`strads dds` lists them)" %
                           (node.number, wanted))


def convenience_string(value):
    """The text of a string argument of a convenience function ("W" is an array gdb holds, not
    memory of the inferior, so Value.string() cannot read it)."""
    if value.type.strip_typedefs().code == gdb.TYPE_CODE_ARRAY:
        low, high = value.type.strip_typedefs().range()
        chars = [int(value[i]) & 0xFF for i in range(low, min(high, low + 255) + 1)]
        return bytes(chars).split(b"\0")[0].decode("utf-8", errors="replace")
    return value.string(length=256)


def register_commands():
    StradsPrefix()
    for command in (StatusCommand, NodeCommand, ThreadCommand, BreakEventCommand,
                    BreakOperatorCommand, WhenCommand, DdsCommand, PrintCommand, DdsFunction):
        command()
