"""What a strads DDS object says about itself: name, size, element type, ownership.

Shared by the pretty-printers, the xmethods and the `strads dds` / `strads print` commands.
Layouts mirror core/include/strads/internal/dds.h (DdsBase), even_split.h (EvenSplit),
dmap.h (MapBase, dmap) and dmultimap.h.
"""

import gdb

from . import inferior_values as iv


def even_split_begin(n, parts, part):
    """EvenSplit::begin: the first index of `part` of n elements split over `parts`."""
    return (part * n + parts - 1) // parts


class DvectorView(object):
    """The fields of a strads::dvector<T>, validated once."""

    def __init__(self, value):
        value = iv.the_object(value)
        self.value = value
        self.element_type = value.type.template_argument(0)
        self.name = iv.std_string(iv.field(value, "name_"))
        self.size = iv.integer(value, "size_", 0, iv.MAX_ELEMENTS)
        self.node = iv.integer(value, "node_", 0, iv.MAX_NODES)
        owners = iv.field(value, "owners_")
        self.nodes = iv.integer(owners, "parts_", 1, iv.MAX_NODES)
        if int(owners["n_"]) != self.size:
            raise iv.Garbage("owners_ splits %d elements, size_ is %d" % (int(owners["n_"]), self.size))
        if self.node >= self.nodes:
            raise iv.Garbage("node_ %d of %d nodes" % (self.node, self.nodes))
        self.owned_begin = even_split_begin(self.size, self.nodes, self.node)
        self.owned_end = even_split_begin(self.size, self.nodes, self.node + 1)
        self.raw = iv.field(value, "raw_")

    def owner(self, index):
        """EvenSplit::part_of: the node that owns element `index`."""
        return index * self.nodes // self.size

    def element(self, index):
        """Element `index` of this node's full-length array (owned or cached)."""
        if index < 0 or index >= self.size:
            raise IndexError("index %d is outside [0, %d) of dvector \"%s\"" % (index, self.size, self.name))
        return self.raw.cast(self.element_type.pointer())[index]

    def summary(self):
        return "strads::dvector<%s> \"%s\" size %d, node %d of %d owns [%d, %d)" % (
            type_name(self.element_type), self.name, self.size, self.node, self.nodes, self.owned_begin,
            self.owned_end)


class DmatrixView(DvectorView):
    """The fields of a strads::dmatrix<T> (core/include/strads/dmatrix.h): a dvector whose
    element is a row of width_ values of T, stored row after row."""

    def __init__(self, value):
        DvectorView.__init__(self, value)
        self.width = iv.integer(self.value, "width_", 1, iv.MAX_ELEMENTS)

    def element(self, index):
        """Row `index` of this node's full-length array, as an array of width values."""
        if index < 0 or index >= self.size:
            raise IndexError("row %d is outside [0, %d) of dmatrix \"%s\"" % (index, self.size, self.name))
        row = self.raw.cast(self.element_type.pointer()) + index * self.width
        return row.dereference().cast(self.element_type.array(self.width - 1))

    def summary(self):
        return "strads::dmatrix<%s> \"%s\" rows %d width %d, node %d of %d owns [%d, %d)" % (
            type_name(self.element_type), self.name, self.size, self.width, self.node, self.nodes,
            self.owned_begin, self.owned_end)


class MapView(object):
    """The fields of a strads::dmap<K, V> or strads::dmultimap<K, V>, validated once."""

    def __init__(self, value, multi):
        value = iv.the_object(value)
        self.value = value
        self.multi = multi
        self.key_type = value.type.template_argument(0)
        self.mapped_type = value.type.template_argument(1)
        self.name = iv.std_string(iv.field(value, "name_"))
        self.size = iv.integer(value, "size_", 0, iv.MAX_ELEMENTS)
        self.local = iv.field(value, "local_")
        runtime = iv.field(value, "rt_")
        self.node = None
        if int(runtime) != 0:
            try:
                self.node = iv.integer(runtime.dereference(), "node_", 0, iv.MAX_NODES)
            except iv.READ_ERRORS:
                self.node = None

    def local_pairs(self):
        """(key, value) of this node's part, at most iv.MAX_MAP_NODES of them."""
        if self.multi:
            return vector_pairs(self.local)
        return rb_tree_pairs(self.local)

    def local_count(self):
        if self.multi:
            impl = self.local["_M_impl"]
            start, finish = impl["_M_start"], impl["_M_finish"]
            count = int(finish - start)
        else:
            count = int(self.local["_M_t"]["_M_impl"]["_M_node_count"])
        if count < 0 or count > iv.MAX_ELEMENTS:
            raise iv.Garbage("local part of %d pairs" % count)
        return count

    def summary(self):
        kind = "dmultimap" if self.multi else "dmap"
        node = "this node" if self.node is None else "node %d" % self.node
        return "strads::%s<%s, %s> \"%s\" size %d, %s holds %d" % (
            kind, type_name(self.key_type), type_name(self.mapped_type), self.name, self.size, node, self.local_count())


def type_name(gdb_type):
    """The type as the program spells it (no "struct" before a class name)."""
    return gdb_type.name or str(gdb_type)


def vector_pairs(vector):
    impl = vector["_M_impl"]
    start, finish = impl["_M_start"], impl["_M_finish"]
    count = int(finish - start)
    if count < 0 or count > iv.MAX_ELEMENTS:
        raise iv.Garbage("vector of %d pairs" % count)
    for i in range(min(count, iv.MAX_MAP_NODES)):
        pair = start[i]
        yield pair["first"], pair["second"]


def rb_tree_pairs(std_map):
    """In-order walk of a libstdc++ std::map's red-black tree, bounded and cycle-safe."""
    tree = std_map["_M_t"]
    impl = tree["_M_impl"]
    count = int(impl["_M_node_count"])
    if count < 0 or count > iv.MAX_ELEMENTS:
        raise iv.Garbage("map of %d nodes" % count)
    header = impl["_M_header"]
    header_address = int(header.address)
    # A node is its _Rb_tree_node_base followed by the pair (aligned: the base is 32 bytes).
    pair_pointer = tree.type.strip_typedefs().template_argument(1).pointer()
    node = header["_M_left"]
    for _ in range(min(count, iv.MAX_MAP_NODES)):
        if int(node) == header_address or int(node) == 0:
            return
        pair = gdb.Value(int(node) + header.type.sizeof).cast(pair_pointer).dereference()
        yield pair["first"], pair["second"]
        node = rb_tree_successor(node)


def rb_tree_successor(node):
    if int(node["_M_right"]) != 0:
        node = node["_M_right"]
        for _ in range(128):
            if int(node["_M_left"]) == 0:
                return node
            node = node["_M_left"]
        raise iv.Garbage("red-black tree deeper than 128")
    parent = node["_M_parent"]
    for _ in range(128):
        if node != parent["_M_right"]:
            return parent
        node = parent
        parent = parent["_M_parent"]
    raise iv.Garbage("red-black tree deeper than 128")
