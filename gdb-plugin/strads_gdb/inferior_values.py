"""Reading strads objects out of the inferior defensively.

Everything here may look at garbage: an object printed before its constructor ran, a
corrupted core file, a dangling reference. Every size is bounded before it is used and every
read failure becomes a short error string, so that a printer never raises a traceback storm or
walks a cycle forever.
"""

import gdb

# Larger than any real DDS on one machine, small enough to catch garbage words.
MAX_ELEMENTS = 1 << 40
MAX_NODES = 1 << 16
MAX_NAME_BYTES = 256
MAX_PATH_BYTES = 4096
# How many tree nodes a map walk visits at most, whatever the map claims.
MAX_MAP_NODES = 1 << 20


class Garbage(Exception):
    """The object's fields do not describe a valid strads object."""


def field(value, name):
    """value[name], searching base classes; raises Garbage when there is no such field."""
    try:
        return value[name]
    except gdb.error:
        pass
    for f in value.type.strip_typedefs().fields():
        if f.is_base_class:
            try:
                return field(value[f], name)
            except Garbage:
                continue
    raise Garbage("no field %s in %s" % (name, value.type))


def the_object(value):
    """The object a value, a reference to it or a pointer to it (an xmethod's `this`) names."""
    value = value.cast(value.type.strip_typedefs())
    if value.type.code == gdb.TYPE_CODE_REF:
        value = value.referenced_value()
    elif value.type.code == gdb.TYPE_CODE_PTR:
        value = value.dereference()
    return value.cast(value.type.strip_typedefs().unqualified())


def integer(value, name, low, high):
    """The integer field `name`, checked to lie in [low, high]."""
    number = int(field(value, name))
    if number < low or number > high:
        raise Garbage("%s = %d is out of range" % (name, number))
    return number


def std_string(value, limit=MAX_NAME_BYTES):
    """The text of a libstdc++ std::string of at most `limit` bytes."""
    length = int(value["_M_string_length"])
    if length < 0 or length > limit:
        raise Garbage("string length %d" % length)
    pointer = value["_M_dataplus"]["_M_p"]
    if length == 0:
        return ""
    data = gdb.selected_inferior().read_memory(int(pointer), length)
    return bytes(data).decode("utf-8", errors="replace")


def c_string(pointer, limit):
    """The NUL-terminated string at `pointer`, at most `limit` bytes of it."""
    address = int(pointer)
    if address == 0:
        raise Garbage("a null string")
    text = b""
    inferior = gdb.selected_inferior()
    while len(text) < limit:
        chunk = bytes(inferior.read_memory(address + len(text), min(256, limit - len(text))))
        end = chunk.find(b"\0")
        if end >= 0:
            return (text + chunk[:end]).decode("utf-8", errors="replace")
        text += chunk
    return text.decode("utf-8", errors="replace")


def held_pointer(value, depth=0):
    """The pointer a libstdc++ std::unique_ptr holds: the tuple's pointer _M_head_impl, found
    through its _M_t members and base classes."""
    value = value.cast(value.type.strip_typedefs())
    for f in value.type.fields():
        if f.name == "_M_head_impl" and f.type.strip_typedefs().code == gdb.TYPE_CODE_PTR:
            return value[f]
    if depth < 8:
        for f in value.type.fields():
            if f.is_base_class or f.name == "_M_t":
                try:
                    return held_pointer(value[f], depth + 1)
                except Garbage:
                    continue
    raise Garbage("not a unique_ptr: %s" % value.type)


def describe_error(kind, error):
    """The text a printer shows instead of an object it cannot read."""
    return "<invalid %s: %s>" % (kind, error)


READ_ERRORS = (Garbage, gdb.error, gdb.MemoryError, RuntimeError, ValueError, OverflowError)
